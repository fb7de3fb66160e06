//! Change, not noise: each pair's figure is judged against a band around its baseline (its
//! latest good runs), and an alert is raised only after `after` runs in a row fall outside it
//! on the worse side, and cleared only after `clear` runs in a row fall back inside
//! (hysteresis, as Smokeping's `ConsecutiveLoss`). The band is the Student-t prediction
//! interval of one more run from the baseline (the report's statistics: its mean, spread and t
//! quantile), widened to at least `tolerance` of the mean, so that a very steady baseline does
//! not turn a small wobble into an alert. Runs outside the band never enter the baseline, so a
//! degraded path cannot teach the baseline that it is normal.

use crate::spec::{AlertRule, Figure};
use fathom_report::stats::{describe, t_quantile};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The band a run is judged against.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// The baseline's mean.
    pub mean: f64,
    /// The band's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// Runs in the baseline.
    pub n: usize,
}

/// What one run did to its pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The alert was raised by this run.
    Raised,
    /// The alert was cleared by this run.
    Cleared,
}

/// One run judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judged {
    /// The band it was judged against; none while the baseline is still being learnt.
    pub band: Option<Band>,
    /// True when it fell outside the band on the worse side (or failed).
    pub bad: bool,
    /// True when the pair's alert is raised after this run.
    pub raised: bool,
    /// Whether this run raised or cleared the alert.
    pub change: Option<Change>,
}

/// One pair's alert state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairAlert {
    baseline: VecDeque<f64>,
    bad_run: u32,
    good_run: u32,
    raised: bool,
}

impl PairAlert {
    /// A pair with no history.
    pub fn new() -> PairAlert {
        PairAlert::default()
    }

    /// True while the pair's alert is raised.
    pub fn raised(&self) -> bool {
        self.raised
    }

    /// The band the next run will be judged against, once the baseline holds enough runs.
    pub fn band(&self, rule: &AlertRule) -> Option<Band> {
        let n = self.baseline.len();
        if n < rule.min_baseline.max(2) {
            return None;
        }
        let values: Vec<f64> = self.baseline.iter().copied().collect();
        let s = describe(&values, rule.level);
        let t = t_quantile(rule.level, (n - 1) as f64);
        let predicted = t * s.stddev * (1.0 + 1.0 / n as f64).sqrt();
        let half = predicted.max(rule.tolerance * s.mean.abs());
        let half = if half.is_finite() { half } else { 0.0 };
        Some(Band {
            mean: s.mean,
            low: s.mean - half,
            high: s.mean + half,
            n,
        })
    }

    /// Judges one run's figure (`None`: the run failed, which counts as outside the band once
    /// there is one).
    pub fn observe(&mut self, value: Option<f64>, figure: &Figure, rule: &AlertRule) -> Judged {
        let band = self.band(rule);
        let value = value.filter(|v| v.is_finite());
        let bad = match (band, value) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(b), Some(v)) if figure.higher_is_worse => v > b.high,
            (Some(b), Some(v)) => v < b.low,
        };
        if bad {
            self.bad_run = self.bad_run.saturating_add(1);
            self.good_run = 0;
        } else {
            self.good_run = self.good_run.saturating_add(1);
            self.bad_run = 0;
            if let Some(v) = value {
                self.learn(v, rule);
            }
        }
        let change = match (self.raised, bad) {
            (false, true) if self.bad_run >= rule.after => Some(Change::Raised),
            (true, false) if self.good_run >= rule.clear => Some(Change::Cleared),
            _ => None,
        };
        if let Some(c) = change {
            self.raised = c == Change::Raised;
        }
        Judged {
            band,
            bad,
            raised: self.raised,
            change,
        }
    }

    /// Adds a good run to the baseline, dropping the oldest beyond its size.
    fn learn(&mut self, v: f64, rule: &AlertRule) {
        self.baseline.push_back(v);
        while self.baseline.len() > rule.baseline {
            self.baseline.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> AlertRule {
        AlertRule {
            after: 3,
            clear: 2,
            baseline: 20,
            min_baseline: 5,
            tolerance: 0.2,
            ..AlertRule::default()
        }
    }

    fn feed(p: &mut PairAlert, values: &[f64]) -> Vec<Judged> {
        let f = Figure::named("latency_p50_us");
        values
            .iter()
            .map(|v| p.observe(Some(*v), &f, &rule()))
            .collect()
    }

    #[test]
    fn raised_after_n_bad_runs_and_cleared_after_m_good_ones() {
        let mut p = PairAlert::new();
        let quiet = [100.0, 102.0, 99.0, 101.0, 100.0, 98.0, 103.0, 100.0];
        assert!(feed(&mut p, &quiet).iter().all(|j| !j.bad && !j.raised));
        let j = feed(&mut p, &[300.0, 310.0]);
        assert!(j.iter().all(|j| j.bad && !j.raised), "{j:?}");
        let j = feed(&mut p, &[305.0]);
        assert_eq!(j[0].change, Some(Change::Raised));
        let j = feed(&mut p, &[320.0, 101.0]);
        assert!(j.iter().all(|j| j.raised && j.change.is_none()));
        let j = feed(&mut p, &[99.0]);
        assert_eq!((j[0].raised, j[0].change), (false, Some(Change::Cleared)));
        let band = p.band(&rule()).unwrap();
        assert!(
            band.high < 200.0,
            "bad runs never entered the baseline: {band:?}"
        );
    }

    #[test]
    fn one_bad_run_in_a_row_is_noise_and_better_is_never_an_alert() {
        let mut p = PairAlert::new();
        let j = feed(&mut p, &[100.0; 6]);
        assert!(j.iter().all(|j| !j.bad));
        for _ in 0..5 {
            let j = feed(&mut p, &[400.0, 100.0, 100.0]);
            assert!(j.iter().all(|j| !j.raised));
        }
        let j = feed(&mut p, &[1.0, 1.0, 1.0, 1.0]);
        assert!(j.iter().all(|j| !j.bad), "faster is not worse");
        let mut stream = PairAlert::new();
        let f = Figure::named("bits_per_second");
        for v in [1e9; 6] {
            stream.observe(Some(v), &f, &rule());
        }
        assert!(stream.observe(Some(0.5e9), &f, &rule()).bad);
        assert!(!stream.observe(Some(2e9), &f, &rule()).bad);
    }

    #[test]
    fn the_band_widens_with_the_spread_and_failures_count_as_bad() {
        let mut p = PairAlert::new();
        feed(&mut p, &[100.0, 160.0, 60.0, 130.0, 70.0, 140.0, 80.0]);
        let f = Figure::named("latency_p50_us");
        let band = p.band(&rule()).unwrap();
        assert!(band.high > 120.0 * 1.5, "{band:?}");
        assert!(!p.observe(Some(190.0), &f, &rule()).bad);
        let mut q = PairAlert::new();
        assert!(
            !q.observe(None, &f, &rule()).bad,
            "no baseline yet: nothing to judge"
        );
        feed(&mut q, &[100.0; 5]);
        assert!(q.observe(None, &f, &rule()).bad);
    }
}
