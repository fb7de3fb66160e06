//! Statistics over repeated measurements: Student-t confidence intervals (netperf's -i/-I), the
//! order statistics always shown beside them, and Welch's t-test for comparing two samples.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// What the user asked of the interval: `--confidence 99,5%` is level 0.99, width 0.05 (the whole
/// interval within 5% of the mean, ±2.5%).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct Confidence {
    /// Confidence level, 0..1.
    pub level: f64,
    /// Widest acceptable interval as a share of the mean, 0..1.
    pub width: f64,
}

impl Default for Confidence {
    fn default() -> Self {
        Self {
            level: 0.95,
            width: 0.05,
        }
    }
}

/// One metric over n repetitions.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Stat {
    /// Repetitions.
    pub n: u32,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one value).
    pub stddev: f64,
    /// Lower end of the confidence interval (the mean itself for one value).
    pub ci_low: f64,
    /// Upper end of the confidence interval.
    pub ci_high: f64,
    /// The interval's confidence level, 0..1.
    pub ci_level: f64,
    /// Smallest value.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Largest value.
    pub max: f64,
}

impl Stat {
    /// The interval's full width as a share of the mean (0 when the mean is 0).
    pub fn relative_width(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            (self.ci_high - self.ci_low) / self.mean.abs()
        }
    }

    /// The interval as drawn, scaled by `factor`: its low end clamped at zero when no value was
    /// negative (throughput, rates and latencies never are; two runs give a wide interval).
    pub fn bounds(&self, factor: f64) -> (f64, f64) {
        let low = match self.min >= 0.0 {
            true => self.ci_low.max(0.0),
            false => self.ci_low,
        };
        (low * factor, self.ci_high * factor)
    }

    /// True when at least two values were taken and the interval is as narrow as `c` asks.
    pub fn narrow_enough(&self, c: &Confidence) -> bool {
        self.n >= 2 && self.relative_width() <= c.width
    }
}

/// Two-sided Student-t quantile for `level` with `df` degrees of freedom (e.g. 0.95, 4 → 2.776).
pub fn t_quantile(level: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(0.5 + level / 2.0),
        Err(_) => f64::NAN,
    }
}

/// Mean, standard deviation, Student-t interval at `level`, min, median and max of `values`
/// (non-finite values are left out). An empty input gives n = 0 and zeros.
pub fn describe(values: &[f64], level: f64) -> Stat {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Stat {
            ci_level: level,
            ..Stat::default()
        };
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    let stddev = sample_stddev(&v, mean);
    let half = if n > 1 {
        t_quantile(level, (n - 1) as f64) * stddev / (n as f64).sqrt()
    } else {
        0.0
    };
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Stat {
        n: n as u32,
        mean,
        stddev,
        ci_low: mean - half,
        ci_high: mean + half,
        ci_level: level,
        min: v[0],
        median,
        max: v[n - 1],
    }
}

fn sample_stddev(v: &[f64], mean: f64) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let ss: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
    (ss / (v.len() - 1) as f64).sqrt()
}

/// Welch's unequal-variance t-test of two samples.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Welch {
    /// Mean of the second sample minus the first's.
    pub difference: f64,
    /// The difference as a share of the first mean (0 when that is 0).
    pub relative: f64,
    /// t statistic.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of `a` against `b`; `None` when either has fewer than two values or both have
/// no spread (the test then cannot say anything).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    welch_counted(a, a.len() as f64, b, b.len() as f64)
}

/// Welch's t-test of two time series, such as one run's successive intervals. Neighbouring
/// intervals of one run are correlated (a slow connection stays slow for a while), so they carry
/// fewer independent samples than their count: each side counts as its effective size under a
/// first-order autoregressive model, n (1 − r) / (1 + r) with r its lag-1 autocorrelation
/// (negative r is taken as 0, never as more information). `None` when either side is worth
/// fewer than two samples.
pub fn welch_series(a: &[f64], b: &[f64]) -> Option<Welch> {
    welch_counted(a, effective_n(a), b, effective_n(b))
}

/// How many independent samples the series `v` is worth (see [`welch_series`]).
pub fn effective_n(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    if v.len() < 3 {
        return n;
    }
    let m = mean(v);
    let var: f64 = v.iter().map(|x| (x - m).powi(2)).sum();
    if var == 0.0 {
        return n;
    }
    let lag: f64 = v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    let r = (lag / var).clamp(0.0, 0.99);
    n * (1.0 - r) / (1.0 + r)
}

