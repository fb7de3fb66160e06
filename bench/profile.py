#!/usr/bin/env python3
"""Profiles against the built-in tests, same run, alternating: the profile equivalent of
`stream` (one flow writing 1 MiB for 3 s) and of `rr` (1-byte write and read, 3 s, Nagle
off both sides) beside `fathom stream -t 3` and `fathom rr -t 3 --nodelay`, on loopback with
in-process agents, ROUNDS rounds (at least 3), medians and the ratio profile / built-in
(target >= 0.95).

Usage: bench/profile.py [ROUNDS]

It builds (at nice 19) and runs (at the ordinary priority) the ignored test
`bench_profile_against_built_in_tests` of tests/profile_run.rs in a release build
(CARGO_TARGET_DIR as set; a release build takes minutes). Loopback only: the veth and pinned paths of bench/stream.py need `fathom profile
run`, which is wired with the profile format.
"""
import os, re, subprocess, sys

rounds = max(3, int(sys.argv[1])) if len(sys.argv) > 1 else 3
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env = dict(os.environ, FATHOM_BENCH_ROUNDS=str(rounds))
test = ["cargo", "test", "--release", "--test", "profile_run"]
# Built at the lowest priority; run at the ordinary one, so other builds do not starve it.
subprocess.run(["nice", "-n", "19", *test, "--no-run"], cwd=root, env=env, check=True,
               capture_output=True, timeout=3600)
out = subprocess.run(
    [*test, "--", "--ignored", "--nocapture", "--test-threads", "1",
     "bench_profile_against_built_in_tests"],
    cwd=root, env=env, capture_output=True, text=True, timeout=3600,
)
lines = re.findall(r"bench \w+: profile .*", out.stdout)
if out.returncode != 0 or not lines:
    sys.exit(out.stdout[-2000:] + out.stderr[-2000:])
print("load", os.getloadavg())
for l in lines:
    m = re.search(r"bench (\w+): profile (\S+) built-in (\S+) ratio (\S+) rounds (\d+)", l)
    name, p, b, ratio, n = m.groups()
    unit, scale = ("Gbit/s", 1e9) if name == "stream" else ("k tx/s", 1e3)
    print(f"{name:7} profile {float(p)/scale:8.2f} built-in {float(b)/scale:8.2f} {unit}"
          f"  profile/built-in {float(ratio):.3f}  (rounds {n})")
