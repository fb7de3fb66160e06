#!/usr/bin/env python3
"""Request/response: fathom rr against sockperf ping-pong, alternately in one run, on one path.

Usage: bench/rr.py [--path veth|pinned|loopback] [--rps MASK] [--rounds 5] [--time 5] [--quick]
       [--before BIN] [--build NAME=BIN] [--same-cpu CPU] [--cpu-cost]
Needs: cargo build --release && cargo build --release -p fathom-engine --example spin_pingpong

Scenarios: TCP RR with 1-byte, 14-byte (sockperf's smallest) and 1460-byte messages, one
connection, fathom and sockperf ping-pong with their defaults (sockperf refuses messages under
14 B, so fathom's 1 B is set beside its 14 B); on loopback also fathom with
--busy-poll, with -P 64, crr, and a spinning ping-pong reference (--quick: only the 1 B and 14 B
cases). --path as bench/stream.py (peers.py); on loopback sockperf gets the placement fathom
chooses there (its client on the first half of the CPUs, its server on the rest: taskset), so
that neither tool's figure is a same-CPU artifact. netperf TCP_RR is not in Debian 12's main
archive.
Prints medians of transactions/s and latency percentiles (round trips: sockperf's half round
trips are doubled), CPU-s per million transactions at each end, and the ratio fathom /
sockperf, with the load. Machines here are shared and noisy: read ratios, not absolutes.
`--before BIN` also runs another build's 1 B and 14 B cases in every round (a before/after
ratio in one run); `--build NAME=BIN` (repeatable) does the same for any number of builds (or
scripts that run one), each named NAME. `--same-cpu CPU` runs everything (both ends of every
tool, and this script) on that one CPU: the rate then follows each tool's CPU work per
transaction, not where the scheduler woke each end, so builds and tools compare with less noise.
`--cpu-cost` measures, instead of rates, the CPU each end spends per 14 B transaction (fathom,
each --build, sockperf), as the difference of a long and a short run's CPU over the difference of
their transactions, so that what a run pays once (process and agent start, handshake, report)
cancels; a loaded machine moves it less than it moves a rate.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

import peers

PORT = 11711
# Where sockperf's client and server run (CPU lists; None: anywhere). On --path loopback every
# case gets fathom's own placement there: the client end on the first half of the CPUs, the
# server end on the rest (crates/engine/src/path.rs).
PLACEMENT = (None, None)


def fathom_rr(secs, extra, binary=None):
    doc, cpu_c, cpu_s = peers.fathom_json(["rr", "-t", f"{secs}s", *extra], secs, binary)
    s = doc["summary"]["rr"]
    lat = s.get("latency_us") or {}
    return s["transactions_per_second"], lat.get("p50", 0.0), lat.get("p99", 0.0), cpu_c, cpu_s


def sockperf_run(secs, size):
    """One sockperf ping-pong run against its server: (output without colours, client CPU s,
    server CPU s)."""
    host = peers.PATH.host
    srv = peers._server([*taskset(PLACEMENT[1]), "sockperf", "server", "--tcp", "-i", host, "-p", str(PORT)])
    try:
        rc, out, cpu_c = peers._client(
            [*taskset(PLACEMENT[0]), "sockperf", "ping-pong", "--tcp", "-i", host, "-p", str(PORT), "-t", str(secs), "-m", str(size), "--full-rtt"],
            secs)
    finally:
        cpu_s = peers._stop(srv)
    return re.sub(r"\x1b\[[0-9;]*m", "", out), cpu_c, cpu_s


def taskset(cpus):
    """The argv prefix confining a command to `cpus` (none for None)."""
    return ["taskset", "-c", ",".join(map(str, cpus))] if cpus else []


def loopback_placement():
    """fathom's rr placement on loopback, (client CPUs, server CPUs): the first half of this
    process's CPUs and the rest."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return (None, None)
    half = len(cpus) // 2
    return (cpus[:half], cpus[half:])


def sockperf_pp(secs, size):
    out, cpu_c, cpu_s = sockperf_run(secs, size)
    dur = re.search(r"\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", out)
    p50 = re.search(r"percentile 50\.000 =\s+([0-9.]+)", out)
    p99 = re.search(r"percentile 99\.000 =\s+([0-9.]+)", out)
    if not (dur and p50 and p99):
        raise RuntimeError(f"sockperf said: {out[-400:]!r}")
    return int(dur.group(2)) / float(dur.group(1)), float(p50.group(1)), float(p99.group(1)), cpu_c, cpu_s


