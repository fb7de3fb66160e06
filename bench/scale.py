#!/usr/bin/env python3
"""The controller's cost per agent, and one synchronized test across many agents on loopback.

Usage: bench/scale.py [--counts 10,25,50,100] [--runs 2] [--time 1] [--test "stream -n 4M"]
(no root needed; --test is the kind and its options, `stream` by default; --time 0 adds no -t)

Starts max(counts)+1 `fathom serve` processes on loopback ports, then for each count N runs
`fathom TEST --server A0 --clients A1..AN -t TIME --json` (counts interleaved, --runs rounds),
sampling the controller's threads and sockets every 10 ms and taking its peak RSS from wait4().
Prints each run's start skew (from the JSON), controller peak RSS, threads, sockets and wall time,
then a least-squares line over the counts (the cost per agent) and what it predicts for 1,000
agents. Every process it starts is ended by its PID; each step has a timeout.

On a machine with few cores, a stream test's start skew at large N is the scheduler's: every
sender is busy at once and they take turns on the CPUs. A paced test (`rr --rate`, `udp --rate`)
leaves the CPUs mostly idle, so its skew shows the synchronization itself.
"""
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import peers


def start_agent():
    p = subprocess.Popen(
        [peers.FATHOM, "serve", "--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stderr.readline()
    addr = next((w for w in line.split() if w.startswith("127.0.0.1:")), None)
    if addr is None:
        p.kill()
        p.wait()
        sys.exit(f"agent did not say where it listens: {line!r}")
    return p, addr


def sample(pid, peak, stop):
    """Keeps the highest thread and socket counts of `pid` in `peak` until `stop` is set (a socket
    is counted once however many descriptors share it)."""
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                threads = next(int(l.split()[1]) for l in f if l.startswith("Threads:"))
            fds = os.listdir(f"/proc/{pid}/fd")
            links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in fds}
            sockets = sum(1 for link in links if link.startswith("socket:"))
        except (OSError, StopIteration):
            break
        peak["threads"] = max(peak["threads"], threads)
        peak["sockets"] = max(peak["sockets"], sockets)
        time.sleep(0.01)


def run(test, server, clients, seconds):
    args = [peers.FATHOM, *test.split(), "--server", server, "--clients", ",".join(clients)]
    args += (["-t", f"{seconds}s"] if seconds else []) + ["--json", "--no-store"]
    t = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = {"threads": 0, "sockets": 0}
    stop = threading.Event()
    sampler = threading.Thread(target=sample, args=(p.pid, peak, stop))
    sampler.start()
    timer = threading.Timer(120, p.kill)
    timer.start()
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    timer.cancel()
    stop.set()
    sampler.join()
    wall = time.monotonic() - t
    if p.returncode != 0:
        sys.exit(f"{len(clients)} clients: exit {p.returncode}: {err.strip()}")
    doc = json.loads(out)
    return {
        "n": len(clients),
        "skew_us": doc["summary"]["start_skew_us"],
        "rss_kib": usage.ru_maxrss,
        "threads": peak["threads"],
        "sockets": peak["sockets"],
        "setup_s": wall - seconds,
        "hosts": len(doc["hosts"]),
    }


def fit(xs, ys):
    """Least-squares slope and intercept."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--counts", default="10,25,50,100")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--time", type=int, default=1)
    ap.add_argument("--test", default="stream")
    a = ap.parse_args()
    counts = [int(c) for c in a.counts.split(",")]
    agents = []
    results = []
    try:
        for _ in range(max(counts) + 1):
            agents.append(start_agent())
        addrs = [addr for _, addr in agents]
        for r in range(a.runs):
            order = counts if r % 2 == 0 else counts[::-1]
            for n in order:
                res = run(a.test, addrs[0], addrs[1 : n + 1], a.time)
                results.append(res)
                print(
                    f"  {n:4} clients: start skew {res['skew_us']:8.0f} µs  controller peak RSS "
                    f"{res['rss_kib'] / 1024:6.1f} MiB  threads {res['threads']:4}  sockets "
                    f"{res['sockets']:4}  wall - test {res['setup_s']:5.2f} s",
                    file=sys.stderr,
                )
    finally:
        for p, _ in agents:
            p.kill()
            p.wait(timeout=10)
    xs = [r["n"] for r in results]
    print(f"\n## `{a.test}` across N client agents on loopback ({os.uname().nodename}, load {os.getloadavg()[0]:.1f})\n")
    print("| clients | median start skew | median peak RSS | threads | sockets | wall − test time |")
    print("|---|---|---|---|---|---|")
    for n in counts:
        rs = [r for r in results if r["n"] == n]
        med = lambda k: statistics.median(r[k] for r in rs)
        print(
            f"| {n} | {med('skew_us'):.0f} µs | {med('rss_kib') / 1024:.1f} MiB | {med('threads'):.0f} "
            f"| {med('sockets'):.0f} | {med('setup_s'):.2f} s |"
        )
    print("\n| per client agent | slope | predicted at 1,000 |")
    print("|---|---|---|")
    for key, unit, scale in (("rss_kib", "KiB", 1), ("threads", "", 1), ("sockets", "", 1), ("setup_s", "ms", 1000)):
        slope, icpt = fit(xs, [r[key] for r in results])
        at = icpt + 1000 * slope
        shown = f"{at / 1024:.0f} MiB" if key == "rss_kib" else f"{at * scale:.0f} {unit}".strip()
        print(f"| {key} | {slope * scale:.2f} {unit} | {shown} |")


if __name__ == "__main__":
    main()
