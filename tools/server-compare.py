#!/usr/bin/env python3
"""Side-by-side throughput and latency of inferd and the reference engine's llama-server on the
same model file, with the same server flags and the same load (inferd-loadgen), in one run.

Usage:
  tools/server-compare.py --llama-server PATH [--inferd PATH] [--loadgen PATH]
                          [-np 8] [-t 2] [-c 4096] [-d 30] [--rounds 1] [--port 18480]
                          [--load NAME ...] [--json] MODEL.gguf

  --llama-server PATH  llama-server built outside the repository (../shared/tools/reference-engine.sh);
                       its directory is put on LD_LIBRARY_PATH for its shared libraries
  --inferd PATH        default build/server/inferd
  --loadgen PATH       default build/tools/inferd-loadgen
  -np / -t / -c        slots, threads and context cells, given to both servers
  -d                   seconds of each inferd-loadgen run (after a 3 s warmup)
  --rounds N           each load runs N times per server; the table shows medians
  --load NAME          which loads to run (default: all of them, in this order):
                         c1       1 client,  64-word prompts, max_tokens 64
                         c8       8 clients, 64-word prompts, max_tokens 64
                         preamble 8 clients, a 200-word preamble shared by all prompts + 16 words
                                  of their own, max_tokens 32

Each round starts a fresh server per engine and load (inferd first, then llama-server), waits for
/health to answer 200, runs inferd-loadgen --json against it and stops it with SIGTERM, so both
see the machine in the same state. The table gives generated tokens/s, TTFT p50, inter-token
latency p50 and failed requests of each engine, and the ratio of the token rates. Exit status 0,
or 1 when a server does not start or the load generator gives no result (its output is shown);
failed requests are counted in the table's errors columns. 2 for a
usage error.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys

from server_health import wait_healthy

LOADS = {
    "c1": {"clients": 1, "prompt_words": 64, "max_tokens": 64, "shared": 0,
           "label": "1 client, 64 words, max_tokens 64"},
    "c8": {"clients": 8, "prompt_words": 64, "max_tokens": 64, "shared": 0,
           "label": "8 clients, 64 words, max_tokens 64"},
    "preamble": {"clients": 8, "prompt_words": 16, "max_tokens": 32, "shared": 200,
                 "label": "8 clients, 200-word shared preamble + 16 words, max_tokens 32"},
}


def start_server(engine, args, port):
    common = ["-m", args.model, "-np", str(args.np), "-t", str(args.threads), "-c", str(args.ctx),
              "--host", "127.0.0.1", "--port", str(port)]
    env = dict(os.environ)
    if engine == "inferd":
        cmd = [args.inferd] + common
    else:
        cmd = [args.llama_server] + common + ["--no-webui"]
        libdir = os.path.dirname(os.path.abspath(args.llama_server))
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    log = open(os.path.join(args.log_dir, "%s-%d.log" % (engine, port)), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    return proc, log, cmd


def stop_server(proc, log):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log.close()


def run_load(args, url, load):
    cmd = [args.loadgen, "--url", url, "-c", str(load["clients"]), "-d", str(args.duration),
           "--warmup", "3", "--max-tokens", str(load["max_tokens"]),
           "--prompt-words", str(load["prompt_words"]),
           "--shared-prefix-words", str(load["shared"]), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    # inferd-loadgen exits 1 when requests failed; its JSON then counts them
    start = p.stdout.find("{")
    if start >= 0:
        try:
            return json.loads(p.stdout[start:])
        except ValueError:
            pass
    sys.stderr.write("server-compare: %s failed (%d):\n%s%s\n" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return None


def one_run(args, engine, load, port):
    proc, log, cmd = start_server(engine, args, port)
    try:
        url = "http://127.0.0.1:%d" % port
        if not wait_healthy(url, proc):
            sys.stderr.write("server-compare: %s did not become healthy; its log: %s\n" % (" ".join(cmd), log.name))
            return None
        return run_load(args, url, load)
    finally:
        stop_server(proc, log)


def median_of(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, digits=1):
    return "-" if v is None else ("%.*f" % (digits, v))


def main():
    ap = argparse.ArgumentParser(add_help=True, usage=__doc__)
    ap.add_argument("model")
    ap.add_argument("--llama-server", required=True)
    ap.add_argument("--inferd", default="build/server/inferd")
    ap.add_argument("--loadgen", default="build/tools/inferd-loadgen")
    ap.add_argument("-np", type=int, default=8)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-c", "--ctx", type=int, default=4096)
    ap.add_argument("-d", "--duration", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--port", type=int, default=18480)
    ap.add_argument("--load", action="append", choices=sorted(LOADS))
    ap.add_argument("--log-dir", default="/tmp")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for path in (args.model, args.llama_server, args.inferd, args.loadgen):
        if not os.path.exists(path):
            sys.stderr.write("server-compare: %s not found\n" % path)
            sys.exit(2)
    loads = args.load or list(LOADS)

    results = {name: {"inferd": [], "llama-server": []} for name in loads}
    port = args.port
    for rnd in range(args.rounds):
        for name in loads:
            for engine in ("inferd", "llama-server"):
                sys.stderr.write("server-compare: round %d, %s, %s\n" % (rnd + 1, name, engine))
                r = one_run(args, engine, LOADS[name], port)
                port += 1
                if r is None:
                    sys.exit(1)
                results[name][engine].append(r)

    if args.json:
        json.dump(results, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    print("| load | inferd tok/s | llama-server tok/s | ratio | TTFT p50 ms | ref | ITL p50 ms | ref | errors | ref |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in loads:
        a, b = results[name]["inferd"], results[name]["llama-server"]
        ta, tb = median_of(a, "tokens_per_s"), median_of(b, "tokens_per_s")
        ratio = (ta / tb) if ta and tb else None
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %d | %d |" % (
            LOADS[name]["label"], fmt(ta), fmt(tb), fmt(ratio, 2) + "x" if ratio else "-",
            fmt(median_of(a, "ttft_p50_ms"), 0), fmt(median_of(b, "ttft_p50_ms"), 0),
            fmt(median_of(a, "itl_p50_ms"), 0), fmt(median_of(b, "itl_p50_ms"), 0),
            sum(r["error_count"] for r in a), sum(r["error_count"] for r in b)))
    print("\n%d round(s) of %d s per load and engine, medians; -np %d -t %d -c %d." % (
        args.rounds, args.duration, args.np, args.threads, args.ctx))


if __name__ == "__main__":
    main()
