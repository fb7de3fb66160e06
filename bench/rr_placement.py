#!/usr/bin/env python3
"""Request/response on loopback: where the two ends run, alternately in one run, fathom and sockperf
placed alike.

Usage: bench/rr_placement.py [--rounds 5] [--time 3] [--quick]
Needs: cargo build --release (or FATHOM=path/to/fathom); sockperf (scripts/install-bench-deps.sh)

Three placements of the two ends on this machine's CPUs (split as fathom splits them: the client
end on the first half, the server end on the rest; on 2 CPUs, CPU 0 and CPU 1):
  same CPU  both ends on the first CPU (fathom --affinity 0/0; with 4 connections worker i of
            each end on CPU i, --affinity 0,1/0,1, so each flow's two ends share a CPU);
  apart     each end on CPUs of its own, as between two hosts (--affinity 0/1 --threads 1);
  unpinned  the scheduler places them (--threads 1 or 2: any thread count turns fathom's own
            loopback placement off).
Cases, each round in turn: TCP rr of 14 B (sockperf's smallest message) with 1 connection for
every placement, fathom's default (no placement flag: what this build chooses) and sockperf
ping-pong in the same three placements (taskset for both of its processes); 4 connections in the
three placements and the default; crr and UDP rr of 1 B with 1 connection in the three
placements (--quick: only the 1-connection TCP cases). Prints every round with the load average,
then medians of transactions/s and latency with the min-max of transactions/s, and each fathom
case's ratio to sockperf in the same placement. The machine is shared: read ratios within one
run, not absolutes.
"""
import os
import statistics
import sys

import peers
import rr

CPUS = sorted(os.sched_getaffinity(0))
CLIENT = CPUS[: max(1, len(CPUS) // 2)]
SERVER = CPUS[len(CLIENT):] or CLIENT


def csv(cpus):
    return ",".join(map(str, cpus))


def first(cpus, n):
    """The first `n` CPUs of `cpus` as fathom's --affinity list."""
    return csv(cpus[:n])


PLACE = {
    "same CPU": lambda conns: ["--affinity", f"{first(CPUS, min(conns, len(CPUS)))}/{first(CPUS, min(conns, len(CPUS)))}"],
    "apart": lambda conns: ["--affinity", f"{csv(CLIENT)}/{csv(SERVER)}", "--threads", str(min(len(CLIENT), len(SERVER)))],
    "unpinned": lambda conns: ["--threads", str(min(conns, len(CPUS)))],
    "default": lambda conns: [],
}
# Where sockperf's (client, server) run in each placement; None: anywhere.
SOCKPERF = {"same CPU": (CPUS[:1], CPUS[:1]), "apart": (CLIENT, SERVER), "unpinned": (None, None)}


def sockperf(secs, where):
    """sockperf ping-pong of 14 B with its client and server confined to `where`."""
    rr.PLACEMENT = where
    try:
        return rr.sockperf_pp(secs, 14)
    finally:
        rr.PLACEMENT = (None, None)


def fathom(secs, kind, conns, place, size):
    args = [*(["-P", str(conns)] if conns > 1 else []), *PLACE[place](conns), "--size", size]
    if kind == "crr":
        return rr.fathom_crr(secs, args)
    return rr.fathom_rr(secs, [*(["--udp"] if kind == "udp rr" else []), *args])


def cases(quick):
    c = {}
    for place in ("same CPU", "apart", "unpinned", "default"):
        c[f"rr 14 B, 1 conn, {place}"] = lambda s, p=place: fathom(s, "rr", 1, p, "14")
        if place in SOCKPERF:
            c[f"sockperf 14 B, {place}"] = lambda s, p=place: sockperf(s, SOCKPERF[p])
    if quick:
        return c
    for place in ("same CPU", "apart", "unpinned", "default"):
        c[f"rr 14 B, 4 conns, {place}"] = lambda s, p=place: fathom(s, "rr", 4, p, "14")
    for kind in ("crr", "udp rr"):
        for place in ("same CPU", "apart", "unpinned"):
            c[f"{kind} 1 B, 1 conn, {place}"] = lambda s, k=kind, p=place: fathom(s, k, 1, p, "1")
    return c


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="only the 1-connection TCP rr cases")
    a = ap.parse_args()
    if len(CPUS) < 2:
        raise SystemExit("needs at least 2 CPUs: the placements differ only there")
    todo = cases(a.quick)
    results, loads = {k: [] for k in todo}, [peers.load()]
    for r in range(a.rounds):
        for name, fn in todo.items():
            try:
                results[name].append(fn(a.time))
                tps, p50, p99 = results[name][-1][:3]
                print(f"  round {r + 1} (load {peers.load():.1f}): {name:32s} {tps:9.0f} tx/s  p50 {p50:8.1f} µs  p99 {p99:8.1f} µs", file=sys.stderr)
            except Exception as e:  # a failing case is reported, the run goes on
                print(f"  round {r + 1}: {name} failed: {e}", file=sys.stderr)
        loads.append(peers.load())
    report(results, a, loads)


def report(results, a, loads):
    print(f"\n## rr placement on loopback, client end on CPU {csv(CLIENT)}, server end on CPU {csv(SERVER)} when apart; "
          f"{a.time} s runs, medians of {a.rounds}, load {min(loads):.1f}–{max(loads):.1f}\n")
    print("| case | tx/s | min–max tx/s | p50 µs | p99 µs | ratio to sockperf, same placement |")
    print("|---|---|---|---|---|---|")
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in results.items() if v}
    for k, v in results.items():
        if not v:
            continue
        lo, hi = min(x[0] for x in v), max(x[0] for x in v)
        peer = "sockperf 14 B, " + k.rsplit(", ", 1)[1]
        ratio = f"{med[k][0] / med[peer][0]:.2f} ×" if k.startswith("rr 14 B, 1 conn") and peer in med else "—"
        print(f"| {k} | {med[k][0]:.0f} | {lo:.0f}–{hi:.0f} | {med[k][1]:.1f} | {med[k][2]:.1f} | {ratio} |")


if __name__ == "__main__":
    peers.run_main(main)
