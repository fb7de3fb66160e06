//! Repeated iterations of one test (netperf's -i/-I): run until the most iterations, or once
//! the confidence interval of the main figure is narrow enough after the fewest; every run is
//! stored, and the point summarizes them (mean, Student-t interval, min, median, max).

use super::Recorder;
use crate::testbed::Testbed;
use crate::Failure;
use fathom_proto::plan::TestPlan;
use fathom_report::series::{self, Point};
use fathom_report::stats::{describe, Confidence};
use fathom_report::table::rate;
use fathom_store::SeriesSlot;

/// When to stop iterating.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// Most iterations.
    pub max: u32,
    /// Fewest before the confidence rule may stop early.
    pub min: u32,
    /// Stop once the interval is this narrow.
    pub confidence: Option<Confidence>,
}

impl Rule {
    /// A single run.
    pub const ONCE: Rule = Rule {
        max: 1,
        min: 1,
        confidence: None,
    };

    /// The confidence level intervals are given at (95% unless the rule names one).
    pub fn level(&self) -> f64 {
        self.confidence.map_or(0.95, |c| c.level)
    }
}

/// Where a point's runs go in the store.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// The series.
    pub series_id: i64,
    /// The point's index.
    pub point: u32,
}

/// Runs `plan` as `rule` says and summarizes the runs into a point (params left empty). A test
/// that fails ends the point with its error; what was measured before stays. `earlier` are
/// runs already stored for this point (an interrupted sweep resuming): they count as its first
/// iterations.
pub fn run_point(
    bed: &Testbed,
    plan: &TestPlan,
    rule: &Rule,
    rec: &Recorder,
    args: &[String],
    slot: Option<Slot>,
    earlier: Vec<(i64, fathom_report::Report)>,
) -> Point {
    let metric = plan.kind.descriptor().primary_metric;
    let mut point = Point::default();
    for (id, r) in &earlier {
        point.runs.push(*id);
        point.values.extend(value_of(r, metric));
    }
    let mut reports = earlier.into_iter().map(|(_, r)| r).collect::<Vec<_>>();
    let kept = reports.len() as u32;
    if kept > 0 {
        eprintln!("  kept {kept} finished iteration(s) of the interrupted point");
    }
    for i in kept..rule.max {
        if i >= rule.min
            && rule
                .confidence
                .is_some_and(|c| describe(&point.values, rule.level()).narrow_enough(&c))
        {
            break;
        }
        let report = match bed.run(plan.clone()) {
            Ok(r) => r,
            Err(Failure::Runtime(e) | Failure::Usage(e)) => {
                point.error = Some(e);
                break;
            }
            Err(Failure::Reported) => break,
        };
        let slot = slot.map(|s| SeriesSlot {
            series_id: s.series_id,
            point: s.point,
            iteration: i,
        });
        if let Some(id) = rec.save(&report, args, slot) {
            point.runs.push(id);
        }
        let value = value_of(&report, metric);
        let failed = report.error.clone();
        if failed.is_none() {
            point.values.extend(value);
        }
        reports.push(report);
        if rule.max > 1 {
            eprintln!(
                "  iteration {}/{}: {}  ({})",
                i + 1,
                rule.max,
                show(metric, value.unwrap_or(0.0)),
                so_far(metric, &describe(&point.values, rule.level()), rule, i + 1)
            );
        }
        if let Some(e) = failed {
            point.error = Some(e);
            break;
        }
        if bed.interrupted() && i + 1 < rule.max {
            point.error = Some("interrupted".into());
            break;
        }
    }
    let ok: Vec<&fathom_report::Report> = reports.iter().filter(|r| r.error.is_none()).collect();
    point.metrics = series::summarize(&ok, rule.level());
    point.target_met = target_met(&point, rule);
    point
}

