//! The advisor's slow-disk scenario (issue 26): a file copy with `--io 4K --direct` into a lab
//! host whose files root is a small ext4 loop device, throttled by a cgroup v1 blkio group that
//! holds that host's agent (250 write requests and 4 MB a second). The advisor must name the
//! I/O size first and the disk second, both citing the stage times. Needs root, a loop device
//! and cgroup v1's blkio (it skips, saying why, without them); everything made is named with
//! the pid and torn down by a guard, even when the test fails.

mod advisor_common;
mod common;

use advisor_common::Lab;
use common::{rerun_check, root_or_ci, run_program, stderr, strs, words};
use std::path::{Path, PathBuf};

/// Where cgroup v1's blkio hierarchy is mounted.
const BLKIO: &str = "/sys/fs/cgroup/blkio";
/// The device's size: room for a few copies of a few MB.
const IMAGE_BYTES: u64 = 32 << 20;
/// Write requests a second the disk takes: 4K writes run at 1 MB/s.
const WRITE_IOPS: u32 = 250;
/// Bytes a second it writes: 1M writes run at 4 MB/s.
const WRITE_BPS: u32 = 4 << 20;

/// A throttled ext4 loop device mounted on a directory, and the blkio group that throttles it;
/// each part undone when dropped, in reverse order, whatever was made.
struct SlowDisk {
    image: PathBuf,
    device: Option<String>,
    mounted: Option<PathBuf>,
    group: Option<PathBuf>,
}

