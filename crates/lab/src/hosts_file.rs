//! Host names inside the lab: a hosts file per host namespace in /etc/netns/<ns>/, which
//! `ip netns exec` (and so `fathom lab exec`) mounts over /etc/hosts, so `ssh h2` or
//! `scp f h2:/tmp/` find h2 inside the lab (with `lab up --sshd`, an `ssh/` beside it, mounted
//! over /etc/ssh, holds the client config; see `sshd.rs`). Nothing outside the lab's
//! namespaces sees them.

use crate::error::{IoContext, Result};
use crate::layout::Layout;
use crate::name::NETNS_PREFIX;
use std::path::PathBuf;

/// Where `ip netns exec` looks for a namespace's own /etc files.
const NETNS_ETC: &str = "/etc/netns";

fn dir(ns: &str) -> PathBuf {
    PathBuf::from(NETNS_ETC).join(ns)
}

/// Writes every host namespace's hosts file: localhost, then each host's name and address.
pub fn write(layout: &Layout) -> Result<()> {
    let mut text = String::from("127.0.0.1\tlocalhost\n::1\tlocalhost\n");
    for h in &layout.hosts {
        text.push_str(&format!("{}\t{}\n", h.address(), h.name));
    }
    write_each(layout, "hosts", &text)
}

/// Writes `text` as /etc/`file` of every host namespace (`file` relative, e.g. `ssh/ssh_config`).
pub fn write_each(layout: &Layout, file: &str, text: &str) -> Result<()> {
    for h in &layout.hosts {
        let path = dir(&h.netns).join(file);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).context(|| format!("creating {}", d.display()))?;
        }
        std::fs::write(&path, text).context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Removes lab `name`'s files, whether or not its namespaces still exist. Node names hold no
/// `-`, so `fl-a-h1` belongs to lab `a` and `fl-a-b-h1` to lab `a-b` only.
pub fn remove(name: &str) {
    let prefix = format!("{NETNS_PREFIX}{name}-");
    let Ok(entries) = std::fs::read_dir(NETNS_ETC) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        if file
            .strip_prefix(&prefix)
            .is_some_and(|node| !node.is_empty() && !node.contains('-'))
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
