#!/usr/bin/env python3
"""Soak and overload runs against a real inferd: it starts the daemon itself, drives it with many
clients, samples its resident memory, open descriptors and metrics, and checks that nothing leaked
or was lost.

Usage:
  tools/soak.py --inferd build/server/inferd --model MODEL.gguf [--minutes 30] [--clients 16]
                [--overload-seconds 60] [--csv soak.csv] [--sample-seconds 10] [-- extra inferd flags]

Soak (--minutes > 0): --clients clients, each sending one request after another on a new
connection, a mix of streamed completions, chat completions, cancellations (a stream closed after
a few chunks), n > 1, and prompts that share a long preamble (prefix cache). Every --sample-seconds
it records the daemon's RSS, open descriptors and metrics (a CSV row each). At the end it checks:
  - RSS growth after warm-up (the first sample after a fifth of the run) below 5%;
  - open descriptors back at the idle count measured before the run;
  - inferd_requests_total of the generation endpoints equal to the requests the clients sent;
  - inferd_requests_running and inferd_requests_waiting 0;
  - no unexpected answer (anything but 200, or 503 with Retry-After when the queue is full).
Overload (--overload-seconds > 0): 4x the capacity (slots + queue) in concurrent clients, each
sending streamed completions back to back (after a 503, again 100 ms later): every request must
end with a 200 stream ending in [DONE] or a 503 with Retry-After, none may hang past its timeout,
and the admitted requests' time to first token is reported (p50, p99, max) and must stay below
--ttft-limit seconds.
Exit status 0 when every check passed, 1 otherwise, 2 for a usage error.
"""
import argparse
import csv
import http.client
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

GEN_ENDPOINTS = ("/v1/completions", "/v1/chat/completions")
PREAMBLE = " ".join("the %s of %d" % (w, i) for i, w in enumerate(
    ["river", "stone", "garden", "window", "letter", "market", "signal", "winter"] * 12))


class Daemon:
    def __init__(self, binary, model, parallel, queue, extra):
        self.log_path = "/tmp/inferd-soak-%d.log" % os.getpid()
        self.log = open(self.log_path, "w")
        args = [binary, "-m", model, "--host", "127.0.0.1", "--port", "0", "-np", str(parallel),
                "--max-queue", str(queue), "-c", "4096"] + extra
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        self.port = 0

    def wait_ready(self, timeout_s=120):
        deadline = time.time() + timeout_s
        while time.time() < deadline and self.proc.poll() is None:
            if not self.port:
                m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(self.log_path).read())
                self.port = int(m.group(1)) if m else 0
            if self.port:
                try:
                    status, _, _ = request(self.port, "GET", "/health", None, 5)
                    if status == 200:
                        return True
                except OSError:
                    pass
            time.sleep(0.05)
        return False

    def rss_kb(self):
        for line in open("/proc/%d/status" % self.proc.pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return -1

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.proc.pid))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return -9
        return self.proc.returncode


def request(port, method, path, body, timeout):
    """One request on a new connection: (status, headers, body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body) if body is not None else None
        c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def metrics(port):
    _, _, body = request(port, "GET", "/metrics", None, 30)
    return body.decode()


def metric(text, name):
    m = re.search(r"(^|\n)%s ([0-9.eE+-]+)" % re.escape(name), text)
    return float(m.group(2)) if m else -1.0


def requests_total(text):
    total = 0.0
    for ep in GEN_ENDPOINTS:
        for m in re.finditer(r'inferd_requests_total\{endpoint="%s",status="\d+"\} ([0-9.eE+-]+)' % re.escape(ep), text):
            total += float(m.group(1))
    return total


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.sent = 0
        self.counts = {}
        self.unexpected = []
        self.ttft = []

    def add(self, kind, outcome, detail=None, ttft=None):
        with self.lock:
            self.counts[(kind, outcome)] = self.counts.get((kind, outcome), 0) + 1
            if outcome == "unexpected":
                self.unexpected.append("%s: %s" % (kind, detail))
            if ttft is not None:
                self.ttft.append(ttft)
        return outcome

    def count_sent(self):
        with self.lock:
            self.sent += 1


def stream(port, path, body, tally, kind, keep_chunks=None, timeout=120):
    """A streamed request; reads keep_chunks reads then closes when given. Returns the outcome."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    t0 = time.time()
    tally.count_sent()
    try:
        c.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status == 503:
            r.read()
            if r.getheader("Retry-After"):
                return tally.add(kind, "busy")
            return tally.add(kind, "unexpected", "503 without Retry-After")
        if r.status != 200:
            return tally.add(kind, "unexpected", "%d %s" % (r.status, r.read()[:200]))
        text, reads, ttft = b"", 0, None
        while True:
            piece = r.read1(65536)
            if not piece:
                break
            if ttft is None:
                ttft = time.time() - t0
            text += piece
            reads += 1
            if keep_chunks is not None and reads >= keep_chunks:
                return tally.add(kind, "cancelled", ttft=ttft)
        if b"data: [DONE]" not in text or b'"error"' in text:
            return tally.add(kind, "unexpected", "stream ended without [DONE] or with an error: %r" % text[-200:])
        return tally.add(kind, "ok", ttft=ttft)
    except (OSError, http.client.HTTPException) as e:
        return tally.add(kind, "unexpected", "%s after %.1f s" % (e, time.time() - t0))
    finally:
        c.close()


