"""The attacks of issue 21 for bench/robustness.py: strangers on the data ports of stream, rr and
crr; a controller that never reads its replies; a source file that shrinks during
`file get --sendfile`; a flood of idle connections on `fathom launch`'s rendezvous port; and the
UDP set-up and memory figures (`udp -P 1500`, `udp -R -P 32 --size 65507 --batch 1024`).

Every attack talks to 127.0.0.1 only, is bounded in time, and ends every process it starts by
its PID. Each returns a dict of figures; `run_all` collects them.
"""

import os
import socket
import subprocess
import tempfile
import threading
import time


def listening_ports(pid):
    """The TCP ports process `pid` listens on (its socket inodes matched in /proc/net/tcp*)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return set()
    ports = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = open(f"/proc/{pid}/net/{table}").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:
                ports.add(int(f[1].split(":")[1], 16))
    return ports


def cpu_s(pid):
    """User + system CPU seconds of `pid` so far (0 once it is gone)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError):
        return 0.0


def rss_mb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else ""


def ended(proc, seconds):
    """Waits for `proc` at most `seconds`, then kills it by its PID; (rc, stdout, stderr)."""
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return proc.returncode, out, err


def strangers(fathom, agent, key_file, env, kind, silent=7):
    """A real `kind` test while strangers (no cookie) use its data port as soon as it appears:
    `silent` connections that send nothing (stream, rr: the listener usually closes before they
    arrive; `silent_first` races no one), or one stranger doing transactions (crr)."""
    args = {"stream": ["-t", "2", "-P", "4"], "rr": ["-t", "2", "-P", "4"],
            "crr": ["-t", "2"]}[kind]
    base = listening_ports(agent.proc.pid)
    start = time.monotonic()
    proc = subprocess.Popen([fathom, kind, f"127.0.0.1:{agent.port}", "--key-file", key_file,
                             "--json", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    port = None
    while port is None and time.monotonic() - start < 10 and proc.poll() is None:
        new = listening_ports(agent.proc.pid) - base
        port = min(new) if new else None
    held, answered = [], 0
    if port and kind != "crr":
        for _ in range(silent):
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=2))
            except OSError:
                break
    while port and kind == "crr" and proc.poll() is None and time.monotonic() - start < 30:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"x")
                answered += 1 if s.recv(64) else 0
        except OSError:
            time.sleep(0.01)
    rc, out, err = ended(proc, 120)
    for s in held:
        s.close()
    figures = {"rc": rc, "wall_s": round(time.monotonic() - start, 1), "data_port_found": bool(port),
               "error": last_line(err) if rc else ""}
    if kind == "crr":
        figures["stranger_answered"] = answered
    else:
        figures["silent_strangers"] = len(held)
    return figures


def silent_first(agent, wire, plan, kind, silent=7):
    """A keyed session of our own sets up a 2-flow `kind` test; `silent` strangers connect to
    its data port first and send nothing, then the two real flows present the cookie. Seconds
    until the agent answered (Connected, or an error), and what it said."""
    connect, handshake, frame, varint = wire
    body = plan(kind=kind, flows=2, limit=("time", 2 * 10**9),
                rr=(1, 1, 1) if kind == "rr" else None)
    s = connect(agent.port, timeout=60)
    handshake(s)
    s.sendall(frame(varint(2) + body))
    reply = read_frame(s)
    if reply[0] != 3:
        return {"error": f"no Ready: variant {reply[0]} {reply[1:120]!r}"}
    port, i = read_varint(reply, 1)
    n, i = read_varint(reply, i)
    for _ in range(n):
        _, i = read_varint(reply, i)
    cookie = reply[i:i + 16]
    held = [socket.create_connection(("127.0.0.1", port), timeout=2) for _ in range(silent)]
    start = time.monotonic()
    real = []
    for flow in range(2):
        c = socket.create_connection(("127.0.0.1", port), timeout=2)
        c.sendall(b"FTHM" + (6).to_bytes(2, "big") + b"\x01\x00" + cookie + flow.to_bytes(4, "big"))
        real.append(c)
    said = "no answer within 60 s"
    s.settimeout(1)
    while time.monotonic() - start < 60:
        try:
            head = s.recv(1, socket.MSG_PEEK)
            if not head:
                said = "closed the session"
                break
            s.settimeout(60)
            answer = read_frame(s)
            said = {4: "Connected", 7: "Error"}.get(answer[0], f"variant {answer[0]}")
            if answer[0] == 7:
                said += ": " + answer[2:].decode(errors="replace")[:160]
            break
        except socket.timeout:
            s.sendall(frame(varint(5)))  # Heartbeat: this controller is alive
        except (OSError, EOFError) as e:
            said = f"no answer ({e.__class__.__name__})"
            break
    took = round(time.monotonic() - start, 1)
    for c in held + real + [s]:
        c.close()
    return {"silent_strangers": silent, "s_until_answer": took, "agent_said": said}


