//! The security associations of a lab's encrypted links, as the initiating host's charon lists
//! them (`swanctl --list-sas --raw`), and what `lab status` and a test's result record of them:
//! suite, data path, state, bytes and packets each way, rekeys (counted in charon's log).

use std::io::Read;
use std::time::Duration;

use serde::Serialize;

use super::charon::swanctl;
use super::config::HostFiles;
use super::{Datapath, IpsecLayout, IpsecLink, Suite};
use crate::lab::Lab;

/// The most a section of swanctl's raw output may nest (an IKE SA, its CHILD_SAs, their lists).
const MAX_DEPTH: usize = 8;
/// The most of charon's log that is read to count rekeys.
const MAX_LOG_BYTES: u64 = 16 << 20;

/// The IPsec part of `lab status`.
#[derive(Clone, Debug, Serialize)]
pub struct IpsecStatus {
    /// The cipher suite.
    pub suite: Suite,
    /// Where ESP runs.
    pub datapath: Datapath,
    /// One entry per encrypted link.
    pub links: Vec<IpsecLinkStatus>,
}

/// One encrypted link's SAs, as its initiator (its first end) sees them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IpsecLinkStatus {
    /// `h1-h2`.
    pub name: String,
    /// The IKE SA's state (`ESTABLISHED`), or `none`.
    pub ike_state: String,
    /// The CHILD_SA's state (`INSTALLED`), or `none`.
    pub child_state: String,
    /// Bytes of ESP payload the first end received over the link.
    pub bytes_in: u64,
    /// Bytes of ESP payload the first end sent.
    pub bytes_out: u64,
    /// Packets received.
    pub packets_in: u64,
    /// Packets sent.
    pub packets_out: u64,
    /// How many times the CHILD_SA was rekeyed.
    pub rekeys: u64,
    /// Why the SAs could not be read, if they could not.
    pub error: Option<String>,
}

/// A value or a section of swanctl's raw output.
#[derive(Debug)]
enum Item {
    Value(String),
    Section(Vec<(String, Item)>),
}

/// Splits raw output into `{`, `}` and words (`key=value`, `key=[a b]`, names).
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_list = false;
    for c in text.chars() {
        match c {
            ']' if in_list => {
                in_list = false;
                word.push(c);
            }
            _ if in_list => word.push(c),
            '[' => {
                in_list = true;
                word.push(c);
            }
            '{' | '}' => {
                out.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                out.push(c.to_string());
            }
            c if c.is_whitespace() => {
                out.extend((!word.is_empty()).then(|| std::mem::take(&mut word)))
            }
            c => word.push(c),
        }
    }
    out.extend((!word.is_empty()).then_some(word));
    out
}

/// Parses a section up to its `}` (or the end); deeper than [`MAX_DEPTH`] is skipped.
fn section(
    toks: &mut std::iter::Peekable<std::vec::IntoIter<String>>,
    depth: usize,
) -> Vec<(String, Item)> {
    let mut items = Vec::new();
    while let Some(t) = toks.next() {
        if t == "}" {
            break;
        }
        if toks.peek().is_some_and(|n| n == "{") {
            toks.next();
            if depth < MAX_DEPTH {
                items.push((t, Item::Section(section(toks, depth + 1))));
            } else {
                skip(toks);
            }
        } else if let Some((k, v)) = t.split_once('=') {
            items.push((k.to_string(), Item::Value(v.to_string())));
        }
    }
    items
}

/// Skips the rest of a section, however deep, without recursion.
fn skip(toks: &mut std::iter::Peekable<std::vec::IntoIter<String>>) {
    let mut open = 1usize;
    for t in toks.by_ref() {
        match t.as_str() {
            "{" => open += 1,
            "}" => open -= 1,
            _ => {}
        }
        if open == 0 {
            return;
        }
    }
}

fn value<'a>(items: &'a [(String, Item)], key: &str) -> Option<&'a str> {
    items.iter().find_map(|(k, i)| match i {
        Item::Value(v) if k == key => Some(v.as_str()),
        _ => None,
    })
}

fn sub<'a>(items: &'a [(String, Item)], key: &str) -> Option<&'a [(String, Item)]> {
    items.iter().find_map(|(k, i)| match i {
        Item::Section(s) if k == key => Some(s.as_slice()),
        _ => None,
    })
}

