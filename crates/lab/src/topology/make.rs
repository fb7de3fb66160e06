//! Making a [`Topology`]: from TOML text or a file, from `--hosts N` (a star) or `--hosts N
//! --wan` (two segments joined by a WAN link); every way goes through `validate`.

use std::path::Path;

use super::{ipsec, validate};
use super::{HostEntry, LabSection, LinkEntry, SwitchEntry, Topology, TopologyError};
use super::{TopologyFile, WanEntry};
use crate::error::{Error, IoContext, Result};

impl Topology {
    /// Parses and checks a TOML topology.
    pub fn parse(text: &str) -> Result<Topology> {
        let file: TopologyFile =
            toml::from_str(text).map_err(|e| Error::Topology(one_line(text, &e)))?;
        Topology::from_file(file)
    }

    /// Reads, parses and checks a TOML topology file; errors name the file.
    pub fn load(path: &Path) -> Result<Topology> {
        let text =
            std::fs::read_to_string(path).context(|| format!("reading {}", path.display()))?;
        Topology::parse(&text).map_err(|e| match e {
            Error::Topology(msg) => Error::Topology(format!("{}: {msg}", path.display())),
            other => other,
        })
    }

    /// `n` hosts `h1`…`hN` on one switch `sw1`, with optional subnet, MTU and per-link rate.
    pub fn star(
        n: u32,
        subnet: Option<&str>,
        mtu: Option<u32>,
        rate: Option<&str>,
    ) -> Result<Topology> {
        let hosts = (1..=n)
            .map(|i| HostEntry {
                name: format!("h{i}"),
                address: None,
            })
            .collect();
        let links = (1..=n)
            .map(|i| LinkEntry {
                ends: vec![format!("h{i}"), "sw1".to_string()],
                mtu: None,
                rate: rate.map(str::to_string),
                ipsec: None,
            })
            .collect();
        Topology::from_file(TopologyFile {
            lab: LabSection {
                subnet: subnet.map(str::to_string),
                mtu,
            },
            hosts,
            switches: vec![SwitchEntry {
                name: "sw1".to_string(),
                subnet: None,
            }],
            links,
            wans: Vec::new(),
        })
    }

    /// `n` hosts in two segments joined by a WAN link with `wan` parameters (both directions):
    /// `h1 – wan – h2` for two hosts; for more, `h1`…`hK` on switch `sw1` and the rest on `sw2`
    /// (K = ⌈n/2⌉), the WAN link joining `sw1` and `sw2`. Subnet, MTU and rate as for
    /// [`Topology::star`]; the rate limits the hosts' links, so it needs more than two hosts.
    pub fn split(
        n: u32,
        subnet: Option<&str>,
        mtu: Option<u32>,
        rate: Option<&str>,
        wan: &str,
    ) -> Result<Topology> {
        let refuse = |msg: &str| Err(Error::Topology(msg.to_string()));
        if n < 2 {
            return refuse("--wan needs at least 2 hosts, one on each side");
        }
        if n == 2 && rate.is_some() {
            return refuse(
                "--rate: with --hosts 2 --wan, h1 and h2 are joined by the emulator alone; \
                 put rate= in the --wan parameters",
            );
        }
        let hosts = (1..=n)
            .map(|i| HostEntry {
                name: format!("h{i}"),
                address: None,
            })
            .collect();
        let (switches, links, ends) = if n == 2 {
            (Vec::new(), Vec::new(), ["h1", "h2"])
        } else {
            let switch = |name: &str| SwitchEntry {
                name: name.to_string(),
                subnet: None,
            };
            let first_side = n.div_ceil(2);
            let links = (1..=n)
                .map(|i| LinkEntry {
                    ends: vec![
                        format!("h{i}"),
                        if i <= first_side { "sw1" } else { "sw2" }.to_string(),
                    ],
                    mtu: None,
                    rate: rate.map(str::to_string),
                    ipsec: None,
                })
                .collect();
            (vec![switch("sw1"), switch("sw2")], links, ["sw1", "sw2"])
        };
        let wan = WanEntry {
            name: None,
            ends: ends.map(str::to_string).to_vec(),
            params: Some(wan.to_string()),
            a_to_b: None,
            b_to_a: None,
            mtu: None,
            ipsec: None,
        };
        Topology::from_file(TopologyFile {
            lab: LabSection {
                subnet: subnet.map(str::to_string),
                mtu,
            },
            hosts,
            switches,
            links,
            wans: vec![wan],
        })
    }

    /// Checks a topology as read and resolves its interfaces and addresses.
    pub fn from_file(file: TopologyFile) -> Result<Topology> {
        let refuse = |e: TopologyError| Error::Topology(e.to_string());
        let ipsec = ipsec::resolve(&file);
        let topology = validate::validate(file).map_err(refuse)?;
        Ok(Topology {
            ipsec: ipsec.map_err(refuse)?,
            ..topology
        })
    }
}

/// A TOML error on one line: `line 19: unknown field `speed`, expected one of …`.
fn one_line(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().replace('\n', " ");
    match error.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {message}")
        }
        None => message,
    }
}
