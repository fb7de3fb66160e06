#!/usr/bin/env python3
"""Request/response on loopback: fathom rr against sockperf ping-pong, alternately in one run.

Usage: bench/rr.py [--rounds 3] [--time 10]
Needs: cargo build --release && cargo build --release -p fathom-engine --example spin_pingpong

Scenarios: TCP RR with 14-byte messages (sockperf's smallest) and 1460-byte messages, one
connection; fathom alone with 1 byte, with --busy-poll, with -P 64, and crr. Prints medians of
transactions/s and latency percentiles (round trips: sockperf's half round trips are doubled),
and the ratio fathom / sockperf. Machines here are shared and noisy: read ratios, not absolutes.
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

import peers

PORT = 11711


def fathom_rr(secs, extra):
    out = subprocess.run([peers.FATHOM, "rr", "-t", f"{secs}s", "--json", *extra], capture_output=True, text=True, timeout=secs + 60).stdout
    s = json.loads(out)["summary"]["rr"]
    lat = s.get("latency_us") or {}
    return s["transactions_per_second"], lat.get("p50", 0.0), lat.get("p99", 0.0)


def sockperf_pp(secs, size):
    srv = subprocess.Popen(["sockperf", "server", "--tcp", "-i", "127.0.0.1", "-p", str(PORT)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = subprocess.run(
            ["sockperf", "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", str(PORT), "-t", str(secs), "-m", str(size), "--full-rtt"],
            capture_output=True, text=True, timeout=secs + 60,
        ).stdout
    finally:
        os.kill(srv.pid, signal.SIGTERM)
        srv.wait()
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    dur = re.search(r"\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", out)
    p50 = re.search(r"percentile 50\.000 =\s+([0-9.]+)", out)
    p99 = re.search(r"percentile 99\.000 =\s+([0-9.]+)", out)
    if not (dur and p50 and p99):
        raise RuntimeError(f"sockperf said: {out[-400:]!r}")
    return int(dur.group(2)) / float(dur.group(1)), float(p50.group(1)), float(p99.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=10)
    a = ap.parse_args()
    cases = {
        "sockperf 14 B": lambda: sockperf_pp(a.time, 14),
        "fathom 14 B": lambda: fathom_rr(a.time, ["--size", "14"]),
        "sockperf 1460 B": lambda: sockperf_pp(a.time, 1460),
        "fathom 1460 B": lambda: fathom_rr(a.time, ["--size", "1460"]),
        "fathom 1 B": lambda: fathom_rr(a.time, []),
        "spinning ping-pong 1 B": lambda: spin(a.time),
        "fathom 1 B --busy-poll --affinity 0/1": lambda: fathom_rr(a.time, ["--busy-poll", "--affinity", "0/1"]),
        "fathom 1 B --busy-poll": lambda: fathom_rr(a.time, ["--busy-poll"]),
        "fathom 1 B -P 64": lambda: fathom_rr(a.time, ["-P", "64"]),
        "fathom crr 1 B (connections/s)": lambda: crr(a.time),
    }
    results = {k: [] for k in cases}
    for r in range(a.rounds):
        for name, fn in cases.items():
            try:
                results[name].append(fn())
                tps, p50, p99 = results[name][-1]
                print(f"  round {r + 1}: {name:24s} {tps:10.0f} tx/s  p50 {p50:8.1f} µs  p99 {p99:8.1f} µs", file=sys.stderr)
            except Exception as e:  # a failing case is reported, the run goes on
                print(f"  round {r + 1}: {name} failed: {e}", file=sys.stderr)
    med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in results.items() if v}
    print(f"\n## request/response, loopback, {a.time} s, medians of {a.rounds}\n")
    print("| case | tx/s | p50 µs | p99 µs | ratio (tx/s) to |")
    print("|---|---|---|---|---|")
    for k, (tps, p50, p99) in med.items():
        peer = {
            "fathom 14 B": "sockperf 14 B",
            "fathom 1460 B": "sockperf 1460 B",
            "fathom 1 B --busy-poll --affinity 0/1": "spinning ping-pong 1 B",
            "fathom 1 B --busy-poll": "spinning ping-pong 1 B",
            "fathom 1 B -P 64": "fathom 1 B",
        }.get(k)
        ratio = f"{tps / med[peer][0]:.2f} × {peer}" if peer in med else "—"
        print(f"| {k} | {tps:.0f} | {p50:.1f} | {p99:.1f} | {ratio} |")


SPIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "examples", "spin_pingpong")


def spin(secs):
    """The minimal spinning ping-pong (crates/engine/examples/spin_pingpong.rs), one end per CPU."""
    out = json.loads(subprocess.run([SPIN, str(secs)], capture_output=True, text=True, timeout=secs + 60).stdout)
    return out["transactions_per_second"], out["p50_us"], 0.0


def crr(secs):
    out = subprocess.run([peers.FATHOM, "crr", "-t", f"{secs}s", "--json"], capture_output=True, text=True, timeout=secs + 60).stdout
    s = json.loads(out)["summary"]["rr"]
    return s["connections_per_second"], s["latency_us"]["p50"], s["latency_us"]["p99"]


if __name__ == "__main__":
    main()
