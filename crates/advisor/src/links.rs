//! Rules on a lab's emulated WAN links (`fathom doctor --lab`): a link's delay, rate and loss
//! against the settings of the hosts at its ends. The window one stream needs is the link's
//! bandwidth-delay product; the rate one stream keeps through random loss is bounded by Mathis
//! et al.: MSS x 8 / RTT x 1.22 / sqrt(p).

use crate::buffers::on;
use crate::{Confidence, Finding, Settings, Severity};
use fathom_units::{rate, size};

/// The TCP payload of a full Ethernet frame, for the Mathis bound.
const MSS: f64 = 1448.0;

/// One emulated link, as the advisor needs it (both directions folded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Link {
    /// Its name (`h1-h2`).
    pub name: String,
    /// The two nodes it joins.
    pub ends: [String; 2],
    /// The round trip its delays add, ms (both directions' delay).
    pub rtt_ms: f64,
    /// The lower of its two directions' rates, bits/s; `None` when both are unlimited.
    pub rate_bps: Option<u64>,
    /// The higher of its two directions' random loss probabilities (0 to 1).
    pub loss: f64,
    /// Both directions' parameters as the emulator reports them, for the findings' value.
    pub params: String,
}

/// The findings on `link`, each end's settings (`None`: not read) beside it.
pub fn findings(link: &Link, ends: [Option<&Settings>; 2]) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(rate) = link.rate_bps.filter(|_| link.rtt_ms > 0.0) {
        let bdp = (rate as f64 / 8.0 * link.rtt_ms / 1000.0) as u64;
        for (host, s) in link.ends.iter().zip(ends) {
            if let Some(s) = s {
                window(link, host, s, rate, bdp, &mut out);
            }
        }
    }
    loss(link, &mut out);
    out
}

/// One stream into `host` across `link` cannot fill it: autotuning's maximum there is below the
/// link's bandwidth-delay product `bdp`.
fn window(link: &Link, host: &str, s: &Settings, bps: u64, bdp: u64, out: &mut Vec<Finding>) {
    let name = "net.ipv4.tcp_rmem";
    let Some([min, def, max]) = s.triple(name).filter(|t| t[2] < bdp) else {
        return;
    };
    let cap = max as f64 * 8.0 * 1000.0 / link.rtt_ms;
    out.push(Finding {
        why: format!(
            "link {} carries {} over a {:.0} ms round trip: its bandwidth-delay product is {}, but a stream into {host} may open a window of at most {} there, so one stream gets at most {}",
            link.name,
            rate::human(bps as f64, 3),
            link.rtt_ms,
            size::human(bdp),
            size::human(max),
            rate::human(cap.min(bps as f64), 3)
        ),
        change: format!(
            "fathom lab exec {host} -- sysctl -w {name}='{min} {def} {}'   (or more streams, -P)",
            bdp.saturating_mul(2).max(max)
        ),
        ..on(
            &format!("{name} on {host}"),
            format!("{min} {def} {max}"),
            "link_window",
            Severity::Warning,
            Confidence::High,
        )
    });
}

/// Random loss on `link`: the Mathis bound on one stream's rate.
fn loss(link: &Link, out: &mut Vec<Finding>) {
    if link.loss <= 0.0 || link.rtt_ms <= 0.0 {
        return;
    }
    let bound = MSS * 8.0 * 1000.0 / link.rtt_ms * 1.22 / link.loss.sqrt();
    let limits = link.rate_bps.is_none_or(|r| bound < r as f64);
    out.push(Finding {
        why: format!(
            "{:.2}% random loss over a {:.0} ms round trip bounds one TCP stream near {} (Mathis: MSS x 8 / RTT x 1.22 / sqrt(p)){}",
            link.loss * 100.0,
            link.rtt_ms,
            rate::human(bound, 3),
            match link.rate_bps {
                Some(r) if limits => format!(", below the link's {}", rate::human(r as f64, 3)),
                Some(r) => format!(", above the link's {}", rate::human(r as f64, 3)),
                None => String::new(),
            }
        ),
        change: "expected of this link: more streams (-P 4) or --cc bbr reach more of it".into(),
        ..on(
            &format!("link {}", link.name),
            link.params.clone(),
            "link_loss",
            if limits {
                Severity::Warning
            } else {
                Severity::Note
            },
            Confidence::Medium,
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> Link {
        Link {
            name: "h1-h2".into(),
            ends: ["h1".into(), "h2".into()],
            rtt_ms: 100.0,
            rate_bps: Some(1_000_000_000),
            loss: 0.0,
            params: "delay=50ms,rate=1G".into(),
        }
    }

    fn host(rmem_max: u64) -> Settings {
        let mut s = Settings::default();
        s.sysctls.insert(
            "net.ipv4.tcp_rmem".into(),
            format!("4096 131072 {rmem_max}"),
        );
        s
    }

    #[test]
    fn a_window_below_the_links_bdp_is_cited_on_that_host() {
        let (small, big) = (host(6 << 20), host(64 << 20));
        let f = findings(&link(), [Some(&big), Some(&small)]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].id, "link_window");
        assert_eq!(f[0].source, "net.ipv4.tcp_rmem on h2");
        assert!(
            f[0].why.contains("12.5 MB") || f[0].why.contains("11.9 MB"),
            "{}",
            f[0].why
        );
        assert!(f[0]
            .change
            .starts_with("fathom lab exec h2 -- sysctl -w net.ipv4.tcp_rmem="));
        assert!(findings(&link(), [Some(&big), None]).is_empty());
    }

    #[test]
    fn loss_gives_the_mathis_bound() {
        let l = Link {
            loss: 0.01,
            ..link()
        };
        let f = findings(&l, [None, None]);
        assert_eq!(f[0].id, "link_loss");
        assert_eq!(
            f[0].severity,
            Severity::Warning,
            "1.4 Mbit/s is below 1 Gbit/s"
        );
        assert!(f[0].why.contains("1 Mbit/s"), "{}", f[0].why);
    }
}
