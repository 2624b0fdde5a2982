#!/usr/bin/env python3
"""Side-by-side speed of inferd and the reference engine (llama.cpp's llama-bench) on the same
model files, with the same flags, in one run: each engine at its better flash-attention setting
(-fa 0 and -fa 1 both run, the faster kept per test), one table of tokens/s and ratios.

Usage:
  tools/bench-compare.py --llama-bench PATH [--inferd-bench PATH] [-t 2] [-r 5]
                         [-p 512] [-n 128] [-d 0,4096] [--json] MODEL.gguf...

  --llama-bench PATH   llama-bench built outside the repository (../shared/tools/reference-engine.sh);
                       its directory is put on LD_LIBRARY_PATH for its shared libraries
  --inferd-bench PATH  default build/tools/inferd-bench
  -p / -n / -d         prompt tokens, generated tokens, depths (comma-separated; tg runs at every
                       depth, pp at depth 0)
The two engines alternate per model (inferd, reference), so both see the machine in the same
state; the CPU's model and the kernel paths (inferd's per weight type, for tg and pp) are printed
with the table, and the probed read bandwidth (inferd-bench's probe) under it. --json prints
{"machine", "kernels", "results"}. Exit status 0,
or 1 when a bench fails (its stderr is shown), 2 for a usage error.
"""
import argparse
import json
import os
import subprocess
import sys


def run_json(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write("bench-compare: %s failed (%d):\n%s\n" % (" ".join(cmd), p.returncode, p.stderr))
        sys.exit(1)
    text = p.stdout[p.stdout.find("["):]
    return json.loads(text)


def test_name(row):
    if row["n_prompt"] > 0 and row["n_gen"] == 0:
        name = "pp%d" % row["n_prompt"]
    else:
        name = "tg%d" % row["n_gen"]
    if row.get("n_depth", 0):
        name += " @ d%d" % row["n_depth"]
    return name


def best_by_test(rows):
    """{test name: (t/s, fa)} keeping the faster flash-attention setting of each test."""
    best = {}
    for r in rows:
        name = test_name(r)
        ts = float(r["avg_ts"])
        fa = int(bool(r["flash_attn"]))
        if name not in best or ts > best[name][0]:
            best[name] = (ts, fa)
    return best


def main():
    ap = argparse.ArgumentParser(add_help=True, usage=__doc__)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--llama-bench", required=True)
    ap.add_argument("--inferd-bench", default="build/tools/inferd-bench")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-r", "--repetitions", type=int, default=5)
    ap.add_argument("-p", "--n-prompt", default="512")
    ap.add_argument("-n", "--n-gen", default="128")
    ap.add_argument("-d", "--depth", default="0")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    for tool in (a.llama_bench, a.inferd_bench):
        if not os.access(tool, os.X_OK):
            sys.stderr.write("bench-compare: %s is not an executable\n" % tool)
            return 2
    env = dict(os.environ)
    lib = os.path.dirname(os.path.abspath(a.llama_bench))
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    common = ["-t", str(a.threads), "-r", str(a.repetitions), "-fa", "0,1", "-o", "json"]
    results = []
    machine = {}   # the CPU and the engines' kernel paths, from the benches' own JSON
    kernels = {}   # model file -> inferd's MUL_MAT kernels on the CPU
    for model in a.models:
        per_engine = {}
        for engine, tool in (("inferd", a.inferd_bench), ("reference", a.llama_bench)):
            rows = run_json([tool, "-m", model, "-p", a.n_prompt, "-n", "0"] + common, env)
            rows += run_json([tool, "-m", model, "-p", "0", "-n", a.n_gen, "-d", a.depth] + common, env)
            per_engine[engine] = (best_by_test(rows), rows)
        ours, ref = per_engine["inferd"][0], per_engine["reference"][0]
        probe = max((float(r.get("bandwidth_gbps", 0.0)) for r in per_engine["inferd"][1]), default=0.0)
        first = per_engine["inferd"][1][0] if per_engine["inferd"][1] else {}
        machine.setdefault("cpu_model", first.get("cpu_model", "unknown"))
        machine.setdefault("cpu_isa", first.get("cpu_isa", "unknown"))
        ref_rows = per_engine["reference"][1]
        if ref_rows:
            machine.setdefault("reference_cpu", ref_rows[0].get("cpu_info", ""))
            machine.setdefault("reference_backends", ref_rows[0].get("backends", ""))
        kernels[os.path.basename(model)] = first.get("kernels", [])
        for name in ours:
            if name not in ref:
                continue
            results.append({"model": os.path.basename(model), "test": name,
                            "inferd_ts": ours[name][0], "inferd_fa": ours[name][1],
                            "reference_ts": ref[name][0], "reference_fa": ref[name][1],
                            "ratio": ours[name][0] / ref[name][0] if ref[name][0] > 0 else None,
                            "probe_gbps": probe})
    if a.json:
        print(json.dumps({"machine": machine, "kernels": kernels, "results": results}, indent=1))
        return 0
    print("cpu: %s (reference engine: %s); inferd kernel path: %s; reference backends: %s\n" %
          (machine.get("cpu_model", "unknown"), machine.get("reference_cpu", "") or "not reported",
           machine.get("cpu_isa", "unknown"), machine.get("reference_backends", "") or "not reported"))
    print("| model | test | inferd t/s | fa | reference t/s | fa | ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print("| %s | %s | %.1f | %d | %.1f | %d | %.2fx |" % (r["model"], r["test"], r["inferd_ts"], r["inferd_fa"],
                                                             r["reference_ts"], r["reference_fa"], r["ratio"] or 0))
    if results:
        print("\nread-bandwidth probe (inferd-bench, %d threads): %.1f GB/s" % (a.threads, results[0]["probe_gbps"]))
    for model, lines in kernels.items():
        if lines:
            print("\ninferd's matrix kernels for %s:" % model)
            for line in lines:
                print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