def read_varint(b, i):
    """A postcard varint at b[i:]: (value, index after it)."""
    n, shift = 0, 0
    while True:
        n |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return n, i


def read_exact(s, n):
    """Exactly n bytes from socket s; EOFError if it closes first."""
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("closed")
        buf += chunk
    return buf


def read_frame(s):
    """One length-prefixed frame's body (4-byte big-endian length) from socket s."""
    return read_exact(s, int.from_bytes(read_exact(s, 4), "big"))


def never_reads(agent, connect, handshake, frame, varint, budget_mb=300, seconds=30):
    """A keyed controller that sends TimeProbes and never reads a reply: how much the agent
    took in, its RSS at the end, and whether it dropped the connection."""
    s = connect(agent.port, timeout=5)
    handshake(s)
    chunk = b"".join(frame(varint(1) + varint(i + 1)) for i in range(100_000))
    sent, start, dropped = 0, time.monotonic(), None
    idle_rss = rss_mb(agent.proc.pid)
    peak = idle_rss
    while sent < budget_mb << 20 and time.monotonic() - start < seconds:
        try:
            s.sendall(chunk)
            sent += len(chunk)
        except socket.timeout:
            dropped = "stopped reading (send blocked 5 s)"
            break
        except OSError as e:
            dropped = f"closed the connection ({e.__class__.__name__})"
            break
        peak = max(peak or 0, rss_mb(agent.proc.pid) or 0)
    s.close()
    return {"sent_mb": round(sent / 2**20), "s": round(time.monotonic() - start, 1),
            "rss_idle_mb": idle_rss, "rss_peak_mb": peak, "agent": dropped or "kept reading",
            "agent_alive": agent.alive()}


