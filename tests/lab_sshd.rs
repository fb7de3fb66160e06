//! `fathom lab up --sshd`: the README's `fathom lab exec h1 -- scp /tmp/FILE h2:/tmp/` works as
//! written (host names, the lab's keys, strict host key checking), sshd listens only on lab
//! addresses inside the lab, and `lab down` leaves no sshd and no keys (root; without it the
//! test prints SKIP).

mod common;
use common::*;
use std::path::Path;

/// Removes the lab and the test's files when dropped, also when the test fails.
struct Cleanup(String, Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = lab(&["down", "--name", &self.0]);
        for f in &self.1 {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// The pids of sshd processes started with a config in `dir`.
fn sshds_with(dir: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let exe = std::fs::read_link(format!("/proc/{pid}/exe"));
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            exe.is_ok_and(|e| e.ends_with("sshd")) && String::from_utf8_lossy(&cmd).contains(dir)
        })
        .collect()
}

#[test]
fn scp_between_lab_hosts_works_as_written_and_down_removes_sshd() {
    if !root_or_ci() {
        return;
    }
    assert!(
        Path::new("/usr/sbin/sshd").exists(),
        "sshd is missing: run scripts/install-test-deps.sh (openssh-server, openssh-client)"
    );
    let name = format!("ssh{}", std::process::id());
    let file = format!("/tmp/fathom-{name}");
    let copy = format!("{file}.copy");
    let _cleanup = Cleanup(name.clone(), vec![file.clone(), copy.clone()]);
    let (code, out, err) = lab(&["up", "--hosts", "2", "--sshd", "--name", &name]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ssh h2 hostname"), "{out}");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&file, &data).unwrap();

    // As the README writes it (the hosts share this machine's files: the copy lands on itself).
    let exec = |args: &[&str]| lab(&[&["exec", "--name", &name, "h1", "--"][..], args].concat());
    let (code, _, err) = exec(&["scp", &file, "h2:/tmp/"]);
    assert_eq!(code, 0, "scp failed: {err}");
    assert_eq!(std::fs::read(&file).unwrap(), data);
    let (code, _, err) = exec(&["scp", &file, &format!("h2:{copy}")]);
    assert_eq!(code, 0, "scp failed: {err}");
    assert_eq!(std::fs::read(&copy).unwrap(), data, "the copy differs");

    let (code, listening, err) = exec(&["ss", "-ltnH", "sport = :22"]);
    assert_eq!(code, 0, "{err}");
    assert!(listening.contains("10.77.0.1:22"), "{listening}");
    assert!(
        !listening.contains("0.0.0.0:22") && !listening.contains("*:22"),
        "{listening}"
    );

    let state = format!("/run/fathom/lab/{name}");
    assert_eq!(sshds_with(&state).len(), 2, "one sshd per host");
    let (code, _, err) = lab(&["down", "--name", &name]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        sshds_with(&state),
        Vec::<u32>::new(),
        "sshd left after down"
    );
    assert!(
        !Path::new(&state).exists(),
        "the keys are gone with the state"
    );
    assert!(!Path::new(&format!("/etc/netns/fl-{name}-h1")).exists());
}
