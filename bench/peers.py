"""Runs fathom and peer tools (iperf3, iperf2, nuttcp) on one path and reads their results.

Paths (`--path`, see add_path_arg): `veth` (default) is a veth pair between two network namespaces
this module creates (MTU 1500, offloads on), both ends free on every CPU; `pinned` is the same pair
with the server confined to CPU 0 and the client to CPU 1 (taskset for every tool alike);
`loopback` runs everything on 127.0.0.1 and gives every peer the placement and buffers fathom
chooses there (both ends on CPU 0, 64K send buffers). The namespaces are removed at exit, even on
failure or Ctrl-C.

Scheduling: with the kernel's autogroup on (kernel.sched_autogroup_enabled = 1, as on the
project's VM), the scheduler first shares the CPUs equally between sessions, and nice counts only
inside a session: a build at nice 19 in another session gets as much CPU as a bench at nice 0,
and a bench's tools then get between a third and a half of the machine, waking late after every
wait. use_path therefore moves the bench (every tool alike) into a session of its own and gives
that session's group nice -20, so that niced work elsewhere yields to it as it would on a quiet
machine; the output's first line says whether it did. BENCH_SHARED_CPU=1 leaves the bench where it
was started.

Each stream runner returns a Run: the receiver-side or tool-reported rate, the user+system CPU of
the client and of the server processes (from wait4()), and the tool's settings as run.
Every process is started here, bounded in time, and ended by its PID only.
"""
import argparse
import atexit
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

FATHOM = os.environ.get("FATHOM", os.path.join(os.path.dirname(__file__), "..", "target", "release", "fathom"))
PORT = 5901
PATHS = ("veth", "pinned", "loopback")
# The CPU each end gets on the pinned path, and the loopback placement fathom chooses for one flow.
SERVER_CPU, CLIENT_CPU = 0, 1
LOOPBACK_SNDBUF = "64K"


@dataclass
class Run:
    """One tool's result in one round."""
    bps: float
    cpu_client: float
    cpu_server: float
    settings: str
    extra: dict = field(default_factory=dict)


class Path:
    """Where the ends run: argv prefixes for each end and the address the client dials."""

    def __init__(self, name, rps=None):
        self.name = name
        self.rps = rps
        self.namespaces = []
        tag = os.getpid() % 250 + 1
        # Each veth end is named as its namespace less the prefix $BENCH_NETNS_PREFIX (namespace
        # names on a shared machine carry their owner's; interface names stay within 15 bytes).
        self.server_if, self.client_if = f"fbs{os.getpid()}", f"fbc{os.getpid()}"
        prefix = os.environ.get("BENCH_NETNS_PREFIX", "")
        self.server_ns, self.client_ns = prefix + self.server_if, prefix + self.client_if
        self.host = "127.0.0.1" if name == "loopback" else f"198.18.{tag}.1"
        self.client_ip = None if name == "loopback" else f"198.18.{tag}.2"

    def up(self):
        """Builds the namespaces and the veth pair (nothing on loopback)."""
        if self.name == "loopback":
            return self
        atexit.register(self.down)
        for ns in (self.server_ns, self.client_ns):
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("link", "add", self.server_if, "netns", self.server_ns, "type", "veth",
            "peer", "name", self.client_if, "netns", self.client_ns)
        for ns, dev, ip in ((self.server_ns, self.server_if, self.host), (self.client_ns, self.client_if, self.client_ip)):
            _ip("-n", ns, "link", "set", dev, "mtu", "1500", "up")
            _ip("-n", ns, "addr", "add", f"{ip}/30", "dev", dev)
            if self.rps:
                # Receive packet steering: which CPUs run this end's receive processing.
                subprocess.run(["ip", "netns", "exec", ns, "sh", "-c",
                                f"echo {self.rps} > /sys/class/net/{dev}/queues/rx-0/rps_cpus"],
                               check=True, timeout=10)
        return self

    def down(self):
        """Deletes every namespace made here (their veth ends go with them)."""
        while self.namespaces:
            subprocess.run(["ip", "netns", "del", self.namespaces.pop()], timeout=10,
                           stderr=subprocess.DEVNULL, check=False)

    def server(self, cmd):
        """The argv that runs `cmd` as the server end."""
        return self._wrap(self.server_ns, SERVER_CPU, cmd)

    def client(self, cmd):
        """The argv that runs `cmd` as the client end."""
        return self._wrap(self.client_ns, CLIENT_CPU, cmd)

    def _wrap(self, ns, cpu, cmd):
        if self.name == "loopback":
            return list(cmd)
        pin = ["taskset", "-c", str(cpu)] if self.name == "pinned" else []
        return ["ip", "netns", "exec", ns, *pin, *cmd]

    def describe(self):
        """One line naming the path, for the output."""
        extra = f"; RPS CPU mask {self.rps} on both veth ends" if self.rps else ""
        extra += f"; {CPU_SHARE}" if CPU_SHARE else ""
        return {
            "veth": "veth pair between two namespaces, MTU 1500, offloads on, both ends on every CPU",
            "pinned": f"veth pair between two namespaces, MTU 1500, server on CPU {SERVER_CPU}, client on CPU {CLIENT_CPU} (taskset)",
            "loopback": "loopback; every peer gets fathom's loopback choices (a stream: both ends on CPU 0, 64K send buffers)",
        }[self.name] + extra


