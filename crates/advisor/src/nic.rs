//! Rules on the network interfaces: MTU, offloads (from `ethtool -k`) and RPS.

use crate::buffers::on;
use crate::{Confidence, Finding, Settings, Severity};

/// Below this MTU every packet carries less than Ethernet's usual payload.
pub const MTU_MIN: u32 = 1500;
/// With at least this many CPUs, one receive queue without RPS leaves the rest idle.
pub const RPS_CPUS: usize = 4;
/// The offloads whose absence costs CPU per packet, with what each saves.
const OFFLOADS: &[(&str, &str)] = &[
    ("tcp-segmentation-offload", "tso"),
    ("generic-segmentation-offload", "gso"),
    ("generic-receive-offload", "gro"),
];

/// The findings on the interfaces.
pub fn findings(s: &Settings) -> Vec<Finding> {
    let mut out = Vec::new();
    for i in &s.ifaces {
        let dir = format!("/sys/class/net/{}", i.name);
        if let Some(mtu) = i.mtu.filter(|&m| m < MTU_MIN) {
            out.push(Finding {
                why: format!(
                    "{}: each packet carries at most {} bytes of TCP payload over IPv4 instead of 1448: more packets, ACKs and CPU per byte (unless a tunnel needs it)",
                    i.name,
                    mtu.saturating_sub(52)
                ),
                change: format!("ip link set dev {} mtu {MTU_MIN}", i.name),
                ..on(
                    &format!("{dir}/mtu"),
                    mtu.to_string(),
                    "mtu",
                    Severity::Warning,
                    Confidence::Medium,
                )
            });
        }
        if i.rx_queues <= 1 && s.cpus >= RPS_CPUS && !i.rps {
            out.push(Finding {
                why: format!(
                    "{} has {} receive queue(s) and RPS is off: its receive processing runs on one of the {} CPUs, which many flows can saturate",
                    i.name, i.rx_queues, s.cpus
                ),
                change: format!(
                    "echo {} > {dir}/queues/rx-0/rps_cpus   (a mask of the CPUs to spread over)",
                    all_cpus(s.cpus)
                ),
                ..on(
                    &format!("{dir}/queues/rx-0/rps_cpus"),
                    "0".into(),
                    "rps",
                    Severity::Note,
                    Confidence::Low,
                )
            });
        }
        irq_affinity(i, s.cpus, &mut out);
        offloads(i, &mut out);
    }
    if !s.ethtool && s.ifaces.iter().any(|i| !i.ethtool_unread) {
        out.push(Finding {
            why: "ethtool is not installed (or failed): segmentation and receive offloads were not checked".into(),
            change: "apt-get install ethtool   (scripts/install-test-deps.sh installs it), then run fathom doctor again".into(),
            ..on(
                "ethtool -k",
                "not run".into(),
                "offloads_unknown",
                Severity::Note,
                Confidence::Low,
            )
        });
    }
    out.extend(unread(s));
    out
}

/// A note naming the interfaces `ethtool` was not run on because the read's time budget was
/// spent ([`crate::read::ETHTOOL_BUDGET`]).
fn unread(s: &Settings) -> Option<Finding> {
    let names: Vec<&str> = s
        .ifaces
        .iter()
        .filter(|i| i.ethtool_unread)
        .map(|i| i.name.as_str())
        .collect();
    let first = names.first()?;
    Some(Finding {
        why: format!(
            "the read's time budget ({} s for every ethtool call) was spent before {}: their offloads, rings and channels were not checked",
            crate::read::ETHTOOL_BUDGET.as_secs(),
            names.join(", ")
        ),
        change: format!("fathom doctor --iface {first} (one interface at a time)"),
        ..on(
            "ethtool -k",
            format!("not run on {} interface(s)", names.len()),
            "offloads_unknown",
            Severity::Note,
            Confidence::Low,
        )
    })
}

/// The CPU mask of `cpus` CPUs as sysfs writes it: 32-bit words in hex, highest first, joined
/// by commas ("ff", "ffffffff,ffffffff").
pub(crate) fn all_cpus(cpus: usize) -> String {
    let mut words: Vec<String> = (0..cpus.div_ceil(32))
        .map(|w| {
            let bits = (cpus - w * 32).min(32);
            format!("{:x}", u32::MAX >> (32 - bits))
        })
        .collect();
    words.reverse();
    for w in words.iter_mut().skip(1) {
        *w = format!("{:0>8}", w);
    }
    words.join(",")
}

/// Several interrupts of one interface that may all run on the same single CPU only.
fn irq_affinity(i: &crate::Iface, cpus: usize, out: &mut Vec<Finding>) {
    let mut lists = i.irqs.values();
    let Some(first) = lists.next() else { return };
    let one_cpu = first.parse::<usize>().is_ok();
    if i.irqs.len() < 2 || cpus < 2 || !one_cpu || lists.any(|l| l != first) {
        return;
    }
    let irq = i.irqs.keys().next().copied().unwrap_or_default();
    out.push(Finding {
        why: format!(
            "every queue of {} interrupts CPU {first}: receive processing for all flows shares that one CPU while the other {} idle",
            i.name,
            cpus - 1
        ),
        change: format!(
            "spread them: echo N > /proc/irq/IRQ/smp_affinity_list for each of {}'s IRQs (or run irqbalance)",
            i.name
        ),
        ..on(
            &format!("/proc/irq/{irq}/smp_affinity_list"),
            format!(
                "CPU {first} for all {} interrupts of {}",
                i.irqs.len(),
                i.name
            ),
            "irq_affinity",
            Severity::Note,
            Confidence::Medium,
        )
    });
}

/// Offloads that are off but could be on.
fn offloads(i: &crate::Iface, out: &mut Vec<Finding>) {
    let Some(o) = &i.offloads else { return };
    for (feature, short) in OFFLOADS {
        if let Some((false, false)) = o.get(*feature) {
            out.push(Finding {
                why: format!(
                    "{}: without {short} the kernel handles every MTU-sized packet on its own, which costs CPU per byte and can bound a stream by one core",
                    i.name
                ),
                change: format!("ethtool -K {} {short} on", i.name),
                ..on(
                    &format!("ethtool -k {}", i.name),
                    format!("{feature}: off"),
                    "offload",
                    Severity::Warning,
                    Confidence::Medium,
                )
            });
        }
    }
}
