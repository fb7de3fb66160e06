#!/usr/bin/env python3
"""Live-agent robustness: one `fathom serve` (keyed, on 127.0.0.1) against malformed control
connections, then an exact `fathom stream -n 100M`; the agent's RSS, threads and open files must
come back to their idle level.

Phases (loopback only, every step bounded in time):
  1. idle: an agent sends nothing; time until it drops the connection.
  2. slow senders: S connections dribble a valid preamble and frames a byte a second; meanwhile
     a real test must still run; how many the agent still holds after each interval.
  3. malformed: N connections, round-robin over random bytes, truncated preamble, oversized
     length prefix, valid preamble then garbage frames, valid auth then invalid plans.
  4. a controller that sends TimeProbes (about 2 MB/s) and never reads a reply: seconds until the
     agent cuts it off, and the agent's peak RSS meanwhile (issue 21, item 10).
  5. strangers on a running crr test's data port: bytes of answers a stranger got for 64 bytes of
     requests, and descriptors 400 idle strangers made the agent hold (issue 21, item 6).
  6. an exact `fathom stream 127.0.0.1:PORT -n 100M --key-file K` must move 100 MiB.
  7. the agent's RSS, threads and fds (from /proc/PID) must return to idle.
  8. issue 21's attacks (bench/robustness_attacks.py), run first: strangers on the data ports of
     stream, rr and crr, a controller that never reads, a source that shrinks during
     `file get --sendfile`, a flood on `fathom launch`'s rendezvous port, `udp -P 1500` and UDP
     memory admission. `--only attacks` runs these alone, `--only classic` phases 1-7 alone.

Python 3 standard library only. The wire format is crates/proto/src/{frame,msg,plan,auth}.rs:
an 8-byte preamble, then frames of a 4-byte big-endian length and a postcard body.
Usage: bench/robustness.py [--fathom target/release/fathom] [--connections 100000]
       [--only all|classic|attacks]
"""

import hashlib
import hmac
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import peers
import robustness_attacks
from robustness_attacks import read_exact, read_frame, read_varint

MAGIC = b"FTHM"
VERSION = 12
MAX_FRAME = 16 << 20
DOMAIN = b"fathom-control-v1"
KEY = b"robustness-key"
RSS_SLACK_KB = 32 << 10  # allocator caches: what "back to idle" allows RSS to keep
STORE_ENV = dict(os.environ)  # FATHOM_STORE is set to a temporary file in main()


# ---- postcard, as serde lays out fathom's messages -------------------------------------------
def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def option(value, enc):
    return b"\x00" if value is None else b"\x01" + enc(value)


def seq(items, enc):
    return varint(len(items)) + b"".join(enc(i) for i in items)


def boolean(b):
    return b"\x01" if b else b"\x00"


def preamble(version=VERSION, kind=0):
    return MAGIC + struct.pack(">H", version) + bytes([kind, 0])


def frame(body):
    return struct.pack(">I", len(body)) + body


KINDS = {"stream": 0, "rr": 1, "crr": 2, "udp_rr": 3}


def plan(kind="stream", flows=1, limit=("bytes", 1 << 20), omit_ns=0, interval_ns=10**9,
         write_size=1 << 16, read_size=0, rr=None, affinity=None, threads=None):
    """A TestPlan (crates/proto/src/plan.rs), field by field."""
    limit_kind, n = limit
    # KindPlan: the kind, then the options only it has (rr, crr, udp_rr: RrOptions)
    body = varint(KINDS[kind])
    if rr is not None:
        body += (varint(rr[0]) + varint(rr[1]) + varint(rr[2]) + b"\x00" + varint(10**8)
                 + b"\x00")
    body += seq([(i, 0) for i in range(flows)], lambda f: varint(f[0]) + varint(f[1]))
    body += varint({"time": 0, "bytes": 1, "transactions": 2}[limit_kind]) + varint(n)
    body += varint(omit_ns) + varint(interval_ns)
    # SocketOptions: sndbuf, rcvbuf, nodelay, cc, mss, quickack, busy_poll, ipv6
    body += b"\x00\x00\x00\x00\x00\x00\x00\x00"
    body += varint(write_size) + varint(read_size) + boolean(False)
    body += b"\x00"  # tls options: none (clear)
    side = option(affinity, lambda a: seq(a, varint)) + b"\x00" + option(threads, varint)
    return body + side + side


def setup(plan_body):
    return frame(varint(2) + plan_body)


