#!/usr/bin/env python3
"""Issue 26's scenarios, each made on purpose, and the advisor's first finding for each.

Usage: bench/advisor.py [FATHOM]   (default target/debug/fathom; needs root for the labs)

Each lab is named with this script's pid and removed at the end, even on failure; the slow
disk (an ext4 loop device in /dev/shm, throttled by a cgroup v1 blkio group holding h2's agent)
is torn down the same way. Prints one line per scenario: its name, the first finding's id,
severity and confidence, and what it saw; bench/RESULTS-advisor.md records a run.
"""

import json
import os
import subprocess
import sys
import tempfile

FATHOM = sys.argv[1] if len(sys.argv) > 1 else "target/debug/fathom"
PID = os.getpid()
BLKIO = "/sys/fs/cgroup/blkio"


def run(args, secs=180, check=True):
    """Runs a command (bounded); returns its stdout."""
    out = subprocess.run(args, capture_output=True, text=True, timeout=secs)
    if check and out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def fathom(*args, secs=180):
    return run([FATHOM, *args], secs)


def first(doc):
    advice = doc.get("advice") or []
    if not advice:
        flows = [
            f"rwnd-limited {f.get('rwnd_limited_pct', 0):.0f}%, rtt {f.get('rtt_us', 0) / 1000:.1f} ms"
            for f in doc.get("flows", [])
        ]
        got = doc.get("summary", {}).get("bits_per_second", 0) / 1e6
        return "none", f"{got:.2f} Mbit/s; " + "; ".join(flows)
    a = advice[0]
    return f"{a['id']} ({a['severity']}, {a['confidence']})", a["seen"]


class Lab:
    """A two-host lab, removed on exit."""

    def __init__(self, tag, *extra):
        self.name = f"ba{PID}{tag}"
        self.extra = extra

    def __enter__(self):
        fathom("lab", "up", "--name", self.name, "--hosts", "2", *self.extra, secs=90)
        return self

    def __exit__(self, *_):
        run([FATHOM, "lab", "down", "--name", self.name], 90, check=False)

    def advise(self, *args, secs=180):
        across = ["--server", "h2", "--clients", "h1", "--lab", self.name]
        return json.loads(fathom(*args, *across, "--no-store", "--json", "--advise", secs=secs))

    def agent_pid(self, host):
        status = json.loads(fathom("lab", "status", "--name", self.name, "--json"))
        return next(h["agent"]["pid"] for h in status["hosts"] if h["name"] == host)


class SlowDisk:
    """An ext4 loop device mounted on `mnt`, writes throttled to 250 requests and 4 MB a second
    for the processes put in its blkio group."""

    def __init__(self, mnt):
        self.mnt, self.img = mnt, f"/dev/shm/fathom-bench-{PID}.img"
        self.group, self.dev, self.mounted = f"{BLKIO}/fathom-bench-{PID}", None, False

    def __enter__(self):
        with open(self.img, "wb") as f:
            f.truncate(32 << 20)
        self.dev = run(["losetup", "--find", "--show", self.img]).strip()
        run(["mkfs.ext4", "-q", "-F", self.dev])
        run(["mount", self.dev, self.mnt])
        self.mounted = True
        os.mkdir(self.group)
        number = open(f"/sys/block/{os.path.basename(self.dev)}/dev").read().strip()
        for name, v in (("write_iops_device", 250), ("write_bps_device", 4 << 20)):
            with open(f"{self.group}/blkio.throttle.{name}", "w") as f:
                f.write(f"{number} {v}\n")
        return self

    def confine(self, pid):
        with open(f"{self.group}/cgroup.procs", "w") as f:
            f.write(str(pid))

    def __exit__(self, *_):
        if os.path.isdir(self.group):
            for pid in open(f"{self.group}/cgroup.procs").read().split():
                with open(f"{BLKIO}/cgroup.procs", "w") as f:
                    f.write(pid)
            os.rmdir(self.group)
        if self.mounted:
            run(["umount", self.mnt], 30, check=False)
        if self.dev:
            run(["losetup", "--detach", self.dev], 30, check=False)
        if os.path.exists(self.img):
            os.remove(self.img)


def clamped():
    """A loopback stream asking for 1 MB, explained with a fake root whose rmem_max is 212992."""
    with tempfile.TemporaryDirectory() as d:
        core = f"{d}/root/proc/sys/net/core"
        os.makedirs(core)
        for n in ("rmem_max", "wmem_max"):
            open(f"{core}/{n}", "w").write("212992\n")
        db = f"{d}/runs.db"
        fathom("stream", "-t", "1", "-q", "--buffer", "1M", "--store", db)
        return json.loads(fathom("doctor", "--run", "1", "--store", db, "--root", f"{d}/root", "--json"))


def scenarios():
    loop = lambda *a: json.loads(fathom(*a, "--no-store", "--json", "--advise"))
    yield "healthy loopback stream", loop("stream", "-t", "2")
    yield "UDP receiver, 4K SO_RCVBUF (loopback)", loop("udp", "-t", "1", "--size", "1400", "--buffer", "4K")
    yield "rmem_max below the request (loopback, fake root)", clamped()
    with Lab("w", "--wan", "delay=50ms") as lab:
        yield "100 ms RTT, --buffer 48K", lab.advise("stream", "-t", "3", "--omit", "1", "--buffer", "48K")
    with Lab("r", "--wan", "delay=5ms") as lab:
        yield "rr, Nagle on, 10 ms RTT, 100/s", lab.advise("rr", "-t", "2", "--rate", "100", "--size", "64,64")
    with Lab("l", "--wan", "delay=10ms,loss=1%") as lab:
        yield "1% loss on the WAN link", lab.advise("stream", "-t", "3")
    with Lab("h", "--wan", "delay=10ms,rate=100M") as lab:
        yield "healthy stream through the lab", lab.advise("stream", "-t", "3", "--omit", "1")
    with Lab("c") as lab:
        yield "receiver pinned to the CPU it fills", lab.advise("stream", "-t", "2", "--affinity", "0/0")
        yield "only the receiver confined to one CPU", lab.advise("stream", "-t", "2", "--affinity", "/0")
        yield "TLS stream, both ends on one CPU", lab.advise("stream", "--tls", "-t", "2", "--affinity", "0/0")
    with Lab("d", "--files-root") as lab:
        with SlowDisk(f"/var/tmp/fathom-lab/{lab.name}/h2") as disk:
            disk.confine(lab.agent_pid("h2"))
            yield "file put --io 4K --direct to a slow disk", lab.advise(
                "file", "put", "--size", "2M", "slow.bin", "--io", "4K", "--direct")


def main():
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]}")
    for name, doc in scenarios():
        finding, seen = first(doc)
        print(f"{name}\n  first: {finding}\n  seen: {seen}", flush=True)
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