PATH = Path("loopback")


def parser(doc):
    """A bench script's argument parser, its --help the script's docstring `doc` as written."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def run_main(main):
    """Runs a bench script's `main`; Ctrl-C (or SIGTERM, once use_path is set up) exits 130."""
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)


def side_by_side_args(doc):
    """A side-by-side bench script's argument parser, described by `doc`, with the options every
    such script takes: --path (see add_path_arg), --rounds and --time (seconds per run)."""
    ap = parser(doc)
    add_path_arg(ap)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=int, default=5)
    return ap


def add_path_arg(parser):
    """Adds --path to a bench script's arguments."""
    parser.add_argument("--path", choices=PATHS, default="veth",
                        help="veth (default): two namespaces joined by a veth pair; pinned: the same, each end on its own CPU; loopback")


def add_rps_arg(parser):
    """Adds --rps (receive packet steering on the veth path, passed to use_path)."""
    parser.add_argument("--rps", metavar="MASK",
                        help="receive packet steering on both veth ends (a hex CPU mask, e.g. 3): where the receive work runs")


def use_path(name, rps=None):
    """Sets up the path every runner uses (with receive packet steering to the CPU mask `rps`,
    if given), removed again at exit, on failure or on Ctrl-C/SIGTERM."""
    global PATH, CPU_SHARE
    if rps and (name == "loopback" or not re.fullmatch(r"[0-9a-fA-F]{1,16}", rps)):
        raise SystemExit("--rps takes a hex CPU mask and a veth path")
    CPU_SHARE = CPU_SHARE or own_sched_group()
    PATH = Path(name, rps)
    signal.signal(signal.SIGTERM, _interrupt)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        PATH.up()
    except BaseException:
        PATH.down()
        raise
    return PATH


def _interrupt(*_):
    raise KeyboardInterrupt


AUTOGROUP = "/proc/sys/kernel/sched_autogroup_enabled"
CPU_SHARE = ""


def own_sched_group():
    """Puts the bench in a session (so an autogroup) of its own at nice -20; see the module's
    doc. The process that called it only waits for the new session's, forwarding Ctrl-C and
    SIGTERM, and exits with its status. Returns what was done, for the output."""
    try:
        on = open(AUTOGROUP).read().strip() == "1"
    except OSError:
        on = False
    if not on or os.environ.get("BENCH_SHARED_CPU") == "1":
        return "scheduling: as started" + ("" if on else " (no autogroup)")
    if os.getsid(0) != os.getpid():
        child = os.fork()
        if child:
            _wait_for(child)
        # A bench started in the background of a script inherits Ctrl-C ignored; the parent
        # forwards it here, so hear it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("-20")
    except OSError as e:
        return f"scheduling: a session of its own, its nice not raised ({e.strerror})"
    return "scheduling: a session of its own, its autogroup at nice -20 (BENCH_SHARED_CPU=1 to share)"


