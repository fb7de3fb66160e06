#!/usr/bin/env python3
"""Many hosts on one machine: lab up/down times and the start skew of 32 clients against one server.

Usage: bench/multihost.py [--clients 32] [--runs 5] [--time 3]   (root; makes and removes lab 'bmh')

Prints how long `lab up --hosts N+1` and `lab down` took, and for each run of
`fathom stream --server h1 --clients h2..h{N+1}` the measured start skew, the aggregate and the
overlap rates; then the median skew.
"""
import json
import statistics
import subprocess
import sys
import time

import peers

LAB = "bmh"


def fathom(*args, timeout=300):
    return subprocess.run([peers.FATHOM, *args], capture_output=True, text=True, timeout=timeout)


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--time", type=int, default=3)
    a = ap.parse_args()
    n = a.clients + 1
    t = time.monotonic()
    up = fathom("lab", "up", "--name", LAB, "--hosts", str(n))
    up_s = time.monotonic() - t
    if up.returncode != 0:
        sys.exit(f"lab up failed: {up.stderr}")
    skews = []
    try:
        clients = ",".join(f"h{i}" for i in range(2, n + 1))
        for r in range(a.runs):
            out = fathom("stream", "--lab", LAB, "--server", "h1", "--clients", clients, "-t", f"{a.time}s", "--json")
            doc = json.loads(out.stdout)
            if doc.get("error"):
                print(f"  run {r + 1}: error {doc['error']}", file=sys.stderr)
                continue
            s = doc["summary"]
            skews.append(s["start_skew_us"])
            print(
                f"  run {r + 1}: skew {s['start_skew_us']:8.0f} µs  aggregate {s['aggregate_bits_per_second'] / 1e9:6.2f} Gbit/s"
                f"  overlap {s['overlap_bits_per_second'] / 1e9:6.2f} Gbit/s",
                file=sys.stderr,
            )
    finally:
        t = time.monotonic()
        fathom("lab", "down", "--name", LAB)
        down_s = time.monotonic() - t
    print(f"\n## {a.clients} clients against one server, lab on one machine\n")
    print(f"| lab up --hosts {n} | lab down | median start skew | runs |")
    print("|---|---|---|---|")
    med = f"{statistics.median(skews):.0f} µs" if skews else "—"
    print(f"| {up_s:.2f} s | {down_s:.2f} s | {med} | {len(skews)} |")


if __name__ == "__main__":
    main()
