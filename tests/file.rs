//! File copies end to end on loopback: every size with every I/O mode arrives byte-identical
//! (compared here, not only by fathom's checksum), the agent stays below its files root,
//! refuses overwrites, leaves nothing under the target name when killed mid-put or when the disk
//! fills (reported with the bytes written), and bad input
//! is one clear line with its exit code.

mod common;
use common::*;
use std::path::Path;

const SIZES: [usize; 6] = [0, 1, 4095, 4096, 4097, (1 << 20) + 1];

/// Deterministic bytes that differ from one offset to the next (a multiplicative hash).
fn pattern(n: usize) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

/// `fathom file ARGS --files-root ROOT --json`, which must succeed with a matching checksum.
fn copy(root: &Path, args: &[&str]) {
    let mut all = vec!["file"];
    all.extend_from_slice(args);
    all.extend([
        "--files-root",
        root.to_str().unwrap(),
        "--json",
        "--no-store",
    ]);
    let out = run(&all, 60);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    let j = json(&out);
    assert_valid(&j, &format!("{all:?}"));
    assert_eq!(j["summary"]["file"]["checksum_match"], true, "{all:?}");
}

#[test]
fn every_size_with_every_io_mode_arrives_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let modes: [&[&str]; 7] = [
        &[],
        &["--sendfile"],
        &["--splice", "-P", "3", "--io", "1000"],
        &["--direct", "--io", "4K", "--fsync"],
        &["-P", "4", "--io", "4K", "--verify", "sha256"],
        &["--io", "1"],
        &["--sendfile", "--io", "64K", "-P", "2"],
    ];
    for size in SIZES {
        let data = pattern(size);
        let src = dir.path().join("src");
        std::fs::write(&src, &data).unwrap();
        for (m, mode) in modes.iter().enumerate() {
            if size > 5000 && mode.contains(&"1") {
                continue; // one-byte I/O of a megabyte is a million writes: slow, and nothing new
            }
            let name = format!(":put-{size}-{m}");
            let mut args = vec!["put", src.to_str().unwrap(), name.as_str()];
            args.extend_from_slice(mode);
            copy(&root, &args);
            let landed = root.join(&name[1..]);
            assert!(
                std::fs::read(&landed).unwrap() == data,
                "put {size} {mode:?}"
            );
            let back = dir.path().join(format!("get-{size}-{m}"));
            let mut args = vec!["get", name.as_str(), back.to_str().unwrap()];
            args.extend_from_slice(mode);
            copy(&root, &args);
            assert!(std::fs::read(&back).unwrap() == data, "get {size} {mode:?}");
        }
    }
    for mode in [&["--sendfile"][..], &["--splice", "-P", "2"], &[]] {
        let name = format!(":gen-{}", mode.len());
        let mut args = vec!["put", "--size", "4097", name.as_str()];
        args.extend_from_slice(mode);
        copy(&root, &args);
        assert_eq!(
            std::fs::metadata(root.join(&name[1..])).unwrap().len(),
            4097
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// Runs `fathom file ARGS` against `agent`; it must fail with one line naming `why`.
fn refused(args: &[&str], code: i32, why: &str) {
    let mut all = vec!["file"];
    all.extend_from_slice(args);
    all.push("--no-store");
    let out = run(&all, 60);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{all:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{all:?}: one line: {err}");
    assert!(err.contains(why), "{all:?}: {err}");
}

#[test]
fn the_agent_stays_below_its_files_root() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), b"s").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink("../../outside/secret", root.join("sub/climb")).unwrap();
    let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid path; mkfifo only creates it.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let src = dir.path().join("src");
    std::fs::write(&src, b"data").unwrap();
    let agent = Agent::start(&["--files-root", root.to_str().unwrap()]);
    let at = |p: &str| format!("{}:{p}", agent.target());
    let src = src.to_str().unwrap();
    let abs_outside = format!("{}/x", outside.display());
    for (target, why) in [
        ("../x", "leaves the agent's files root"),
        ("sub/../../x", "leaves the agent's files root"),
        (abs_outside.as_str(), "outside the agent's files root"),
        ("out/x", "files root"),
        ("sub/climb", "not a regular file"),
        ("fifo", "not a regular file"),
        ("sub", "not a regular file"),
    ] {
        refused(&["put", src, &at(target), "--force"], 1, why);
    }
    let dst = dir.path().join("got");
    for (path, why) in [
        ("../outside/secret", "leaves the agent's files root"),
        ("sub/climb", "leaves the agent's files root"),
        ("out/secret", "files root"),
        ("fifo", "not a regular file"),
    ] {
        refused(&["get", &at(path), dst.to_str().unwrap()], 1, why);
    }
    let mut listed: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    listed.sort();
    assert_eq!(listed, ["secret"], "nothing created outside the root");
    assert!(!dst.exists());
    assert_eq!(std::fs::read(outside.join("secret")).unwrap(), b"s");
    let bare = Agent::start(&[]);
    refused(
        &["put", src, &format!("{}:x", bare.target())],
        1,
        "--files-root",
    );
}

