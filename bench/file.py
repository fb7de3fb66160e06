#!/usr/bin/env python3
"""File copy on loopback: fathom file put against socat and scp, alternately in one run.

Usage: bench/file.py [--rounds 3] [--size 1G] [--dst /dev/shm] [--tools socat,scp]

Each tool copies the same source file (written once, so it sits in the page cache) to a
directory under --dst (tmpfs by default), once per round, tools alternating. Rates are file
bytes over the wall time of the whole command (process start, handshakes and all), the same
definition for every tool; fathom's own measured rate and the memory-to-memory stream of the
same size (the ceiling) are printed beside. CPU is user+system of every process a tool started.
fathom verifies an xxh3 checksum end to end; socat checks nothing; scp's cipher authenticates.
scp needs sshd (run here on a loopback port with throwaway keys; root). Every process is
started here, bounded in time, and ended by its PID only; every file made is removed.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import peers

PORT = 5911
SSH_PORT = 5912


def fathom(src, dst_dir, size):
    agent = peers._server([peers.FATHOM, "serve", "--listen", f"127.0.0.1:{PORT}", "--files-root", dst_dir])
    t = time.time()
    rc, out, cpu = peers._client([peers.FATHOM, "file", "put", src, f"127.0.0.1:{PORT}:copy", "--force", "--no-store", "--json"], 120)
    wall = time.time() - t
    cpu += peers._stop(agent)
    doc = json.loads(out)
    if rc != 0 or doc.get("error") or not doc["summary"]["file"]["checksum_match"]:
        raise RuntimeError(doc.get("error") or "checksum mismatch")
    return size * 8 / wall, cpu, doc["summary"]["bits_per_second"]


def socat(src, dst_dir, size):
    server = subprocess.Popen(["socat", "-u", f"TCP-LISTEN:{PORT},reuseaddr,bind=127.0.0.1", f"OPEN:{dst_dir}/copy,creat,trunc"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    t = time.time()
    rc, _, cpu = peers._client(["socat", "-u", f"OPEN:{src}", f"TCP:127.0.0.1:{PORT}"], 120)
    scpu = peers._wait(server, 60)[1]
    wall = time.time() - t
    if rc != 0 or os.path.getsize(f"{dst_dir}/copy") != size:
        raise RuntimeError(f"socat rc {rc}")
    return size * 8 / wall, cpu + scpu, None


class Sshd:
    """A throwaway sshd on a loopback port, for scp."""

    def __init__(self, work):
        self.key = f"{work}/user"
        for k in ("host", "user"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{work}/{k}"], check=True)
        shutil.copy(f"{self.key}.pub", f"{work}/authorized_keys")
        os.makedirs("/run/sshd", exist_ok=True)
        self.proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-p", str(SSH_PORT), "-h", f"{work}/host",
                                      "-o", "ListenAddress=127.0.0.1", "-o", f"AuthorizedKeysFile={work}/authorized_keys",
                                      "-o", "StrictModes=no", "-o", "UsePAM=no", "-o", f"PidFile={work}/sshd.pid"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)

    def scp(self, src, dst_dir, size):
        t = time.time()
        rc, _, cpu = peers._client(["scp", "-q", "-P", str(SSH_PORT), "-i", self.key, "-c", "aes128-gcm@openssh.com",
                                    "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
                                    src, f"root@127.0.0.1:{dst_dir}/copy"], 120)
        wall = time.time() - t
        if rc != 0 or os.path.getsize(f"{dst_dir}/copy") != size:
            raise RuntimeError(f"scp rc {rc}")
        return size * 8 / wall, cpu, None

    def stop(self):
        self.proc.terminate()
        peers._wait(self.proc, 5)


def stream_ceiling(size):
    rc, out, _ = peers._client([peers.FATHOM, "stream", "-n", str(size), "--json", "--no-store"], 120)
    return json.loads(out)["summary"]["bits_per_second"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--dst", default="/dev/shm")
    ap.add_argument("--tools", default="socat,scp")
    a = ap.parse_args()
    size = int(a.size[:-1]) << {"K": 10, "M": 20, "G": 30}[a.size[-1]] if a.size[-1] in "KMG" else int(a.size)
    work = tempfile.mkdtemp(prefix="fathom-bench-file-")
    dst = tempfile.mkdtemp(prefix="fathom-bench-file-", dir=a.dst)
    sshd = None
    try:
        src = f"{work}/src"
        with open(src, "wb") as f:
            for _ in range(size >> 20):
                f.write(os.urandom(1 << 20))
            f.write(os.urandom(size & ((1 << 20) - 1)))
        tools = {"fathom": fathom}
        for t in a.tools.split(","):
            if t == "socat":
                tools["socat"] = socat
            elif t == "scp":
                sshd = Sshd(work)
                tools["scp"] = sshd.scp
        results = {t: [] for t in tools}
        streams = []
        for r in range(a.rounds):
            for t, run in tools.items():
                try:
                    results[t].append(run(src, dst, size))
                except Exception as e:  # a peer that fails is reported, the run goes on
                    print(f"  round {r + 1}: {t} failed: {e}", file=sys.stderr)
                    continue
                bps, cpu, own = results[t][-1]
                print(f"  round {r + 1}: {t:6s} {bps / 1e9:6.2f} Gbit/s wall  {cpu:6.2f} CPU-s", file=sys.stderr)
            streams.append(stream_ceiling(size))
        report(a, results, streams)
    finally:
        if sshd:
            sshd.stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(dst, ignore_errors=True)


def report(a, results, streams):
    load = open("/proc/loadavg").read().split()[:3]
    print(f"\n## file put {a.size} on loopback to {a.dst}, {a.rounds} rounds, load {' '.join(load)}")
    print("| tool | median Gbit/s (wall) | CPU-s | fathom / tool |")
    print("|---|---|---|---|")
    med = {t: (statistics.median(b for b, _, _ in rs), statistics.median(c for _, c, _ in rs)) for t, rs in results.items() if rs}
    for t, (bps, cpu) in med.items():
        ratio = f"{med['fathom'][0] / bps:.2f}" if "fathom" in med and t != "fathom" else "-"
        print(f"| {t} | {bps / 1e9:.2f} | {cpu:.2f} | {ratio} |")
    own = [o for _, _, o in results.get("fathom", []) if o]
    if own and streams:
        s = statistics.median(streams)
        print(f"\nfathom's own rate {statistics.median(own) / 1e9:.2f} Gbit/s; the stream of the same size "
              f"{s / 1e9:.2f} Gbit/s; copy / stream {statistics.median(own) / s:.2f}")


if __name__ == "__main__":
    main()
