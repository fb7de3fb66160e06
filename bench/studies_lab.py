#!/usr/bin/env python3
"""The studies' quick forms across a lab link: each study runs `fathom study NAME --quick --lab WAN`
(h1 - WAN emulator - h2, the study's lab, made and removed by the study itself), one after the
other, and its output is saved as OUT/NAME-lab.txt (NAME-lab-full.txt with --full), headed by
one line with the link, the load average and the date.

Usage: bench/studies_lab.py [--studies many-flows,write-size,socket-buffers] [--out bench/studies]
                            [--wan NAME=PARAMS ...] [--limit 600] [--full]

Links by default: socket-buffers, a study about windows, across "delay=10ms,rate=1G" (20 ms
round trip, a 2.5 MB bandwidth-delay product); the others across "rate=1G" (no added delay).
`--wan write-size=delay=0ms` runs one study across the unshaped emulator instead.

Needs root (ip netns). Uses $FATHOM, else target/release/fathom. Every study is bounded by
--limit seconds: at the limit it gets Ctrl-C (it stops after the running test and removes its
lab), 60 s later SIGKILL, and then its lab (`study<PID>`) is removed here if it is still there.
The results go to a store of this run's own in a temporary directory, removed at the end; the
study's table, plots and page stay in the directory its last line names.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import peers

FATHOM = os.environ.get("FATHOM", os.path.join(os.path.dirname(__file__), "..", "target", "release", "fathom"))
STUDIES = "many-flows,write-size,socket-buffers"
LINKS = {"socket-buffers": "delay=10ms,rate=1G"}
DEFAULT_LINK = "rate=1G"


def run_study(name, wan, full, limit, store, pages):
    """Runs one study across a lab link with `wan`; returns (exit code, stdout text)."""
    cmd = [FATHOM, "study", name, "--lab", wan, "--store", store, "-o", os.path.join(pages, name)]
    if not full:
        cmd.append("--quick")
    print(f"== {' '.join(cmd[1:])}", file=sys.stderr)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        print(f"   {name}: over {limit} s, stopping it (Ctrl-C)", file=sys.stderr)
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    finally:
        remove_lab(f"study{proc.pid}")
    return proc.returncode, out


def remove_lab(name):
    """Removes the study's lab if it outlived the study (a killed study cannot remove it)."""
    status = subprocess.run([FATHOM, "lab", "status", "--name", name], capture_output=True, timeout=30)
    if status.returncode == 0:
        subprocess.run([FATHOM, "lab", "down", "--name", name], capture_output=True, timeout=120)


def links(pairs):
    """The link of every study: the defaults, then NAME=PARAMS pairs from --wan."""
    out = dict(LINKS)
    for p in pairs:
        name, sep, wan = p.partition("=")
        if not sep or not wan:
            sys.exit(f"--wan {p!r}: expected NAME=PARAMS, e.g. socket-buffers=delay=10ms,rate=1G")
        out[name] = wan
    return out


def main():
    ap = peers.parser(__doc__)
    ap.add_argument("--studies", default=STUDIES)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "studies"))
    ap.add_argument("--wan", action="append", default=[], metavar="NAME=PARAMS")
    ap.add_argument("--limit", type=float, default=600, help="seconds per study (default 600)")
    ap.add_argument("--full", action="store_true", help="the full forms instead of --quick")
    a = ap.parse_args()
    if a.limit <= 0:
        sys.exit("--limit: must be above 0 seconds")
    link = links(a.wan)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that the cleanup below runs
    pages = tempfile.mkdtemp(prefix="fathom-studies-lab-")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="fathom-studies-lab-store-") as store_dir:
        store = os.path.join(store_dir, "fathom.db")
        for name in a.studies.split(","):
            wan = link.get(name, DEFAULT_LINK)
            started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            rc, out = run_study(name, wan, a.full, a.limit, store, pages)
            load = " ".join(open("/proc/loadavg").read().split()[:3])
            head = (f"# {name}{'' if a.full else ' --quick'} across a lab link h1 - WAN emulator ({wan}) - h2, "
                    f"{started}, load at the end {load}, exit {rc}\n")
            saved = os.path.join(a.out, f"{name}-lab{'-full' if a.full else ''}.txt")
            with open(saved, "w") as f:
                f.write(head + (out or ""))
            print(f"   {name}: exit {rc}, saved {saved}", file=sys.stderr)
            failed += rc != 0
    print(f"tables, plots and pages: {pages}", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
