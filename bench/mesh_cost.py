#!/usr/bin/env python3
"""What an always-on mesh agent costs (issue 37, "Cost"): one agent under `fathom serve --mesh`
probing the latency to its 10 peers, its CPU (utime + stime from /proc/PID/stat, as a share of
one CPU) and its RSS sampled every --sample seconds for --duration seconds.

Usage: bench/mesh_cost.py [--fathom target/release/fathom] [--hosts 11] [--duration 600]
                          [--sample 30] [--every 30s] [--probe "rr --size 64 -t 1s --rate 10"]
Needs root (a lab: network namespaces). Build first: cargo build --release -p fathom.

The lab is `fathom lab up --hosts 11` (h1..h11 on one switch, 10.77.0.0/16, a lab agent in each
on port 5301). The measured agent is a second `fathom serve` in h1's namespace, on port 5302,
with `--mesh FILE --mesh-as h1`; the mesh lists h1 at that agent and h2..h11 at their lab
agents, with 10 latency peers per member, so h1's ring peers are the other ten. Its one test is
the probe the Kubernetes manifests ship (deploy/kubernetes/base/mesh-configmap.yaml): 10
transactions of 64 bytes at 10 a second, to each peer every 30 s, as goldpinger (every 30 s)
and kubenurse (every 5 s, 10 ring neighbours) probe; each test is booked at both ends, run
through the target's agent with the lab's key, and stored (the agent's store, in a temporary
directory). The other ten agents only answer; the measured one is the source of every test.

The first sample is taken once the agent has run a minute (start-up and the first look are not
the steady cost); the figures: CPU % of one CPU over the whole window and the highest sample
interval's, RSS first, last and max, threads, tests stored, the store's size, and the load
average. Everything it made (the agent, the lab) is removed at the end, also on an error or a
signal; every step is bounded in time.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cli():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--fathom", default=os.path.join(here, "..", "target", "release", "fathom"))
    p.add_argument("--hosts", type=int, default=11, help="lab hosts: the agent and its peers")
    p.add_argument("--duration", type=int, default=600, help="seconds sampled")
    p.add_argument("--sample", type=int, default=30, help="seconds between samples")
    p.add_argument("--every", default="30s", help="each peer's probe period")
    p.add_argument("--probe", default="rr --size 64 -t 1s --rate 10")
    p.add_argument("--warm-up", type=int, default=60, help="seconds before the first sample")
    return p.parse_args()


def run(cmd, timeout=120):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def mesh_file(path, hosts, every, probe):
    lines = ["[mesh]", 'name = "cost"', f"peers = {hosts - 1}", "", "[members]", "hosts = ["]
    lines.append('  { name = "h1", addr = "10.77.0.1:5302" },')
    lines += [f'  {{ name = "h{i}", addr = "10.77.0.{i}:5301" }},' for i in range(2, hosts + 1)]
    lines += ["]", "", "[[test]]", 'name = "rr"', f'command = "{probe}"', f'every = "{every}"']
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def sample(pid):
    """(CPU seconds, RSS KiB, threads) of PID now."""
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14, 15)
    threads = int(fields[17])
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return cpu, rss, threads


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def where(pid):
    """Where PID's RSS is (KiB): the brk heap, anonymous mappings (malloc's thread arenas,
    thread stacks) and their count, and files (the binary, libraries)."""
    kinds = {"heap": 0, "anon": 0, "anon mappings": 0, "files": 0}
    name = None
    with open(f"/proc/{pid}/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:
                name = head[5] if len(head) > 5 else ""
                kinds["anon mappings"] += name == ""
            elif head[0] == "Rss:":
                kind = "heap" if name == "[heap]" else "anon" if not name or name.startswith("[") else "files"
                kinds[kind] += int(head[1])
    return ", ".join(f"{k} {v}" for k, v in kinds.items())


def loadavg():
    with open("/proc/loadavg", encoding="utf-8") as f:
        return " ".join(f.read().split()[:3])


def measure(a, pid, started):
    """Samples PID every --sample s for --duration s after the warm-up: the rows."""
    time.sleep(max(0, started + a.warm_up - time.monotonic()))
    rows = []
    t0 = time.monotonic()
    while True:
        now = time.monotonic()
        rows.append((now - t0, *sample(pid)))
        print("  t={:5.0f} s  cpu {:7.2f} s  rss {:6d} KiB  threads {:3d}".format(*rows[-1]), flush=True)
        if len(rows) == 1 or now - t0 >= a.duration - 0.5:
            print(f"  RSS by kind (KiB): {where(pid)}", flush=True)
        if now - t0 >= a.duration - 0.5:
            return rows
        time.sleep(max(0, t0 + len(rows) * a.sample - time.monotonic()))


def report(a, rows, stored, db_bytes, loads):
    wall = rows[-1][0] - rows[0][0]
    cpu = rows[-1][1] - rows[0][1]
    worst = max((b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(rows, rows[1:]))
    rss = [r[2] for r in rows]
    print(f"\nwindow {wall:.0f} s, {len(rows)} samples; load average at start {loads[0]}, at end {loads[1]}")
    print(f"CPU: {cpu:.2f} s of CPU in {wall:.0f} s = {100 * cpu / wall:.3f}% of one CPU "
          f"(highest {a.sample} s interval: {100 * worst:.3f}%)")
    print(f"RSS: first {rss[0]} KiB, last {rss[-1]} KiB, max {max(rss)} KiB, min {min(rss)} KiB; "
          f"threads {rows[0][3]}..{rows[-1][3]}")
    print(f"tests stored: {stored['runs']} ({stored['failed']} failed) over {stored['pairs']} pairs; "
          f"store {db_bytes / 1024:.0f} KiB ({db_bytes / max(stored['runs'], 1):.0f} B a test)")


def stored_runs(fathom, mesh, db):
    doc = json.loads(run([fathom, "mesh", "status", mesh, "--store", db, "--json"], 60))
    pairs = doc["pairs"]
    return {"pairs": len(pairs), "runs": sum(p["runs"] for p in pairs),
            "failed": sum(p["failed"] for p in pairs)}


def main(a):
    fathom = os.path.abspath(a.fathom)
    lab = f"meshcost{os.getpid()}"
    agent = None
    # A signal ends the run through the same clean-up as an error.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))
    with tempfile.TemporaryDirectory(prefix="mesh-cost-") as tmp:
        try:
            print(run([fathom, "lab", "up", "--hosts", str(a.hosts), "--name", lab], 180).strip())
            mesh, db = os.path.join(tmp, "mesh.toml"), os.path.join(tmp, "mesh.db")
            mesh_file(mesh, a.hosts, a.every, a.probe)
            key = f"/run/fathom/lab/{lab}/key"
            log = open(os.path.join(tmp, "agent.log"), "w", encoding="utf-8")
            # `ip netns exec` execs the command: the child's PID is the agent's.
            agent = subprocess.Popen(
                ["ip", "netns", "exec", f"fl-{lab}-h1", fathom, "serve", "--listen", "10.77.0.1:5302",
                 "--key-file", key, "--mesh", mesh, "--mesh-as", "h1", "--store", db],
                stdout=log, stderr=subprocess.STDOUT)
            started = time.monotonic()
            time.sleep(2)
            with open(f"/proc/{agent.pid}/comm", encoding="utf-8") as f:
                if f.read().strip() != "fathom" or agent.poll() is not None:
                    raise RuntimeError(f"the agent did not start: {read(log.name)}")
            print(f"agent pid {agent.pid}: `{a.probe}` to {a.hosts - 1} peers every {a.every}; "
                  f"{a.warm_up} s warm-up, then a sample every {a.sample} s for {a.duration} s", flush=True)
            loads = [loadavg()]
            rows = measure(a, agent.pid, started)
            loads.append(loadavg())
            if agent.poll() is not None:
                raise RuntimeError(f"the agent exited: {read(log.name)}")
            stop(agent)
            stored = stored_runs(fathom, mesh, db)
            # After the agent's end and a reader's close: the write-ahead log folded in.
            size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
            report(a, rows, stored, size, loads)
        finally:
            if agent is not None:
                stop(agent)
            subprocess.run([fathom, "lab", "down", "--name", lab], capture_output=True, timeout=120)


def stop(agent):
    """Ends the agent this script started (SIGTERM, then SIGKILL after 10 s)."""
    if agent.poll() is None:
        agent.terminate()
        try:
            agent.wait(10)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait(10)


if __name__ == "__main__":
    main(cli())
