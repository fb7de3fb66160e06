#!/usr/bin/env python3
"""A single TCP flow across the lab's WAN emulator against theory: throughput = min(window / RTT, rate).

Usage (root): bench/wan-window.py [--quick] [--full] [--only window,transfer,rate] [--no-write]

Builds `fathom lab up --hosts 2 --wan ...` (h1 - emulator - h2, release build of fathom) and runs
`fathom stream` from h1 to h2's agent with `fathom lab exec`, changing the emulator with
`fathom lab wan set` between measurements:

1. window: steady throughput (after --omit warm-up) at RTT 20/50/100/200 ms x receive buffer
   64K/256K/1M/4M, rate=1G, next to min(effective_recv / RTT, rate). effective_recv is what the
   kernel granted (summary.buffers.effective_recv: Linux doubles SO_RCVBUF); TCP advertises only
   part of it (about len/truesize of the received packets), so the ratio to that bound sits
   below 1 wherever the window limits.
2. transfer: the classic 48 MB transfer time (`-n 48M --rcvbuf W`, summary.seconds) for RTT
   0/50/100/150/200 ms x window 48K/256K/1M/4M. Cells that would take over 40 s (48K beyond
   0 ms) move 4 MB and are scaled by 12, marked "~"; --full measures them for real.
3. rate: rate=100mbit, 10 s stream: goodput against the rate less Ethernet/IP/TCP headers, and
   the wire rate from the emulator's own counters against 100 Mbit/s.

Tables go to stdout (markdown) and into bench/RESULTS-wan.md between this script's markers.
The machine has 2 shared CPUs: read ratios, not absolutes. The lab is removed whatever happens.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import peers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "RESULTS-wan.md")
BEGIN = "<!-- bench/wan-window.py: begin -->"
END = "<!-- bench/wan-window.py: end -->"
WAN_SH_MARK = "<!-- everything below is written by bench/wan.sh -->"
LAB = f"fwin{os.getpid()}"
H2 = "10.77.0.2"
KEY = f"/run/fathom/lab/{LAB}/key"
SIZES = {"48K": 48 << 10, "64K": 64 << 10, "256K": 256 << 10, "1M": 1 << 20, "4M": 4 << 20}
MB48 = 48 << 20

# A private copy of the release build: agents and clients must be the same binary even if the
# shared target directory is rebuilt while the bench runs.
FATHOM = os.path.join(tempfile.mkdtemp(prefix="wan-window-"), "fathom")


def sh(args, timeout=120):
    """Runs a command; returns stdout; raises with stderr on failure."""
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def lab(*args, timeout=120):
    return sh([FATHOM, "lab", *args], timeout)


def wan_set(params):
    lab("wan", "set", "--name", LAB, "--reset", "h1-h2", params)


def counters():
    doc = json.loads(lab("status", "--name", LAB, "--json"))
    return doc["wan"][0]["counters"]


def stream(*args, timeout=300):
    """`fathom stream` from h1 to h2's agent; returns its JSON document."""
    out = lab("exec", "--name", LAB, "h1", "--", FATHOM, "stream", H2, "--key-file", KEY, "--json",
              *args, timeout=timeout)
    doc = json.loads(out)
    if doc.get("error"):
        raise RuntimeError(doc["error"])
    return doc


def mbit(bps):
    return f"{bps / 1e6:.1f}"