def plain(port, path, body, tally, kind, want_choices=1, timeout=120):
    tally.count_sent()
    try:
        status, headers, data = request(port, "POST", path, body, timeout)
    except (OSError, http.client.HTTPException) as e:
        return tally.add(kind, "unexpected", str(e))
    if status == 503 and headers.get("Retry-After"):
        return tally.add(kind, "busy")
    if status != 200:
        return tally.add(kind, "unexpected", "%d %s" % (status, data[:200]))
    try:
        choices = json.loads(data)["choices"]
    except (ValueError, KeyError) as e:
        return tally.add(kind, "unexpected", "bad JSON: %s" % e)
    if len(choices) != want_choices:
        return tally.add(kind, "unexpected", "%d choices, expected %d" % (len(choices), want_choices))
    return tally.add(kind, "ok")


def soak_client(port, index, deadline, tally):
    rng = random.Random(index * 7919)
    while time.time() < deadline:
        words = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "echo", "fox"]) for _ in range(rng.randint(4, 24)))
        pick = rng.random()
        n_tok = rng.randint(8, 40)
        if pick < 0.30:
            outcome = stream(port, "/v1/completions", {"prompt": words, "max_tokens": n_tok, "stream": True,
                                                       "temperature": 0.8, "seed": rng.randint(0, 1 << 30)},
                             tally, "stream")
        elif pick < 0.55:
            outcome = plain(port, "/v1/chat/completions", {"messages": [{"role": "user", "content": words}],
                                                           "max_tokens": n_tok}, tally, "chat")
        elif pick < 0.70:
            outcome = stream(port, "/v1/chat/completions", {"messages": [{"role": "user", "content": words}],
                                                            "max_tokens": 64, "stream": True}, tally, "cancel",
                             keep_chunks=rng.randint(1, 5))
        elif pick < 0.85:
            n = rng.randint(2, 3)
            outcome = plain(port, "/v1/completions", {"prompt": words, "max_tokens": n_tok, "n": n,
                                                      "temperature": 0.9}, tally, "n>1", want_choices=n)
        else:
            outcome = plain(port, "/v1/completions", {"prompt": PREAMBLE + " " + words, "max_tokens": n_tok},
                            tally, "prefix")
        if outcome == "busy":
            time.sleep(0.1)  # the queue is full: a little later, as Retry-After asks


def sampler(daemon, stop, rows, period):
    start = time.time()
    while not stop.wait(period):
        try:
            m = metrics(daemon.port)
        except (OSError, http.client.HTTPException):
            continue
        rows.append({"t_s": round(time.time() - start, 1), "rss_kb": daemon.rss_kb(), "fds": daemon.fds(),
                     "running": metric(m, "inferd_requests_running"), "waiting": metric(m, "inferd_requests_waiting"),
                     "requests_total": requests_total(m), "kv_usage": metric(m, "inferd_kv_cache_usage_ratio")})


