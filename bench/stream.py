#!/usr/bin/env python3
"""Stream throughput: fathom against iperf3, iperf2 and nuttcp, alternately in one run, on one path.

Usage: bench/stream.py [--path veth|pinned|loopback] [--rounds 5] [--time 5]
       [--scenarios single,four,thousand] [--equal] [--tools iperf3,...] [--variant NAME=ARGS]
       [--build NAME=BIN] [--rps MASK]

--path: veth (default) a veth pair between two namespaces made for the run, both ends on every
CPU; pinned the same with the server on CPU 0 and the client on CPU 1, every tool alike; loopback
127.0.0.1 with every peer given fathom's loopback placement and buffers (iperf3 -A 0,0 -w 64K).
Prints, per scenario, each tool's settings, median Gbit/s, CPU-s per GB at the client and at the
server, fathom's measurement cost per end, and the ratio fathom / tool, with the load average of
each round. Machines here are shared and noisy: read the same-run ratios, not the absolutes.
--equal gives every tool the same write size (128K) instead of its own default. --variant
NAME=ARGS (repeatable) adds fathom with extra arguments as another tool, for A/B runs; --build
NAME=BIN (repeatable) adds another fathom binary (or a script that runs one) as another tool.
"""
import shlex
import shutil
import statistics
import sys

import peers

SCENARIOS = {
    "single": (1, ["fathom", "iperf3", "iperf2", "nuttcp"]),
    "four": (4, ["fathom", "iperf3", "iperf2", "nuttcp"]),
    "thousand": (1000, ["fathom", "iperf2"]),
}
BINARIES = {"iperf3": "iperf3", "iperf2": "iperf", "nuttcp": "nuttcp"}


def main():
    ap = peers.side_by_side_args(__doc__)
    peers.add_rps_arg(ap)
    ap.add_argument("--scenarios", default="single,four,thousand", help="comma list of: " + ", ".join(SCENARIOS))
    ap.add_argument("--equal", action="store_true", help="same write size (128K) for every tool")
    ap.add_argument("--tools", default="", help="comma list to restrict the peers")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=ARGS",
                    help="fathom with extra arguments, run as one more tool")
    ap.add_argument("--build", action="append", default=[], metavar="NAME=BIN",
                    help="another fathom binary, run as one more tool")
    a = ap.parse_args()
    unknown = sorted(set(a.scenarios.split(",")) - set(SCENARIOS))
    if unknown:
        ap.error(f"unknown scenario {', '.join(unknown)}: pick from {', '.join(SCENARIOS)}")
    write = "128K" if a.equal else None
    variants = {n: (args, None) for n, args in (v.split("=", 1) for v in a.variant)}
    variants.update({n: ("", b) for n, b in (v.split("=", 1) for v in a.build)})
    path = peers.use_path(a.path, a.rps)
    print(f"# path: {path.describe()}; {a.rounds} rounds of {a.time} s, tools alternating in each round")
    try:
        for name in a.scenarios.split(","):
            run_scenario(name, a, write, variants)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        path.down()


def run_scenario(name, a, write, variants):
    parallel, tools = SCENARIOS[name]
    if a.tools:
        tools = [t for t in tools if t == "fathom" or t in a.tools.split(",")]
    missing = [t for t in tools if t in BINARIES and not shutil.which(BINARIES[t])]
    for t in missing:
        print(f"  {t}: not installed (scripts/install-bench-deps.sh), skipped", file=sys.stderr)
    tools = [t for t in tools if t not in missing] + list(variants)
    results = {t: [] for t in tools}
    loads = []
    for r in range(a.rounds):
        loads.append(peers.load())
        for t in tools:
            try:
                if t in variants:
                    args, binary = variants[t]
                    run = peers.fathom(a.time, parallel, write, shlex.split(args), binary)
                else:
                    run = peers.TOOLS[t](a.time, parallel, write)
            except Exception as e:  # a peer that fails is reported, the run goes on
                print(f"  {name} round {r + 1}: {t} failed: {e}", file=sys.stderr)
                continue
            results[t].append(run)
            gb = run.bps * a.time / 8 / 1e9
            print(f"  {name} round {r + 1} (load {loads[-1]:.1f}): {t:9s} {run.bps / 1e9:7.2f} Gbit/s  "
                  f"CPU-s/GB client {run.cpu_client / gb if gb else 0:6.3f} server {run.cpu_server / gb if gb else 0:6.3f}"
                  f"{'  measurement, % of a CPU per end ' + str(run.extra['measurement_percent']) if 'measurement_percent' in run.extra else ''}",
                  file=sys.stderr)
    loads.append(peers.load())
    report(name, parallel, a.time, results, loads)


def report(name, parallel, secs, results, loads):
    print(f"\n## {name}: -P {parallel}, {secs} s, load average {min(loads):.1f}–{max(loads):.1f}")
    print("| tool | settings | median Gbit/s | CPU-s/GB client | CPU-s/GB server | fathom / tool |")
    print("|---|---|---|---|---|---|")
    med = {}
    for t, rs in results.items():
        if not rs:
            continue
        per_gb = lambda cpu: statistics.median(getattr(x, cpu) / (x.bps * secs / 8 / 1e9) for x in rs if x.bps > 0)
        med[t] = (statistics.median(x.bps for x in rs), per_gb("cpu_client"), per_gb("cpu_server"), rs[-1].settings)
    f = med.get("fathom", (0,))[0]
    for t, (bps, cc, cs, settings) in med.items():
        ratio = "—" if t == "fathom" else f"{f / bps:.2f}"
        print(f"| {t} | {settings} | {bps / 1e9:.2f} | {cc:.3f} | {cs:.3f} | {ratio} |")
    # Every fathom run's (the default binary's, a --variant's or a --build's): the same-run figures
    # the sampler's changes are judged by.
    for t, rs in results.items():
        meas = [m for x in rs for m in x.extra.get("measurement_percent", [])]
        if meas:
            who = "fathom's" if t == "fathom" else f"{t} (fathom)"
            print(f"{who} measurement (sampler) cost per end, % of one CPU: median {statistics.median(meas):.3f}, max {max(meas):.3f}")


if __name__ == "__main__":
    main()
