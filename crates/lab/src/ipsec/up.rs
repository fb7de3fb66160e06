//! The IPsec step of `lab up`: write the configuration of every host on an encrypted link,
//! start its charon, load it, initiate every link from its first end and wait until both ends
//! have the CHILD_SA installed. Each charon is recorded in the state as soon as it runs, so `down` stops it
//! whatever fails next.

use std::time::{Duration, Instant};

use super::charon::{self, failed};
use super::config::{self, HostFiles};
use super::probe::random_hex;
use super::sas::read_link;
use super::{IpsecLayout, IpsecLink, IpsecOptions};
use crate::error::{Error, Result};
use crate::lab::Lab;

/// How long the IPsec step may take at most, start to every CHILD_SA installed.
const IPSEC_TIMEOUT: Duration = Duration::from_secs(30);

impl Lab {
    /// Sets up IPsec between every pair of hosts as `opts` says (see the module).
    pub(crate) fn start_ipsec(&mut self, opts: &IpsecOptions) -> Result<()> {
        let deadline = Instant::now() + IPSEC_TIMEOUT;
        let layout = IpsecLayout::new(&self.state.layout, opts)?;
        self.state.layout.ipsec = Some(layout.clone());
        self.dir.save(&self.state)?;
        let keys: Vec<String> = layout
            .links
            .iter()
            .map(|_| random_hex(32, "0x"))
            .collect::<Result<_>>()?;
        let strongswan = config::strongswan_conf(layout.datapath);
        for i in 0..self.state.layout.hosts.len() {
            let host = self.state.layout.hosts[i].clone();
            if !layout.links.iter().any(|l| l.end_of(&host.name).is_some()) {
                continue;
            }
            let files = HostFiles::of(self.dir.path(), &host.name);
            let wrong = opts.wrong_psk_host.as_deref() == Some(host.name.as_str());
            let other = random_hex(32, "0x")?;
            let psk = |l: &IpsecLink| {
                let k = layout.links.iter().position(|x| x.conn == l.conn);
                match (wrong, k) {
                    (false, Some(k)) => keys[k].clone(),
                    _ => other.clone(),
                }
            };
            let swanctl = config::swanctl_conf(&layout, &host.name, &psk);
            config::write(&files, &strongswan, &swanctl)?;
            let process = charon::start(&host, &files, deadline)?;
            self.state.layout.hosts[i].charon = Some(process);
            self.dir.save(&self.state)?;
            charon::load(&host.name, &files)?;
        }
        for link in &layout.links {
            self.initiate(link, deadline)?;
        }
        Ok(())
    }

    /// Initiates `link` from its first end and waits until its second end has the CHILD_SA
    /// installed too.
    fn initiate(&self, link: &IpsecLink, deadline: Instant) -> Result<()> {
        let [a, b] = &link.ends;
        let files = HostFiles::of(self.dir.path(), a);
        let left = deadline.saturating_duration_since(Instant::now());
        let args = ["--initiate", "--child", &link.conn, "--timeout"];
        let secs = left.as_secs().max(1).to_string();
        let args = [&args[..], &[secs.as_str()]].concat();
        if let Err(e) = charon::swanctl(&files, &args, left + Duration::from_secs(2)) {
            return Err(refusal(link, &e.to_string()));
        }
        let far = IpsecLink {
            ends: [b.clone(), a.clone()],
            ..link.clone()
        };
        loop {
            let st = read_link(self, &far);
            if st.child_state == "INSTALLED" {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let why = format!(
                    "link {}: the CHILD_SA is not installed here in time (state {})",
                    link.name, st.child_state
                );
                return Err(failed(b, why));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Why initiating `link` failed, naming the host that refused, from what swanctl said.
fn refusal(link: &IpsecLink, said: &str) -> Error {
    let [a, b] = &link.ends;
    if said.contains("AUTHENTICATION_FAILED") {
        return failed(
            b,
            format!(
                "link {}: {b} refused {a}'s authentication (AUTHENTICATION_FAILED): the two \
                 hosts' pre-shared keys differ",
                link.name
            ),
        );
    }
    let last = said.rsplit(" | ").next().unwrap_or(said);
    failed(a, format!("link {}: initiating failed: {last}", link.name))
}
