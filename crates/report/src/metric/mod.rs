//! The metric registry: every figure of a run that a series summarizes, a plot draws, a
//! comparison compares and a study charts, each with its name (as series JSON and the command
//! line write it), its label and unit (what a chart's axis says) and where it is read (a run's
//! report, one interval). The metrics every run has are declared in `common.rs`; a kind's own
//! in its section's folder (`sections/<kind>/metrics.rs`), which its section contributes
//! (`Section::metrics`), so a kind adds its figures without touching this module.

mod common;

pub use crate::sections::file::metrics as file;
pub use crate::sections::profile::metrics as profile;
pub use crate::sections::rr::metrics as rr;
pub use crate::sections::udp::metrics as udp;
pub use common::{
    emulator_cpu_s, forwarder_window_cpu_s, Metric, AGGREGATE_BITS_PER_SECOND, BITS_PER_SECOND,
    BUSIEST_CPU_LOCAL_PERCENT, CPU_LOCAL_PERCENT, CPU_REMOTE_PERCENT, CPU_S_PER_GB, CWND,
    DATA_SEGS_PER_ACK, EMULATOR_CPU_PERCENT, PACKETS, RETRANSMITS, RTT_US, SECONDS,
    SENDER_BITS_PER_SECOND, SERVICE_DEMAND_LOCAL, SERVICE_DEMAND_REMOTE, WINDOW_BYTES,
};

use crate::model::{Interval, Report};
use crate::sections;

/// Every metric: the ones every run has, then each kind's.
pub fn all() -> impl Iterator<Item = &'static Metric> {
    common::COMMON
        .iter()
        .chain(sections::all().into_iter().flat_map(|s| s.metrics()))
}

/// The metric called `name`.
pub fn find(name: &str) -> Option<&'static Metric> {
    all().find(|m| m.name == name)
}

/// The figures of run `r` that a series summarizes, by name: the ones every run has, then its
/// kind's, in the registry's order. A figure the run lacks (the latency of a stream, the CPU
/// of a window too short to measure it) is left out, and so is one that is not finite.
pub fn of_run(r: &Report) -> Vec<(&'static str, f64)> {
    common::COMMON
        .iter()
        .chain(sections::of_summary(r).metrics())
        .filter_map(|m| Some((m.name, (m.run?)(r)?)))
        .filter(|(_, v)| v.is_finite())
        .collect()
}

/// The metrics intervals have, in the registry's order.
pub fn of_intervals() -> impl Iterator<Item = &'static Metric> {
    all().filter(|m| m.interval.is_some())
}

/// The figure called `name` of interval `iv`, if intervals have it and `iv` does.
pub fn of_interval(iv: &Interval, name: &str) -> Option<f64> {
    (find(name)?.interval?)(iv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake;
    use fathom_proto::plan::KindId;

    #[test]
    fn every_metric_has_one_name_and_a_label() {
        let names: Vec<&str> = all().map(|m| m.name).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} is registered twice");
        }
        assert!(all().all(|m| !m.label.is_empty()));
        assert!(all().all(|m| m.run.is_some() || m.interval.is_some() || m.name == "packets"));
    }

    #[test]
    fn every_figure_a_run_summarizes_is_registered_with_its_kind() {
        let runs = [
            fake::run_data(1, false),
            fake::kinds::request_response(KindId::Rr, 2),
            fake::kinds::udp(),
            fake::kinds::file(),
            fake::profile::profile(),
        ];
        for run in &runs {
            let r = crate::build(run);
            let figures = of_run(&r);
            assert!(figures.len() > 10, "{}: {figures:?}", r.test.kind);
            for (name, _) in figures {
                assert!(find(name).is_some(), "{name} is not in the registry");
            }
        }
        let rr = crate::build(&fake::kinds::request_response(KindId::Rr, 2));
        assert!(of_run(&rr)
            .iter()
            .any(|(n, _)| *n == rr::TRANSACTIONS_PER_SECOND.name));
        let profile = crate::build(&fake::profile::profile());
        let label = find("iterations_per_second").map(|m| m.label);
        assert_eq!(label, Some("Iterations/s"));
        assert!(of_run(&profile)
            .iter()
            .any(|(n, _)| *n == profile::ITERATIONS_PER_SECOND.name));
    }

    #[test]
    fn an_interval_has_the_figures_its_kind_registers() {
        let r = crate::build(&fake::kinds::request_response(KindId::Rr, 2));
        let iv = &r.intervals[0];
        assert_eq!(
            of_interval(iv, "transactions_per_second"),
            Some(iv.rr().unwrap().transactions_per_second)
        );
        assert_eq!(of_interval(iv, "cwnd"), Some(iv.cwnd as f64));
        assert_eq!(of_interval(iv, "cpu_s_per_gb"), None);
        assert_eq!(of_interval(iv, "no_such_metric"), None);
    }
}