def shrinking_source(fathom, tries=4, size_mb=256):
    """`file get --sendfile` of a file the agent serves while it is cut to a quarter: the
    agent's fate, and its CPU in the 5 s after the copy ended (a spin shows as ~5 CPU-s)."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        src = os.path.join(root, "big")
        for _ in range(tries):
            with open(src, "wb") as f:
                f.truncate(size_mb << 20)
                f.seek(0)
                f.write(os.urandom(1 << 20) * (size_mb // 4))
            agent = subprocess.Popen([fathom, "serve", "--listen", "127.0.0.1:0", "--files-root",
                                      root], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
            first = agent.stderr.readline()
            addr = next((w for w in first.split() if w.startswith("127.0.0.1:")), None)
            if addr is None:
                agent.kill()
                agent.wait()
                results.append({"error": f"agent did not start: {first.strip()}"})
                continue
            get = subprocess.Popen([fathom, "file", "get", f"{addr}:big",
                                    os.path.join(tmp, "dst"), "--sendfile", "--no-store"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(0.3)
            os.truncate(src, (size_mb << 20) // 4)
            rc, _, err = ended(get, 60)
            before = cpu_s(agent.pid)
            time.sleep(5)
            spin = round(cpu_s(agent.pid) - before, 2)
            alive = agent.poll() is None
            results.append({"get_rc": rc, "get_error": last_line(err) if rc else "",
                            "agent": "alive" if alive else f"died (signal {-agent.returncode})"
                            if agent.returncode and agent.returncode < 0 else
                            f"exited {agent.returncode}", "agent_cpu_s_in_5s_after": spin})
            agent.kill()
            agent.wait()
    return results


def rendezvous_flood(fathom, key_file, env, strangers_n=256):
    """A keyed 3-rank `fathom launch` with `strangers_n` idle connections on rank 0's
    rendezvous port, opened as soon as it listens."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    args = [fathom, "launch", "--rendezvous-port", str(port), "stream", "-n", "10M", "--json",
            "--key-file", key_file]
    launcher = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                "SLURM_PROCID", "SLURM_NTASKS", "PMI_RANK", "PMI_SIZE")
    clean = {k: v for k, v in env.items() if k not in launcher}

    def rank(r):
        e = dict(clean, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE="3",
                 OMPI_COMM_WORLD_LOCAL_SIZE="3")
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=e)

    start = time.monotonic()
    r0 = rank(0)
    held = []
    while not held and time.monotonic() - start < 10 and r0.poll() is None:
        try:
            held.append(socket.create_connection(("127.0.0.1", port), timeout=1))
        except OSError:
            time.sleep(0.01)
    for _ in range(strangers_n - 1):
        try:
            held.append(socket.create_connection(("127.0.0.1", port), timeout=1))
        except OSError:
            break
    others = [rank(1), rank(2)]
    rc, _, err = ended(r0, 90)
    for p in others:
        ended(p, 10)
    for s in held:
        s.close()
    return {"strangers": len(held), "rank0_rc": rc, "wall_s": round(time.monotonic() - start, 1),
            "error": last_line(err) if rc else ""}


def udp_figures(fathom, agent, key_file, env):
    """`udp -P 1500` set-up on a real agent, and the admission of 6 sending flows of 64 MB of
    slots each under `--max-memory 512M` (a separate agent; 32 such flows, as in the issue, are
    now refused by the controller's own 1 GiB budget before the agent is asked)."""
    start = time.monotonic()
    out = subprocess.run([fathom, "udp", f"127.0.0.1:{agent.port}", "--key-file", key_file, "-P",
                          "1500", "-n", "3000", "--pps", "10k", "--no-store"],
                         capture_output=True, text=True, timeout=120, env=env)
    pairing = {"rc": out.returncode, "wall_s": round(time.monotonic() - start, 1),
               "error": last_line(out.stderr) if out.returncode else ""}
    small = subprocess.Popen([fathom, "serve", "--listen", "127.0.0.1:0", "--max-memory", "512M"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    addr = next((w for w in small.stderr.readline().split() if w.startswith("127.0.0.1:")), "")
    peak = [0.0]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mb(small.pid) or 0)
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    big = subprocess.run([fathom, "udp", addr, "-R", "-P", "6", "--size", "65507", "--batch",
                          "1024", "-t", "2", "--no-store"], capture_output=True, text=True,
                         timeout=120, env=env)
    stop.set()
    t.join()
    small.kill()
    small.wait()
    memory = {"rc": big.returncode, "agent_peak_rss_mb": peak[0],
              "message": last_line(big.stderr) if big.returncode else "admitted"}
    return {"udp_P1500": pairing, "udp_R_P6_64MB_slots_under_512M": memory}


def run_all(fathom, agent, key_file, env, wire, plan):
    """Every attack above against `agent` (keyed with `key_file`) or agents of their own;
    `wire` is (connect, handshake, frame, varint) and `plan` the plan encoder of robustness.py."""
    report = {}
    report["no_strangers_stream"] = silent_first(agent, wire, plan, "stream", silent=0)
    for kind in ("stream", "rr"):
        report[f"silent_strangers_{kind}"] = silent_first(agent, wire, plan, kind)
    report["strangers_crr"] = strangers(fathom, agent, key_file, env, "crr")
    report["never_reads"] = never_reads(agent, *wire)
    report["shrinking_source_sendfile"] = shrinking_source(fathom)
    report["rendezvous_flood"] = rendezvous_flood(fathom, key_file, env)
    report.update(udp_figures(fathom, agent, key_file, env))
    report["agent_alive_after_attacks"] = agent.alive()
    return report