/// Welch's test with `na` and `nb` as the samples' sizes (their counts, or less).
fn welch_counted(a: &[f64], na: f64, b: &[f64], nb: f64) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 || na < 2.0 || nb < 2.0 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let (va, vb) = (
        sample_stddev(a, ma).powi(2) / na,
        sample_stddev(b, mb).powi(2) / nb,
    );
    if va + vb == 0.0 {
        return None;
    }
    let t = (mb - ma) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va.powi(2) / (na - 1.0) + vb.powi(2) / (nb - 1.0));
    let p = StudentsT::new(0.0, 1.0, df)
        .map(|d| 2.0 * (1.0 - d.cdf(t.abs())))
        .ok()?;
    Some(Welch {
        difference: mb - ma,
        relative: if ma == 0.0 { 0.0 } else { (mb - ma) / ma },
        t,
        df,
        p,
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        assert!((t_quantile(0.95, 4.0) - 2.776).abs() < 1e-3);
        assert!((t_quantile(0.99, 9.0) - 3.250).abs() < 1e-3);
        assert!((t_quantile(0.95, 1.0) - 12.706).abs() < 1e-3);
    }

    #[test]
    fn describe_gives_the_textbook_interval() {
        // mean 10, s = sqrt(2.5) = 1.5811, n = 5, t(0.95, 4) = 2.7764: half = 1.9632
        let s = describe(&[8.0, 9.0, 10.0, 11.0, 12.0], 0.95);
        assert_eq!(
            (s.n, s.mean, s.median, s.min, s.max),
            (5, 10.0, 10.0, 8.0, 12.0)
        );
        assert!((s.stddev - 1.581_139).abs() < 1e-6);
        assert!((s.ci_high - 11.963_2).abs() < 1e-3, "{s:?}");
        assert!((s.ci_low - 8.036_8).abs() < 1e-3);
        assert!(!s.narrow_enough(&Confidence {
            level: 0.95,
            width: 0.05
        }));
        assert!(s.narrow_enough(&Confidence {
            level: 0.95,
            width: 0.5
        }));
    }

    #[test]
    fn one_value_has_no_interval_and_even_counts_take_the_middle_pair() {
        let one = describe(&[3.0], 0.99);
        assert_eq!((one.ci_low, one.ci_high, one.stddev), (3.0, 3.0, 0.0));
        assert!(!one.narrow_enough(&Confidence::default()));
        assert_eq!(describe(&[4.0, 1.0, 3.0, 2.0], 0.95).median, 2.5);
        assert_eq!(describe(&[f64::NAN], 0.95).n, 0);
    }

    #[test]
    fn welch_matches_a_known_case() {
        // Two samples with means 20 and 22, variances 2.5 each, n = 5: t = 2 / sqrt(1) = 2, df = 8.
        let w = welch(
            &[18.0, 19.0, 20.0, 21.0, 22.0],
            &[20.0, 21.0, 22.0, 23.0, 24.0],
        )
        .unwrap();
        assert!((w.t - 2.0).abs() < 1e-9 && (w.df - 8.0).abs() < 1e-9);
        assert!((w.p - 0.0805).abs() < 1e-3, "{w:?}");
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        assert!(welch(&[1.0, 1.0], &[1.0, 1.0]).is_none());
    }

    #[test]
    fn correlated_intervals_count_as_fewer_samples() {
        let independent = [10.0, 12.0, 9.0, 11.0, 10.5, 9.5, 11.5, 10.0];
        assert_eq!(effective_n(&independent), 8.0);
        // Slow swings: each interval is close to the last (r = 0.43), so 16 intervals are
        // worth about 6.4 independent samples.
        let a = [
            10.0, 10.1, 10.3, 10.2, 10.9, 11.0, 10.8, 11.1, 10.2, 10.1, 10.3, 10.0, 11.0, 10.9,
            11.1, 10.8,
        ];
        let b: Vec<f64> = a.iter().cycle().skip(4).take(16).map(|x| x + 0.3).collect();
        assert!(
            (effective_n(&a) - 6.374).abs() < 1e-3,
            "{}",
            effective_n(&a)
        );
        let plain = welch(&a, &b).unwrap();
        let series = welch_series(&a, &b).unwrap();
        assert!(series.p > plain.p, "{} <= {}", series.p, plain.p);
        assert_eq!(series.difference, plain.difference);
        // Worth fewer than two samples: no verdict at all.
        let drift: Vec<f64> = (0..8).map(f64::from).collect();
        assert!(effective_n(&drift) < 2.0);
        assert!(welch_series(&drift, &b).is_none());
    }
}
