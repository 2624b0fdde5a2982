"""Waiting for a server started by a measuring script (tools/server-compare.py,
tools/spec-compare.py) to answer GET /health with 200."""
import time
import urllib.request


def wait_healthy(url, proc, timeout_s=300):
    """True once url/health answers 200; False when proc exits first or timeout_s passes."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except Exception:
            pass
        time.sleep(0.25)
    return False
