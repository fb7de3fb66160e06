//! The rules over fake trees: each finding fires on its bad value and is silent on the good
//! one, and a healthy tree gives notes at most.

use crate::ethtool::parse_ethtool_k;
use crate::read::{interfaces, tree};
use crate::{findings, Finding, Settings, Severity};
use std::fs;
use std::path::Path;

/// A healthy host's files: path below the root -> content.
const HEALTHY: &[(&str, &str)] = &[
    ("proc/sys/net/core/rmem_max", "67108864\n"),
    ("proc/sys/net/core/wmem_max", "67108864\n"),
    ("proc/sys/net/core/rmem_default", "212992\n"),
    ("proc/sys/net/core/wmem_default", "212992\n"),
    ("proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t67108864\n"),
    ("proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t67108864\n"),
    ("proc/sys/net/ipv4/tcp_window_scaling", "1\n"),
    ("proc/sys/net/ipv4/tcp_moderate_rcvbuf", "1\n"),
    ("proc/sys/net/ipv4/tcp_congestion_control", "cubic\n"),
    ("proc/sys/net/core/default_qdisc", "fq_codel\n"),
    ("proc/sys/net/core/busy_poll", "50\n"),
    ("proc/sys/net/core/busy_read", "50\n"),
    ("proc/sys/net/core/somaxconn", "4096\n"),
    ("proc/sys/fs/nr_open", "1048576\n"),
    ("sys/class/net/lo/mtu", "65536\n"),
    ("sys/class/net/eth0/mtu", "1500\n"),
    ("sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n"),
    ("sys/class/net/eth0/queues/rx-1/rps_cpus", "0\n"),
    ("proc/interrupts", "           CPU0       CPU1\n  0:         41          0   IO-APIC   2-edge      timer\n 30:       1200        800   PCI-MSI 1-edge      eth0-rx-0\n 31:        900       1100   PCI-MSI 2-edge      eth0-rx-1\nNMI:          0          0   Non-maskable interrupts\n"),
    ("proc/irq/30/smp_affinity_list", "0\n"),
    ("proc/irq/31/smp_affinity_list", "1\n"),
    ("sys/devices/system/cpu/online", "0-7\n"),
    (
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "performance\n",
    ),
    (
        "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
        "performance\n",
    ),
    ("sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state0/latency", "0\n"),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C6\n"),
    (
        "sys/devices/system/cpu/cpu0/cpuidle/state1/latency",
        "170\n",
    ),
    ("sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "1\n"),
    ("sys/devices/system/node/node0/cpulist", "0-7\n"),
];

/// Writes `files` below `root`.
fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
}

/// The healthy tree with `changes` written over it, read, with a healthy open-files limit and
/// eth0's offloads on.
fn settings(changes: &[(&str, &str)]) -> Settings {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), HEALTHY);
    write(dir.path(), changes);
    let mut s = tree(dir.path(), None);
    s.nofile = Some((1024, 1_048_576));
    s.ethtool = true;
    for i in &mut s.ifaces {
        i.offloads = Some(parse_ethtool_k(
            "Features for eth0:\ntcp-segmentation-offload: on\ngeneric-segmentation-offload: on\ngeneric-receive-offload: on\n",
        ));
    }
    s
}

/// The finding `id` among `f`.
fn find<'a>(f: &'a [Finding], id: &str) -> Option<&'a Finding> {
    assert!(crate::IDS.contains(&id), "{id} is not in IDS");
    f.iter().find(|x| x.id == id)
}

#[test]
fn a_healthy_tree_gives_no_warning() {
    let f = findings(&settings(&[]));
    assert!(f.iter().all(|x| x.severity == Severity::Note), "{f:#?}");
}

#[test]
fn the_reader_reads_what_it_cites() {
    let s = settings(&[]);
    assert_eq!(s.sysctl("net.ipv4.tcp_rmem"), Some("4096 131072 67108864"));
    assert_eq!(
        s.triple("net.ipv4.tcp_rmem"),
        Some([4096, 131_072, 67_108_864])
    );
    assert_eq!(s.cpus, 8);
    assert_eq!(s.numa_nodes, 1);
    assert_eq!(s.ifaces.len(), 1, "loopback is left out");
    assert_eq!(
        (s.ifaces[0].mtu, s.ifaces[0].rx_queues, s.ifaces[0].rps),
        (Some(1500), 2, false)
    );
    assert!(s.idle_states[1].disabled);
    let irqs: Vec<_> = s.ifaces[0]
        .irqs
        .iter()
        .map(|(n, l)| (*n, l.as_str()))
        .collect();
    assert_eq!(
        irqs,
        [(30, "0"), (31, "1")],
        "eth0's interrupts, not the timer's"
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), HEALTHY);
    write(dir.path(), &[("sys/class/net/eth1/mtu", "9000\n")]);
    assert_eq!(interfaces(dir.path()), ["eth0", "eth1"]);
    let only = tree(dir.path(), Some("eth1"));
    assert_eq!(only.ifaces.len(), 1);
    assert_eq!(only.ifaces[0].mtu, Some(9000));
}

