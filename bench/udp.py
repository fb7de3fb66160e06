#!/usr/bin/env python3
"""UDP stream on one path (--path, as bench/stream.py): fathom against iperf3, iperf2 and nuttcp, alternating, same run.

Counts datagrams at each tool's receiver and prints each round's datagrams/s, Gbit/s of payload
and receive losses: fathom with its defaults (sendmmsg/recvmmsg batches of 64, a 4 MB receive
buffer) and with --gso (also its system calls/s), iperf3 -u -b 0 with its own buffers and with
-w 4M (fathom's), iperf2 -u -b 10G -w 4M, nuttcp -u -R 10G -w 4M; then the median ratio fathom /
the best peer at the receiver. Beside each rate: the CPU (user + system, from wait4, of every
process the tool started; loopback's receive half runs in the sender's system calls and is
charged to it) per datagram received, which the machine's other load disturbs far less than
the rate, and the median ratio of the best peer's figure to fathom's. Tools not installed are skipped. sockperf is left out: its
throughput mode counts only at the sender. Usage: bench/udp.py [--path veth|pinned|loopback] [--rps MASK]
[--rounds 5] [--time 5] [--size 64] [--before OTHER_FATHOM_BINARY] (cargo build --release first). Every process is started by peers.py, bounded in
time and ended by its PID.
"""
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import peers


def fathom(secs, size, extra=(), binary=peers.FATHOM):
    """(received datagrams/s, sent datagrams/s, lost %, note, CPU s of both ends)."""
    fathom_binary, peers.FATHOM = peers.FATHOM, binary
    try:
        doc, cpu_c, cpu_s = peers.fathom_json(["udp", "-t", f"{secs}s", "--size", str(size), *extra], secs)
    finally:
        peers.FATHOM = fathom_binary
    cpu = cpu_c + cpu_s
    u = doc["summary"]["udp"]
    calls = u["calls_per_second"]
    note = (f"{u['datagrams_per_call']['receiver']:.0f} per recvmmsg, calls/s sender "
            f"{calls['sender']:,.0f} receiver {calls['receiver']:,.0f}")
    return u["datagrams_per_second"], u["sender_datagrams_per_second"], u["lost_percent"] or 0.0, note, cpu


def iperf3(secs, size, window=None):
    """iperf3 -u -b 0; `window`: its -w (socket buffers)."""
    srv = peers._server(["iperf3", "-s", "-1", "-p", str(peers.PORT)])
    cmd = ["iperf3", "-c", peers.PATH.host, "-p", str(peers.PORT), "-u", "-b", "0", "-l", str(size),
           "-t", str(secs), "-J", *(["-w", window] if window else [])]
    _, out, cpu = peers._client(cmd, secs)
    cpu += peers._stop(srv)
    s = json.loads(out)["end"]["sum_received"]
    received = s["packets"] - s["lost_packets"]
    return received / s["seconds"], s["packets"] / s["seconds"], s["lost_percent"], "", cpu


def iperf2(secs, size):
    """iperf2 -u -b 10G -w 4M; the server's CSV report counts what arrived."""
    with tempfile.TemporaryFile("w+") as log:
        srv = subprocess.Popen(peers.PATH.server(["iperf", "-s", "-u", "-p", str(peers.PORT), "-w", "4M", "-y", "C"]),
                               stdout=log, stderr=subprocess.DEVNULL, text=True)
        time.sleep(0.3)
        cmd = ["iperf", "-c", peers.PATH.host, "-p", str(peers.PORT), "-u", "-b", "10G",
               "-l", str(size), "-w", "4M", "-t", str(secs)]
        _, _, cpu = peers._client(cmd, secs)
        cpu += peers._stop(srv)
        log.seek(0)
        out = log.read()
    f = out.strip().splitlines()[-1].split(",")
    start, end = (float(x) for x in f[6].split("-"))
    lost, total = int(f[10]), int(f[11])
    return (total - lost) / (end - start), total / (end - start), float(f[12]), "", cpu


def nuttcp(secs, size):
    """nuttcp -u -R 10G -w 4M; it reports the receiver's packets and drops."""
    srv = peers._server(["nuttcp", "-1", "--nofork", "-P", str(peers.PORT), "-p", str(peers.PORT + 1)])
    cmd = ["nuttcp", "-P", str(peers.PORT), "-p", str(peers.PORT + 1), "-u", f"-l{size}",
           "-R", "10G", "-w", "4M", "-T", str(secs), "-fparse", peers.PATH.host]
    _, out, cpu = peers._client(cmd, secs)
    cpu += peers._stop(srv)
    v = dict(re.findall(r"(\w+)=([\d.]+)", out))
    pkt, drop, t = int(v["pkt"]), int(v["drop"]), float(v["real_seconds"])
    return (pkt - drop) / t, pkt / t, float(v["data_loss"]), "", cpu