/// Runs `program ARGS` (bounded) and returns its trimmed stdout, failing with its stderr.
fn sh(program: &str, args: &[&str]) -> String {
    let out = run_program(program, args, 60);
    assert!(out.status.success(), "{program} {args:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl SlowDisk {
    /// Whether this machine can make one: loop devices and cgroup v1's blkio throttle.
    fn possible() -> bool {
        let ok = Path::new("/dev/loop-control").exists()
            && Path::new(BLKIO)
                .join("blkio.throttle.write_iops_device")
                .exists();
        if !ok {
            eprintln!("SKIP: no loop devices or no cgroup v1 blkio throttle on this machine");
        }
        ok
    }

    /// A throttled disk named for this process and `tag`, mounted on `dir`.
    fn mount(tag: &str, dir: &Path) -> SlowDisk {
        let name = format!("fathom-adv-{}-{tag}", std::process::id());
        let mut disk = SlowDisk {
            image: Path::new("/dev/shm").join(format!("{name}.img")),
            device: None,
            mounted: None,
            group: None,
        };
        let f = std::fs::File::create(&disk.image).unwrap();
        f.set_len(IMAGE_BYTES).unwrap();
        let image = disk.image.to_string_lossy().into_owned();
        let dev = sh("losetup", &["--find", "--show", &image]);
        disk.device = Some(dev.clone());
        sh("mkfs.ext4", &["-q", "-F", &dev]);
        sh("mount", &[&dev, &dir.to_string_lossy()]);
        disk.mounted = Some(dir.to_path_buf());
        let group = Path::new(BLKIO).join(&name);
        std::fs::create_dir(&group).unwrap();
        disk.group = Some(group.clone());
        let number = std::fs::read_to_string(format!(
            "/sys/block/{}/dev",
            dev.trim_start_matches("/dev/")
        ))
        .unwrap();
        let number = number.trim();
        let limit = |file: &str, v: u32| {
            std::fs::write(group.join(file), format!("{number} {v}\n")).unwrap();
        };
        limit("blkio.throttle.write_iops_device", WRITE_IOPS);
        limit("blkio.throttle.write_bps_device", WRITE_BPS);
        disk
    }

    /// Puts process `pid` (all its threads) into the throttled group.
    fn confine(&self, pid: u32) {
        let group = self.group.as_ref().expect("a group");
        std::fs::write(group.join("cgroup.procs"), pid.to_string()).unwrap();
    }
}

impl Drop for SlowDisk {
    fn drop(&mut self) {
        if let Some(group) = &self.group {
            let procs = std::fs::read_to_string(group.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines() {
                let _ = std::fs::write(Path::new(BLKIO).join("cgroup.procs"), pid);
            }
            if let Err(e) = std::fs::remove_dir(group) {
                eprintln!("rmdir {}: {e}", group.display());
            }
        }
        if let Some(dir) = &self.mounted {
            let out = run_program("umount", &[&dir.to_string_lossy()], 30);
            if !out.status.success() {
                eprintln!("umount {}: {}", dir.display(), stderr(&out));
                let _ = run_program("umount", &["--lazy", &dir.to_string_lossy()], 30);
            }
        }
        if let Some(dev) = &self.device {
            let out = run_program("losetup", &["--detach", dev], 30);
            if !out.status.success() {
                eprintln!("losetup -d {dev}: {}", stderr(&out));
            }
        }
        let _ = std::fs::remove_file(&self.image);
    }
}

/// A two-host lab whose h2 writes its files to a slow disk: its agent is in the disk's group.
/// The disk is unmounted before the lab goes (fields drop in order).
struct SlowLab {
    _disk: SlowDisk,
    lab: Lab,
}

impl SlowLab {
    /// Named for this process and `tag`; h2's files root (where `lab up --files-root` makes
    /// it) is the slow disk. None (the test skips, saying why) without root, loop devices or
    /// the blkio throttle.
    fn up(tag: &str) -> Option<SlowLab> {
        if !root_or_ci() || !SlowDisk::possible() {
            return None;
        }
        let lab = Lab::up_with(tag, &["--files-root"]);
        let root = Path::new("/var/tmp/fathom-lab").join(&lab.name).join("h2");
        let disk = SlowDisk::mount(tag, &root);
        disk.confine(lab.agent_pid("h2"));
        Some(SlowLab { _disk: disk, lab })
    }
}

#[test]
fn a_4k_copy_to_a_slow_disk_is_the_io_size_then_the_disk() {
    let Some(slow) = SlowLab::up("disk") else {
        return;
    };
    let copy = words("file put --size 2M slow.bin --io 4K --direct");
    let d = slow.lab.advise(&copy, 120);
    let f = &d["summary"]["file"];
    assert_eq!(f["bottleneck"], "receiver's disk", "{f:#}");
    let advice = d["advice"].as_array().expect("an advice member");
    let ids: Vec<&str> = advice.iter().filter_map(|a| a["id"].as_str()).collect();
    assert_eq!(ids[..2], ["file_io_size", "file_disk"], "{advice:#?}");
    for a in &advice[..2] {
        let fig = &a["figures"];
        assert_eq!(fig["io_bytes"], 4096.0, "{a}");
        let (disk_s, net_s) = (
            fig["disk_s"].as_f64().unwrap(),
            fig["net_s"].as_f64().unwrap(),
        );
        assert!(disk_s > net_s, "{a}");
        assert!(a["seen"].as_str().unwrap().contains("in its disk"), "{a}");
    }
    assert!(
        advice[0]["change"].as_str().unwrap().starts_with("--io "),
        "{}",
        advice[0]
    );
}

/// `--advise --verify-advice` on the slow-disk copy: the top finding's `--io 1M` is measured
/// against the copy as typed, alternately; each re-run replaces the file (`--force`), and the
/// runs with the change used 1 MB I/O (what was applied is asserted, never a speed).
#[test]
fn verify_advice_reruns_the_slow_copy_with_larger_io() {
    let Some(slow) = SlowLab::up("dver") else {
        return;
    };
    let copy = words("file put --size 1M slow.bin --io 4K --direct --verify-advice --iterations 2");
    let d = slow.lab.advise(&copy, 240);
    let c = rerun_check(&d, "file_io_size", "--io 1M");
    assert_eq!(c["after_test"]["write_size"], 1 << 20, "{c:#}");
    let after = strs(&c["after_args"]);
    assert!(after.contains(&"--force"), "{after:?}");
    assert_eq!(c["after"].as_array().unwrap().len(), 2);
}