#[test]
fn an_empty_tree_gives_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(findings(&tree(dir.path(), None)), []);
}

/// Each bad value, the finding it must give and a word its value or source must hold.
const BAD: &[(&str, &str, &str, &str)] = &[
    (
        "proc/sys/net/core/rmem_max",
        "212992",
        "rmem_max",
        "net.core.rmem_max",
    ),
    (
        "proc/sys/net/core/wmem_max",
        "212992",
        "wmem_max",
        "net.core.wmem_max",
    ),
    (
        "proc/sys/net/core/rmem_default",
        "65536",
        "rmem_default",
        "65536",
    ),
    (
        "proc/sys/net/ipv4/tcp_rmem",
        "4096 131072 1048576",
        "tcp_rmem",
        "1048576",
    ),
    (
        "proc/sys/net/ipv4/tcp_wmem",
        "4096 16384 2097152",
        "tcp_wmem",
        "2097152",
    ),
    (
        "proc/sys/net/ipv4/tcp_rmem",
        "4096 8388608 6291456",
        "tcp_buffers_order",
        "tcp_rmem",
    ),
    (
        "proc/sys/net/ipv4/tcp_window_scaling",
        "0",
        "tcp_window_scaling",
        "tcp_window_scaling",
    ),
    (
        "proc/sys/net/ipv4/tcp_moderate_rcvbuf",
        "0",
        "tcp_moderate_rcvbuf",
        "tcp_moderate_rcvbuf",
    ),
    (
        "proc/sys/net/ipv4/tcp_congestion_control",
        "reno",
        "congestion_control",
        "reno",
    ),
    (
        "proc/sys/net/core/default_qdisc",
        "pfifo_fast",
        "default_qdisc",
        "pfifo_fast",
    ),
    (
        "proc/sys/net/core/somaxconn",
        "64",
        "somaxconn",
        "net.core.somaxconn",
    ),
    ("proc/sys/fs/nr_open", "4096", "nr_open", "fs.nr_open"),
    (
        "sys/class/net/eth0/mtu",
        "1280",
        "mtu",
        "/sys/class/net/eth0/mtu",
    ),
    (
        "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
        "powersave",
        "governor",
        "cpu1",
    ),
    (
        "sys/devices/system/cpu/cpu0/cpuidle/state1/disable",
        "0",
        "idle_states",
        "C6",
    ),
    ("sys/devices/system/node/node1/cpulist", "8-15", "numa", "2"),
];

#[test]
fn each_finding_fires_on_its_bad_value_and_not_on_the_good_one() {
    let healthy = findings(&settings(&[]));
    for (path, bad, id, cited) in BAD {
        assert!(find(&healthy, id).is_none(), "{id} on the healthy tree");
        let f = findings(&settings(&[(path, bad)]));
        let hit = find(&f, id).unwrap_or_else(|| panic!("{id} for {path}={bad}: {f:#?}"));
        assert!(
            hit.value.contains(cited) || hit.source.contains(cited),
            "{id} cites {cited}: {hit:#?}"
        );
        assert!(!hit.why.is_empty() && !hit.change.is_empty(), "{hit:#?}");
    }
}

#[test]
fn the_buffer_findings_show_the_bdp_arithmetic() {
    let f = findings(&settings(&[("proc/sys/net/core/rmem_max", "4194303")]));
    let hit = find(&f, "rmem_max").expect("rmem_max below 4 MB");
    assert!(
        hit.why.contains(
            "a window of 4.0 MB lets one stream carry at most 336 Mbit/s over a 100 ms path"
        ) && hit.why.contains("3.36 Gbit/s at 10 ms"),
        "{}",
        hit.why
    );
    assert_eq!(hit.change, "sysctl -w net.core.rmem_max=67108864");
    let f = findings(&settings(&[("proc/sys/net/core/rmem_max", "4194304")]));
    assert!(find(&f, "rmem_max").is_none(), "4 MB is enough");
}

#[test]
fn busy_polling_rps_and_a_missing_ethtool_are_notes() {
    let f = findings(&settings(&[
        ("proc/sys/net/core/busy_poll", "0"),
        ("proc/sys/net/core/busy_read", "0"),
    ]));
    assert_eq!(
        find(&f, "busy_poll").map(|x| x.severity),
        Some(Severity::Note)
    );
    let mut s = settings(&[]);
    s.ifaces[0].rx_queues = 1;
    s.ethtool = false;
    let f = findings(&s);
    let rps = find(&f, "rps").expect("rps on one queue and 8 CPUs");
    assert_eq!(rps.severity, Severity::Note);
    assert!(rps
        .change
        .starts_with("echo ff > /sys/class/net/eth0/queues/rx-0/rps_cpus"));
    s.cpus = 40;
    let rps = findings(&s).into_iter().find(|x| x.id == "rps").unwrap();
    assert!(
        rps.change.starts_with("echo ff,ffffffff > "),
        "{}",
        rps.change
    );
    assert_eq!(
        find(&f, "offloads_unknown").map(|x| x.severity),
        Some(Severity::Note)
    );
    s.ifaces[0].rps = true;
    assert!(find(&findings(&s), "rps").is_none());
}