def main():
    ap = peers.side_by_side_args(__doc__)
    peers.add_rps_arg(ap)
    ap.add_argument("--quick", action="store_true", help="only the 1 B and 14 B cases")
    ap.add_argument("--before", help="another fathom build whose 1 B and 14 B cases run in every round too")
    ap.add_argument("--build", action="append", default=[], metavar="NAME=BIN",
                    help="another fathom build (or a script running one) whose 1 B and 14 B cases run in every round too")
    ap.add_argument("--same-cpu", type=int, metavar="CPU",
                    help="run both ends of every case (and this script) on this one CPU")
    ap.add_argument("--cpu-cost", action="store_true",
                    help="CPU per transaction at each end instead of rates (14 B, two run lengths differenced)")
    a = ap.parse_args()
    if a.same_cpu is not None:
        os.sched_setaffinity(0, {a.same_cpu})
    builds = [b.split("=", 1) for b in a.build]
    if a.before:
        builds.insert(0, ("before", a.before))
    if a.cpu_cost:
        return cpu_cost(a, builds)
    cases = {
        "fathom 1 B": lambda: fathom_rr(a.time, []),
        "sockperf 14 B": lambda: sockperf_pp(a.time, 14),
        "fathom 14 B": lambda: fathom_rr(a.time, ["--size", "14"]),
    }
    for name, binary in builds:
        cases[f"{name} 1 B"] = lambda b=binary: fathom_rr(a.time, [], b)
        cases[f"{name} 14 B"] = lambda b=binary: fathom_rr(a.time, ["--size", "14"], b)
    if not a.quick:
        cases["sockperf 1460 B"] = lambda: sockperf_pp(a.time, 1460)
        cases["fathom 1460 B"] = lambda: fathom_rr(a.time, ["--size", "1460"])
    if not a.quick and a.path == "loopback":
        cases.update({
            "spinning ping-pong 1 B": lambda: spin(a.time),
            "fathom 1 B --busy-poll --affinity 0/1": lambda: fathom_rr(a.time, ["--busy-poll", "--affinity", "0/1"]),
            "fathom 1 B --busy-poll": lambda: fathom_rr(a.time, ["--busy-poll"]),
            "fathom 1 B -P 64": lambda: fathom_rr(a.time, ["-P", "64"]),
            "fathom crr 1 B (connections/s)": lambda: fathom_crr(a.time, []),
        })
    if not shutil.which("sockperf"):
        print("sockperf: not installed (scripts/install-bench-deps.sh), skipped", file=sys.stderr)
        cases = {k: v for k, v in cases.items() if not k.startswith("sockperf")}
    global PLACEMENT
    if a.path == "loopback" and a.same_cpu is None:
        PLACEMENT = loopback_placement()
    path = peers.use_path(a.path, a.rps)
    try:
        results, loads = run(cases, a.rounds)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        path.down()
    report(results, a, path, loads)


def run(cases, rounds):
    results, loads = {k: [] for k in cases}, [peers.load()]
    for r in range(rounds):
        for name, fn in cases.items():
            try:
                results[name].append(fn())
                tps, p50, p99, _, _ = results[name][-1]
                print(f"  round {r + 1} (load {peers.load():.1f}): {name:24s} {tps:10.0f} tx/s  p50 {p50:8.1f} µs  p99 {p99:8.1f} µs", file=sys.stderr)
            except Exception as e:  # a failing case is reported, the run goes on
                print(f"  round {r + 1}: {name} failed: {e}", file=sys.stderr)
        loads.append(peers.load())
    return results, loads


def report(results, a, path, loads):
    med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in results.items() if v}
    cpu = {k: tuple(statistics.median(x[i] / (x[0] * a.time) * 1e6 for x in v if x[0]) for i in (3, 4)) for k, v in results.items() if v}
    where = f"; --same-cpu {a.same_cpu}: both ends on CPU {a.same_cpu} only" if a.same_cpu is not None else ""
    if PLACEMENT[0]:
        where += f"; sockperf's client on CPU {','.join(map(str, PLACEMENT[0]))}, its server on {','.join(map(str, PLACEMENT[1]))}, as fathom places its ends"
    print(f"\n## request/response, {path.describe()}{where}, {a.time} s, medians of {a.rounds}, load {min(loads):.1f}–{max(loads):.1f}\n")
    print("| case | tx/s | p50 µs | p99 µs | CPU-s per M tx client / server | ratio (tx/s) to |")
    print("|---|---|---|---|---|---|")
    for k, (tps, p50, p99) in med.items():
        peer = {
            "fathom 1 B": "sockperf 14 B",
            "fathom 14 B": "sockperf 14 B",
            "fathom 1460 B": "sockperf 1460 B",
            "fathom 1 B --busy-poll --affinity 0/1": "spinning ping-pong 1 B",
            "fathom 1 B --busy-poll": "spinning ping-pong 1 B",
            "fathom 1 B -P 64": "fathom 1 B",
        }.get(k)
        if peer is None and k.endswith((" 1 B", " 14 B")) and not k.startswith("sockperf"):
            peer = "fathom " + k.rsplit(" ", 2)[-2] + " B"
        if peer == k:
            peer = None
        ratio = f"{tps / med[peer][0]:.2f} × {peer}" if peer in med else "—"
        print(f"| {k} | {tps:.0f} | {p50:.1f} | {p99:.1f} | {cpu[k][0]:.1f} / {cpu[k][1]:.1f} | {ratio} |")


