//! Topology files: the documented example, addressing, and one clear error per mistake.
//! No root needed.

use fathom_lab::topology::{Link, LinkEnd};
use fathom_lab::Topology;

/// The TOML example in the README.
fn readme_example() -> String {
    let readme = include_str!("../README.md");
    let start = readme.find("```toml\n").expect("README has a TOML example") + "```toml\n".len();
    let len = readme[start..].find("```").unwrap();
    readme[start..start + len].to_string()
}

fn error_of(toml: &str) -> String {
    let err = Topology::parse(toml)
        .expect_err("topology should be refused")
        .to_string();
    assert!(err.starts_with("topology: "), "{err}");
    assert_eq!(
        err.matches("topology:").count(),
        1,
        "the prefix once: {err}"
    );
    err
}

const TWO_HOSTS: &str =
    "[[switch]]\nname = \"sw1\"\n[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n";

#[test]
fn the_readme_example_parses_and_is_addressed_as_documented() {
    let topo = Topology::parse(&readme_example()).unwrap();
    let addrs = |h: usize| -> Vec<String> {
        topo.hosts[h]
            .interfaces
            .iter()
            .map(|i| format!("{} {}/{}", i.name, i.address, i.prefix_len))
            .collect()
    };
    assert_eq!(addrs(0), ["eth0 10.77.0.1/16"]);
    assert_eq!(addrs(1), ["eth0 10.77.0.20/16"]);
    assert_eq!(addrs(2), ["eth0 10.77.0.3/16", "eth1 10.78.0.3/24"]);
    let end = |node: &str, interface: &str| LinkEnd {
        node: node.into(),
        interface: interface.into(),
    };
    assert_eq!(
        topo.links[0],
        Link {
            ends: [end("h1", "eth0"), end("sw1", "h1")],
            mtu: 1500,
            rate_bps: Some(1_000_000_000)
        }
    );
    assert_eq!(topo.links[1].mtu, 9000);
    assert_eq!(topo.links[3].ends, [end("h3", "eth1"), end("sw2", "h3")]);
}

#[test]
fn star_numbers_hosts_from_one() {
    let topo = Topology::star(6, None, None, None).unwrap();
    assert_eq!(topo.hosts.len(), 6);
    assert_eq!(topo.hosts[5].name, "h6");
    assert_eq!(topo.hosts[5].interfaces[0].address.to_string(), "10.77.0.6");
    assert_eq!(topo.switches[0].name, "sw1");
    assert!(Topology::star(3, Some("10.0.0.0/30"), None, None)
        .unwrap_err()
        .to_string()
        .contains("no room for host h3"));
}

#[test]
fn a_host_to_host_link_needs_no_switch() {
    let topo = Topology::parse(
        "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[link]]\nends = [\"a\", \"b\"]\n",
    )
    .unwrap();
    assert_eq!(topo.links[0].ends[1].interface, "eth0");
    assert_eq!(topo.hosts[1].interfaces[0].address.to_string(), "10.77.0.2");
}

/// A `[[link]]` entry joining `a` and `b`.
fn link(a: &str, b: &str) -> String {
    format!("[[link]]\nends = [\"{a}\", \"{b}\"]\n")
}

/// [`TWO_HOSTS`] with both hosts linked to sw1.
fn linked() -> String {
    format!("{TWO_HOSTS}{}{}", link("h1", "sw1"), link("h2", "sw1"))
}

/// Each topology of `cases` is refused with one line containing its expected text.
fn refused_in_one_line(cases: &[(String, &str)]) {
    for (toml, expected) in cases {
        let err = error_of(toml);
        assert!(
            err.contains(expected),
            "expected {expected:?} in {err:?} for:\n{toml}"
        );
        assert!(!err.contains('\n'), "not one line: {err:?}");
    }
}

#[test]
fn mistakes_get_one_clear_line_each() {
    let linked = linked();
    refused_in_one_line(&[
        (
            format!("{TWO_HOSTS}{}{}", link("h1", "sw1"), link("h2", "sw9")),
            "unknown node 'sw9'",
        ),
        (
            format!("{TWO_HOSTS}[[host]]\nname = \"h1\"\n{}", link("h1", "sw1")),
            "duplicate node name 'h1'",
        ),
        (
            format!("{linked}[[switch]]\nname = \"h2\"\n"),
            "duplicate node name 'h2'",
        ),
        (
            linked.replacen(
                "ends = [\"h1\", \"sw1\"]",
                "ends = [\"h1\", \"sw1\"]\nrate = \"1x\"",
                1,
            ),
            "rate '1x'",
        ),
        (
            format!("{TWO_HOSTS}{}", link("h1", "sw1")),
            "host h2 has no [[link]]",
        ),
        (
            format!("{linked}{}", link("sw1", "h1")),
            "link sw1-h1: duplicate: sw1 and h1 are already joined",
        ),
        (
            format!("{linked}{}", link("h1", "h1")),
            "two different nodes",
        ),
        (
            format!("{linked}[[link]]\nends = [\"h1\"]\n"),
            "exactly two node names",
        ),
        (
            "[[switch]]\nname = \"sw1\"\n".to_string(),
            "at least one host",
        ),
        (
            linked.replacen("name = \"h2\"", "name = \"h-2\"", 1),
            "node name 'h-2'",
        ),
    ]);
    let err = error_of(&format!(
        "{linked}[[host]]\nname = \"h3\"\ncolour = \"red\"\n"
    ));
    assert!(err.contains("line 13: unknown field `colour`"), "{err}");
    assert!(!err.contains('\n'), "not one line: {err:?}");
}

