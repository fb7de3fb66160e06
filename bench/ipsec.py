#!/usr/bin/env python3
"""One stream across a two-host lab link in clear, inside TLS (fathom's rustls) and across IPsec
(strongSwan's charon, `lab up --ipsec`), alternating in one run: rate, CPU per GB, and fathom's
own CPU against charon's (issue 28: fathom's share stays under 5% of what ESP costs).

Usage: bench/ipsec.py [--fathom BIN] [--before OLDBIN] [--rounds 3] [--time 5] [--suite aes-256-gcm]
Needs: root, strongSwan (scripts/install-test-deps.sh), a fathom build (default: the newest of
$CARGO_TARGET_DIR/{release,debug}/fathom).

Two labs run side by side, one plain and one with `--ipsec SUITE` (ESP in user space where the
kernel has none, as here: what is measured then is strongSwan's user-space ESP, not fathom).
CPU per GB is the CPU-seconds of the processes that move the bytes (both fathom ends, plus every
charon of the IPsec lab) per 10^9 application bytes received; the lab's hosts share this machine,
whose busy CPU-seconds per GB are shown beside it. Machines here are shared and noisy: read the
ratios within a round, not the absolutes. `--before OLDBIN` adds a third plain lab made and run by
an older build (e.g. one from before IPsec came), so that "IPsec off is as fast as before" is a
same-run ratio too. Every lab is removed at the end, also on failure.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def newest_fathom():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "target"))
    found = [p for p in (os.path.join(target, b, "fathom") for b in ("release", "debug")) if os.path.exists(p)]
    if not found:
        sys.exit("no fathom build: cargo build (or pass --fathom)")
    return max(found, key=os.path.getmtime)


def fathom(binary, args, timeout):
    out = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"fathom {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def stream(binary, lab, secs, tls):
    """One stream h1 -> h2 of `lab`: its figures as a dict."""
    args = ["stream", "h2", "--clients", "h1", "--lab", lab, "-t", f"{secs}s", "--json"]
    doc = json.loads(fathom(binary, args + (["--tls"] if tls else []), secs * 4 + 60))
    if doc.get("error"):
        raise RuntimeError(doc["error"])
    s = doc["summary"]
    gb = s["bytes"] / 1e9
    fathom_s = sum(h["cpu"]["fathom_s"] for h in doc["hosts"])
    host = doc["hosts"][0]
    machine_s = host["cpu"]["total"] / 100 * host["cpus"] * s["seconds"]
    ipsec = doc.get("ipsec") or {}
    charon_s = ipsec.get("charon_cpu_s") or 0.0
    return {
        "gbit_s": s["bits_per_second"] / 1e9,
        "proc_s_per_gb": (fathom_s + charon_s) / gb if gb else float("nan"),
        "machine_s_per_gb": machine_s / gb if gb else float("nan"),
        "fathom_s": fathom_s,
        "charon_s": charon_s,
        "datapath": ipsec.get("datapath", "-"),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fathom", default=None)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--suite", default="aes-256-gcm")
    p.add_argument("--before", default=None, help="an older fathom: its clear stream in a lab of its own")
    a = p.parse_args()
    binary = a.fathom or newest_fathom()
    pid = os.getpid()
    clear, esp = f"bc{pid}", f"bi{pid}"
    made = []
    try:
        fathom(binary, ["lab", "up", "--hosts", "2", "--name", clear], 120)
        made.append(clear)
        said = fathom(binary, ["lab", "up", "--hosts", "2", "--name", esp, "--ipsec", a.suite], 120)
        made.append(esp)
        print(f"fathom: {binary}\n{said.splitlines()[1]}")
        modes = [("clear", binary, clear, False), ("TLS", binary, clear, True), ("IPsec", binary, esp, False)]
        if a.before:
            old = f"bo{pid}"
            fathom(a.before, ["lab", "up", "--hosts", "2", "--name", old], 120)
            made.append(old)
            modes.insert(1, ("clear before", a.before, old, False))
            print(f"before: {a.before}")
        rows = {m[0]: [] for m in modes}
        for r in range(a.rounds):
            # Every other round in reverse, so no mode always runs right after another.
            for mode, exe, lab, tls in (modes if r % 2 == 0 else modes[::-1]):
                rows[mode].append(stream(exe, lab, a.time, tls))
            print(f"round {r + 1}: " + ", ".join(f"{m} {rows[m][-1]['gbit_s']:.3f} Gbit/s" for m in rows)
                  + (f", clear / clear before {rows['clear'][-1]['gbit_s'] / rows['clear before'][-1]['gbit_s']:.2f}"
                     if a.before else ""),
                  f"(load {' '.join(open('/proc/loadavg').read().split()[:3])})")
        report(rows, a.suite)
    finally:
        for lab in made:
            exe = a.before if lab.startswith("bo") else binary
            subprocess.run([exe, "lab", "down", "--name", lab], capture_output=True, timeout=60)


def report(rows, suite):
    med = lambda m, k: statistics.median(x[k] for x in rows[m])
    print(f"\n| mode | Gbit/s (median) | vs clear | process CPU-s/GB | machine CPU-s/GB |")
    print("|---|---|---|---|---|")
    for m in rows:
        print(f"| {m}{' ' + suite if m == 'IPsec' else ''} | {med(m, 'gbit_s'):.3f} | "
              f"{med(m, 'gbit_s') / med('clear', 'gbit_s'):.2f} | {med(m, 'proc_s_per_gb'):.1f} | "
              f"{med(m, 'machine_s_per_gb'):.1f} |")
    f, c = sum(x["fathom_s"] for x in rows["IPsec"]), sum(x["charon_s"] for x in rows["IPsec"])
    share = f / c if c else float("nan")
    print(f"\nIPsec ({rows['IPsec'][0]['datapath']} ESP): fathom used {f:.2f} CPU-s, charon {c:.2f} CPU-s "
          f"over {len(rows['IPsec'])} streams: fathom's share is {share:.1%} of charon's (issue 28: < 5%)")


if __name__ == "__main__":
    main()
