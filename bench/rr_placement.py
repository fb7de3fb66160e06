#!/usr/bin/env python3
"""Request/response on loopback: where the two ends run, alternately in one run.

Usage: bench/rr_placement.py [--rounds 5] [--time 3]
Needs: cargo build --release (or FATHOM=path/to/fathom)

Cases, each round in turn: one connection with both ends pinned to one CPU (--affinity 0/0),
to two CPUs (0/1), and unpinned (the scheduler places them); four connections with worker i of
each end on CPU i (--affinity 0,1/0,1: each flow's ends share a CPU) and unpinned. Prints every
round with the load average, then medians of transactions/s and latency. The machine is shared:
read ratios within one run, not absolutes.
"""
import os
import statistics
import sys

import peers
from rr import fathom_rr

CASES = {
    "1 conn, ends on one CPU (0/0)": ["--affinity", "0/0"],
    "1 conn, ends on two CPUs (0/1)": ["--affinity", "0/1"],
    "1 conn, unpinned": [],
    "4 conns, worker i on CPU i (0,1/0,1)": ["-P", "4", "--affinity", "0,1/0,1"],
    "4 conns, unpinned": ["-P", "4"],
}


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=int, default=3)
    a = ap.parse_args()
    results = {k: [] for k in CASES}
    for r in range(a.rounds):
        for name, extra in CASES.items():
            load = os.getloadavg()[0]
            try:
                results[name].append(fathom_rr(a.time, extra))
                tps, p50, p99 = results[name][-1]
                print(f"  round {r + 1}: {name:38s} {tps:9.0f} tx/s  p50 {p50:7.1f} µs  p99 {p99:8.1f} µs  load {load:.1f}", file=sys.stderr)
            except Exception as e:  # a failing case is reported, the run goes on
                print(f"  round {r + 1}: {name} failed: {e}", file=sys.stderr)
    print(f"\n## rr placement on loopback, {a.time} s runs, medians of {a.rounds}\n")
    print("| case | tx/s | p50 µs | p99 µs | min–max tx/s |")
    print("|---|---|---|---|---|")
    for k, v in results.items():
        if not v:
            continue
        med = [statistics.median(x[i] for x in v) for i in range(3)]
        lo, hi = min(x[0] for x in v), max(x[0] for x in v)
        print(f"| {k} | {med[0]:.0f} | {med[1]:.1f} | {med[2]:.1f} | {lo:.0f}–{hi:.0f} |")


if __name__ == "__main__":
    main()
