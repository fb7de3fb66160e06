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

#[test]
fn mistakes_get_one_clear_line_each() {
    let link = |a: &str, b: &str| format!("[[link]]\nends = [\"{a}\", \"{b}\"]\n");
    let linked = format!("{TWO_HOSTS}{}{}", link("h1", "sw1"), link("h2", "sw1"));
    let cases: Vec<(String, &str)> = vec![
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
            format!("[lab]\nsubnet = \"10.77.0.1/16\"\n{linked}"),
            "did you mean 10.77.0.0/16",
        ),
        (
            format!("[lab]\nsubnet = \"10.77.0.0\"\n{linked}"),
            "subnet '10.77.0.0'",
        ),
        (format!("[lab]\nmtu = 20\n{linked}"), "mtu 20"),
        (
            format!("{TWO_HOSTS}{}", link("h1", "sw1")),
            "host h2 has no [[link]]",
        ),
        (
            format!("{linked}{}", link("sw1", "h1")),
            "duplicate link sw1-h1",
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
    ];
    for (toml, expected) in cases {
        let err = error_of(&toml);
        assert!(
            err.contains(expected),
            "expected {expected:?} in {err:?} for:\n{toml}"
        );
        assert!(!err.contains('\n'), "not one line: {err:?}");
    }
    let err = error_of(&format!(
        "{linked}[[host]]\nname = \"h3\"\ncolour = \"red\"\n"
    ));
    assert!(err.contains("unknown field `colour`"), "{err}");
}
