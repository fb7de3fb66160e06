//! What each host's charon reads, written under the lab's state directory in `ipsec/<host>/`:
//! `strongswan.conf` (OpenSSL for the crypto, the plugins the data path needs, the vici socket,
//! the log) and `swanctl.conf` (one IKEv2 connection per link the host is on, with the link's
//! pre-shared key, readable by root only). charon sees that directory as `/run` (see
//! `charon.rs`), so its PID file, socket and log stay there too.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{Datapath, IpsecLayout, IpsecLink, Suite};
use crate::error::{IoContext, Result};

/// The firewall mark charon's own packets (IKE, and ESP in UDP from user space) carry, so that
/// they bypass the routes into the tunnel (table 220, whose rule skips marked packets).
const BYPASS_MARK: &str = "0x4d";

/// The files of one host's charon.
pub struct HostFiles {
    /// The host's directory, `<state>/ipsec/<host>`.
    pub dir: PathBuf,
}

impl HostFiles {
    /// The files of host `host` of the lab whose state directory is `state`.
    pub fn of(state: &Path, host: &str) -> HostFiles {
        HostFiles {
            dir: state.join("ipsec").join(host),
        }
    }

    /// The vici socket, as swanctl reaches it from outside charon's mount namespace.
    pub fn vici_uri(&self) -> String {
        format!("unix://{}", self.dir.join("charon.vici").display())
    }

    /// The vici socket's path.
    pub fn vici(&self) -> PathBuf {
        self.dir.join("charon.vici")
    }

    /// The connections file.
    pub fn swanctl_conf(&self) -> PathBuf {
        self.dir.join("swanctl.conf")
    }

    /// charon's log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("charon.log")
    }
}

/// charon's crypto: OpenSSL's (AES-NI, PCLMUL: strongSwan's own aes and gcm plugins moved ESP
/// about 12 times slower here, 11 against 138 Mbit/s) for every suite's ciphers, hashes and
/// X25519, with charon's RNG, nonces and IKEv2 key derivation.
const CRYPTO_PLUGINS: &str = "random nonce openssl kdf";

/// `strongswan.conf` for one host: only the plugins `datapath` needs besides the crypto.
pub fn strongswan_conf(datapath: Datapath) -> String {
    let (kernel, extra) = match datapath {
        Datapath::Kernel => ("kernel-netlink", String::new()),
        Datapath::Userspace => (
            "kernel-libipsec kernel-netlink",
            format!(
                "    socket-default {{\n      fwmark = {BYPASS_MARK}\n    }}\n    \
                 kernel-netlink {{\n      fwmark = !{BYPASS_MARK}\n    }}\n    \
                 kernel-libipsec {{\n      allow_peer_ts = yes\n    }}\n"
            ),
        ),
    };
    format!(
        "# fathom lab: this host's charon (seen by charon as /run)\ncharon {{\n  \
         load = {} {kernel} socket-default vici\n  plugins {{\n    vici {{\n      \
         socket = unix:///run/charon.vici\n    }}\n{extra}  }}\n  filelog {{\n    log {{\n      \
         path = /run/charon.log\n      default = 1\n      time_format = %T\n    }}\n  }}\n  \
         syslog {{\n    daemon {{\n      default = -1\n    }}\n  }}\n}}\n",
        CRYPTO_PLUGINS
    )
}

/// The connection of `link` seen from its end `me` (0 or 1).
fn connection(link: &IpsecLink, me: usize, suite: Suite) -> String {
    let (local, remote) = (link.addrs[me], link.addrs[1 - me]);
    format!(
        "  {name} {{\n    version = 2\n    local_addrs = {local}\n    remote_addrs = {remote}\n    \
         proposals = {ike}\n    local {{\n      auth = psk\n      id = {local}\n    }}\n    \
         remote {{\n      auth = psk\n      id = {remote}\n    }}\n    children {{\n      \
         {name} {{\n        local_ts = {local}/32\n        remote_ts = {remote}/32\n        \
         esp_proposals = {esp}\n        mode = tunnel\n        start_action = none\n      }}\n    \
         }}\n  }}\n",
        name = link.conn,
        ike = suite.ike_proposal(),
        esp = suite.esp_proposal(),
    )
}

/// `swanctl.conf` for host `host`: its links' connections and their keys, `psk(link)` each.
pub fn swanctl_conf(
    layout: &IpsecLayout,
    host: &str,
    psk: &dyn Fn(&IpsecLink) -> String,
) -> String {
    let mine = || {
        layout
            .links
            .iter()
            .filter_map(|l| l.end_of(host).map(|me| (l, me)))
    };
    let connections: String = mine()
        .map(|(l, me)| connection(l, me, layout.suite))
        .collect();
    let secrets: String = mine()
        .map(|(l, _)| {
            format!(
                "  ike-{name} {{\n    id-1 = {}\n    id-2 = {}\n    secret = {}\n  }}\n",
                l.addrs[0],
                l.addrs[1],
                psk(l),
                name = l.conn
            )
        })
        .collect();
    format!("connections {{\n{connections}}}\nsecrets {{\n{secrets}}}\n")
}

/// Writes `text` to a new file at `path` readable by root only.
pub fn write_private(path: &Path, text: &str) -> Result<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .context(|| format!("writing {}", path.display()))
}

/// Creates the host's directory and writes its two files.
pub fn write(files: &HostFiles, strongswan: &str, swanctl: &str) -> Result<()> {
    fs::create_dir_all(&files.dir).context(|| format!("creating {}", files.dir.display()))?;
    write_private(&files.dir.join("strongswan.conf"), strongswan)?;
    write_private(&files.swanctl_conf(), swanctl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> IpsecLayout {
        IpsecLayout {
            suite: Suite::Aes256Gcm,
            datapath: Datapath::Userspace,
            links: vec![IpsecLink {
                name: "h1-h2".into(),
                conn: "l1-2".into(),
                ends: ["h1".into(), "h2".into()],
                addrs: ["10.77.0.1".parse().unwrap(), "10.77.0.2".parse().unwrap()],
            }],
        }
    }

    #[test]
    fn each_end_protects_its_own_address_to_the_peers() {
        let psk = |_: &IpsecLink| "0xabcd".to_string();
        let h2 = swanctl_conf(&layout(), "h2", &psk);
        assert!(h2.contains("local_addrs = 10.77.0.2\n"), "{h2}");
        assert!(h2.contains("local_ts = 10.77.0.2/32\n"), "{h2}");
        assert!(h2.contains("remote_ts = 10.77.0.1/32\n"), "{h2}");
        assert!(h2.contains("esp_proposals = aes256gcm16\n"), "{h2}");
        assert!(h2.contains("secret = 0xabcd\n"), "{h2}");
        let h3 = swanctl_conf(&layout(), "h3", &psk);
        assert_eq!(h3, "connections {\n}\nsecrets {\n}\n");
    }

    #[test]
    fn only_user_space_loads_libipsec_and_marks_charons_packets() {
        let user = strongswan_conf(Datapath::Userspace);
        assert!(user.contains("kernel-libipsec kernel-netlink socket-default vici"));
        assert!(user.contains("fwmark = !0x4d") && user.contains("allow_peer_ts = yes"));
        let kernel = strongswan_conf(Datapath::Kernel);
        assert!(
            !kernel.contains("libipsec") && !kernel.contains("fwmark"),
            "{kernel}"
        );
        assert!(kernel.contains("load = random nonce openssl kdf kernel-netlink "));
    }
}