/// The link `conn`'s state and counters in raw `--list-sas` output (rekeys not counted).
fn parse(raw: &str, conn: &str) -> IpsecLinkStatus {
    let mut toks = tokens(raw).into_iter().peekable();
    let top = section(&mut toks, 0);
    let mut st = IpsecLinkStatus {
        ike_state: "none".into(),
        child_state: "none".into(),
        ..Default::default()
    };
    let events = top.iter().filter_map(|(k, i)| match i {
        Item::Section(s) if k == "event" => Some(s),
        _ => None,
    });
    for ike in events.filter_map(|e| sub(e, conn)) {
        st.ike_state = value(ike, "state").unwrap_or("none").to_string();
        let children = sub(ike, "child-sas").unwrap_or_default();
        for (_, child) in children {
            let Item::Section(c) = child else { continue };
            let n = |key: &str| {
                value(c, key)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            st.child_state = value(c, "state").unwrap_or("none").to_string();
            st.bytes_in += n("bytes-in");
            st.bytes_out += n("bytes-out");
            st.packets_in += n("packets-in");
            st.packets_out += n("packets-out");
        }
    }
    st
}

/// How many times charon's log at `files` says `conn`'s CHILD_SA was established, less one.
fn rekeys(files: &HostFiles, conn: &str) -> u64 {
    let mut text = String::new();
    let _ =
        std::fs::File::open(files.log()).map(|f| f.take(MAX_LOG_BYTES).read_to_string(&mut text));
    let mark = format!("CHILD_SA {conn}{{");
    let n = text
        .lines()
        .filter(|l| l.contains(&mark) && l.contains("} established"))
        .count() as u64;
    n.saturating_sub(1)
}

/// `link`'s SAs now, from its first end's charon.
pub(crate) fn read_link(lab: &Lab, link: &IpsecLink) -> IpsecLinkStatus {
    let files = HostFiles::of(lab.state_dir(), &link.ends[0]);
    let args = ["--list-sas", "--raw", "--ike", &link.conn];
    let mut st = match swanctl(&files, &args, Duration::from_secs(5)) {
        Ok(raw) => parse(&raw, &link.conn),
        Err(e) => IpsecLinkStatus {
            ike_state: "none".into(),
            child_state: "none".into(),
            error: Some(e.to_string()),
            ..Default::default()
        },
    };
    st.name = link.name.clone();
    st.rekeys = rekeys(&files, &link.conn);
    st
}

/// CPU seconds the lab's running charons have used so far, if it has any.
pub fn charon_cpu_s(lab: &Lab) -> Option<f64> {
    let running: Vec<u32> = lab
        .hosts()
        .iter()
        .filter_map(|h| h.charon.as_ref().filter(|c| c.is_running()))
        .map(|c| c.pid)
        .collect();
    if running.is_empty() {
        return None;
    }
    running.into_iter().map(crate::process::cpu_s).sum()
}

/// The IPsec status of `lab`, if it has IPsec.
pub fn link_status(lab: &Lab) -> Option<IpsecStatus> {
    let ipsec: &IpsecLayout = lab.layout().ipsec.as_ref()?;
    Some(IpsecStatus {
        suite: ipsec.suite,
        datapath: ipsec.datapath,
        links: ipsec.links.iter().map(|l| read_link(lab, l)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW: &str = "list-sa event {l1-2 {uniqueid=1 version=2 state=ESTABLISHED \
        local-host=10.99.0.1 encr-alg=AES_GCM_16 encr-keysize=256 child-sas {l1-2-1 {name=l1-2 \
        uniqueid=1 reqid=1 state=INSTALLED mode=TUNNEL protocol=ESP encap=yes bytes-in=168 \
        packets-in=2 use-in=0 bytes-out=336 packets-out=4 local-ts=[10.99.0.1/32 10.99.0.3/32] \
        remote-ts=[10.99.0.2/32]}}}}\nlist-sas reply {}\n";

    #[test]
    fn reads_the_links_state_and_counters() {
        let st = parse(RAW, "l1-2");
        assert_eq!(st.ike_state, "ESTABLISHED");
        assert_eq!(st.child_state, "INSTALLED");
        assert_eq!((st.bytes_in, st.bytes_out), (168, 336));
        assert_eq!((st.packets_in, st.packets_out), (2, 4));
    }

    #[test]
    fn another_link_or_garbage_reads_as_none() {
        assert_eq!(parse(RAW, "l1-3").ike_state, "none");
        for junk in ["", "}}}{{{", "event {", &"{".repeat(10_000)] {
            let st = parse(junk, "l1-2");
            assert_eq!((st.ike_state.as_str(), st.bytes_in), ("none", 0));
        }
    }
}
