#!/usr/bin/env python3
"""Stream throughput on loopback: fathom against iperf3, iperf2 and nuttcp, alternately in one run.

Usage: bench/stream.py [--rounds 3] [--time 10] [--scenarios single,four,thousand] [--equal]

Prints, per scenario, each tool's median Gbit/s and CPU seconds per GB over the rounds, and the
ratio fathom / tool. Machines here are shared and noisy: read the ratios, not the absolutes.
--equal gives every tool the same write size (128K) instead of its own default.
"""
import argparse
import statistics
import sys

import peers

SCENARIOS = {
    "single": (1, ["fathom", "iperf3", "iperf2", "nuttcp"]),
    "four": (4, ["fathom", "iperf3", "iperf2", "nuttcp"]),
    "thousand": (1000, ["fathom", "iperf2"]),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--scenarios", default="single,four,thousand")
    ap.add_argument("--equal", action="store_true", help="same write size (128K) for every tool")
    ap.add_argument("--tools", default="", help="comma list to restrict the peers")
    a = ap.parse_args()
    write = "128K" if a.equal else None
    for name in a.scenarios.split(","):
        parallel, tools = SCENARIOS[name]
        if a.tools:
            tools = [t for t in tools if t == "fathom" or t in a.tools.split(",")]
        results = {t: [] for t in tools}
        for r in range(a.rounds):
            for t in tools:
                try:
                    bps, cpu = peers.TOOLS[t](a.time, parallel, write)
                except Exception as e:  # a peer that fails is reported, the run goes on
                    print(f"  {name} round {r + 1}: {t} failed: {e}", file=sys.stderr)
                    continue
                results[t].append((bps, cpu))
                gb = bps * a.time / 8 / 1e9
                print(f"  {name} round {r + 1}: {t:7s} {bps / 1e9:7.2f} Gbit/s  {cpu / gb if gb else 0:6.3f} CPU-s/GB", file=sys.stderr)
        report(name, parallel, a.time, results, write)


def report(name, parallel, secs, results, write):
    print(f"\n## {name}: -P {parallel}, {secs} s, {'write 128K for all' if write else 'each tool with its defaults'}")
    print(f"| tool | median Gbit/s | CPU-s per GB | fathom / tool |")
    print(f"|---|---|---|---|")
    med = {}
    for t, rs in results.items():
        if not rs:
            continue
        bps = statistics.median(b for b, _ in rs)
        cpu_gb = statistics.median(c / (b * secs / 8 / 1e9) for b, c in rs if b > 0)
        med[t] = (bps, cpu_gb)
    f = med.get("fathom", (0, 0))[0]
    for t, (bps, cpu_gb) in med.items():
        ratio = "—" if t == "fathom" else f"{f / bps:.2f}"
        print(f"| {t} | {bps / 1e9:.2f} | {cpu_gb:.3f} | {ratio} |")


if __name__ == "__main__":
    main()