def auth(mac):
    return frame(varint(0) + option(mac, lambda m: m))


# ---- one control connection ------------------------------------------------------------------
SOURCES = [f"127.0.{i // 250 + 1}.{i % 250 + 1}" for i in range(1000)]
NEXT_SOURCE = iter(range(1 << 62))


def connect(port, timeout=5.0):
    """A connection to the agent from one of 1,000 loopback addresses in turn, so that the
    TIME_WAIT of 100,000 closed connections does not use up one address's ephemeral ports
    (other programs on this machine need them too)."""
    source = SOURCES[next(NEXT_SOURCE) % len(SOURCES)]
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
    s.settimeout(timeout)
    return s


def handshake(s):
    """Preamble, challenge, keyed answer, Welcome."""
    s.sendall(preamble())
    read_exact(s, 8)
    challenge = read_frame(s)
    assert challenge[0] == 0, f"expected Challenge, got variant {challenge[0]}"
    nonce = challenge[1:33]
    s.sendall(auth(hmac.new(KEY, DOMAIN + nonce, hashlib.sha256).digest()))
    welcome = read_frame(s)
    assert welcome[0] == 1, f"expected Welcome, got {welcome[:80]!r}"


def drain(s):
    """Reads what the agent says until it closes (or goes quiet)."""
    try:
        while s.recv(65536):
            pass
    except OSError:
        pass


INVALID_PLANS = [
    ("no flows", plan(flows=0)),
    ("too many flows", plan(flows=20_001)),
    ("write size 0", plan(write_size=0)),
    ("write size 1G", plan(write_size=1 << 30)),
    ("interval 1 ms", plan(interval_ns=10**6)),
    ("interval 18446744073.7 s", plan(interval_ns=18_446_744_073_700_000_000)),
    ("duration 10 h", plan(limit=("time", 36_000 * 10**9))),
    ("affinity cpu 1024", plan(affinity=[1024])),
    ("rr request 0", plan(kind="rr", limit=("transactions", 10), rr=(0, 1, 1))),
    ("rr response 0", plan(kind="rr", limit=("transactions", 10), rr=(1, 0, 1))),
    ("rr burst 4294967295", plan(kind="rr", limit=("transactions", 10), rr=(1, 1, 2**32 - 1))),
    ("rr without rr options", plan(kind="rr", limit=("transactions", 10))),
    ("threads 0", plan(threads=0)),
]


def kind_random(port, rng):
    s = connect(port)
    s.sendall(rng.randbytes(rng.randint(1, 64)))
    s.close()


def kind_truncated(port, rng):
    s = connect(port)
    s.sendall(preamble()[: rng.randint(1, 7)])
    s.close()


