"""Runs fathom and peer tools (iperf3, iperf2, nuttcp) on loopback and reads their results.

Each runner returns (bits_per_second, cpu_seconds): the receiver-side or tool-reported rate and
the user+system CPU of every process the tool started (client and server), from wait4().
Every process is started here, bounded in time, and ended by its PID only.
"""
import json
import os
import re
import signal
import subprocess
import time

FATHOM = os.environ.get("FATHOM", os.path.join(os.path.dirname(__file__), "..", "target", "release", "fathom"))
PORT = 5901


def _wait(proc, timeout):
    """Waits for a child with a deadline; returns (status, cpu seconds)."""
    deadline = time.time() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, ru.ru_utime + ru.ru_stime
        if time.time() > deadline:
            os.kill(proc.pid, signal.SIGKILL)
            _, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return -9, ru.ru_utime + ru.ru_stime
        time.sleep(0.02)


def _client(cmd, secs):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = []
    # Read everything (the pipe must not fill), then collect rusage.
    out.append(p.stdout.read())
    rc, cpu = _wait(p, secs + 60)
    return rc, "".join(out), cpu


def _server(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    return p


def _stop(server):
    # Not reaped yet (no poll()), so the PID is still ours even if the server already exited.
    time.sleep(0.2)
    pid, status, ru = os.wait4(server.pid, os.WNOHANG)
    if pid:
        return ru.ru_utime + ru.ru_stime
    os.kill(server.pid, signal.SIGTERM)
    _, cpu = _wait(server, 5)
    return cpu


def fathom(secs, parallel, write=None, extra=()):
    cmd = [FATHOM, "stream", "-t", f"{secs}s", "-P", str(parallel), "--json", *extra]
    if write:
        cmd += ["--write", write, "--read", write]
    rc, out, cpu = _client(cmd, secs)
    doc = json.loads(out)
    if doc.get("error"):
        raise RuntimeError(doc["error"])
    return doc["summary"]["bits_per_second"], cpu


def iperf3(secs, parallel, write=None):
    srv = _server(["iperf3", "-s", "-1", "-p", str(PORT)])
    cmd = ["iperf3", "-c", "127.0.0.1", "-p", str(PORT), "-t", str(secs), "-P", str(parallel), "-J"]
    if write:
        cmd += ["-l", write]
    rc, out, cpu = _client(cmd, secs)
    cpu += _stop(srv)
    return json.loads(out)["end"]["sum_received"]["bits_per_second"], cpu


def iperf2(secs, parallel, write=None):
    srv = _server(["iperf", "-s", "-p", str(PORT)])
    cmd = ["iperf", "-c", "127.0.0.1", "-p", str(PORT), "-t", str(secs), "-P", str(parallel), "-y", "C"]
    if write:
        cmd += ["-l", write]
    rc, out, cpu = _client(cmd, secs)
    cpu += _stop(srv)
    lines = [l.split(",") for l in out.strip().splitlines() if l.count(",") >= 8]
    summed = [l for l in lines if l[5] == "-1"]
    if summed:
        return float(summed[-1][8]), cpu
    # Without a sum line (iperf 2.1 with -y C), add up each stream's whole-test report.
    whole = [l for l in lines if l[6].startswith("0.0")]
    return sum(float(l[8]) for l in whole), cpu


def nuttcp(secs, parallel, write=None):
    srv = _server(["nuttcp", "-1", "-P", str(PORT), "-p", str(PORT + 1)])
    cmd = ["nuttcp", "-T", str(secs), "-P", str(PORT), "-p", str(PORT + 1), "-fparse"]
    if parallel > 1:
        cmd.append(f"-N{parallel}")
    if write:
        cmd.append(f"-l{write.lower()}")
    cmd.append("127.0.0.1")
    rc, out, cpu = _client(cmd, secs)
    cpu += _stop(srv)
    m = re.search(r"rate_Mbps=([0-9.]+)", out)
    if not m:
        raise RuntimeError(f"nuttcp said: {out!r}")
    return float(m.group(1)) * 1e6, cpu


TOOLS = {"fathom": fathom, "iperf3": iperf3, "iperf2": iperf2, "nuttcp": nuttcp}
