#!/usr/bin/env python3
"""rr's cost per transaction in what load does not move: user-space instructions (callgrind) and
system calls (strace -c -f), for one or more fathom builds, on loopback, both ends in one process.

Usage: bench/rr_cost.py [--sizes 1,14] [--small 3000] [--large 15000] BIN [BIN ...]
Needs: valgrind, strace (scripts/install-bench-deps.sh).

Instructions per transaction are the difference of two runs of `fathom rr -n SMALL` and `-n LARGE`
divided by the difference of their transactions, so the set-up (agent, handshake, report) cancels
out; both ends' instructions count (one process), so one transaction's figure covers the asking
and the answering side. System calls are counted the same way (the difference of the two runs), per end (halved), by
name. On a VM without a PMU `perf stat -e instructions` is
not supported; callgrind counts user space only (the kernel's part is what the system calls say).
"""
import json
import re
import subprocess
import tempfile

import peers

TIMEOUT = 600


def rr(binary, n, size, wrap):
    """Runs `BINARY rr -n N --size SIZE` under WRAP; returns (transactions, wrapper's stderr)."""
    cmd = [*wrap, binary, "rr", "-n", str(n), "--size", str(size), "--json", "--no-store"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    doc = json.loads(p.stdout)
    if doc.get("error"):
        raise RuntimeError(doc["error"])
    return n, p.stderr


def callgrind(run, *options):
    """User instructions of `run(WRAP)` (a command run under the wrapper WRAP, returning its
    stderr) under callgrind with OPTIONS."""
    with tempfile.NamedTemporaryFile(suffix=".cg") as out:
        err = run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *options])
    m = re.search(r"I\s+refs:\s+([0-9,]+)", err)
    if not m:
        raise RuntimeError(f"callgrind said: {err[-400:]!r}")
    return int(m.group(1).replace(",", ""))


def strace(run):
    """System calls by name of `run(WRAP)` (as for callgrind) under `strace -c -f`."""
    with tempfile.NamedTemporaryFile(suffix=".st", mode="r") as out:
        run(["strace", "-c", "-f", "-o", out.name])
        text = out.read()
    calls = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
            calls[f[-1]] = int(f[3])
    return calls


def per_end(big, small, span):
    """System calls per transaction and end, from the counts `big` and `small` of two runs
    `span` transactions apart: "total (name n, ...)", the busiest first."""
    per_tx = {k: (v - small.get(k, 0)) / span / 2 for k, v in big.items()}
    hot = {k: v for k, v in per_tx.items() if v >= 0.01}
    per = ", ".join(f"{k} {v:.2f}" for k, v in sorted(hot.items(), key=lambda kv: -kv[1]))
    return f"{sum(hot.values()):.2f} ({per})"


def instructions(binary, n, size):
    return callgrind(lambda wrap: rr(binary, n, size, wrap)[1])


def syscalls(binary, n, size):
    return strace(lambda wrap: rr(binary, n, size, wrap)[1])


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--sizes", default="1,14")
    ap.add_argument("--small", type=int, default=3000)
    ap.add_argument("--large", type=int, default=15000)
    ap.add_argument("binaries", nargs="+")
    a = ap.parse_args()
    print("| build | size | user instructions per tx (both ends) | system calls per tx per end |")
    print("|---|---|---|---|")
    for size in [int(s) for s in a.sizes.split(",")]:
        for b in a.binaries:
            ir = (instructions(b, a.large, size) - instructions(b, a.small, size)) / (a.large - a.small)
            calls = per_end(syscalls(b, a.large, size), syscalls(b, a.small, size), a.large - a.small)
            print(f"| {b} | {size} B | {ir:.0f} | {calls} |", flush=True)


if __name__ == "__main__":
    peers.run_main(main)
