#!/usr/bin/env python3
"""UDP stream on loopback: fathom against iperf3 -u -b 0 -l SIZE, alternating, same run.

Counts datagrams at each tool's receiver (iperf3: packets sent minus those it says were lost)
and prints each round's datagrams/s and receive losses: fathom with its defaults (sendmmsg and
recvmmsg batches of 64, a 4 MB receive buffer), iperf3 with its own and with -w 4M (the same
buffer), and the ratio fathom / the better iperf3, then the median ratio. Usage: bench/udp.py [--rounds 3] [--time 5] [--size 64] (cargo build --release
first). Every process is started by peers.py, bounded in time and ended by its PID.
"""
import argparse
import json
import statistics

import peers


def fathom(secs, size, extra=()):
    """(received datagrams/s, sent datagrams/s, lost %, datagrams per recvmmsg)."""
    cmd = [peers.FATHOM, "udp", "-t", f"{secs}s", "--size", str(size), "--json", "--no-store", *extra]
    _, out, _ = peers._client(cmd, secs)
    doc = json.loads(out)
    if doc.get("error"):
        raise RuntimeError(doc["error"])
    u = doc["summary"]["udp"]
    return (u["datagrams_per_second"], u["sender_datagrams_per_second"], u["lost_percent"] or 0.0,
            u["datagrams_per_call"]["receiver"])


def iperf3(secs, size, window=None):
    """(received datagrams/s, sent datagrams/s, lost %); `window`: iperf3's -w (socket buffers)."""
    srv = peers._server(["iperf3", "-s", "-1", "-p", str(peers.PORT)])
    cmd = ["iperf3", "-c", "127.0.0.1", "-p", str(peers.PORT), "-u", "-b", "0", "-l", str(size),
           "-t", str(secs), "-J", *(["-w", window] if window else [])]
    _, out, _ = peers._client(cmd, secs)
    peers._stop(srv)
    s = json.loads(out)["end"]["sum_received"]
    received = s["packets"] - s["lost_packets"]
    return received / s["seconds"], s["packets"] / s["seconds"], s["lost_percent"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=5)
    ap.add_argument("--size", type=int, default=64)
    a = ap.parse_args()
    ratios = []
    print(f"{a.size}-byte datagrams, 1 flow, loopback, {a.time} s per run; datagrams/s at the receiver")
    for r in range(a.rounds):
        f = fathom(a.time, a.size)
        i = iperf3(a.time, a.size)
        w = iperf3(a.time, a.size, "4M")
        best = max(i[0], w[0])
        ratios.append(f[0] / best if best else float("nan"))
        print(f"round {r + 1}: fathom {f[0]:,.0f}/s (sent {f[1]:,.0f}/s, lost {f[2]:.1f}%, "
              f"{f[3]:.1f} per recvmmsg)")
        print(f"         iperf3 {i[0]:,.0f}/s (sent {i[1]:,.0f}/s, lost {i[2]:.1f}%); "
              f"-w 4M {w[0]:,.0f}/s (sent {w[1]:,.0f}/s, lost {w[2]:.1f}%)  ratio {ratios[-1]:.2f}")
    print(f"median ratio fathom / best iperf3 at the receiver: {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")


if __name__ == "__main__":
    main()