def run_clients(target, n, *args):
    threads = [threading.Thread(target=target, args=(i,) + args) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def wait_idle(port, timeout_s=60):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        m = metrics(port)
        if metric(m, "inferd_requests_running") == 0 and metric(m, "inferd_requests_waiting") == 0:
            return m
        time.sleep(0.1)
    return metrics(port)


def soak(daemon, args, failures):
    time.sleep(0.5)  # connections of earlier requests close
    base_fds = daemon.fds()
    base_total = requests_total(metrics(daemon.port))
    tally, rows, stop = Tally(), [], threading.Event()
    sample = threading.Thread(target=sampler, args=(daemon, stop, rows, args.sample_seconds))
    sample.start()
    deadline = time.time() + args.minutes * 60
    run_clients(lambda i, *a: soak_client(daemon.port, i, *a), args.clients, deadline, tally)
    stop.set()
    sample.join()
    m = wait_idle(daemon.port)
    for _ in range(100):  # a request is counted when its connection is done with it
        if requests_total(m) - base_total >= tally.sent:
            break
        time.sleep(0.1)
        m = metrics(daemon.port)
    time.sleep(0.5)  # connections of the last requests close
    rows.append({"t_s": round(args.minutes * 60, 1), "rss_kb": daemon.rss_kb(), "fds": daemon.fds(),
                 "running": metric(m, "inferd_requests_running"), "waiting": metric(m, "inferd_requests_waiting"),
                 "requests_total": requests_total(m), "kv_usage": metric(m, "inferd_kv_cache_usage_ratio")})
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    warm = next((r for r in rows if r["t_s"] >= args.minutes * 60 / 5), rows[0])
    growth = (rows[-1]["rss_kb"] - warm["rss_kb"]) / max(1, warm["rss_kb"])
    counted = requests_total(m) - base_total
    print("soak: %.1f min, %d clients, %d requests sent" % (args.minutes, args.clients, tally.sent))
    for (kind, outcome), n in sorted(tally.counts.items()):
        print("  %-8s %-10s %d" % (kind, outcome, n))
    print("  RSS after warm-up %d kB, at the end %d kB (%+.2f%%); peak %d kB" %
          (warm["rss_kb"], rows[-1]["rss_kb"], 100 * growth, max(r["rss_kb"] for r in rows)))
    print("  open descriptors idle before %d, after %d; samples %s" % (base_fds, rows[-1]["fds"], [r["fds"] for r in rows]))
    print("  inferd_requests_total (generation endpoints) +%d, clients sent %d" % (counted, tally.sent))
    if growth >= 0.05:
        failures.append("RSS grew %.2f%% after warm-up" % (100 * growth))
    if rows[-1]["fds"] > base_fds:
        failures.append("open descriptors %d > %d before the run" % (rows[-1]["fds"], base_fds))
    if counted != tally.sent:
        failures.append("the daemon counted %d requests, the clients sent %d" % (counted, tally.sent))
    if rows[-1]["running"] != 0 or rows[-1]["waiting"] != 0:
        failures.append("requests still running / waiting: %s / %s" % (rows[-1]["running"], rows[-1]["waiting"]))
    failures.extend(tally.unexpected[:20])


def overload_client(i, port, deadline, tally, timeout):
    rng = random.Random(1_000_003 * (i + 1))
    while time.time() < deadline:
        outcome = stream(port, "/v1/completions", {"prompt": "overload %d %d" % (i, rng.randint(0, 1 << 20)),
                                                   "max_tokens": 32, "stream": True}, tally, "overload",
                         timeout=timeout)
        if outcome == "busy":
            time.sleep(0.1)


def overload(daemon, args, failures):
    capacity = args.parallel + args.queue
    clients = 4 * capacity
    tally = Tally()
    deadline = time.time() + args.overload_seconds
    run_clients(lambda i, *a: overload_client(i, daemon.port, *a), clients, deadline, tally, args.request_timeout)
    wait_idle(daemon.port)
    ok = tally.counts.get(("overload", "ok"), 0)
    busy = tally.counts.get(("overload", "busy"), 0)
    t = sorted(tally.ttft)
    p = (lambda q: t[min(len(t) - 1, int(q * len(t)))]) if t else (lambda q: float("nan"))
    print("overload: %d s, %d clients (4 x (%d slots + %d queued)), %d requests: %d served, %d refused with 503 + "
          "Retry-After, %d other" % (args.overload_seconds, clients, args.parallel, args.queue, tally.sent, ok, busy,
                                     len(tally.unexpected)))
    print("  TTFT of the served: p50 %.3f s, p99 %.3f s, max %.3f s" % (p(0.5), p(0.99), t[-1] if t else float("nan")))
    if ok == 0:
        failures.append("overload: no request was served")
    if t and t[-1] > args.ttft_limit:
        failures.append("overload: a served request waited %.1f s for its first token (limit %.1f s)" % (t[-1], args.ttft_limit))
    failures.extend(tally.unexpected[:20])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inferd", default="build/server/inferd")
    ap.add_argument("--model", required=True)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--overload-seconds", type=float, default=0.0)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--queue", type=int, default=8)
    ap.add_argument("--request-timeout", type=float, default=120.0)
    ap.add_argument("--ttft-limit", type=float, default=30.0)
    ap.add_argument("--sample-seconds", type=float, default=10.0)
    ap.add_argument("--csv", default="")
    ap.add_argument("extra", nargs="*", help="more inferd flags (after --)")
    args = ap.parse_args()
    if args.minutes <= 0 and args.overload_seconds <= 0:
        ap.error("nothing to run: give --minutes or --overload-seconds")
    if not os.path.isfile(args.model):
        why = "the model %s is not there" % args.model
        if os.environ.get("CI") == "true":
            print("soak: %s (required under CI=true)" % why)
            return 1
        print("soak: skipped: " + why)
        return 0
    daemon = Daemon(args.inferd, args.model, args.parallel, args.queue, args.extra)
    failures = []
    try:
        if not daemon.wait_ready():
            print("soak: inferd did not start:\n" + open(daemon.log_path).read()[-3000:])
            return 1
        if args.overload_seconds > 0:
            overload(daemon, args, failures)
        if args.minutes > 0:
            soak(daemon, args, failures)
    finally:
        rc = daemon.stop()
    if rc != 0:
        failures.append("inferd exited with %s on SIGTERM" % rc)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        print("(inferd's log: %s)" % daemon.log_path)
        return 1
    os.unlink(daemon.log_path)
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