def load():
    """The 1-minute load average."""
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = peers.side_by_side_args(__doc__.splitlines()[0])
    peers.add_rps_arg(ap)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--before", help="another fathom binary, run alongside (a before/after pair)")
    a = ap.parse_args()
    path = peers.use_path(a.path, a.rps)
    try:
        measure(a, path)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        path.down()


def measure(a, path):
    """Alternating rounds of every tool, then the medians and ratios."""
    tools = {
        "fathom": lambda: fathom(a.time, a.size),
        "fathom --gso": lambda: fathom(a.time, a.size, ["--gso"]),
        **({"fathom before": lambda: fathom(a.time, a.size, binary=a.before)} if a.before else {}),
        "iperf3": lambda: iperf3(a.time, a.size),
        "iperf3 -w 4M": lambda: iperf3(a.time, a.size, "4M"),
    }
    if shutil.which("iperf"):
        tools["iperf2 -w 4M"] = lambda: iperf2(a.time, a.size)
    if shutil.which("nuttcp"):
        tools["nuttcp -w 4M"] = lambda: nuttcp(a.time, a.size)
    results = {name: [] for name in tools}
    ratios, gso_ratios, cpu_ratios, after_before = [], [], [], []
    print(f"{a.size}-byte datagrams, 1 flow, {path.describe()}, {a.time} s per run; at the receiver")
    for r in range(a.rounds):
        print(f"round {r + 1}")
        this, cpu_per = {}, {}
        # Each round starts one tool further on, so no tool always runs first (the first of a
        # round measured up to 1.6x lower on a loaded machine).
        names = list(tools)
        for name in names[r % len(names):] + names[:r % len(names)]:
            run = tools[name]
            try:
                rx, tx, lost, note, cpu = run()
            except (KeyError, ValueError, IndexError, RuntimeError) as e:
                print(f"  {name:14} failed ({type(e).__name__}: {e}); not counted this round")
                continue
            results[name].append(rx)
            this[name] = rx
            cpu_per[name] = cpu / (rx * a.time) * 1e9 if rx else float("nan")
            print(f"  {name:14} {rx:>12,.0f}/s {rx * a.size * 8 / 1e9:7.3f} Gbit/s "
                  f"(sent {tx:,.0f}/s, lost {lost:.1f}%) CPU {cpu_per[name]:,.0f} ns/datagram {note}")
        best = max((v for k, v in this.items() if not k.startswith("fathom")), default=0)
        # A tool that failed this round (say, an agent not yet listening) leaves the round's
        # ratio out rather than counting as 0.
        ratio = lambda name: this[name] / best if best and name in this else float("nan")
        ratios.append(ratio("fathom"))
        gso_ratios.append(ratio("fathom --gso"))
        if "fathom before" in this and this["fathom before"]:
            after_before.append(this.get("fathom", 0) / this["fathom before"])
        leanest = min((v for k, v in cpu_per.items() if not k.startswith("fathom")), default=float("nan"))
        cpu_ratios.append(leanest / cpu_per.get("fathom", float("nan")))
        print(f"  ratio fathom / best peer {ratios[-1]:.2f}, fathom --gso / best peer {gso_ratios[-1]:.2f}; "
              f"CPU per datagram, leanest peer / fathom {cpu_ratios[-1]:.2f}; load {load()}")
    for name, v in results.items():
        if not v:
            continue
        print(f"median {name:14} {statistics.median(v):>12,.0f}/s "
              f"{statistics.median(v) * a.size * 8 / 1e9:.3f} Gbit/s")
    ratios, gso_ratios, cpu_ratios = ([x for x in v if x == x] or [float("nan")] for v in (ratios, gso_ratios, cpu_ratios))
    print(f"median ratio fathom / best peer at the receiver: {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f}); --gso {statistics.median(gso_ratios):.2f}; "
          f"CPU per datagram, leanest peer / fathom {statistics.median(cpu_ratios):.2f}")
    if after_before:
        print(f"median fathom / fathom before: {statistics.median(after_before):.2f} "
              f"(min {min(after_before):.2f}, max {max(after_before):.2f})")


if __name__ == "__main__":
    main()