#[test]
fn addressing_mistakes_get_one_clear_line_each() {
    let linked = linked();
    refused_in_one_line(&[
        (
            format!("[lab]\nsubnet = \"10.77.0.1/16\"\n{linked}"),
            "did you mean 10.77.0.0/16",
        ),
        (
            format!("[lab]\nsubnet = \"10.77.0.0\"\n{linked}"),
            "subnet '10.77.0.0'",
        ),
        (format!("[lab]\nmtu = 20\n{linked}"), "mtu 20"),
        (
            linked.replacen("name = \"h2\"", "name = \"h2\"\naddress = \"10.77.0.1\"", 1),
            "10.77.0.1 is given to both h1 and h2",
        ),
        (
            linked.replacen("name = \"h2\"", "name = \"h2\"\naddress = \"10.9.0.1\"", 1),
            "not a host address of 10.77.0.0/16",
        ),
        (
            linked.replacen("name = \"h2\"", "name = \"h2\"\naddress = \"ten\"", 1),
            "'ten' is not an IPv4 address",
        ),
        (
            format!(
                "{linked}[[switch]]\nname = \"sw2\"\nsubnet = \"10.9.0.0/16\"\n{}",
                link("sw1", "sw2")
            ),
            "must share a subnet",
        ),
        (
            format!("{linked}[[switch]]\nname = \"sw2\"\n{}", link("h1", "sw2")),
            "two links into subnet 10.77.0.0/16",
        ),
    ]);
}

/// Two hosts on sw1, one on sw2, and WAN links as given.
fn two_segments(wans: &str) -> String {
    let mut toml = String::from("[[switch]]\nname = \"sw1\"\n[[switch]]\nname = \"sw2\"\n");
    for (host, switch) in [("h1", "sw1"), ("h2", "sw1"), ("h3", "sw2")] {
        toml +=
            &format!("[[host]]\nname = \"{host}\"\n[[link]]\nends = [\"{host}\", \"{switch}\"]\n");
    }
    toml + wans
}

#[test]
fn a_wan_joins_two_nodes_through_its_router() {
    let topo = Topology::parse(&two_segments(
        "[[wan]]\nends = [\"sw1\", \"sw2\"]\nparams = \"delay=25ms,rate=1G\"\nb_to_a = \"loss=1%\"\n",
    ))
    .unwrap();
    let wan = &topo.wans[0];
    assert_eq!(wan.name, "sw1-sw2");
    assert_eq!(wan.router, "wan1");
    assert_eq!(wan.interfaces, ["sw1", "sw2"]);
    assert_eq!(wan.a_to_b, "delay=25ms,rate=1G".parse().unwrap());
    assert_eq!(wan.b_to_a, "delay=25ms,rate=1G,loss=1%".parse().unwrap());
    let end = |node: &str, interface: &str| LinkEnd {
        node: node.into(),
        interface: interface.into(),
    };
    assert_eq!(topo.links[3].ends, [end("sw1", "wan1"), end("wan1", "sw1")]);
    assert_eq!(topo.links[4].ends, [end("wan1", "sw2"), end("sw2", "wan1")]);
    assert_eq!(topo.links[4].rate_bps, None, "the emulator does the rate");
    assert_eq!(topo.hosts[2].interfaces[0].address.to_string(), "10.77.0.3");

    // Between two hosts: each gets an interface in the lab's subnet, after its links' ones.
    let topo = Topology::parse(
        "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n\
         [[wan]]\nname = \"long_haul\"\nends = [\"a\", \"b\"]\nmtu = 9000\n",
    )
    .unwrap();
    assert_eq!(topo.wans[0].name, "long_haul");
    assert_eq!(topo.links[0].ends, [end("a", "eth0"), end("wan1", "a")]);
    assert_eq!(topo.links[1].mtu, 9000);
    assert_eq!(topo.hosts[1].interfaces[0].address.to_string(), "10.77.0.2");
}