# The two run lengths --cpu-cost differences: fathom's in transactions, sockperf's (it has no
# count) in seconds.
COST_TX = (10_000, 50_000)
COST_SECS = (1, 3)


def fathom_count(n, binary=None):
    """`fathom rr -n N --size 14` (or BINARY's): (transactions, client CPU s, server CPU s)."""
    doc, cpu_c, cpu_s = peers.fathom_json(["rr", "-n", str(n), "--size", "14"], 60, binary)
    return doc["summary"]["rr"]["transactions"], cpu_c, cpu_s


def sockperf_count(secs):
    """sockperf ping-pong of 14 B for SECS: (messages answered in the whole run, client CPU s,
    server CPU s)."""
    out, cpu_c, cpu_s = sockperf_run(secs, 14)
    m = re.search(r"\[Total Run\] RunTime=[0-9.]+ sec; Warm up time=\d+ msec; SentMessages=\d+; ReceivedMessages=(\d+)", out)
    if not m:
        raise RuntimeError(f"sockperf said: {out[-400:]!r}")
    return int(m.group(1)), cpu_c, cpu_s


def per_tx_cpu(short, long):
    """CPU µs per transaction at each end, (client, server): the long run's CPU less the short
    run's, over its transactions less the short run's."""
    (t1, c1, s1), (t2, c2, s2) = short(), long()
    if t2 <= t1:
        raise RuntimeError(f"the long run answered {t2} transactions, the short one {t1}")
    return (c2 - c1) / (t2 - t1) * 1e6, (s2 - s1) / (t2 - t1) * 1e6


def cpu_cost(a, builds):
    """--cpu-cost: every tool's CPU per transaction, alternately, `a.rounds` times; prints the
    medians and the ratio of each fathom build's (both ends together) to sockperf's."""
    cases = {"fathom 14 B": lambda: per_tx_cpu(lambda: fathom_count(COST_TX[0]), lambda: fathom_count(COST_TX[1]))}
    for name, binary in builds:
        cases[f"{name} 14 B"] = lambda b=binary: per_tx_cpu(lambda: fathom_count(COST_TX[0], b), lambda: fathom_count(COST_TX[1], b))
    cases["sockperf 14 B"] = lambda: per_tx_cpu(lambda: sockperf_count(COST_SECS[0]), lambda: sockperf_count(COST_SECS[1]))
    path = peers.use_path(a.path, a.rps)
    results, loads = {k: [] for k in cases}, [peers.load()]
    try:
        for r in range(a.rounds):
            for name, fn in cases.items():
                try:
                    results[name].append(fn())
                    c, s = results[name][-1]
                    print(f"  round {r + 1} (load {peers.load():.1f}): {name:16s} CPU µs per transaction {c:6.2f} / {s:6.2f}", file=sys.stderr)
                except Exception as e:  # a failing case is reported, the run goes on
                    print(f"  round {r + 1}: {name} failed: {e}", file=sys.stderr)
            loads.append(peers.load())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        path.down()
    print(f"\n## CPU per request/response transaction, {path.describe()}, 14 B, medians of {a.rounds}, load {min(loads):.1f}–{max(loads):.1f}\n")
    print("| case | CPU µs per transaction client / server | both ends | ratio (both ends) to sockperf |")
    print("|---|---|---|---|")
    peer = [c + s for c, s in results.get("sockperf 14 B", [])]
    for k, v in results.items():
        if not v:
            continue
        both = statistics.median(c + s for c, s in v)
        ratio = f"{both / statistics.median(peer):.2f} ×" if peer and not k.startswith("sockperf") else "—"
        print(f"| {k} | {statistics.median(c for c, _ in v):.2f} / {statistics.median(s for _, s in v):.2f} | {both:.2f} | {ratio} |")


SPIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "examples", "spin_pingpong")


def spin(secs):
    """The minimal spinning ping-pong (crates/engine/examples/spin_pingpong.rs), one end per CPU."""
    out = json.loads(subprocess.run([SPIN, str(secs)], capture_output=True, text=True, timeout=secs + 60).stdout)
    return out["transactions_per_second"], out["p50_us"], 0.0, 0.0, 0.0


def fathom_crr(secs, extra):
    """`fathom crr` with `extra` arguments: connections/s, p50 and p99 µs, client and server CPU s."""
    doc, cpu_c, cpu_s = peers.fathom_json(["crr", "-t", f"{secs}s", *extra], secs)
    s = doc["summary"]["rr"]
    return s["connections_per_second"], s["latency_us"]["p50"], s["latency_us"]["p99"], cpu_c, cpu_s


if __name__ == "__main__":
    main()
