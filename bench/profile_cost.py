#!/usr/bin/env python3
"""The profile equivalent of rr against `fathom rr`, in what load does not move: user-space
instructions (callgrind) and system calls (strace -c -f) per transaction, on loopback, both ends
in one process (the in-process agent), for one or more fathom builds.

Usage: bench/profile_cost.py [--small 2000] [--large 6000] BIN [BIN ...]
Needs: valgrind, strace (scripts/install-bench-deps.sh).

Instructions are counted inside the workers' event loops only (callgrind's
`--toggle-collect=fathom_engine::worker::run`): the data path of both ends, without the
controller, the sampler or the report. The profile is netperf-rr's transaction with a count
(`iterations = N` of a 1-byte write and a 1-byte read, TCP_NODELAY), against
`fathom rr -n N --nodelay` (1-byte request and response).
Each figure is the difference of an N = SMALL and an N = LARGE run divided by the transactions
between them, so the set-up (agent, connection, report) cancels out, as bench/rr_cost.py does;
both ends count (one process). Every run is one interval (`-i 1h`): under valgrind the larger
run lasts longer, and its extra intervals' work (the sampler's histograms) would otherwise
count as per-transaction work. System calls are per end (halved).
"""
import json
import subprocess
import tempfile

import peers
import rr_cost

TIMEOUT = 900
PROFILE = """name = "rr-count"
[vars]
n = 1
[[group]]
name = "rr"
nodelay = true
[[group.transaction]]
flowops = [{ op = "connect" }]
[[group.transaction]]
iterations = "$n"
flowops = [{ op = "write", size = 1 }, { op = "read", size = 1 }]
"""


def run(binary, case, n, wrap, profile):
    """Runs CASE ("profile" or "rr") with N transactions under WRAP; the wrapper's stderr."""
    if case == "profile":
        args = ["profile", "run", profile, "--set", f"n={n}"]
    else:
        args = ["rr", "-n", str(n), "--nodelay"]
    # One interval, however long the run: the sampler's per-interval work cancels out too.
    args += ["-i", "1h"]
    p = subprocess.run([*wrap, binary, *args, "--json", "--no-store"], capture_output=True,
                       text=True, timeout=TIMEOUT)
    doc = json.loads(p.stdout)
    if doc.get("error"):
        raise RuntimeError(f"{case} -n {n}: {doc['error']}")
    reports = [g["report"] for g in doc["groups"]] if case == "profile" else [doc]
    for r in reports:
        if r.get("error"):
            raise RuntimeError(f"{case} -n {n}: {r['error']}")
    return p.stderr


def instructions(binary, case, n, profile):
    """User instructions of the workers' threads (the data path: both ends' event loops)."""
    return rr_cost.callgrind(lambda wrap: run(binary, case, n, wrap, profile),
                             "--toggle-collect=fathom_engine::worker::run")


def syscalls(binary, case, n, profile):
    return rr_cost.strace(lambda wrap: run(binary, case, n, wrap, profile))


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--small", type=int, default=2000)
    ap.add_argument("--large", type=int, default=6000)
    ap.add_argument("binaries", nargs="+")
    a = ap.parse_args()
    span = a.large - a.small
    print("| build | case | workers' user instructions per tx (both ends) | system calls per tx per end |")
    print("|---|---|---|---|")
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as profile:
        profile.write(PROFILE)
        profile.flush()
        for b in a.binaries:
            for case in ("profile", "rr"):
                ir = (instructions(b, case, a.large, profile.name)
                      - instructions(b, case, a.small, profile.name)) / span
                calls = rr_cost.per_end(syscalls(b, case, a.large, profile.name),
                                        syscalls(b, case, a.small, profile.name), span)
                print(f"| {b} | {case} | {ir:.0f} | {calls} |", flush=True)


if __name__ == "__main__":
    peers.run_main(main)
