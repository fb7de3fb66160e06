#!/usr/bin/env python3
"""Profiles against the built-in tests, same run, alternating: the profile equivalent of
`stream` (one flow writing 1 MiB for TIME s) and of `rr` (profiles/netperf-rr.toml: 1-byte
write and read, Nagle off) beside `fathom stream -t TIME` and `fathom rr -t TIME --nodelay`, on
loopback with in-process agents, ROUNDS rounds (at least 3), the order of the cases reversed
every other round; medians and the ratio profile / built-in (target >= 0.95), and the median
of each round's own ratio (the two cases of a round ran a few seconds apart, under one load).

Usage: bench/profile.py [--rounds 3] [--time 3] [--before OLDBIN] [--only stream|rr] [BIN]

BIN is the build to measure (default: $CARGO_TARGET_DIR/release/fathom, else
target/release/fathom; build it with `cargo build --release` first). `--before OLDBIN` runs
another build's profile cases in every round too, and prints this build's profile figures
against it (a before/after ratio in one run). Prints the load average at the start and end.
Loopback only; every run is bounded in time and ends by itself.
"""
import json
import os
import statistics
import subprocess
import tempfile

import peers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
STREAM_PROFILE = """name = "stream-1m"
[vars]
duration = "3s"
[[group]]
name = "stream"
[[group.transaction]]
flowops = [{ op = "connect" }]
[[group.transaction]]
duration = "$duration"
flowops = [{ op = "write", size = "1M" }]
"""


def fathom(binary, args, secs):
    """`BINARY ARGS --json --no-store`'s document (an error if it failed)."""
    p = subprocess.run([binary, *args, "--json", "--no-store"], capture_output=True, text=True,
                       timeout=secs + 60)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"{args}: exit {p.returncode}: {p.stderr[-400:]}")
    if doc.get("error"):
        raise RuntimeError(f"{args}: {doc['error']}")
    return doc


def profile(binary, path, secs):
    """The first group's report of `profile run PATH` for SECS."""
    doc = fathom(binary, ["profile", "run", path, "--set", f"duration={secs}s"], secs)
    report = doc["groups"][0]["report"]
    if report.get("error"):
        raise RuntimeError(f"profile {path}: {report['error']}")
    return report["summary"]


def cases(binary, before, secs, stream_toml):
    """name -> (unit, a function returning this round's figure)."""
    rr_toml = os.path.join(ROOT, "profiles", "netperf-rr.toml")
    c = {
        "stream profile": lambda: profile(binary, stream_toml, secs)["bits_per_second"],
        "stream built-in": lambda: fathom(binary, ["stream", "-t", f"{secs}s"], secs)["summary"]["bits_per_second"],
        "rr profile": lambda: profile(binary, rr_toml, secs)["profile"]["iterations_per_second"],
        "rr built-in": lambda: fathom(binary, ["rr", "-t", f"{secs}s", "--nodelay"], secs)["summary"]["rr"]["transactions_per_second"],
    }
    if before:
        c["stream profile before"] = lambda: profile(before, stream_toml, secs)["bits_per_second"]
        c["rr profile before"] = lambda: profile(before, rr_toml, secs)["profile"]["iterations_per_second"]
    return c


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=3, help="seconds per run")
    ap.add_argument("--before", help="another fathom build whose profile cases run in every round too")
    ap.add_argument("--only", choices=("stream", "rr"), help="run one test's cases only")
    ap.add_argument("binary", nargs="?", default=os.path.join(TARGET, "release", "fathom"))
    a = ap.parse_args()
    rounds = max(3, a.rounds)
    print(f"load at the start {os.getloadavg()[0]:.2f}; {a.binary}"
          f"{f' against {a.before}' if a.before else ''}", flush=True)
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as stream_toml:
        stream_toml.write(STREAM_PROFILE)
        stream_toml.flush()
        runs = cases(a.binary, a.before, a.time, stream_toml.name)
        runs = {k: v for k, v in runs.items() if not a.only or k.startswith(a.only)}
        got = {name: [] for name in runs}
        for r in range(rounds):
            order = list(runs) if r % 2 == 0 else list(reversed(runs))
            for name in order:
                got[name].append(runs[name]())
            print(f"round {r + 1}: load {os.getloadavg()[0]:.2f}", flush=True)
    med = {name: statistics.median(v) for name, v in got.items()}
    for kind, unit, scale in (("stream", "Gbit/s", 1e9), ("rr", "k tx/s", 1e3)):
        if a.only and kind != a.only:
            continue
        p, b = med[f"{kind} profile"], med[f"{kind} built-in"]
        line = (f"{kind:7} profile {p / scale:8.2f} built-in {b / scale:8.2f} {unit}"
                f"  profile/built-in {p / b:.3f}")
        if a.before:
            old = med[f"{kind} profile before"]
            line += f"  before {old / scale:8.2f} ({old / b:.3f} of built-in)  profile now/before {p / old:.3f}"
        print(line)
        paired = [x / y for x, y in zip(got[f"{kind} profile"], got[f"{kind} built-in"])]
        line = f"        per round, profile/built-in: median {statistics.median(paired):.3f} of " + \
            " ".join(f"{v:.3f}" for v in paired)
        if a.before:
            again = [x / y for x, y in zip(got[f"{kind} profile"], got[f"{kind} profile before"])]
            line += f"; now/before: median {statistics.median(again):.3f}"
        print(line)
        for name in (n for n in got if n.startswith(kind)):
            print(f"        {name}: " + " ".join(f"{v / scale:.2f}" for v in got[name]))
    print(f"load at the end {os.getloadavg()[0]:.2f}; rounds {rounds} of {a.time} s")


if __name__ == "__main__":
    peers.run_main(main)
