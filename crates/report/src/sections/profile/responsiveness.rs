//! The IETF IPPM "Responsiveness under Working Conditions" draft's arithmetic over a profile's
//! probes: trimmed means of each probe kind's samples, and the RPM made of them.
//!
//! The draft: `RPM = 60000 / (1/6·(TM(tcp_f) + TM(tls_f) + TM(http_f)) + 1/2·TM(http_s))`, in
//! ms, where `_f` are probes on fresh connections (TCP handshake, TLS handshake, a request and
//! its response) and `http_s` a request/response on a load-generating connection. fathom has
//! no TLS handshake probe, so the fresh half's weight falls on the two it has (1/4 each);
//! docs/profiles.md says which probe stands for which.

use hdrhistogram::Histogram;

/// Share of the samples a trimmed mean drops: the slowest 5%. The draft's trimmed mean is
/// single-sided (the mean of the fastest 95%), so a few stalled probes do not set the figure
/// while the fast ones all count.
pub const TRIM: f64 = 0.05;

/// The mean of `h`'s samples once the slowest [`TRIM`] of them (rounded down: fewer than 20
/// samples lose none) are dropped, in `h`'s unit; none when it is empty.
pub fn trimmed_mean(h: &Histogram<u64>) -> Option<f64> {
    let n = h.len();
    let to = n - (n as f64 * TRIM).floor() as u64;
    let (mut seen, mut kept, mut sum) = (0u64, 0u64, 0f64);
    for v in h.iter_recorded() {
        let next = seen + v.count_at_value();
        let take = next.min(to).saturating_sub(seen);
        kept += take;
        sum += take as f64 * h.median_equivalent(v.value_iterated_to()) as f64;
        seen = next;
        if seen >= to {
            break;
        }
    }
    (kept > 0).then(|| sum / kept as f64)
}

/// One fresh-connection probe group's trimmed means, ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fresh {
    /// TM(tcp_f): its `connect` (the TCP handshake).
    pub handshake_ms: f64,
    /// TM(http_f): its request and response (`write` then `read`: the sum of their TMs).
    pub request_ms: f64,
}

/// Round trips per minute from the fresh-connection probes' trimmed means (`fresh`) and the
/// TCP request/response probes' (`own`, ms), each kind averaged over its groups:
/// `60000 / (1/4·(TM(tcp_f) + TM(http_f)) + 1/2·TM(http_s))`; with only one kind, that kind
/// alone carries the whole weight. None without any probe or with a zero time.
pub fn rpm(fresh: &[Fresh], own: &[f64]) -> Option<f64> {
    let mean = |v: &mut dyn Iterator<Item = f64>| {
        let (n, sum) = v.fold((0usize, 0f64), |(n, s), x| (n + 1, s + x));
        (n > 0).then(|| sum / n as f64)
    };
    let foreign = mean(&mut fresh.iter().map(|f| (f.handshake_ms + f.request_ms) / 2.0));
    let ms = match (foreign, mean(&mut own.iter().copied())) {
        (Some(f), Some(s)) => f / 2.0 + s / 2.0,
        (Some(f), None) => f,
        (None, Some(s)) => s,
        (None, None) => return None,
    };
    (ms > 0.0).then(|| 60_000.0 / ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sections::rr::figures::empty;

    fn of(samples: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = empty();
        for &(v, n) in samples {
            h.record_n(v, n).unwrap();
        }
        h
    }

    #[test]
    fn a_trimmed_mean_drops_the_slowest_five_percent() {
        // 100 samples: the 5 slowest (10^6) go, the 5 fastest (1) stay.
        let h = of(&[(1, 5), (1_000, 95), (1_000_000, 5)]);
        assert_eq!(trimmed_mean(&h), Some((5.0 + 95_000.0) / 100.0));
        // 20 samples lose their slowest: 1..=19 stay, mean 10.
        let h = of(&(1..=19)
            .map(|v| (v, 1))
            .chain([(1_000, 1)])
            .collect::<Vec<_>>());
        assert_eq!(trimmed_mean(&h), Some(10.0));
        // 19 samples lose none.
        let h = of(&[(10, 18), (200, 1)]);
        assert_eq!(trimmed_mean(&h), Some(20.0));
        assert_eq!(trimmed_mean(&empty()), None);
    }

    #[test]
    fn the_rpm_weighs_fresh_and_own_probes_as_the_draft_does() {
        let fresh = Fresh {
            handshake_ms: 20.0,
            request_ms: 40.0,
        };
        // 1/4·(20 + 40) + 1/2·100 = 65 ms: 923 round trips per minute.
        let rpm_both = rpm(&[fresh], &[100.0]).unwrap();
        assert!((rpm_both - 60_000.0 / 65.0).abs() < 1e-9, "{rpm_both}");
        assert_eq!(rpm(&[fresh], &[]), Some(2_000.0));
        assert_eq!(rpm(&[], &[100.0, 300.0]), Some(300.0));
        assert_eq!(rpm(&[], &[]), None);
        assert_eq!(rpm(&[], &[0.0]), None);
    }
}