def window_table(rtts, buffers, rate_bps):
    lines = [
        f"Steady throughput of one flow, rate={rate_bps // 10**6}M, Mbit/s (receiver, after warm-up). "
        "--buffer sets SO_SNDBUF and SO_RCVBUF on both ends. window = the receive window the receiver "
        "advertised, as the sender's TCP_INFO (snd_wnd) saw it at the end (flows[].window); "
        "bound = min(window x 8 / RTT, rate); ratio = measured / bound.",
        "",
        "| RTT | buffer | effective_recv | window | bound | measured | ratio | retransmits | rwnd-limited | sndbuf-limited |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rtt in rtts:
        wan_set(f"delay={rtt / 2}ms,rate={rate_bps}")
        for name in buffers:
            omit = 1 + 10 * rtt / 1000
            secs = 3 + 10 * rtt / 1000
            doc = stream("--buffer", name, "-t", f"{secs:.1f}s", "--omit", f"{omit:.1f}s")
            s = doc["summary"]
            effective = s["buffers"]["effective_recv"]
            window = doc["flows"][0]["window"]
            bound = min(window * 8 / (rtt / 1000), rate_bps)
            bps = s["bits_per_second"]
            row = (f"| {rtt} ms | {name} | {effective >> 10} KB | {window >> 10} KB | {mbit(bound)} | {mbit(bps)} | "
                   f"{bps / bound:.2f} | {s['retransmits']} | {s['tcp']['rwnd_limited_pct']:.0f}% | "
                   f"{s['tcp']['sndbuf_limited_pct']:.0f}% |")
            print(row, file=sys.stderr)
            lines.append(row)
    return lines


def transfer_table(rtts, windows, rate_bps, full):
    header = "| RTT | " + " | ".join(f"window {w}" for w in windows) + " |"
    lines = [
        f"Seconds to move 48 MB in one flow (summary.seconds), rate={rate_bps // 10**6}M; "
        "in brackets min(effective_recv / RTT, rate) in the same seconds; \"~\" = 4 MB moved, x12.",
        "",
        header,
        "| --- |" + " --- |" * len(windows),
    ]
    for rtt in rtts:
        wan_set(f"delay={rtt / 2}ms,rate={rate_bps}")
        cells = []
        for name in windows:
            bound_bps = rate_bps if rtt == 0 else min(2 * SIZES[name] * 8 / (rtt / 1000), rate_bps)
            theory = MB48 * 8 / bound_bps
            scaled = not full and theory * 1.8 > 40
            doc = stream("--rcvbuf", name, "-n", "4M" if scaled else "48M", timeout=600)
            secs = doc["summary"]["seconds"] * (12 if scaled else 1)
            cell = f"{'~' if scaled else ''}{secs:.1f} ({theory:.1f})"
            print(f"  RTT {rtt} ms window {name}: {cell}", file=sys.stderr)
            cells.append(cell)
        lines.append(f"| {rtt} ms | " + " | ".join(cells) + " |")
    return lines


def rate_check():
    rate = 100_000_000
    wan_set("delay=1ms,rate=100mbit")
    before = counters()["a_to_b"]
    started = time.monotonic()
    doc = stream("-t", "10s", "--omit", "1s")
    elapsed = time.monotonic() - started
    after = counters()["a_to_b"]
    mss = doc["flows"][0]["mss"] or 1448
    # Per full segment on the wire: payload + TCP/IP headers (with timestamps) + Ethernet header.
    expected = rate * mss / (mss + 52 + 14)
    goodput = doc["summary"]["bits_per_second"]
    wire = (after["forwarded_bytes"] - before["forwarded_bytes"]) * 8 / elapsed
    return [
        "Rate check: rate=100mbit, one flow for 10 s after 1 s warm-up.",
        "",
        "| measure | value | expected | ratio |",
        "| --- | --- | --- | --- |",
        f"| goodput (receiver) | {mbit(goodput)} Mbit/s | {mbit(expected)} (rate x {mss}/{mss + 66}) | {goodput / expected:.3f} |",
        f"| wire rate h1->h2 (emulator counters over the whole command, idle setup included) | {mbit(wire)} Mbit/s | 100.0 | {wire / rate:.3f} |",
        f"| queue peak since the lab started | {after['queue_peak_packets']} packets | limit 1000p | |",
        f"| dropped (queue / other) | {after['dropped_queue'] - before['dropped_queue']} / "
        f"{sum(after[k] - before[k] for k in ('dropped_overflow', 'dropped_ring', 'dropped_oversize', 'dropped_tx_error'))} | | |",
    ]


def write_results(sections):
    """Replaces this script's part of RESULTS-wan.md, keeping everything else (and wan.sh's part
    after its marker) as it is."""
    text = open(RESULTS).read() if os.path.exists(RESULTS) else ""
    block = "\n".join([BEGIN, *sections, END]) + "\n"
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", lambda _: block, text, flags=re.S)
    elif WAN_SH_MARK in text:
        text = text.replace(WAN_SH_MARK, block + "\n" + WAN_SH_MARK)
    else:
        text += "\n" + block
    open(RESULTS, "w").write(text)


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer cells, to try the script")
    ap.add_argument("--full", action="store_true", help="move 48 MB in every transfer cell")
    ap.add_argument("--only", default="window,transfer,rate")
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS-wan.md alone")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("wan-window.py: needs root (network namespaces)")
    subprocess.run(["cargo", "build", "-q", "--release", "--bin", "fathom"], cwd=ROOT, check=True)
    shutil.copy2(os.path.join(ROOT, "target", "release", "fathom"), FATHOM)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    only = a.only.split(",")
    rate = 1_000_000_000
    lab("up", "--name", LAB, "--hosts", "2", "--wan", f"rate={rate}")
    try:
        load = open("/proc/loadavg").read().split()[:3]
        sections = [
            "## Window / RTT through the emulator (bench/wan-window.py)",
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, kernel {os.uname().release}, "
            f"{os.cpu_count()} CPUs, load {' '.join(load)}; lab h1 - emulator - h2, release fathom, "
            f"congestion control {open('/proc/sys/net/ipv4/tcp_congestion_control').read().strip()} (the lab's default).",
            "",
        ]
        if "window" in only:
            rtts = [20, 100] if a.quick else [20, 50, 100, 200]
            buffers = ["64K", "1M"] if a.quick else ["64K", "256K", "1M", "4M"]
            sections += window_table(rtts, buffers, rate) + [""]
        if "transfer" in only:
            rtts = [0, 100] if a.quick else [0, 50, 100, 150, 200]
            windows = ["48K", "1M"] if a.quick else ["48K", "256K", "1M", "4M"]
            sections += transfer_table(rtts, windows, rate, a.full) + [""]
        if "rate" in only:
            sections += rate_check() + [""]
    finally:
        subprocess.run([FATHOM, "lab", "down", "--name", LAB], capture_output=True, timeout=60)
        shutil.rmtree(os.path.dirname(FATHOM), ignore_errors=True)
    print("\n".join(sections))
    if not a.no_write:
        write_results(sections)
        print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
