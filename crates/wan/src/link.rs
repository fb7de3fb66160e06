//! One direction of the emulated link, without any I/O: given a frame's arrival time and length,
//! decides whether it is lost, dropped by the full queue, or when it leaves. Driven by any clock
//! (nanoseconds), so it is tested with a fake one.

use crate::backlog::Backlog;
use crate::loss::Loss;
use crate::params::LinkParams;
use crate::rng::Rng;
use crate::shaper::TokenBucket;

/// What happens to an arriving frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The frame leaves at this time (nanoseconds).
    Depart(u64),
    /// The loss model lost it.
    Lost,
    /// The bottleneck queue was full (tail drop).
    QueueFull,
}

/// The state of one direction: loss model, rate limiter, bottleneck occupancy, last departure.
pub struct Link {
    params: LinkParams,
    rng: Rng,
    loss: Loss,
    bucket: TokenBucket,
    backlog: Backlog,
    last_depart: u64,
}

impl Link {
    /// A link with `params` whose bottleneck can track `capacity` frames.
    pub fn new(params: LinkParams, capacity: usize) -> Self {
        Link {
            rng: Rng::new(params.seed),
            loss: Loss::new(params.loss),
            bucket: TokenBucket::new(params.rate_bps, params.burst_bytes),
            backlog: Backlog::new(capacity),
            last_depart: 0,
            params,
        }
    }

    /// Changes the parameters for frames arriving from now on; frames already held keep their
    /// departure times. The random stream restarts only if the seed changes.
    pub fn set_params(&mut self, params: LinkParams) {
        if params.seed != self.params.seed {
            self.rng = Rng::new(params.seed);
        }
        self.loss.set_model(params.loss);
        self.bucket.set(params.rate_bps, params.burst_bytes);
        self.params = params;
    }

    /// Frames and bytes waiting for the rate limiter, as of the last [`Link::admit`].
    pub fn backlog(&self) -> (u64, u64) {
        (self.backlog.packets(), self.backlog.bytes())
    }

    /// Decides the fate of a frame of `len` bytes arriving at `now`.
    pub fn admit(&mut self, now: u64, len: u32) -> Verdict {
        if self.loss.lose(&mut self.rng) {
            return Verdict::Lost;
        }
        self.backlog.advance(now);
        if !self.backlog.fits(self.params.queue_limit, len) {
            return Verdict::QueueFull;
        }
        let leaves_bottleneck = self.bucket.schedule(now, len as u64);
        self.backlog.add(now, leaves_bottleneck, len);
        let jitter = self.rng.symmetric(self.params.jitter.as_nanos() as u64);
        let delay = (self.params.delay.as_nanos() as i64 + jitter).max(0) as u64;
        let mut depart = leaves_bottleneck + delay;
        if !self.params.reorder {
            depart = depart.max(self.last_depart);
        }
        self.last_depart = self.last_depart.max(depart);
        Verdict::Depart(depart)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn link(text: &str) -> Link {
        Link::new(text.parse().unwrap(), 10_000)
    }

    fn departures(link: &mut Link, arrivals: impl Iterator<Item = u64>) -> Vec<u64> {
        arrivals
            .filter_map(|t| match link.admit(t, 100) {
                Verdict::Depart(d) => Some(d),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn delay_is_added() {
        assert_eq!(link("delay=25ms").admit(MS, 64), Verdict::Depart(26 * MS));
    }

    #[test]
    fn jitter_stays_in_bounds_and_never_reorders() {
        let mut l = link("delay=10ms,jitter=5ms,seed=3");
        let gap = 2 * MS;
        let times = departures(&mut l, (0..10_000).map(|i| i * gap));
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "reordered");
        let delays: Vec<u64> = times
            .iter()
            .enumerate()
            .map(|(i, &d)| d - i as u64 * gap)
            .collect();
        assert!(delays.iter().all(|&d| (5 * MS..=15 * MS).contains(&d)));
        assert!(delays.iter().any(|&d| d < 6 * MS) && delays.iter().any(|&d| d > 14 * MS));
    }

    #[test]
    fn reorder_lets_jitter_reorder() {
        let mut l = link("delay=10ms,jitter=5ms,reorder,seed=3");
        let times = departures(&mut l, (0..1000).map(|i| i * 10_000));
        assert!(times.windows(2).any(|w| w[0] > w[1]));
        for (i, &d) in times.iter().enumerate() {
            let delay = d - i as u64 * 10_000;
            assert!((5 * MS..=15 * MS).contains(&delay), "{delay}");
        }
    }

    #[test]
    fn seeds_repeat() {
        let text = "delay=10ms,jitter=5ms,loss=10%,seed=11";
        let run = |text| departures(&mut link(text), (0..1000).map(|i| i * 1000));
        assert_eq!(run(text), run(text));
        assert_ne!(run(text), run("delay=10ms,jitter=5ms,loss=10%,seed=12"));
    }

    #[test]
    fn queue_limit_tail_drops_behind_the_rate_limiter() {
        // 100-byte frames at 800 kbit/s take 1 ms each; 10 arrive at once into a 4-frame queue.
        let mut l = link("rate=800K,queue=4p,delay=5ms");
        let verdicts: Vec<Verdict> = (0..10).map(|_| l.admit(0, 100)).collect();
        let expected: Vec<Verdict> = (1..=4).map(|i| Verdict::Depart(i * MS + 5 * MS)).collect();
        assert_eq!(verdicts[..4], expected);
        assert!(verdicts[4..].iter().all(|v| *v == Verdict::QueueFull));
        assert_eq!(l.backlog(), (4, 400));
        // Once the first has passed the rate limiter there is room for one more.
        assert_eq!(l.admit(MS, 100), Verdict::Depart(10 * MS));
        assert_eq!(l.admit(MS, 100), Verdict::QueueFull);
    }

    #[test]
    fn byte_limit() {
        let mut l = link("rate=800K,queue=250B");
        assert!(matches!(l.admit(0, 100), Verdict::Depart(_)));
        assert!(matches!(l.admit(0, 100), Verdict::Depart(_)));
        assert_eq!(l.admit(0, 100), Verdict::QueueFull);
    }

    #[test]
    fn without_rate_the_delay_line_is_unlimited() {
        let mut l = link("delay=100ms,queue=2p");
        assert!((0..100).all(|_| matches!(l.admit(0, 1500), Verdict::Depart(_))));
    }

    #[test]
    fn live_change_affects_new_frames_only() {
        let mut l = link("delay=10ms");
        assert_eq!(l.admit(0, 64), Verdict::Depart(10 * MS));
        l.set_params("delay=1ms,reorder".parse().unwrap());
        assert_eq!(l.admit(MS, 64), Verdict::Depart(2 * MS));
        l.set_params("loss=100%".parse().unwrap());
        assert_eq!(l.admit(MS, 64), Verdict::Lost);
    }
}