#[test]
fn a_refused_overwrite_changes_nothing_and_force_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    std::fs::write(dir.path().join("dst"), b"keep me").unwrap();
    std::fs::write(dir.path().join("src"), b"new").unwrap();
    let src = dir.path().join("src");
    let src = src.to_str().unwrap();
    refused(
        &["put", src, ":dst", "--files-root", root],
        1,
        "exists; pass --force",
    );
    assert_eq!(std::fs::read(dir.path().join("dst")).unwrap(), b"keep me");
    refused(
        &[
            "get",
            ":src",
            dir.path().join("dst").to_str().unwrap(),
            "--files-root",
            root,
        ],
        1,
        "exists; pass --force",
    );
    assert_eq!(std::fs::read(dir.path().join("dst")).unwrap(), b"keep me");
    copy(dir.path(), &["put", src, ":dst", "--force"]);
    assert_eq!(std::fs::read(dir.path().join("dst")).unwrap(), b"new");
}

#[test]
fn an_agent_killed_mid_put_leaves_nothing_under_the_target_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::start(&["--files-root", dir.path().to_str().unwrap()]);
    let idle = agent.threads();
    let dst = format!("{}:big", agent.target());
    let mut put = fathom()
        .args(["file", "put", "--size", "20G", &dst, "--no-store"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while agent.threads() <= idle && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(
        agent.threads() > idle,
        "the put began (its workers started)"
    );
    std::thread::sleep(std::time::Duration::from_millis(100));
    agent.child.kill().unwrap();
    agent.child.wait().unwrap();
    let pid = put.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(tx.send(put.wait())));
    let status = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_else(|_| {
            // SAFETY: signals the child we spawned, by its PID.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the put did not end after its agent was killed")
        });
    assert!(!status.unwrap().success());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing left, named or not: {left:?}");
    restart_removes_only_stale_parts(dir.path());
}

/// A new agent on `root` removes the temporary files no writer holds (left where a filesystem
/// has no unnamed files), below subdirectories too, saying so with the path escaped, and keeps
/// everything else: one a writer holds (its lock), names off the pattern, and a symlink named
/// like one.
fn restart_removes_only_stale_parts(root: &Path) {
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::create_dir(root.join("sub\nline")).unwrap();
    let stale = [
        ".fathom-0123456789abcdef.part",
        "sub\nline/.fathom-00000000000000ff.part",
    ];
    let held = ".fathom-fedcba9876543210.part";
    let kept = [
        held,
        ".fathom-0123456789abcdef.part.keep",
        ".fathom-0123456789ABCDEF.part",
        ".fathom-x.part",
        ".x.fathom-1-0.part",
    ];
    for f in kept.iter().chain(&stale) {
        std::fs::write(root.join(f), b"x").unwrap();
    }
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(root.join(held))
        .unwrap();
    // SAFETY: flock is plain integers; the descriptor is open for writing.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    let r = unsafe {
        libc::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&writer),
            libc::F_OFD_SETLK,
            &lock,
        )
    };
    assert_eq!(r, 0, "the writer's lock");
    let link = ".fathom-1111111111111111.part";
    std::os::unix::fs::symlink(outside.path(), root.join(link)).unwrap();
    let mut agent = Agent::start(&["--files-root", root.to_str().unwrap()]);
    let lines = [agent.next_log_line(), agent.next_log_line()].concat();
    assert_eq!(
        lines.matches("removed the stale partial copy").count(),
        2,
        "{lines}"
    );
    assert!(
        lines.contains("sub\\nline/.fathom-00000000000000ff.part\n"),
        "{lines}"
    );
    for f in stale {
        assert!(!root.join(f).exists(), "{f} is removed");
    }
    for f in kept {
        assert!(root.join(f).exists(), "{f} is kept");
    }
    assert!(
        root.join(link).symlink_metadata().is_ok(),
        "a symlink is kept"
    );
    assert!(outside.path().exists(), "its target too");
}