def kind_oversized(port, rng):
    s = connect(port)
    length = rng.choice([MAX_FRAME, MAX_FRAME + 1, 0xFFFFFFFF, rng.randint(MAX_FRAME // 2, MAX_FRAME)])
    s.sendall(preamble() + struct.pack(">I", length))
    s.close()


def kind_garbage(port, rng):
    s = connect(port)
    body = rng.randbytes(rng.randint(0, 48))
    s.sendall(preamble() + frame(body))
    drain(s)
    s.close()


REPLIES = {3: "Ready", 7: "Error"}


def kind_invalid_plan(port, rng):
    """Returns the plan's name and the agent's answer to it."""
    s = connect(port)
    handshake(s)
    name, body = rng.choice(INVALID_PLANS)
    s.sendall(setup(body))
    reply = read_frame(s)
    s.close()
    return name, REPLIES.get(reply[0], f"variant {reply[0]}")


KINDS_OF_CONNECTION = [
    ("random bytes", kind_random),
    ("truncated preamble", kind_truncated),
    ("oversized length prefix", kind_oversized),
    ("valid preamble then garbage frames", kind_garbage),
    ("valid auth then invalid plans", kind_invalid_plan),
]


# ---- the agent -------------------------------------------------------------------------------
class Agent:
    def __init__(self, fathom, key_file):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.proc = subprocess.Popen(
            [fathom, "serve", "--listen", f"127.0.0.1:{self.port}", "--key-file", key_file],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise SystemExit("the agent did not start listening")
        time.sleep(0.5)

    def alive(self):
        return self.proc.poll() is None

    def figures(self):
        pid = self.proc.pid
        status = open(f"/proc/{pid}/status").read().splitlines()
        field = lambda name: int(next(l for l in status if l.startswith(name)).split()[1])
        return {"rss_kb": field("VmRSS:"), "threads": field("Threads:"),
                "fds": len(os.listdir(f"/proc/{pid}/fd"))}

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def settle(agent, idle, seconds):
    """Figures once threads and fds are back to idle, or after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        now = agent.figures()
        if (now["threads"] <= idle["threads"] and now["fds"] <= idle["fds"]) or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def idle_drop(port, n=8, limit=60):
    """Seconds until the agent closes connections that send nothing."""
    socks = [connect(port, timeout=limit) for _ in range(n)]
    start = time.monotonic()
    times = []
    for s in socks:
        try:
            s.recv(1)
        except OSError:
            pass
        times.append(time.monotonic() - start)
        s.close()
    return min(times), max(times)


def slow_senders(agent, fathom, key_file, n, seconds):
    """n connections each sending a valid preamble, then the start of a 1000-byte frame, one
    byte a second, so that none finishes its handshake in `seconds`; a real test runs meanwhile.
    Returns how many the agent still held every 5 s, its figures 5 s in (all of them still in
    their handshake), and the real test's outcome."""
    port = agent.port
    data = preamble() + struct.pack(">I", 1000) + bytes(1000)
    socks = [connect(port, timeout=1) for _ in range(n)]
    open_ = [True] * n
    held = []
    test = {}
    during = None

    def real_test():
        time.sleep(3)
        out = subprocess.run([fathom, "stream", f"127.0.0.1:{port}", "-n", "1M", "--key-file", key_file],
                             capture_output=True, text=True, timeout=60, env=STORE_ENV)
        test["rc"] = out.returncode
        test["err"] = out.stderr.strip().splitlines()[-1:] if out.returncode else []

    t = threading.Thread(target=real_test)
    t.start()
    for second in range(seconds):
        for i, s in enumerate(socks):
            if not open_[i]:
                continue
            try:
                s.sendall(data[second: second + 1])
                s.settimeout(0.001)
                if s.recv(4096) == b"":
                    open_[i] = False
            except socket.timeout:
                pass
            except OSError:
                open_[i] = False
        if second % 5 == 4:
            held.append(sum(open_))
        if second == 5:
            during = agent.figures()
        time.sleep(1)
    t.join()
    for s in socks:
        s.close()
    return held, during or agent.figures(), test


def never_reads(agent, seconds=30):
    """A controller that sends TimeProbes at about 2 MB/s and reads nothing: seconds until the
    agent cuts it off (None: not within `seconds`), and the agent's peak RSS meanwhile."""
    s = connect(agent.port)
    handshake(s)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    s.settimeout(0.2)
    batch = b"".join(frame(varint(1) + varint(t)) for t in range(20_000))
    start, peak = time.monotonic(), agent.figures()["rss_kb"]
    cut = None
    while time.monotonic() - start < seconds:
        try:
            s.sendall(batch)
        except socket.timeout:
            pass
        except OSError:
            cut = round(time.monotonic() - start, 1)
            break
        peak = max(peak, agent.figures()["rss_kb"])
        time.sleep(0.1)
    s.close()
    return {"cut_off_after_s": cut, "peak_rss_kb": peak}


def crr_strangers(agent, idle=400):
    """A 3 s crr test set up and started by hand; a stranger sends 64 bytes of requests to its
    data port, then `idle` strangers connect and say nothing."""
    s = connect(agent.port)
    handshake(s)
    s.sendall(setup(plan(kind="crr", limit=("time", 3 * 10**9), rr=(1, 1, 1))))
    ready = read_frame(s)
    assert ready[0] == 3, f"expected Ready, got {ready[:80]!r}"
    port, _ = read_varint(ready, 1)
    connected = read_frame(s)
    assert connected[0] == 4, f"expected Connected, got {connected[:80]!r}"
    s.sendall(frame(varint(4) + varint(time.monotonic_ns() + 10**8)))
    time.sleep(0.3)
    asker = socket.create_connection(("127.0.0.1", port), timeout=1)
    asker.sendall(b"\x01" * 64)
    answered = 0
    try:
        while chunk := asker.recv(4096):
            answered += len(chunk)
    except OSError:
        pass
    asker.close()
    s.sendall(frame(varint(5)))
    before = agent.figures()["fds"]
    strangers = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(idle)]
    time.sleep(0.5)
    s.sendall(frame(varint(5)))
    held = agent.figures()["fds"] - before
    for c in strangers:
        c.close()
    s.close()
    return {"answered_bytes": answered, "fds_held_by_idle": held, "idle": idle}


def malformed(port, total, workers, seed):
    counts = {name: 0 for name, _ in KINDS_OF_CONNECTION}
    failures = {}
    replies = {}
    lock = threading.Lock()

    def one(i):
        rng = random.Random(seed + i)
        name, fn = KINDS_OF_CONNECTION[i % len(KINDS_OF_CONNECTION)]
        try:
            answer = fn(port, rng)
            ok = True
        except (OSError, EOFError, AssertionError) as e:
            ok = False
            err = f"{type(e).__name__}: {e}"
        with lock:
            counts[name] += 1
            if ok and answer:
                per_plan = replies.setdefault(answer[0], {})
                per_plan[answer[1]] = per_plan.get(answer[1], 0) + 1
            if not ok:
                failures.setdefault(name, [0, err])[0] += 1

    start = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(total)))
    return counts, failures, replies, time.monotonic() - start


def main():
    ap = peers.parser(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default = os.path.join(root, "target/release/fathom")
    if not os.path.exists(default):
        default = os.path.join(root, "target/debug/fathom")
    ap.add_argument("--fathom", default=default)
    ap.add_argument("--connections", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=8, help="malformed connections in flight")
    ap.add_argument("--slow", type=int, default=80, help="slow senders (default above --max-tests 64)")
    ap.add_argument("--slow-seconds", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", choices=["all", "classic", "attacks"], default="all")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        key_file = os.path.join(tmp, "key")
        STORE_ENV["FATHOM_STORE"] = os.path.join(tmp, "store.db")
        open(key_file, "wb").write(KEY + b"\n")
        agent = Agent(args.fathom, key_file)
        report = {"fathom": args.fathom, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        try:
            report["idle"] = agent.figures()
            if args.only != "classic":
                wire = (connect, handshake, frame, varint)
                report["attacks"] = robustness_attacks.run_all(args.fathom, agent, key_file,
                                                               STORE_ENV, wire, plan)
                report["after_attacks"] = settle(agent, report["idle"], 15)
            if args.only == "attacks":
                print(json.dumps(report, indent=1))
                return 0
            s = connect(agent.port)
            handshake(s)
            s.sendall(setup(plan()))
            report["valid_plan_reply"] = REPLIES.get(read_frame(s)[0], "other")
            s.close()
            report["idle_drop_s"] = idle_drop(agent.port)
            (report["slow_held_every_5s"], report["during_slow"],
             report["test_during_slow"]) = slow_senders(agent, args.fathom, key_file, args.slow,
                                                        args.slow_seconds)
            report["after_slow"] = settle(agent, report["idle"], 15)
            counts, failures, replies, took = malformed(agent.port, args.connections, args.workers, args.seed)
            report["malformed"] = counts
            report["client_side_errors"] = failures
            report["invalid_plan_replies"] = replies
            report["malformed_s"] = round(took, 1)
            report["connections_per_s"] = round(args.connections / took)
            report["agent_alive_after_malformed"] = agent.alive()
            report["after_malformed"] = settle(agent, report["idle"], 15)
            report["never_reads"] = never_reads(agent)
            report["crr_strangers"] = crr_strangers(agent)
            report["after_port_attacks"] = settle(agent, report["idle"], 15)
            out = subprocess.run(
                [args.fathom, "stream", f"127.0.0.1:{agent.port}", "-n", "100M", "--key-file", key_file, "--json"],
                capture_output=True, text=True, timeout=300, env=STORE_ENV)
            got = json.loads(out.stdout)["summary"]["bytes"] if out.returncode == 0 else None
            report["exact_100M"] = {"rc": out.returncode, "bytes": got, "ok": got == 100 << 20}
            report["final"] = settle(agent, report["idle"], 15)
        finally:
            alive = agent.alive()
            agent.stop()
        idle, final = report["idle"], report.get("final", {})
        report["verdict"] = {
            "agent_alive": alive,
            "never_reads_cut_off": report.get("never_reads", {}).get("cut_off_after_s") is not None,
            "crr_strangers_unanswered": report.get("crr_strangers", {}).get("answered_bytes") == 0,
            "exact_100M": report.get("exact_100M", {}).get("ok", False),
            "threads_back": final.get("threads") == idle["threads"],
            "fds_back": final.get("fds") == idle["fds"],
            "rss_back": final.get("rss_kb", 1 << 40) <= idle["rss_kb"] + RSS_SLACK_KB,
        }
        print(json.dumps(report, indent=1))
        return 0 if all(report["verdict"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
