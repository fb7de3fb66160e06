#!/usr/bin/env python3
"""TLS on one path (--path, as bench/stream.py): fathom's TLS stream against the single-core AES-256-GCM limit, TLS against
clear (throughput, CPU per GB on both ends, rr p50), and fathom against socat's OPENSSL address
moving the same byte count, all alternately in one run.

Usage: bench/tls.py [--path veth|pinned|loopback] [--rounds 5] [--time 5] [--bytes 2G] [--before BIN]
Needs: cargo build --release; openssl and socat (Debian packages).

The limit is `openssl speed -evp aes-256-gcm -bytes 16384`, measured in every round: one core
encrypting 16 KB records with nothing else to do. A TLS stream on one machine encrypts and
decrypts every byte, so its ratio to that limit says how much of one core's cipher speed the
stream turns into application data. `openssl speed` divides by its CPU time, not the wall clock,
so on a loaded machine its figure does not fall while fathom's does; the same limit with
`-elapsed` (wall clock, under the same load) is printed beside it. Machines here are shared and
noisy: read the ratios (same round), not the absolutes; `uptime` load is printed with them.

Placement: on loopback fathom runs both ends of a stream on one CPU (crates/engine/src/path.rs);
the TLS stream with its ends on separate CPUs (`--affinity 0/1`) is measured beside it there (off
loopback the path places the ends, and that row is left out).
`--before BIN` also runs another build's TLS stream and byte-count copy in every round (before/after
ratios). Each end's bytes per CPU-second of its own process (the TLS stream's bytes over that end's
CPU time) are printed beside `openssl speed`'s, which is also a figure per CPU-second.
Every other round runs the cases in the opposite order. CPU per GB is given for both ends
together and for each: the sender is fathom's client (socat's connecting end), the receiver the
agent (socat's listening end).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import peers

PORT = 11812


def uptime():
    return open("/proc/loadavg").read().split()[:3]


def openssl_limit(elapsed=False):
    """Single-core AES-256-GCM on 16 KB blocks, Gbit/s (per CPU second, or per wall second)."""
    out = subprocess.run(
        ["openssl", "speed", *(["-elapsed"] if elapsed else []), "-evp", "aes-256-gcm", "-bytes", "16384",
         "-seconds", "3"],
        capture_output=True, text=True, timeout=60,
    ).stdout
    k = float(re.findall(r"([0-9.]+)k\s*$", out.strip(), re.M)[-1])
    return k * 1000 * 8 / 1e9


def fathom_json(args, timeout, binary=None):
    """Runs `fathom ARGS --json --no-store` (or BINARY's) on the path: in one process on loopback,
    else against an agent (`serve --insecure`) in the server namespace, started and listening
    before the client starts. Returns (document, CPU seconds of the client (sending) end's process,
    of the server (receiving) end's, the client process's wall seconds)."""
    binary = binary or peers.FATHOM
    args = [args[0], *([peers.PATH.host] if peers.PATH.name != "loopback" else []), *args[1:], "--json", "--no-store"]
    srv = None
    if peers.PATH.name != "loopback":
        srv = peers._server([binary, "serve", "--listen", f"{peers.PATH.host}:5301", "--insecure"], settle=0)
    try:
        if srv:
            wait_listening(5301)
        t = time.time()
        rc, out, cpu_c = peers._client([binary, *args], timeout)
        wall = time.time() - t
    finally:
        cpu_s = peers._stop(srv) if srv else 0.0
    doc = json.loads(out)
    if rc != 0 or doc.get("error"):
        raise RuntimeError(f"fathom exited {rc}: {doc.get('error')}")
    return doc, cpu_c, cpu_s, wall


def stream(secs, tls, more=(), binary=None):
    """(Gbit/s, host CPU s/GB local, remote, fathom's own CPU s/GB for both ends, for the sender,
    for the receiver)."""
    extra = ["--tls", "--cipher", "aes-256-gcm"] if tls else []
    d, cpu_c, cpu_s, _ = fathom_json(["stream", "-t", f"{secs}s", *extra, *more], secs + 60, binary)
    s = d["summary"]
    kb = 1e9 / 1024 / 1e6  # µs per KB -> s per GB
    sd = s["service_demand_us_per_kb"]
    gb = max(s["total_bytes_received"] / 1e9, 1e-9)
    return (s["bits_per_second"] / 1e9, sd["local"] * kb, sd["remote"] * kb, (cpu_c + cpu_s) / gb,
            cpu_c / gb, cpu_s / gb)


def rr(secs, tls):
    d, _, _, _ = fathom_json(["rr", "-t", f"{secs}s", *(["--tls"] if tls else [])], secs + 60)
    r = d["summary"]["rr"]
    return r["transactions_per_second"], r["latency_us"]["p50"]


def wait_listening(port, timeout=15):
    """Waits until something listens on `port` at the server end (an agent or socat starting on a
    busy CPU can take over a second); raises after `timeout` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = subprocess.run(peers.PATH.server(["ss", "-Hltn", f"sport = :{port}"]), capture_output=True,
                             text=True, timeout=10).stdout
        if out.strip():
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


def listening(cmd, port):
    """Starts `cmd` at the server end, its output discarded, and returns it once it listens on
    `port`; if it never does, ends it and raises (see wait_listening)."""
    server = subprocess.Popen(peers.PATH.server(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port)
    except RuntimeError:
        server.kill()
        server.wait()
        raise
    return server


def fathom_bytes(n, binary=None):
    """fathom (or BINARY) moving n bytes through TLS: (window Gbit/s, wall Gbit/s, CPU s per GB of
    both ends, of the sender, of the receiver). The wall clock is the client process's, from its
    start to its exit, as socat's is: the agent is started (and listening) before it, as socat's
    server is."""
    d, cpu_c, cpu_s, wall = fathom_json(["stream", "--tls", "--cipher", "aes-256-gcm", "-n", str(n)], 300,
                                        binary)
    gb = n / 1e9
    return d["summary"]["bits_per_second"] / 1e9, n * 8 / wall / 1e9, (cpu_c + cpu_s) / gb, cpu_c / gb, cpu_s / gb


def socat_bytes(n, cert, key):
    """socat moving n bytes of /dev/zero through OPENSSL: (wall Gbit/s, CPU s per GB of both ends,
    of the sender, of the receiver)."""
    host = peers.PATH.host
    server = listening(["socat", "-u", "-b", "131072",
                        f"OPENSSL-LISTEN:{PORT},reuseaddr,bind={host},cert={cert},key={key},verify=0", "OPEN:/dev/null"],
                       PORT)
    t = time.time()
    client = subprocess.Popen(
        peers.PATH.client(["socat", "-u", "-b", "131072", f"OPEN:/dev/zero,readbytes={n}",
                           f"OPENSSL:{host}:{PORT},verify=0,retry=50,interval=0.1"]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    rc_c, cpu_c = peers._wait(client, 300)
    rc_s, cpu_s = peers._wait(server, 30)
    wall = time.time() - t
    if rc_c != 0 or rc_s != 0:
        raise RuntimeError(f"socat exited {rc_c}/{rc_s}")
    gb = n / 1e9
    return n * 8 / wall / 1e9, (cpu_c + cpu_s) / gb, cpu_c / gb, cpu_s / gb


def parse_size(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * units[s[-1]]) if s[-1] in units else int(s)


def main():
    ap = peers.side_by_side_args(__doc__)
    ap.add_argument("--bytes", default="2G")
    ap.add_argument("--before", help="another fathom build whose TLS stream runs in every round too")
    a = ap.parse_args()
    n = parse_size(a.bytes)
    # A stopped run (timeout, kill) still removes its key and certificate, in `finally` below.
    path = peers.use_path(a.path)
    tmp = tempfile.mkdtemp(prefix="fathom-tls-bench-")
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-subj", "/CN=fathom", "-days", "1", "-keyout", key, "-out", cert],
        check=True, capture_output=True, timeout=30,
    )
    cases = [
        ("limit", lambda: (openssl_limit(),)),
        ("wall_limit", lambda: (openssl_limit(elapsed=True),)),
        ("tls", lambda: stream(a.time, True)),
        *([("tls_apart", lambda: stream(a.time, True, ["--affinity", "0/1"]))] if a.path == "loopback" else []),
        *([("before", lambda: stream(a.time, True, binary=a.before))] if a.before else []),
        ("clear", lambda: stream(a.time, False)),
        ("rr_tls", lambda: rr(a.time, True)),
        ("rr_clear", lambda: rr(a.time, False)),
        ("fathom_n", lambda: fathom_bytes(n)),
        *([("before_n", lambda: fathom_bytes(n, a.before))] if a.before else []),
        ("socat_n", lambda: socat_bytes(n, cert, key)),
    ]
    rows = {k: [] for k, _ in cases}
    try:
        for r in range(a.rounds):
            # Every other round runs the cases in the opposite order, so no tool always goes first.
            order = cases if r % 2 == 0 else cases[::-1]
            try:
                got = {k: run() for k, run in order}
            except Exception as e:  # a failed round is reported and left out; the run goes on
                print(f"round {r + 1} failed and is left out: {e}", file=sys.stderr)
                continue
            for k, v in got.items():
                rows[k].append(v)
            print_round(r, rows, a)
    except KeyboardInterrupt:
        sys.exit("interrupted")
    finally:
        path.down()
        for f in (cert, key):
            os.remove(f)
        os.rmdir(tmp)
    if not rows["limit"]:
        sys.exit("every round failed")
    summarize(rows, a, path)


def col(rows, k, i):
    return [x[i] for x in rows[k]]


def med(rows, k, i):
    return statistics.median(col(rows, k, i))


def ratio(num, den):
    """The median of the per-round ratios (same round, so the load is shared); NaN if every
    denominator is zero."""
    pairs = [x / y for x, y in zip(num, den) if y]
    return statistics.median(pairs) if pairs else float("nan")


def print_round(r, rows, a):
    last = lambda k, i=0: rows[k][-1][i]
    before = f", before {last('before'):.2f}" if a.before else ""
    before_n = f" before {last('before_n', 1):.2f}" if a.before else ""
    apart = f" (ends apart {last('tls_apart'):.2f})" if "tls_apart" in rows else ""
    print(f"round {r + 1} (load {' '.join(uptime())}): limit {last('limit'):.2f} Gbit/s "
          f"({last('wall_limit'):.2f} wall), tls {last('tls'):.2f}{apart}{before} "
          f"[CPU s/GB sender {last('tls', 4):.2f} receiver {last('tls', 5):.2f}], "
          f"clear {last('clear'):.2f}, rr p50 tls {last('rr_tls', 1):.1f} µs clear {last('rr_clear', 1):.1f} µs, "
          f"{a.bytes}: fathom {last('fathom_n', 1):.2f}{before_n} socat {last('socat_n'):.2f} Gbit/s", file=sys.stderr)


def summarize(rows, a, path):
    m = lambda k, i: med(rows, k, i)
    r = lambda k, den, i: ratio(col(rows, k, i), col(rows, den, i))
    # On loopback both ends are one process: its CPU is not split by end.
    split = a.path != "loopback"
    print(f"\n{path.describe()}; load at the end: {' '.join(uptime())}; medians of {len(rows['limit'])} rounds\n")
    print("| figure | TLS (aes-256-gcm) | clear | TLS / clear |\n|---|---|---|---|")
    for name, k, i, fmt in [("1 stream, Gbit/s", "tls", 0, ".2f"),
                            ("host CPU s/GB, local (/proc/stat)", "tls", 1, ".3f"),
                            ("host CPU s/GB, remote (/proc/stat)", "tls", 2, ".3f"),
                            ("fathom's own CPU s/GB, both ends (rusage)", "tls", 3, ".3f"),
                            *([("fathom's own CPU s/GB, sender", "tls", 4, ".3f"),
                               ("fathom's own CPU s/GB, receiver", "tls", 5, ".3f")] if split else []),
                            ("rr 1 B, tx/s", "rr_tls", 0, ".0f"),
                            ("rr 1 B, p50 µs", "rr_tls", 1, ".1f")]:
        clear = "rr_clear" if k == "rr_tls" else "clear"
        print(f"| {name} | {m(k, i):{fmt}} | {m(clear, i):{fmt}} | {r(k, clear, i):.2f} |")
    if "tls_apart" in rows:
        print(f"| TLS, ends on CPUs 0 and 1, Gbit/s | {m('tls_apart', 0):.2f} | | "
              f"{r('tls_apart', 'tls', 0):.2f} of same-CPU TLS |")
        print(f"| TLS, ends on CPUs 0 and 1, own CPU s/GB | {m('tls_apart', 3):.3f} | | "
              f"{r('tls_apart', 'tls', 3):.2f} of same-CPU TLS |")
    print(f"\nopenssl speed -evp aes-256-gcm -bytes 16384: {m('limit', 0):.2f} Gbit/s per CPU second "
          f"({m('wall_limit', 0):.2f} per wall second with -elapsed); TLS stream / limit (same round): "
          f"{r('tls', 'limit', 0):.2f} ({ratio(col(rows, 'tls', 0), col(rows, 'wall_limit', 0)):.2f} of the "
          f"wall-clock limit); openssl's CPU s/GB {8 / m('limit', 0):.3f} against fathom's {m('tls', 3):.3f} "
          f"for both ends (sender {m('tls', 4):.3f}, receiver {m('tls', 5):.3f})")
    if a.before:
        print(f"TLS stream, this build / {a.before} (same round, alternating order): {r('tls', 'before', 0):.2f}; "
              f"own CPU s/GB both ends {r('tls', 'before', 3):.2f}" +
              (f", sender {r('tls', 'before', 4):.2f}, receiver {r('tls', 'before', 5):.2f}" if split else ""))
    print(f"{a.bytes} through TLS: fathom {m('fathom_n', 1):.2f} Gbit/s wall ({m('fathom_n', 0):.2f} in its window), "
          f"{m('fathom_n', 2):.3f} CPU-s/GB (sender {m('fathom_n', 3):.3f}, receiver {m('fathom_n', 4):.3f}); "
          f"socat OPENSSL {m('socat_n', 0):.2f} Gbit/s wall, {m('socat_n', 1):.3f} CPU-s/GB "
          f"(sender {m('socat_n', 2):.3f}, receiver {m('socat_n', 3):.3f}); fathom / socat (wall, same round): "
          f"{ratio(col(rows, 'fathom_n', 1), col(rows, 'socat_n', 0)):.2f}")
    if a.before:
        print(f"{a.bytes} through TLS, {a.before}: {m('before_n', 1):.2f} Gbit/s wall, {m('before_n', 2):.3f} "
              f"CPU-s/GB; this build / it (wall, same round): "
              f"{ratio(col(rows, 'fathom_n', 1), col(rows, 'before_n', 1)):.2f}; {a.before} / socat: "
              f"{ratio(col(rows, 'before_n', 1), col(rows, 'socat_n', 0)):.2f}")
    if split:
        per_cpu_s = lambda i: [8 / x if x else float("nan") for x in col(rows, "tls", i)]
        print(f"Per CPU-second of each end (the TLS stream's bytes over that end's own CPU time, as openssl's "
              f"figure is over its CPU time): sender {statistics.median(per_cpu_s(4)):.2f} Gbit/s "
              f"({ratio(per_cpu_s(4), col(rows, 'limit', 0)):.2f} × openssl speed, same round), receiver "
              f"{statistics.median(per_cpu_s(5)):.2f} Gbit/s ({ratio(per_cpu_s(5), col(rows, 'limit', 0)):.2f} ×)")


if __name__ == "__main__":
    main()
