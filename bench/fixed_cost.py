#!/usr/bin/env python3
"""A short test's fixed cost on one path (--path, as bench/stream.py): what a 1 KB test costs each
tool in wall time and CPU at each end, alternately in one run.

Usage: bench/fixed_cost.py [--path veth|pinned] [--rounds 7] [--bytes 1K] [--before BIN] [--file SIZE]
                           [--trace DIR]
Needs: cargo build --release; socat, iperf3 and openssl (Debian packages); strace for --trace.

Cases, each moving --bytes once from the client namespace to the server namespace:
fathom's `stream HOST -n BYTES` clear and with `--tls` (against a fresh `fathom serve` started and
listening before the client starts, as socat's and iperf3's servers are), socat's TCP and OPENSSL
addresses, and `iperf3 -c HOST -n BYTES`. `--before BIN` adds another fathom build's two cases.
`--file SIZE` adds a short file copy (a file of SIZE from the page cache into /dev/shm): `fathom file
put` (and the other build's) against socat's TCP copy.
Every other round runs the cases in the opposite order.

Figures per case (medians): the client process's wall time from its start to its exit, its CPU
(user + system, from wait4), and the server's CPU for its whole life (start, one test, stop). For
fathom the wall time is split at the JSON document's `started_unix_s`, taken as the start instant
is chosen: `setup` before it (the process's start and re-exec, the control connection, the key,
the clock probes, the plan, the data connection and its TLS handshake), `run` after it (the start
instant's lead, the data, the end-of-test exchange, the report and the exit).

`--trace DIR` runs each fathom case once more under `strace -f -tt -T` at both ends and leaves the
traces in DIR, for a finer split.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import peers
from tls import listening, parse_size, wait_listening

AGENT_PORT = 5301
PEER_PORT = 11813


def agent(binary, trace=None):
    """A fresh agent in the server namespace, listening when this returns."""
    wrap = ["strace", "-f", "-tt", "-T", "-o", trace] if trace else []
    srv = peers._server([*wrap, binary, "serve", "--listen", f"{peers.PATH.host}:{AGENT_PORT}", "--insecure"],
                        settle=0)
    wait_listening(AGENT_PORT)
    return srv


def fathom(binary, n, tls, trace=None):
    """One `fathom stream HOST -n N` against a fresh agent: (wall s, client CPU s, agent CPU s,
    setup s, run s)."""
    srv = agent(binary, trace and f"{trace}.agent")
    wrap = ["strace", "-f", "-tt", "-T", "-o", f"{trace}.client"] if trace else []
    args = [*wrap, binary, "stream", peers.PATH.host, "-n", str(n), *(["--tls"] if tls else []), "--json",
            "--no-store"]
    try:
        t = time.time()
        rc, out, cpu_c = peers._client(args, 60)
        wall = time.time() - t
    finally:
        cpu_s = peers._stop(srv)
    doc = json.loads(out)
    if rc != 0 or doc.get("error"):
        raise RuntimeError(f"fathom exited {rc}: {doc.get('error')}")
    return (wall, cpu_c, cpu_s, *phases(doc, t, t + wall))


def phases(doc, spawned, exited):
    """(setup, run) seconds of one fathom run: from the client process's start to the document's
    `started_unix_s`, and from there to the process's exit (wall clock)."""
    started = doc["test"]["started_unix_s"]
    return started - spawned, exited - started


def fathom_put(binary, src, dst_dir):
    """`fathom file put SRC HOST:PORT:copy` against a fresh agent serving `dst_dir`: (wall s,
    client CPU s, agent CPU s)."""
    srv = peers._server([binary, "serve", "--listen", f"{peers.PATH.host}:{AGENT_PORT}", "--files-root", dst_dir,
                         "--insecure"], settle=0)
    wait_listening(AGENT_PORT)
    try:
        t = time.time()
        rc, out, cpu_c = peers._client([binary, "file", "put", src, f"{peers.PATH.host}:{AGENT_PORT}:copy", "--force",
                                        "--no-store", "--json"], 60)
        wall = time.time() - t
    finally:
        cpu_s = peers._stop(srv)
    doc = json.loads(out)
    if rc != 0 or doc.get("error") or not doc["summary"]["file"]["checksum_match"]:
        raise RuntimeError(f"fathom file put exited {rc}: {doc.get('error') or 'checksum mismatch'}")
    return wall, cpu_c, cpu_s


def socat_put(src, dst_dir):
    """socat copying the file `src` into `dst_dir`: (wall s, client CPU s, server CPU s)."""
    host = peers.PATH.host
    return socat_copy(f"TCP-LISTEN:{PEER_PORT},reuseaddr,bind={host}", f"OPEN:{dst_dir}/copy,creat,trunc",
                      f"OPEN:{src}", f"TCP:{host}:{PEER_PORT}")


def socat(n, tls, cert, key):
    """socat moving n bytes of /dev/zero over TCP or OPENSSL: (wall s, client CPU s, server CPU s)."""
    host = peers.PATH.host
    listen = (f"OPENSSL-LISTEN:{PEER_PORT},reuseaddr,bind={host},cert={cert},key={key},verify=0" if tls
              else f"TCP-LISTEN:{PEER_PORT},reuseaddr,bind={host}")
    dial = f"OPENSSL:{host}:{PEER_PORT},verify=0" if tls else f"TCP:{host}:{PEER_PORT}"
    return socat_copy(listen, "OPEN:/dev/null", f"OPEN:/dev/zero,readbytes={n}", dial)