#[test]
fn split_puts_the_wan_between_two_halves() {
    let two = Topology::split(2, None, None, None, "delay=50ms").unwrap();
    assert!(two.switches.is_empty());
    assert_eq!(two.wans[0].name, "h1-h2");
    assert_eq!(
        two.wans[0].b_to_a.delay,
        std::time::Duration::from_millis(50)
    );
    assert_eq!(two.hosts[1].interfaces[0].address.to_string(), "10.77.0.2");

    let five = Topology::split(5, None, None, Some("1G"), "delay=5ms").unwrap();
    let switch_of = |host: &str| {
        let link = five.links.iter().find(|l| l.ends[0].node == host).unwrap();
        link.ends[1].node.clone()
    };
    let sides: Vec<String> = ["h1", "h2", "h3", "h4", "h5"].map(switch_of).to_vec();
    assert_eq!(sides, ["sw1", "sw1", "sw1", "sw2", "sw2"]);
    assert_eq!(five.wans[0].name, "sw1-sw2");
    assert_eq!(five.wans[0].ends, ["sw1", "sw2"]);

    let err = |r: fathom_lab::Result<Topology>| r.unwrap_err().to_string();
    assert!(err(Topology::split(1, None, None, None, "")).contains("at least 2 hosts"));
    assert!(err(Topology::split(2, None, None, Some("1G"), "")).contains("put rate= in the --wan"));
    let bad = err(Topology::split(2, None, None, None, "delay=5ms,dealy=5ms"));
    assert_eq!(bad, "topology: wan h1-h2: params: unknown key 'dealy'; valid keys: delay, jitter, loss, rate, burst, queue, reorder, seed");
}

#[test]
fn wan_mistakes_get_one_clear_line_each() {
    let wan = |ends: &str, more: &str| format!("[[wan]]\nends = [{ends}]\n{more}");
    let cases = [
        (wan("\"sw1\", \"sw2\"", "params = \"delay=5\"\n"), "wan sw1-sw2: params: delay: '5' needs a unit"),
        (wan("\"sw1\", \"sw2\"", "a_to_b = \"loss=2\"\n"), "wan sw1-sw2: a_to_b: loss: '2' needs a '%'"),
        (wan("\"sw1\", \"sw9\"", ""), "wan sw1-sw9: unknown node 'sw9'"),
        (wan("\"sw1\"", ""), "wan 1: 'ends' needs exactly two node names"),
        (wan("\"h1\", \"sw1\"", ""), "wan h1-sw1: duplicate: h1 and sw1 are already joined"),
        (wan("\"sw1\", \"sw2\"", "name = \"a b\"\n"), "wan name 'a b'"),
        (
            wan("\"sw1\", \"sw2\"", "") + &wan("\"h1\", \"h3\"", "name = \"sw1-sw2\"\n"),
            "duplicate wan name 'sw1-sw2'",
        ),
        (
            wan("\"sw1\", \"sw2\"", "") + "[[link]]\nends = [\"sw2\", \"sw1\"]\n",
            "wan sw1-sw2: duplicate: sw1 and sw2 are already joined",
        ),
        (
            "[[switch]]\nname = \"sw3\"\n[[link]]\nends = [\"sw1\", \"sw3\"]\n[[link]]\nends = [\"sw3\", \"sw2\"]\n".to_string()
                + &wan("\"sw1\", \"sw2\"", ""),
            "wan sw1-sw2: it closes a loop of switches",
        ),
        (
            "[[host]]\nname = \"wan1\"\n[[link]]\nends = [\"wan1\", \"sw2\"]\n".to_string()
                + &wan("\"sw1\", \"sw2\"", ""),
            "node name 'wan1' is taken by the router of [[wan]] number 1",
        ),
        (wan("\"sw1\", \"sw2\"", "speed = 1\n"), "unknown field `speed`"),
    ];
    refused_in_one_line(&cases.map(|(wans, expected)| (two_segments(&wans), expected)));
}

#[test]
fn a_bad_node_name_says_topology_once_also_from_a_file() {
    let err = error_of("[[host]]\nname = \"h-1\"\n");
    assert!(err.contains("node name 'h-1'"), "{err}");
    let path = std::env::temp_dir().join(format!("fathom-topology-{}.toml", std::process::id()));
    std::fs::write(&path, "[[host]]\nname = \"h-1\"\n").unwrap();
    let err = Topology::load(&path).unwrap_err().to_string();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        err,
        format!(
            "topology: {}: node name 'h-1': use 1-15 letters, digits or '_', starting with a \
             letter (and not 'lo')",
            path.display()
        )
    );
}
