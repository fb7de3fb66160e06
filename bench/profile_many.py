#!/usr/bin/env python3
"""uperf's many-threads style: a profile of THREADS threads × 1 connection, each streaming
(profiles/many-flows.toml's shape: connect, then write 64K for TIME s), against
`fathom stream -P THREADS` for TIME s, alternating, ROUNDS rounds, on loopback with the agent in
a process of its own (so that each end's CPU and memory are its own): the receiver's
throughput and measured window, each process's CPU (user + system, from wait4) per GB
received, the workers per end and the busiest one's CPU, the measurement's CPU (the sampler's,
from the report), each process's peak RSS, and whether every thread's connection ran (flows
that moved bytes). The profile runs twice: with the kernel's autotuned buffers (as
many-flows.toml) and with `window = "64K"` (the send buffer the built-in stream takes on
loopback; the profile's `window` sets the receive buffer too).

Usage: bench/profile_many.py [--threads 1000] [--rounds 3] [--time 5] [BIN]

BIN defaults to $CARGO_TARGET_DIR/release/fathom, else target/release/fathom. The agent
listens on 127.0.0.1 at a port chosen from this script's PID; every process is bounded in
time and ended by its PID.
"""
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import tempfile
import time

import peers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
PROFILE = """name = "many-threads"
[vars]
duration = "5s"
threads = 1000
server = ""
[[group]]
name = "port1"
threads = "$threads"
remote = "$server"
WINDOW
[[group.transaction]]
flowops = [{ op = "connect" }]
[[group.transaction]]
duration = "$duration"
flowops = [{ op = "write", size = "64K" }]
"""


def wait(proc, timeout):
    """Waits for PROC with a deadline (then kills it, by its PID): (exit code, CPU s, max RSS MB)."""
    deadline = time.time() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024
        if time.time() > deadline:
            os.kill(proc.pid, signal.SIGKILL)
            _, status, ru = os.wait4(proc.pid, 0)
            return -9, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024
        time.sleep(0.02)


def free_port():
    base = 20000 + os.getpid() % 20000
    for port in range(base, base + 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def one(binary, args, secs):
    """Runs an agent and `BINARY ARGS` against it: (report document, client CPU s, client RSS
    MB, agent CPU s, agent RSS MB)."""
    port = free_port()
    agent = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        with tempfile.TemporaryFile("w+") as err_file:
            client = subprocess.Popen(
                [binary, *[a.replace("AGENT", f"127.0.0.1:{port}") for a in args], "--json",
                 "--no-store"], stdout=subprocess.PIPE, stderr=err_file, text=True)
            out = client.stdout.read()  # everything (the pipe must not fill), then rusage
            _, cpu_c, rss_c = wait(client, secs + 120)
            err_file.seek(0)
            err = err_file.read()
    finally:
        os.kill(agent.pid, signal.SIGTERM)
        _, cpu_s, rss_s = wait(agent, 10)
    try:
        doc = json.loads(out)
    except json.JSONDecodeError:
        raise RuntimeError(f"{args}: {err[-400:]}")
    return doc, cpu_c, rss_c, cpu_s, rss_s


def figures(report, secs):
    """(Gbit/s, measured seconds, GB received, measurement CPU % of one CPU per end, workers
    per end, the busiest worker's CPU % of the window per end, flows that moved bytes)."""
    if report.get("error"):
        raise RuntimeError(report["error"])
    s = report["summary"]
    hosts = report.get("hosts", [])
    meas = [round(h.get("measurement_cpu_s", 0.0) * 100 / secs, 2) for h in hosts]
    workers = [len(h.get("threads", [])) for h in hosts]
    busiest = [round(max((t.get("cpu_s", 0.0) for t in h.get("threads", [])), default=0.0) * 100
                     / max(s["seconds"], 1e-9)) for h in hosts]
    moved = sum(1 for f in report.get("flows", []) if f.get("bytes", 0) > 0 or f.get("sender_bytes", 0) > 0)
    return s["bits_per_second"] / 1e9, s["seconds"], s["bytes"] / 1e9, meas, workers, busiest, moved


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--threads", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", type=int, default=5)
    ap.add_argument("binary", nargs="?", default=os.path.join(TARGET, "release", "fathom"))
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"load at the start {os.getloadavg()[0]:.2f}; {a.threads} threads/connections, {a.time} s", flush=True)
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as auto, \
            tempfile.NamedTemporaryFile("w", suffix=".toml") as small:
        auto.write(PROFILE.replace("WINDOW", ""))
        small.write(PROFILE.replace("WINDOW", 'window = "64K"'))
        auto.flush()
        small.flush()
        sets = ["--set", f"threads={a.threads}", "--set", f"duration={a.time}s", "--set", "server=AGENT"]
        cases = {
            "profile": ["profile", "run", auto.name, *sets],
            "profile window 64K": ["profile", "run", small.name, *sets],
            "stream": ["stream", "AGENT", "-P", str(a.threads), "-t", f"{a.time}s"],
        }
        got = {k: [] for k in cases}
        for r in range(a.rounds):
            for name in (cases if r % 2 == 0 else reversed(list(cases))):
                doc, cpu_c, rss_c, cpu_s, rss_s = one(a.binary, cases[name], a.time)
                report = doc["groups"][0]["report"] if name.startswith("profile") else doc
                gbps, secs, gb, meas, workers, busiest, moved = figures(report, a.time)
                got[name].append((gbps, cpu_c / gb, cpu_s / gb, rss_c, rss_s, secs))
                print(f"round {r + 1} {name:18}: {gbps:6.2f} Gbit/s over {secs:.1f} s, CPU s per GB "
                      f"client {cpu_c / gb:.3f} agent {cpu_s / gb:.3f}, workers {workers} busiest "
                      f"{busiest}% of the window, measurement % of a CPU {meas}, RSS MB client "
                      f"{rss_c:.0f} agent {rss_s:.0f}, flows that moved bytes {moved}; load "
                      f"{os.getloadavg()[0]:.2f}", flush=True)
    med = {k: [statistics.median(x[i] for x in v) for i in range(6)] for k, v in got.items()}
    for k, m in med.items():
        print(f"median {k:18}: {m[0]:6.2f} Gbit/s over {m[5]:.1f} s, CPU s per GB client {m[1]:.3f} "
              f"agent {m[2]:.3f}, RSS MB client {m[3]:.0f} agent {m[4]:.0f}")
    s = med["stream"]
    for k in ("profile", "profile window 64K"):
        p = med[k]
        print(f"{k} / stream: throughput {p[0] / s[0]:.3f}, CPU per GB client {p[1] / s[1]:.2f} "
              f"agent {p[2] / s[2]:.2f}, RSS client {p[3] / s[3]:.2f} agent {p[4] / s[4]:.2f}")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    peers.run_main(main)