#[test]
fn names_of_up_to_255_bytes_are_copied() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::write(&src, pattern(5000)).unwrap();
    let name = "n".repeat(255);
    copy(
        dir.path(),
        &["put", src.to_str().unwrap(), &format!(":{name}")],
    );
    assert_eq!(
        std::fs::read(dir.path().join(&name)).unwrap(),
        pattern(5000)
    );
}

#[test]
fn bad_input_is_one_line_with_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    std::fs::write(dir.path().join("src"), b"x").unwrap();
    let src = dir.path().join("src");
    let src = src.to_str().unwrap();
    refused(
        &["put", src, ":a", "--io", "0", "--files-root", root],
        2,
        "--io",
    );
    refused(
        &[
            "put",
            src,
            ":a",
            "--direct",
            "--io",
            "5000",
            "--files-root",
            root,
        ],
        2,
        "multiple of 4096",
    );
    refused(
        &["put", "/nonexistent/src", ":a", "--files-root", root],
        2,
        "/nonexistent/src",
    );
    refused(
        &["get", ":/etc/passwd", "x", "--files-root", root],
        1,
        "outside the agent's files root",
    );
    assert!(!dir.path().join("a").exists());
}

#[test]
fn a_full_disk_is_reported_with_what_was_written_and_leaves_nothing() {
    if !root_or_ci() {
        return;
    }
    // With sendfile too, where the sender sees only the broken connection: the agent's cause
    // is what is reported.
    for mode in ["", "--sendfile"] {
        let dir = tempfile::tempdir().unwrap();
        let (full, src) = (dir.path().join("full"), dir.path().join("src"));
        std::fs::create_dir(&full).unwrap();
        // Larger than the socket buffers hold, so that the sender is still sending.
        std::fs::write(&src, pattern(32 << 20)).unwrap();
        // A 64K tmpfs in a mount namespace of its own: it vanishes with the command.
        let script = format!(
            "mount -t tmpfs -o size=64k tmpfs {f} && {bin} file put {s} :x {mode} --files-root {f} --no-store >/dev/null; rc=$?; ls -A {f} >&2; exit $rc",
            f = full.display(),
            bin = env!("CARGO_BIN_EXE_fathom"),
            s = src.display()
        );
        let out = run_program("unshare", &["-m", "sh", "-c", &script], 60);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{mode}: {err}");
        assert!(err.contains("disk full after 65536 bytes"), "{mode}: {err}");
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{mode}: nothing left in the full directory: {err}"
        );
    }
}

#[test]
fn a_copy_between_agents_stays_below_both_roots() {
    let (ra, rb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Agent::start(&["--files-root", ra.path().to_str().unwrap()]);
    let b = Agent::start(&["--files-root", rb.path().to_str().unwrap()]);
    let between = |args: &[&str], client: &Agent| {
        let mut all = vec!["file"];
        all.extend_from_slice(args);
        let (s, c) = (a.target(), client.target());
        let out = run(
            &[&all[..], &["--server", &s, "--clients", &c, "--no-store"]].concat(),
            60,
        );
        (out.status.code(), stderr(&out))
    };
    let (code, err) = between(&["put", "--size", "5000", "x"], &b);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = between(&["get", "x", "y"], &b);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        std::fs::read(ra.path().join("x")).unwrap(),
        std::fs::read(rb.path().join("y")).unwrap()
    );
    let (code, err) = between(&["get", "x", "../escape"], &b);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("leaves the agent's files root"), "{err}");
    assert!(!rb.path().join("../escape").exists());
    let rootless = Agent::start(&[]);
    let (code, err) = between(&["put", "--size", "5000", "z"], &rootless);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("serves no files"), "{err}");
    assert!(!ra.path().join("z").exists());
}
