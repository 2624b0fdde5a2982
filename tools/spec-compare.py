#!/usr/bin/env python3
"""Single-stream generation speed of inferd with and without speculative decoding, in one run.

Usage:
  tools/spec-compare.py [--inferd PATH] [--draft DRAFT.gguf] [--ngram N] [--draft-max N] [--always]
                        [-t 2] [-n 128] [--requests 5] [--rounds 3] [--prompt-file F | --repeat]
                        [--port 18490] [--json] MODEL.gguf

  --draft DRAFT.gguf  also run with this draft model (-md DRAFT.gguf)
  --ngram N           also run with prompt-lookup drafting (--spec-ngram N)
  --draft-max N       --draft-max of the drafting servers (default 8)
  --always            also run each drafting server with --spec-always (drafting never turns itself
                      off), to see what the self-disabling saves where drafts lose
  -n                  max_tokens of each request (greedy, ignore_eos)
  --requests N        timed requests per server (after one untimed warmup request)
  --rounds N          each configuration runs N times, taking turns; the table shows medians
  --prompt-file F     the prompt (default: a fixed English paragraph)
  --repeat            a prompt whose continuation repeats a passage of it, which is what prompt
                      lookup is for: the paragraph P, the model's greedy continuation C of it
                      (-n tokens, by inferd-cli generate), then P again (P C P, as token ids), so
                      that the model goes on with C
  --cli PATH          inferd-cli for --repeat (default: tools/inferd-cli of inferd's build tree)

Each round starts a fresh server per configuration (plain first, then the drafting ones; -np 1,
the same threads), waits for /health, sends the requests one after the other to
/v1/completions (temperature 0, ignore_eos, the same prompt) and stops it with SIGTERM. A
request's rate is its completion tokens over its wall time; a server's figure is the median of
its requests. For the drafting servers the table also gives the speed-up over the plain server
of the same round, the acceptance rate (inferd_draft_accepted_total over
inferd_draft_tokens_total) and how often drafting turned itself off (inferd_spec_turned_off_total,
summed over the rounds), and checks that their texts equal the plain server's (greedy
requests give the same tokens with or without drafting). Exit status 0; 1 when a server does
not start, a request fails or a text differs; 2 for a usage error.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

from server_health import wait_healthy

DEFAULT_PROMPT = ("The old lighthouse keeper climbed the spiral stairs every evening, counting each "
                  "step as his father had taught him, and when he reached the lamp room he wiped "
                  "the glass, trimmed the wick and watched the ships")


def post_json(url, body, timeout_s=600):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise RuntimeError("%s answered %d: %s" % (url, e.code, e.read().decode(errors="replace"))) from None


def metric(url, name):
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    m = re.search(r"^" + re.escape(name) + r"(?:\{[^}]*\})? ([0-9.eE+-]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


class server:
    """A fresh inferd with -np 1 on the model, stopped with SIGTERM on leaving the block."""

    def __init__(self, args, name, extra, port):
        self.url = "http://127.0.0.1:%d" % port
        self.cmd = [args.inferd, "-m", args.model, "-np", "1", "-t", str(args.threads), "--host", "127.0.0.1",
                    "--port", str(port)] + extra
        self.name = name
        self.log_path = os.path.join(args.log_dir, "%s-%d.log" % (name, port))

    def __enter__(self):
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        if not wait_healthy(self.url, self.proc):
            self.__exit__()
            raise RuntimeError("%s did not start (%s); log: %s" % (self.name, " ".join(self.cmd), self.log_path))
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def greedy_body(args, prompt):
    return {"prompt": prompt, "max_tokens": args.n, "temperature": 0, "ignore_eos": True}


def cli_json(args, *cli_args):
    out = subprocess.run([args.cli] + list(cli_args), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join([args.cli] + list(cli_args)), out.returncode, out.stderr))
    return json.loads(out.stdout)


def repeat_prompt(args):
    """P C P as token ids: the paragraph, the model's greedy continuation of it (inferd-cli generate
    --ids: token ids, since a text need not tokenize back into the tokens that wrote it), the
    paragraph again."""
    p = cli_json(args, "tokenize", "-m", args.model, "-p", DEFAULT_PROMPT)
    c = cli_json(args, "generate", "-m", args.model, "--tokens", ",".join(map(str, p)), "-n", str(args.n),
                 "--temp", "0", "--threads", str(args.threads), "--ids")
    bos = cli_json(args, "tokenize", "-m", args.model, "-p", "")
    return p + c + p[len(bos):]


def run_config(args, name, extra, port, prompt):
    with server(args, name, extra, port) as s:
        body = greedy_body(args, prompt)
        post_json(s.url + "/v1/completions", body)  # warmup
        d0 = metric(s.url, "inferd_draft_tokens_total")
        a0 = metric(s.url, "inferd_draft_accepted_total")
        rates, texts = [], set()
        for _ in range(args.requests):
            t0 = time.perf_counter()
            out = post_json(s.url + "/v1/completions", body)
            dt = time.perf_counter() - t0
            rates.append(out["usage"]["completion_tokens"] / dt)
            texts.add(out["choices"][0]["text"])
        drafted = metric(s.url, "inferd_draft_tokens_total") - d0
        accepted = metric(s.url, "inferd_draft_accepted_total") - a0
        turned_off = metric(s.url, "inferd_spec_turned_off_total")
    return {"rate": statistics.median(rates), "rates": rates, "texts": texts, "drafted": drafted,
            "accepted": accepted, "turned_off": turned_off}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--inferd", default="build/server/inferd")
    ap.add_argument("--cli", default=None)
    ap.add_argument("--draft")
    ap.add_argument("--ngram", type=int, default=0)
    ap.add_argument("--draft-max", type=int, default=8)
    ap.add_argument("--always", action="store_true")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--requests", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prompt-file")
    ap.add_argument("--repeat", action="store_true")
    ap.add_argument("--port", type=int, default=18490)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--log-dir", default="build/spec-compare-logs")
    args = ap.parse_args()
    if not args.draft and args.ngram <= 0:
        ap.error("give --draft DRAFT.gguf and/or --ngram N")
    if args.requests < 1 or args.rounds < 1 or args.n < 2:
        ap.error("--requests and --rounds must be at least 1, -n at least 2")
    if args.repeat and args.prompt_file:
        ap.error("--repeat and --prompt-file exclude each other")
    if args.cli is None:
        args.cli = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.inferd))), "tools", "inferd-cli")
    os.makedirs(args.log_dir, exist_ok=True)
    try:
        if args.repeat:
            prompt = repeat_prompt(args)
        else:
            prompt = open(args.prompt_file).read() if args.prompt_file else DEFAULT_PROMPT
    except Exception as e:
        print("spec-compare: %s" % e, file=sys.stderr)
        return 1

    configs = [("plain", [])]
    spec = ["--draft-max", str(args.draft_max)]
    if args.draft:
        configs.append(("draft", ["-md", args.draft] + spec))
    if args.ngram > 0:
        configs.append(("ngram", ["--spec-ngram", str(args.ngram)] + spec))
    if args.always:
        configs += [(name + "-always", extra + ["--spec-always"]) for name, extra in configs[1:]]

    results = {name: [] for name, _ in configs}
    ok = True
    for rnd in range(args.rounds):
        for i, (name, extra) in enumerate(configs):
            try:
                r = run_config(args, name, extra, args.port + i, prompt)
            except Exception as e:  # a server that does not start or a failed request
                print("spec-compare: %s" % e, file=sys.stderr)
                return 1
            results[name].append(r)
            print("round %d %-5s %.2f tokens/s (requests: %s)" % (rnd + 1, name, r["rate"],
                  ", ".join("%.2f" % x for x in r["rates"])), file=sys.stderr)
        plain_texts = results["plain"][-1]["texts"]
        for name, _ in configs[1:]:
            if results[name][-1]["texts"] != plain_texts:
                print("spec-compare: round %d: the %s server's text differs from the plain server's" % (rnd + 1, name),
                      file=sys.stderr)
                ok = False

    rows = []
    for name, _ in configs:
        rs = results[name]
        row = {"config": name, "tokens_per_s": statistics.median(r["rate"] for r in rs),
               "range": [min(r["rate"] for r in rs), max(r["rate"] for r in rs)]}
        if name != "plain":
            ratios = [r["rate"] / p["rate"] for r, p in zip(rs, results["plain"])]
            drafted = sum(r["drafted"] for r in rs)
            row["speedup"] = statistics.median(ratios)
            row["speedup_range"] = [min(ratios), max(ratios)]
            row["acceptance"] = sum(r["accepted"] for r in rs) / drafted if drafted else 0.0
            row["turned_off"] = int(sum(r["turned_off"] for r in rs))
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| server | tokens/s (median, range) | speed-up (median, range) | acceptance | turned off |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for row in rows:
            rate = "%.2f (%.2f-%.2f)" % (row["tokens_per_s"], row["range"][0], row["range"][1])
            if row["config"] == "plain":
                print("| plain | %s | | | |" % rate)
            else:
                print("| %s | %s | %.2fx (%.2f-%.2fx) | %.1f%% | %d |" % (
                    row["config"], rate, row["speedup"], row["speedup_range"][0], row["speedup_range"][1],
                    100.0 * row["acceptance"], row["turned_off"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