def _wait_for(child):
    """The parent's side of own_sched_group: signals go on to `child`, its status ends us."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _: os.kill(child, s))
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status))


def load():
    """The 1-minute load average, to print beside every figure."""
    return os.getloadavg()[0]


def _ip(*args):
    subprocess.run(["ip", *args], check=True, timeout=10)


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
    """Runs `cmd` as the client end (loopback: as given) to completion: (rc, stdout, cpu s)."""
    p = subprocess.Popen(PATH.client(cmd), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        out = p.stdout.read()  # everything (the pipe must not fill), then rusage
    finally:
        rc, cpu = _wait(p, secs + 60)
    return rc, out, cpu


def _server(cmd, settle=0.3):
    p = subprocess.Popen(PATH.server(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(settle)
    return p


def _await_listening(server, port, timeout=10.0):
    """Waits until the server namespace has a listener on `port` (a loaded machine may take well
    over the half second a fixed pause gave an agent to start), or the server exits, or `timeout`."""
    deadline = time.time() + timeout
    # WNOWAIT: an exited server stays unreaped, for _stop's wait4 and its CPU time.
    exited = lambda: os.waitid(os.P_PID, server.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    while time.time() < deadline and not exited():
        ss = subprocess.run(["ip", "netns", "exec", PATH.server_ns, "ss", "-Hltn", f"sport = :{port}"],
                            capture_output=True, text=True, timeout=10, check=False)
        if ss.stdout.strip():
            return
        time.sleep(0.05)


def _stop(server):
    # Not reaped yet (no poll()), so the PID is still ours even if the server already exited.
    time.sleep(0.2)
    pid, status, ru = os.wait4(server.pid, os.WNOHANG)
    if pid:
        return ru.ru_utime + ru.ru_stime
    os.kill(server.pid, signal.SIGTERM)
    _, cpu = _wait(server, 5)
    return cpu


def fathom_json(args, secs, binary=None):
    """Runs `fathom ARGS --json --no-store` (or BINARY's): in one process on loopback, else against an
    agent (`serve --insecure`) in the server namespace. Returns (document, client CPU s, server CPU s)."""
    binary = binary or FATHOM
    args = [args[0], *([PATH.host] if PATH.name != "loopback" else []), *args[1:], "--json", "--no-store"]
    srv = None
    if PATH.name != "loopback":
        srv = _server([binary, "serve", "--listen", f"{PATH.host}:5301", "--insecure"], settle=0)
        _await_listening(srv, 5301)
    try:
        rc, out, cpu = _client([binary, *args], secs)
    finally:
        cpu_s = _stop(srv) if srv else 0.0
    doc = json.loads(out)
    if doc.get("error"):
        raise RuntimeError(doc["error"])
    return doc, cpu, cpu_s


def fathom(secs, parallel, write=None, extra=(), binary=None):
    """fathom stream (or BINARY's); its settings name any extra arguments and the worker threads
    per end."""
    args = ["stream", "-t", f"{secs}s", "-P", str(parallel), *extra]
    if write:
        args += ["--write", write, "--read", write]
    doc, cpu, cpu_s = fathom_json(args, secs, binary)
    hosts = doc.get("hosts", [])
    # The sampler's CPU per end as a share of one CPU (hosts[].measurement_percent is of the host).
    meas = [round(h.get("measurement_cpu_s", 0.0) * 100 / secs, 3) for h in hosts]
    threads = [len(h.get("threads", [])) for h in hosts]
    settings = f"defaults{' ' + ' '.join(extra) if extra else ''}{f' --write/--read {write}' if write else ''}; threads per end {threads}"
    return Run(doc["summary"]["bits_per_second"], cpu, cpu_s, settings, {"measurement_percent": meas})


def _loopback_placement(parallel):
    """iperf3's -A and -w giving it fathom's loopback choices."""
    if PATH.name != "loopback":
        return []
    return ["-A", "0,0", "-w", LOOPBACK_SNDBUF]


def iperf3(secs, parallel, write=None):
    """iperf3 -c, receiver's sum."""
    srv = _server(["iperf3", "-s", "-1", "-p", str(PORT)])
    opts = ["-P", str(parallel), *_loopback_placement(parallel), *(["-l", write] if write else [])]
    try:
        rc, out, cpu = _client(["iperf3", "-c", PATH.host, "-p", str(PORT), "-t", str(secs), "-J", *opts], secs)
    finally:
        cpu_s = _stop(srv)
    return Run(json.loads(out)["end"]["sum_received"]["bits_per_second"], cpu, cpu_s, " ".join(opts))


def iperf2(secs, parallel, write=None):
    """iperf (2) -c; the client's sum (or its streams' whole-test reports added up)."""
    lo = ["-w", LOOPBACK_SNDBUF] if PATH.name == "loopback" else []
    srv = _server(["iperf", "-s", "-p", str(PORT), *lo])
    opts = ["-P", str(parallel), *lo, *(["-l", write] if write else [])]
    try:
        rc, out, cpu = _client(["iperf", "-c", PATH.host, "-p", str(PORT), "-t", str(secs), "-y", "C", *opts], secs)
    finally:
        cpu_s = _stop(srv)
    lines = [l.split(",") for l in out.strip().splitlines() if l.count(",") >= 8]
    summed = [l for l in lines if l[5] == "-1"]
    if summed:
        return Run(float(summed[-1][8]), cpu, cpu_s, " ".join(opts))
    whole = [l for l in lines if l[6].startswith("0.0")]
    return Run(sum(float(l[8]) for l in whole), cpu, cpu_s, " ".join(opts))


def nuttcp(secs, parallel, write=None):
    """nuttcp -T; its parse-format rate."""
    srv = _server(["nuttcp", "-1", "--nofork", "-P", str(PORT), "-p", str(PORT + 1)])
    opts = [*([f"-N{parallel}"] if parallel > 1 else []), *([f"-l{write.lower()}"] if write else []),
            *(["-w64"] if PATH.name == "loopback" else [])]
    try:
        rc, out, cpu = _client(["nuttcp", "-T", str(secs), "-P", str(PORT), "-p", str(PORT + 1), "-fparse", *opts, PATH.host], secs)
    finally:
        cpu_s = _stop(srv)
    m = re.search(r"rate_Mbps=([0-9.]+)", out)
    if not m:
        raise RuntimeError(f"nuttcp said: {out!r}")
    return Run(float(m.group(1)) * 1e6, cpu, cpu_s, " ".join(opts) or "defaults")


TOOLS = {"fathom": fathom, "iperf3": iperf3, "iperf2": iperf2, "nuttcp": nuttcp}
