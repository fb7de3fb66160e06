#!/usr/bin/env python3
"""A stock iperf3 client against `fathom serve --iperf3` and against `iperf3 -s`, on the same
path in the same run, alternating, one stream and four (issue 27: fathom's server must not be the
bottleneck). Prints each round, the medians and the ratio fathom / iperf3 of the client's
receiver figure, and each server's CPU (user + system seconds per second of test).

    sudo bench/iperf3_server.py --path veth --rounds 5 --secs 5

FATHOM names the binary (default target/release/fathom). Every process is started here,
bounded in time and ended by its PID; the namespaces of --path veth are removed at exit.
"""
import argparse
import json
import statistics
import sys

import peers

IPERF3_PORT = 5902


def fathom_server():
    """fathom's agent answering iperf3 on IPERF3_PORT (open beyond loopback on veth)."""
    host = peers.PATH.host
    return peers._server([peers.FATHOM, "serve", "--listen", f"{host}:5301", "--insecure",
                          f"--iperf3={IPERF3_PORT}", "--iperf3-open"], settle=0.5)


def iperf3_server():
    """iperf3's own server for one test."""
    return peers._server(["iperf3", "-s", "-1", "-p", str(IPERF3_PORT)])


def one(start, secs, parallel):
    """One test: (receiver bits/s, client CPU s, server CPU s)."""
    srv = start()
    try:
        rc, out, cpu = peers._client(["iperf3", "-c", peers.PATH.host, "-p", str(IPERF3_PORT),
                                      "-t", str(secs), "-P", str(parallel), "-J"], secs)
    finally:
        cpu_s = peers._stop(srv)
    doc = json.loads(out)
    if rc != 0 or doc.get("error"):
        raise RuntimeError(f"iperf3 -c failed ({rc}): {doc.get('error')}")
    return doc["end"]["sum_received"]["bits_per_second"], cpu, cpu_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    peers.add_path_arg(ap)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secs", type=int, default=5)
    a = ap.parse_args()
    if not 1 <= a.rounds <= 50 or not 1 <= a.secs <= 60:
        ap.error("--rounds 1..50, --secs 1..60")
    path = peers.use_path(a.path)
    # The stock client runs as it is, so the loopback path here is plain 127.0.0.1 (not the
    # placement peers.py gives its loopback peers).
    desc = "loopback 127.0.0.1, both ends on every CPU, default buffers" if a.path == "loopback" else path.describe()
    print(f"path: {desc}; {a.rounds} rounds of {a.secs} s, alternating")
    servers = (("fathom serve --iperf3", fathom_server), ("iperf3 -s", iperf3_server))
    for parallel in (1, 4):
        got = {name: [] for name, _ in servers}
        for r in range(a.rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for name, start in order:
                bps, _, cpu_s = one(start, a.secs, parallel)
                got[name].append((bps, cpu_s / a.secs))
                print(f"  -P {parallel} round {r + 1} {name:22} {bps / 1e9:7.3f} Gbit/s  "
                      f"server CPU {cpu_s / a.secs:5.2f} s/s  load {peers.load():.1f}")
        med = {n: statistics.median(b for b, _ in v) for n, v in got.items()}
        cpu = {n: statistics.median(c for _, c in v) for n, v in got.items()}
        f, i = med["fathom serve --iperf3"], med["iperf3 -s"]
        print(f"-P {parallel}: median fathom {f / 1e9:.3f} Gbit/s (CPU {cpu['fathom serve --iperf3']:.2f}), "
              f"iperf3 {i / 1e9:.3f} Gbit/s (CPU {cpu['iperf3 -s']:.2f}); ratio fathom/iperf3 {f / i:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
