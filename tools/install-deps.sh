#!/usr/bin/env bash
# Installs the Debian packages inferd builds with, if any is missing. Used by `make test`.
set -euo pipefail

packages=(cmake make g++ libboost-dev nlohmann-json3-dev libspdlog-dev libgtest-dev libgmock-dev libbenchmark-dev
          libssl-dev openssl  # HTTPS (Boost.Beast over OpenSSL); the CLI makes the tests' certificate
          python3             # tools/soak.py (the soak and overload runs), tests/fuzz/schema-seeds.py
          clang libclang-rt-dev  # clang + libFuzzer runtime: the fuzz targets (make test-fuzz)
          prometheus             # promtool: the server's /metrics exposition check
          chromium)              # the chat page's browser test (headless, driven by playwright-core)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# node + npm: the end-to-end test with the official openai npm client (any install will do).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: missing packages (${missing[*]}) and not root: install them with apt-get" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# Install straight away when the package lists are there; refresh them first otherwise.
if ! $sudo apt-get install -y -q "${missing[@]}"; then
  $sudo apt-get update -q
  $sudo apt-get install -y -q "${missing[@]}"
fi