def socat_copy(listen, sink, source, dial):
    """One `socat -u` copy from `source` through `dial` to a server on `listen` writing to `sink`,
    the server started and listening first: (client wall s, client CPU s, server CPU s)."""
    server = listening(["socat", "-u", listen, sink], PEER_PORT)
    t = time.time()
    client = subprocess.Popen(peers.PATH.client(["socat", "-u", source, dial]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rc_c, cpu_c = peers._wait(client, 60)
    wall = time.time() - t
    rc_s, cpu_s = peers._wait(server, 30)
    if rc_c != 0 or rc_s != 0:
        raise RuntimeError(f"socat exited {rc_c}/{rc_s}")
    return wall, cpu_c, cpu_s


def iperf3(n):
    """`iperf3 -c HOST -n N` against a fresh `iperf3 -s -1`: (wall s, client CPU s, server CPU s)."""
    srv = peers._server(["iperf3", "-s", "-1", "-p", str(peers.PORT)], settle=0)
    wait_listening(peers.PORT)
    try:
        t = time.time()
        rc, _, cpu_c = peers._client(["iperf3", "-c", peers.PATH.host, "-p", str(peers.PORT), "-n", str(n)], 60)
        wall = time.time() - t
    finally:
        cpu_s = peers._stop(srv)
    if rc != 0:
        raise RuntimeError(f"iperf3 exited {rc}")
    return wall, cpu_c, cpu_s


def main():
    ap = peers.side_by_side_args(__doc__)
    ap.set_defaults(rounds=7)
    ap.add_argument("--bytes", default="1K")
    ap.add_argument("--before", help="another fathom build whose two cases run in every round too")
    ap.add_argument("--trace", help="a directory for one strace of each fathom case, at both ends")
    ap.add_argument("--file", metavar="SIZE", help="also copy a file of SIZE (page cache to /dev/shm): fathom file "
                                                   "put against socat")
    a = ap.parse_args()
    n = parse_size(a.bytes)
    if a.path == "loopback":
        sys.exit("--path veth or pinned: a fixed cost is measured between two hosts")
    path = peers.use_path(a.path)
    tmp = tempfile.mkdtemp(prefix="fathom-fixed-cost-")
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-subj", "/CN=fathom", "-days", "1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=30)
    builds = [("fathom", peers.FATHOM), *([("before", a.before)] if a.before else [])]
    cases = [*[(f"{name} {'tls' if tls else 'clear'}", lambda b=b, tls=tls: fathom(b, n, tls))
               for name, b in builds for tls in (False, True)],
             ("socat TCP", lambda: socat(n, False, cert, key)),
             ("socat OPENSSL", lambda: socat(n, True, cert, key)),
             ("iperf3", lambda: iperf3(n))]
    if a.file:
        src, dst = os.path.join(tmp, "src"), tempfile.mkdtemp(prefix="fathom-fixed-cost-", dir="/dev/shm")
        with open(src, "wb") as f:
            f.write(os.urandom(parse_size(a.file)))
        cases += [*[(f"{name} file put {a.file}", lambda b=b: fathom_put(b, src, dst)) for name, b in builds],
                  (f"socat file {a.file}", lambda: socat_put(src, dst))]
    rows = {k: [] for k, _ in cases}
    loads = []
    try:
        for r in range(a.rounds):
            order = cases if r % 2 == 0 else cases[::-1]
            try:
                got = {k: run() for k, run in order}
            except Exception as e:  # a failed round is reported and left out
                print(f"round {r + 1} failed and is left out: {e}", file=sys.stderr)
                continue
            for k, v in got.items():
                rows[k].append(v)
            loads.append(peers.load())
            print(f"round {r + 1} (load {loads[-1]:.1f}): " +
                  ", ".join(f"{k} {v[0] * 1e3:.0f} ms" for k, v in got.items()), file=sys.stderr)
        if a.trace:
            os.makedirs(a.trace, exist_ok=True)
            for name, b in builds:
                for tls in (False, True):
                    fathom(b, n, tls, os.path.join(a.trace, f"{name}-{'tls' if tls else 'clear'}"))
    except KeyboardInterrupt:
        sys.exit("interrupted")
    finally:
        path.down()
        shutil.rmtree(tmp, ignore_errors=True)
        if a.file:
            shutil.rmtree(dst, ignore_errors=True)
    if not loads:
        sys.exit("every round failed")
    summarize(rows, a, path, loads)


def summarize(rows, a, path, loads):
    med = lambda k, i: statistics.median(x[i] for x in rows[k]) * 1e3
    print(f"\n{path.describe()}; {a.bytes} once, client namespace to server namespace; medians of "
          f"{len(loads)} rounds, load {min(loads):.1f}–{max(loads):.1f}\n")
    print("| case | wall ms | client CPU ms | server CPU ms | setup ms | run ms |\n|---|---|---|---|---|---|")
    for k, v in rows.items():
        if not v:
            continue
        split = " | ".join(f"{med(k, i):.0f}" if len(v[0]) > 3 else "" for i in range(3, 5))
        print(f"| {k} | {med(k, 0):.0f} | {med(k, 1):.0f} | {med(k, 2):.0f} | {split} |")


if __name__ == "__main__":
    main()
