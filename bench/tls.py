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
loopback the path places the ends, and that row repeats the plain TLS stream).
`--before BIN` also runs another build's TLS stream in every round (a before/after ratio).
"""
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
    """Runs fathom with --json on the path; returns (document, CPU seconds of both ends' processes,
    wall seconds)."""
    t = time.time()
    fathom_binary, peers.FATHOM = peers.FATHOM, binary or peers.FATHOM
    try:
        doc, cpu_c, cpu_s = peers.fathom_json(args, timeout)
    finally:
        peers.FATHOM = fathom_binary
    return doc, cpu_c + cpu_s, time.time() - t


def stream(secs, tls, more=(), binary=None):
    """(Gbit/s, host CPU s/GB local, remote, fathom's own CPU s/GB for both ends)."""
    extra = ["--tls", "--cipher", "aes-256-gcm"] if tls else []
    d, cpu, _ = fathom_json(["stream", "-t", f"{secs}s", *extra, *more], secs + 60, binary)
    s = d["summary"]
    kb = 1e9 / 1024 / 1e6  # µs per KB -> s per GB
    sd = s["service_demand_us_per_kb"]
    own = cpu / max(s["total_bytes_received"] / 1e9, 1e-9)
    return s["bits_per_second"] / 1e9, sd["local"] * kb, sd["remote"] * kb, own


def rr(secs, tls):
    d, _, _ = fathom_json(["rr", "-t", f"{secs}s", *(["--tls"] if tls else [])], secs + 60)
    r = d["summary"]["rr"]
    return r["transactions_per_second"], r["latency_us"]["p50"]


def fathom_bytes(n):
    """fathom moving n bytes through TLS: (window Gbit/s, wall Gbit/s, CPU s per GB)."""
    d, cpu, wall = fathom_json(["stream", "--tls", "--cipher", "aes-256-gcm", "-n", str(n)], 300)
    return d["summary"]["bits_per_second"] / 1e9, n * 8 / wall / 1e9, cpu / (n / 1e9)


def socat_bytes(n, cert, key):
    """socat moving n bytes of /dev/zero through OPENSSL: (wall Gbit/s, CPU s per GB)."""
    host = peers.PATH.host
    server = subprocess.Popen(
        peers.PATH.server(["socat", "-u", "-b", "131072",
                           f"OPENSSL-LISTEN:{PORT},reuseaddr,bind={host},cert={cert},key={key},verify=0", "OPEN:/dev/null"]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    time.sleep(0.3)
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
    return n * 8 / wall / 1e9, (cpu_c + cpu_s) / (n / 1e9)


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
    apart = ["--affinity", "0/1"] if a.path == "loopback" else []
    tmp = tempfile.mkdtemp(prefix="fathom-tls-bench-")
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-subj", "/CN=fathom", "-days", "1", "-keyout", key, "-out", cert],
        check=True, capture_output=True, timeout=30,
    )
    rows = {k: [] for k in ["limit", "wall_limit", "tls", "tls_apart", "before", "clear", "rr_tls", "rr_clear",
                            "fathom_n", "socat_n"]}
    try:
        for r in range(a.rounds):
            try:
                got = {
                    "limit": (openssl_limit(),),
                    "wall_limit": (openssl_limit(elapsed=True),),
                    "tls": stream(a.time, True),
                    "tls_apart": stream(a.time, True, apart),
                    "before": stream(a.time, True, binary=a.before) if a.before else (0, 0, 0, 0),
                    "clear": stream(a.time, False),
                    "rr_tls": rr(a.time, True),
                    "rr_clear": rr(a.time, False),
                    "fathom_n": fathom_bytes(n),
                    "socat_n": socat_bytes(n, cert, key),
                }
            except Exception as e:  # a failed round is reported and left out; the run goes on
                print(f"round {r + 1} failed and is left out: {e}", file=sys.stderr)
                continue
            for k, v in got.items():
                rows[k].append(v)
            before = f", before {rows['before'][-1][0]:.2f}" if a.before else ""
            print(f"round {r + 1} (load {' '.join(uptime())}): limit {rows['limit'][-1][0]:.2f} Gbit/s "
                  f"({rows['wall_limit'][-1][0]:.2f} wall), tls {rows['tls'][-1][0]:.2f} "
                  f"(ends apart {rows['tls_apart'][-1][0]:.2f}{before}), "
                  f"clear {rows['clear'][-1][0]:.2f}, "
                  f"rr p50 tls {rows['rr_tls'][-1][1]:.1f} µs clear {rows['rr_clear'][-1][1]:.1f} µs, "
                  f"{a.bytes}: fathom {rows['fathom_n'][-1][1]:.2f} socat {rows['socat_n'][-1][0]:.2f} Gbit/s",
                  file=sys.stderr)
    except KeyboardInterrupt:
        sys.exit("interrupted")
    finally:
        path.down()
        for f in (cert, key):
            os.remove(f)
        os.rmdir(tmp)
    if not rows["limit"]:
        sys.exit("every round failed")
    med = lambda k, i: statistics.median(x[i] for x in rows[k])
    ratio = lambda num, den: statistics.median(x / y for x, y in zip(num, den))
    print(f"\n{path.describe()}; load at the end: {' '.join(uptime())}; medians of {len(rows['limit'])} rounds\n")
    print("| figure | TLS (aes-256-gcm) | clear | TLS / clear |\n|---|---|---|---|")
    print(f"| 1 stream, Gbit/s | {med('tls', 0):.2f} | {med('clear', 0):.2f} | "
          f"{ratio([x[0] for x in rows['tls']], [x[0] for x in rows['clear']]):.2f} |")
    print(f"| host CPU s/GB, local (/proc/stat) | {med('tls', 1):.3f} | {med('clear', 1):.3f} | "
          f"{ratio([x[1] for x in rows['tls']], [x[1] for x in rows['clear']]):.2f} |")
    print(f"| host CPU s/GB, remote (/proc/stat) | {med('tls', 2):.3f} | {med('clear', 2):.3f} | "
          f"{ratio([x[2] for x in rows['tls']], [x[2] for x in rows['clear']]):.2f} |")
    print(f"| fathom's own CPU s/GB, both ends (rusage) | {med('tls', 3):.3f} | {med('clear', 3):.3f} | "
          f"{ratio([x[3] for x in rows['tls']], [x[3] for x in rows['clear']]):.2f} |")
    print(f"| rr 1 B, tx/s | {med('rr_tls', 0):.0f} | {med('rr_clear', 0):.0f} | "
          f"{ratio([x[0] for x in rows['rr_tls']], [x[0] for x in rows['rr_clear']]):.2f} |")
    print(f"| rr 1 B, p50 µs | {med('rr_tls', 1):.1f} | {med('rr_clear', 1):.1f} | "
          f"{ratio([x[1] for x in rows['rr_tls']], [x[1] for x in rows['rr_clear']]):.2f} |")
    per = lambda k, lim: ratio([x[0] for x in rows[k]], [x[0] for x in rows[lim]])
    print(f"| TLS, ends on CPUs 0 and 1, Gbit/s | {med('tls_apart', 0):.2f} | | "
          f"{per('tls_apart', 'tls'):.2f} of same-CPU TLS |")
    print(f"| TLS, ends on CPUs 0 and 1, own CPU s/GB | {med('tls_apart', 3):.3f} | | "
          f"{ratio([x[3] for x in rows['tls_apart']], [x[3] for x in rows['tls']]):.2f} of same-CPU TLS |")
    print(f"\nopenssl speed -evp aes-256-gcm -bytes 16384: {med('limit', 0):.2f} Gbit/s per CPU second "
          f"({med('wall_limit', 0):.2f} per wall second with -elapsed); TLS stream / limit (same round): "
          f"{per('tls', 'limit'):.2f} ({per('tls', 'wall_limit'):.2f} of the wall-clock limit); "
          f"openssl's CPU s/GB {8 / med('limit', 0):.3f} against fathom's {med('tls', 3):.3f} for both ends")
    if a.before:
        print(f"TLS stream, this build / {a.before} (same round): {per('tls', 'before'):.2f}; "
              f"own CPU s/GB {ratio([x[3] for x in rows['tls']], [x[3] for x in rows['before']]):.2f}")
    print(f"{a.bytes} through TLS: fathom {med('fathom_n', 1):.2f} Gbit/s wall ({med('fathom_n', 0):.2f} in its window), "
          f"{med('fathom_n', 2):.3f} CPU-s/GB; socat OPENSSL {med('socat_n', 0):.2f} Gbit/s wall, "
          f"{med('socat_n', 1):.3f} CPU-s/GB; fathom / socat (wall, same round): "
          f"{ratio([x[1] for x in rows['fathom_n']], [x[0] for x in rows['socat_n']]):.2f}")


if __name__ == "__main__":
    main()