#[test]
fn offloads_that_could_be_on_are_warnings() {
    let mut s = settings(&[]);
    s.ifaces[0].offloads = Some(parse_ethtool_k(
        "generic-receive-offload: off\ntcp-segmentation-offload: off [fixed]\nrx-checksumming: on\n",
    ));
    let f = findings(&s);
    let gro: Vec<_> = f.iter().filter(|x| x.id == "offload").collect();
    assert_eq!(gro.len(), 1, "a fixed feature cannot be changed: {f:#?}");
    assert_eq!(gro[0].change, "ethtool -K eth0 gro on");
}

#[test]
fn open_files_limits_below_65536_are_warnings() {
    let mut s = settings(&[]);
    s.nofile = Some((1024, 4096));
    let f = findings(&s);
    assert_eq!(find(&f, "nofile").map(|x| x.value.as_str()), Some("4096"));
}

#[test]
fn findings_are_ranked_worst_first() {
    let f = findings(&settings(&[
        ("proc/sys/net/core/default_qdisc", "pfifo_fast"),
        ("proc/sys/net/core/somaxconn", "64"),
        ("proc/sys/net/core/rmem_max", "212992"),
    ]));
    let ids: Vec<&str> = f.iter().map(|x| x.id).collect();
    assert_eq!(ids, ["rmem_max", "somaxconn", "default_qdisc"]);
}

#[test]
fn xps_off_and_rps_without_rfs_are_cited_from_sysfs() {
    let s = settings(&[
        ("sys/class/net/eth0/queues/tx-0/xps_cpus", "00\n"),
        ("sys/class/net/eth0/queues/tx-1/xps_cpus", "00\n"),
        ("sys/class/net/eth0/queues/rx-0/rps_cpus", "ff\n"),
        ("sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "0\n"),
        ("proc/sys/net/core/rps_sock_flow_entries", "0\n"),
    ]);
    let i = &s.ifaces[0];
    assert_eq!(
        (i.tx_queues, i.xps, i.rps, i.rps_flow_cnt),
        (2, false, true, 0)
    );
    let f = findings(&s);
    let xps = find(&f, "xps").expect("XPS off on 2 queues");
    assert_eq!(xps.source, "/sys/class/net/eth0/queues/tx-0/xps_cpus");
    assert_eq!(xps.value, "0 on all 2 transmit queues");
    let rfs = find(&f, "rfs").expect("RPS without RFS");
    assert_eq!(
        (rfs.source.as_str(), rfs.value.as_str()),
        ("net.core.rps_sock_flow_entries", "0")
    );
    assert!(rfs
        .change
        .starts_with("sysctl -w net.core.rps_sock_flow_entries=32768"));
}

#[test]
fn xps_on_and_rfs_on_are_silent() {
    let s = settings(&[
        ("sys/class/net/eth0/queues/tx-0/xps_cpus", "0f\n"),
        ("sys/class/net/eth0/queues/tx-1/xps_cpus", "f0\n"),
        ("sys/class/net/eth0/queues/rx-0/rps_cpus", "ff\n"),
        ("sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "4096\n"),
        ("sys/class/net/eth0/queues/rx-1/rps_flow_cnt", "4096\n"),
        ("proc/sys/net/core/rps_sock_flow_entries", "32768\n"),
    ]);
    assert_eq!(s.ifaces[0].rps_flow_cnt, 8192);
    let f = findings(&s);
    assert!(
        find(&f, "xps").is_none() && find(&f, "rfs").is_none(),
        "{f:#?}"
    );
}

#[test]
fn a_short_ring_and_unused_channels_are_cited_with_ethtools_values() {
    let mut s = settings(&[]);
    s.ifaces[0].ring_rx = Some((256, 4096));
    s.ifaces[0].channels = Some((2, 8));
    let f = findings(&s);
    let ring = find(&f, "rx_ring").expect("a 256-packet ring of 4096");
    assert_eq!(
        (
            ring.source.as_str(),
            ring.value.as_str(),
            ring.change.as_str()
        ),
        (
            "ethtool -g eth0",
            "RX ring 256 (maximum 4096)",
            "ethtool -G eth0 rx 4096"
        )
    );
    let ch = find(&f, "channels").expect("2 of 8 channels on 8 CPUs");
    assert_eq!(
        (ch.source.as_str(), ch.value.as_str()),
        ("ethtool -l eth0", "2 of 8 channels")
    );
    assert!(
        ch.change.starts_with("ethtool -L eth0 combined 8"),
        "{}",
        ch.change
    );
    s.ifaces[0].ring_rx = Some((4096, 4096));
    s.ifaces[0].channels = Some((8, 8));
    let f = findings(&s);
    assert!(
        find(&f, "rx_ring").is_none() && find(&f, "channels").is_none(),
        "{f:#?}"
    );
}
