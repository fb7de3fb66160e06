#!/usr/bin/env python3
"""File copy: fathom file put against socat and scp, alternately in one run, on one path or across
a lab WAN link.

Usage: bench/file.py [--path veth|pinned|loopback] [--rounds 5] [--size 1G] [--dst /dev/shm]
                     [--tools socat,scp] [--wan "delay=10ms,rate=1G"]

--path as bench/stream.py (peers.py): veth (default) two namespaces joined by a veth pair, made
for the run and removed at the end; pinned the same with the receiver on CPU 0 and the sender on
CPU 1; loopback 127.0.0.1.

With --wan, a two-host lab (h1 - WAN emulator - h2) is built with those link parameters and every
tool copies from h1 to h2 across it (its processes run in the hosts' namespaces with
`ip netns exec`, so their CPU is counted as on loopback); the lab is removed at the end, also
after a failure or Ctrl-C.

Each tool copies the same source file (written once, so it sits in the page cache) to a
directory under --dst (tmpfs by default), once per round, tools alternating. Rates are file
bytes over the wall time of the whole command (process start, handshakes and all), the same
definition for every tool; fathom's own measured rate and the memory-to-memory stream of the
same size (the ceiling) are printed beside. CPU is user+system of every process a tool started.
fathom verifies an xxh3 checksum end to end; socat checks nothing; scp's cipher authenticates.
scp needs sshd (run here on the receiving address with throwaway keys; root); its cipher is
aes128-gcm, the fastest OpenSSH cipher on CPUs with AES instructions. Every process is
started here, bounded in time, and ended by its PID only; every file made is removed.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import peers

PORT = 5911
SSH_PORT = 5912


class Path:
    """Where the copies run: the sending and receiving ends' command prefixes, and the address the
    receiver listens on."""

    def __init__(self, send=(), recv=(), addr="127.0.0.1", name="loopback"):
        self.send, self.recv, self.addr, self.name = list(send), list(recv), addr, name


class Lab:
    """A two-host lab with a WAN link between h1 and h2, removed by close()."""

    def __init__(self, wan):
        self.name = f"fbench{os.getpid()}"
        up = subprocess.run([peers.FATHOM, "lab", "up", "--hosts", "2", "--wan", wan, "--name", self.name],
                            capture_output=True, text=True, timeout=60)
        if up.returncode != 0:
            raise RuntimeError(f"lab up: {up.stderr.strip()}")
        status = subprocess.run([peers.FATHOM, "lab", "status", "--name", self.name],
                                capture_output=True, text=True, timeout=20).stdout
        hosts = {w[0]: (w[1].split("/")[0], w[2]) for w in (l.split() for l in status.splitlines())
                 if len(w) >= 3 and w[0] in ("h1", "h2")}
        self.path = Path(["ip", "netns", "exec", hosts["h1"][1]], ["ip", "netns", "exec", hosts["h2"][1]],
                         hosts["h2"][0], f"a WAN link ({wan})")

    def close(self):
        subprocess.run([peers.FATHOM, "lab", "down", "--name", self.name], capture_output=True, timeout=60)


def fathom(path, src, dst_dir, size):
    agent = peers._server(path.recv + [peers.FATHOM, "serve", "--listen", f"{path.addr}:{PORT}", "--files-root", dst_dir,
                                       "--insecure"])
    time.sleep(0.3)
    t = time.time()
    rc, out, cpu = peers._client(path.send + [peers.FATHOM, "file", "put", src, f"{path.addr}:{PORT}:copy", "--force",
                                              "--no-store", "--json"], 120)
    wall = time.time() - t
    cpu += peers._stop(agent)
    doc = json.loads(out)
    if rc != 0 or doc.get("error") or not doc["summary"]["file"]["checksum_match"]:
        raise RuntimeError(doc.get("error") or "checksum mismatch")
    return size * 8 / wall, cpu, doc["summary"]["bits_per_second"]


def socat(path, src, dst_dir, size):
    server = subprocess.Popen(path.recv + ["socat", "-u", f"TCP-LISTEN:{PORT},reuseaddr,bind={path.addr}",
                                           f"OPEN:{dst_dir}/copy,creat,trunc"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    t = time.time()
    rc, _, cpu = peers._client(path.send + ["socat", "-u", f"OPEN:{src}", f"TCP:{path.addr}:{PORT}"], 120)
    scpu = peers._wait(server, 60)[1]
    wall = time.time() - t
    if rc != 0 or os.path.getsize(f"{dst_dir}/copy") != size:
        raise RuntimeError(f"socat rc {rc}")
    return size * 8 / wall, cpu + scpu, None


class Sshd:
    """Throwaway keys for an sshd on the receiving address, started for each scp so that its CPU
    (and its sessions') is counted with the copy's."""

    def __init__(self, work):
        self.work = work
        self.key = f"{work}/user"
        for k in ("host", "user"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{work}/{k}"], check=True)
        shutil.copy(f"{self.key}.pub", f"{work}/authorized_keys")
        os.makedirs("/run/sshd", exist_ok=True)

    def scp(self, path, src, dst_dir, size):
        w = self.work
        sshd = subprocess.Popen(path.recv + ["/usr/sbin/sshd", "-D", "-e", "-p", str(SSH_PORT), "-h", f"{w}/host",
                                             "-o", f"ListenAddress={path.addr}", "-o", f"AuthorizedKeysFile={w}/authorized_keys",
                                             "-o", "StrictModes=no", "-o", "UsePAM=no", "-o", f"PidFile={w}/sshd.pid"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        try:
            t = time.time()
            rc, _, cpu = peers._client(path.send + ["scp", "-q", "-P", str(SSH_PORT), "-i", self.key, "-c", "aes128-gcm@openssh.com",
                                                    "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                                                    "-o", "BatchMode=yes", src, f"root@{path.addr}:{dst_dir}/copy"], 120)
            wall = time.time() - t
        finally:
            sshd.terminate()
            cpu_sshd = peers._wait(sshd, 5)[1]
        if rc != 0 or os.path.getsize(f"{dst_dir}/copy") != size:
            raise RuntimeError(f"scp rc {rc}")
        return size * 8 / wall, cpu + cpu_sshd, None


def parse_size(text):
    """Bytes in a size such as 1G, 256M or 4096."""
    return int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]] if text[-1] in "KMG" else int(text)


def stream_ceiling(path, size):
    """The memory-to-memory stream of the same size on the same path."""
    agent = peers._server(path.recv + [peers.FATHOM, "serve", "--listen", f"{path.addr}:{PORT}", "--insecure"])
    time.sleep(0.3)
    rc, out, _ = peers._client(path.send + [peers.FATHOM, "stream", "-n", str(size), f"{path.addr}:{PORT}", "--json",
                                            "--no-store"], 120)
    peers._stop(agent)
    return json.loads(out)["summary"]["bits_per_second"]


def main():
    ap = peers.parser(__doc__)
    peers.add_path_arg(ap)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--dst", default="/dev/shm")
    ap.add_argument("--tools", default="socat,scp")
    ap.add_argument("--wan", help='copy across a lab WAN link with these parameters, e.g. "delay=10ms,rate=1G"')
    a = ap.parse_args()
    size = parse_size(a.size)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that the cleanup below runs
    work = tempfile.mkdtemp(prefix="fathom-bench-file-")
    dst = tempfile.mkdtemp(prefix="fathom-bench-file-", dir=a.dst)
    lab = veth = None
    try:
        src = f"{work}/src"
        with open(src, "wb") as f:
            for _ in range(size >> 20):
                f.write(os.urandom(1 << 20))
            f.write(os.urandom(size & ((1 << 20) - 1)))
        if a.wan:
            lab = Lab(a.wan)
            path = lab.path
        elif a.path != "loopback":
            # Its own prefixes, not peers' global path: this script's runners add them.
            veth = peers.Path(a.path).up()
            path = Path(veth.client([]), veth.server([]), veth.host, a.path)
        else:
            path = Path()
        tools = {"fathom": fathom}
        for t in a.tools.split(","):
            if t == "socat":
                tools["socat"] = socat
            elif t == "scp":
                tools["scp"] = Sshd(work).scp
        results = {t: [] for t in tools}
        streams = []
        for r in range(a.rounds):
            for t, run in tools.items():
                try:
                    results[t].append(run(path, src, dst, size))
                except Exception as e:  # a peer that fails is reported, the run goes on
                    print(f"  round {r + 1}: {t} failed: {e}", file=sys.stderr)
                    continue
                bps, cpu, own = results[t][-1]
                print(f"  round {r + 1}: {t:6s} {bps / 1e9:6.2f} Gbit/s wall  {cpu:6.2f} CPU-s", file=sys.stderr)
            streams.append(stream_ceiling(path, size))
        report(a, path, results, streams)
    finally:
        if lab:
            lab.close()
        if veth:
            veth.down()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(dst, ignore_errors=True)


def report(a, path, results, streams):
    load = open("/proc/loadavg").read().split()[:3]
    print(f"\n## file put {a.size} across {path.name} to {a.dst}, {a.rounds} rounds, load {' '.join(load)}")
    print("| tool | median Gbit/s (wall) | CPU-s | CPU-s per GB | fathom / tool |")
    print("|---|---|---|---|---|")
    med = {t: (statistics.median(b for b, _, _ in rs), statistics.median(c for _, c, _ in rs)) for t, rs in results.items() if rs}
    for t, (bps, cpu) in med.items():
        ratio = f"{med['fathom'][0] / bps:.2f}" if "fathom" in med and t != "fathom" else "-"
        print(f"| {t} | {bps / 1e9:.2f} | {cpu:.2f} | {cpu / (parse_size(a.size) / 1e9):.2f} | {ratio} |")
    own = [o for _, _, o in results.get("fathom", []) if o]
    if own and streams:
        s = statistics.median(streams)
        print(f"\nfathom's own rate {statistics.median(own) / 1e9:.2f} Gbit/s; the stream of the same size "
              f"{s / 1e9:.2f} Gbit/s; copy / stream {statistics.median(own) / s:.2f}")


if __name__ == "__main__":
    main()
