#!/usr/bin/env python3
"""Two builds of fathom, alternating on loopback: stream -P 1, -P 4 and rr 1 B (tx/s and p50).

Usage: bench/before_after.py OLD_BINARY NEW_BINARY [ROUNDS]

For a change that must not move the data path (a refactor): each round runs every case with
both builds, the order flipped every other round, 3 s each; prints medians and new/old. Same
placement for both (fathom's loopback defaults). Read the ratio, and run it twice.
"""
import json, statistics, subprocess, sys, os
if len(sys.argv) < 3:
    sys.exit(__doc__)
OLD, NEW = sys.argv[1], sys.argv[2]
CASES = {
    "stream -P 1": (["stream", "-t", "3"], lambda s: s["bits_per_second"] / 1e9, "Gbit/s"),
    "stream -P 4": (["stream", "-t", "3", "-P", "4"], lambda s: s["bits_per_second"] / 1e9, "Gbit/s"),
    "rr 1 B": (["rr", "-t", "3"], lambda s: s["rr"]["transactions_per_second"] / 1e3, "k tx/s"),
    "rr 1 B p50": (["rr", "-t", "3"], lambda s: s["rr"]["latency_us"]["p50"], "us p50"),
}
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
res = {c: {"old": [], "new": []} for c in CASES}
for r in range(rounds):
    for c, (args, get, _) in CASES.items():
        for v, b in (("old", OLD), ("new", NEW)) if r % 2 == 0 else (("new", NEW), ("old", OLD)):
            out = subprocess.run([b, *args, "--json", "--store", f"/tmp/ba-{v}.db"], capture_output=True, text=True, timeout=60)
            try:
                res[c][v].append(get(json.loads(out.stdout)["summary"]))
            except Exception as e:
                print(c, v, "failed", e, out.stderr[-200:], file=sys.stderr)
print("load", os.getloadavg())
for c, (_, _, unit) in CASES.items():
    o, n = statistics.median(res[c]["old"]), statistics.median(res[c]["new"])
    print(f"{c:12} old {o:8.2f} new {n:8.2f} {unit}  new/old {n/o:.3f}  (rounds {len(res[c]['old'])})")
