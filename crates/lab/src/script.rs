//! The `ip -batch` and `tc -batch` scripts that build a layout.
//!
//! One root script creates every namespace and every veth pair, each end created directly inside
//! its namespace under its final name, so nothing ever exists in the root namespace. Then one
//! script per namespace configures it, 16 namespaces at a time. Measured on 2 cores with 32
//! hosts: 0.1 s, against 2.7 s for one `ip` process per step.

use std::fmt::Write;

use crate::layout::Layout;

/// Queueing allowed by a tbf rate limit, in milliseconds of the rate.
const TBF_LATENCY_MS: u64 = 20;

/// Bucket size of a tbf rate limit, in milliseconds of the rate (a jiffy at HZ=250).
const TBF_BURST_MS: u64 = 4;

/// The root-namespace script: `netns add` for every node, then every veth pair.
pub fn create(layout: &Layout) -> String {
    let mut s = String::new();
    for netns in layout.namespaces() {
        writeln!(s, "netns add {netns}").unwrap();
    }
    for link in &layout.links {
        let [a, b] = &link.ends;
        let (na, nb) = (netns_of(layout, &a.node), netns_of(layout, &b.node));
        writeln!(
            s,
            "link add {} netns {na} mtu {mtu} type veth peer name {} netns {nb} mtu {mtu}",
            a.interface,
            b.interface,
            mtu = link.mtu
        )
        .unwrap();
    }
    s
}

/// The script run inside namespace `netns` of a node: loopback up, addresses on a host, the
/// bridge and its ports on a switch, both interfaces up (and nothing else) on a WAN router.
pub fn configure(layout: &Layout, netns: &str) -> String {
    let mut s = String::from("link set lo up\n");
    if let Some(host) = layout.hosts.iter().find(|h| h.netns == netns) {
        for i in &host.interfaces {
            writeln!(s, "addr add {}/{} dev {}", i.address, i.prefix_len, i.name).unwrap();
            writeln!(s, "link set {} up", i.name).unwrap();
        }
    }
    if let Some(switch) = layout.switches.iter().find(|sw| sw.netns == netns) {
        writeln!(s, "link add {} type bridge", switch.name).unwrap();
        for end in layout
            .links
            .iter()
            .flat_map(|l| &l.ends)
            .filter(|e| e.node == switch.name)
        {
            writeln!(s, "link set {} master {} up", end.interface, switch.name).unwrap();
        }
        writeln!(s, "link set {} up", switch.name).unwrap();
    }
    if let Some(wan) = layout.wans.iter().find(|w| w.netns == netns) {
        for interface in &wan.spec.interfaces {
            writeln!(s, "link set {interface} up").unwrap();
        }
    }
    s
}

/// The `tc` script for namespace `netns`: a tbf on every rate-limited link end there, or `None`.
pub fn shape(layout: &Layout, netns: &str) -> Option<String> {
    let mut s = String::new();
    for link in &layout.links {
        let Some(bps) = link.rate_bps else { continue };
        let bytes_per_ms = bps / 8 / 1000;
        let burst = (bytes_per_ms * TBF_BURST_MS).max(2 * u64::from(link.mtu));
        for end in link
            .ends
            .iter()
            .filter(|e| netns_of(layout, &e.node) == netns)
        {
            writeln!(
                s,
                "qdisc add dev {} root tbf rate {bps}bit burst {burst} latency {TBF_LATENCY_MS}ms",
                end.interface
            )
            .unwrap();
        }
    }
    (!s.is_empty()).then_some(s)
}

fn netns_of<'a>(layout: &'a Layout, node: &str) -> &'a str {
    layout
        .netns_of(node)
        .expect("a validated topology links only its own nodes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Topology;

    #[test]
    fn scripts_for_two_hosts_on_a_rate_limited_switch() {
        let topo = Topology::star(2, None, Some(9000), Some("1G")).unwrap();
        let layout = Layout::new("t", &topo, 5301);
        assert_eq!(
            create(&layout),
            "netns add fl-t-h1\nnetns add fl-t-h2\nnetns add fl-t-sw1\n\
             link add eth0 netns fl-t-h1 mtu 9000 type veth peer name h1 netns fl-t-sw1 mtu 9000\n\
             link add eth0 netns fl-t-h2 mtu 9000 type veth peer name h2 netns fl-t-sw1 mtu 9000\n"
        );
        assert_eq!(
            configure(&layout, "fl-t-h2"),
            "link set lo up\naddr add 10.77.0.2/16 dev eth0\nlink set eth0 up\n"
        );
        assert_eq!(
            configure(&layout, "fl-t-sw1"),
            "link set lo up\nlink add sw1 type bridge\nlink set h1 master sw1 up\n\
             link set h2 master sw1 up\nlink set sw1 up\n"
        );
        assert_eq!(
            shape(&layout, "fl-t-h1").unwrap(),
            "qdisc add dev eth0 root tbf rate 1000000000bit burst 500000 latency 20ms\n"
        );
        assert_eq!(shape(&layout, "fl-t-sw1").unwrap().lines().count(), 2);
    }
}