/// With a `--confidence` target, whether the point's interval met it; says so on stderr when
/// it did not and the point did not fail.
fn target_met(point: &Point, rule: &Rule) -> Option<bool> {
    rule.confidence.map(|c| {
        let stat = describe(&point.values, rule.level());
        let met = stat.narrow_enough(&c);
        if !met && point.error.is_none() {
            eprintln!(
                "  target missed: ±{:.1}% after {} iterations, the target was ±{:.1}% at {:.0}%; \
                 allow more with --iterations MAX, or ask for a wider --confidence",
                stat.relative_width() * 50.0,
                stat.n,
                c.width * 50.0,
                c.level * 100.0
            );
        }
        met
    })
}

/// The mean after `done` runs and what its interval is (`mean so far 9.41 Gbit/s, its 95%
/// confidence interval ±1.2%`); with a `--confidence` target, whether the interval met it and
/// so stops the iterations, or the run goes on. One value has no interval.
fn so_far(metric: &str, stat: &fathom_report::stats::Stat, rule: &Rule, done: u32) -> String {
    let mean = format!("mean so far {}", show(metric, stat.mean));
    if stat.n < 2 {
        return format!("{mean}, no interval from one run");
    }
    let (width, level) = (stat.relative_width() * 50.0, stat.ci_level * 100.0);
    let Some(c) = &rule.confidence else {
        return format!("{mean}, its {level:.0}% confidence interval ±{width:.1}%");
    };
    let (target, met) = (c.width * 50.0, stat.narrow_enough(c));
    let places = if !met && format!("{width:.1}") == format!("{target:.1}") {
        2
    } else {
        1
    };
    let verdict = match (met, done >= rule.min, done < rule.max) {
        (true, true, true) => "within the target: stopping".to_string(),
        (true, false, _) => format!("within the target; at least {} runs first", rule.min),
        (false, _, true) => "wider than the target: going on".to_string(),
        (_, _, false) => "the last run".to_string(),
    };
    format!(
        "{mean}, its {level:.0}% confidence interval ±{width:.places$}% against the target \
         ±{target:.1}%: {verdict}"
    )
}

/// A run's value of `metric`.
pub fn value_of(r: &fathom_report::Report, metric: &str) -> Option<f64> {
    series::metrics(r)
        .into_iter()
        .find(|(n, _)| *n == metric)
        .map(|(_, v)| v)
}

/// A metric's value for a progress line.
pub fn show(metric: &str, v: f64) -> String {
    if metric.ends_with("bits_per_second") {
        rate(v)
    } else if metric.ends_with("per_second") {
        format!("{v:.0}/s")
    } else {
        format!("{v:.4}")
    }
}

/// Now, Unix seconds.
pub fn now_unix_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_report::stats::{describe, Confidence};

    fn rule(max: u32, min: u32, width: f64) -> Rule {
        Rule {
            max,
            min,
            confidence: Some(Confidence { level: 0.95, width }),
        }
    }

    #[test]
    fn the_progress_line_says_what_its_interval_is_and_whether_it_stopped_the_run() {
        let m = "transactions_per_second";
        let st = describe(&[100.0, 102.0, 101.0], 0.95);
        let half = st.relative_width() * 50.0;
        let plain = so_far(
            m,
            &st,
            &Rule {
                confidence: None,
                ..rule(5, 3, 0.0)
            },
            3,
        );
        assert_eq!(
            plain,
            format!("mean so far 101/s, its 95% confidence interval ±{half:.1}%")
        );
        let stops = so_far(m, &st, &rule(5, 3, 0.5), 3);
        assert!(stops.ends_with(": within the target: stopping"), "{stops}");
        let goes_on = so_far(m, &st, &rule(5, 3, st.relative_width() * 0.999), 3);
        assert!(
            goes_on.ends_with(": wider than the target: going on"),
            "{goes_on}"
        );
        let shown: Vec<&str> = goes_on.matches('±').collect();
        assert_eq!(shown.len(), 2);
        assert!(
            !goes_on.contains(&format!("±{half:.1}% against the target ±{half:.1}%")),
            "an interval that did not stop the run never looks like the target: {goes_on}"
        );
    }
}
