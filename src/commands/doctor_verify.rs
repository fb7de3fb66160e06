//! `fathom doctor --run N --verify`: the stored test re-run with the fathom-level change its top
//! finding names (a larger `--buffer`, `--nodelay`, a cheaper `--cipher`, ...) and without it,
//! alternately, `--iterations` times each, and the ratio of its main figure after to before
//! with its confidence interval. A system change (a sysctl) is printed and never applied.

use super::doctor_apply as apply;
use super::doctor_remote::{run_args, test_args};
use crate::Failure;
use fathom_advisor::verify::{ratio_ci, step, with_option, RatioCi, Step};
use fathom_report::model::{Advice, TestEcho};
use serde::Serialize;
use std::fmt::Write;

/// The confidence level of the ratio's interval.
const LEVEL: f64 = 0.95;

/// What `--verify` did, as `fathom doctor --json` shows it under `verify`.
#[derive(Serialize, Debug, Default)]
pub struct Verified {
    /// The finding checked (the top one), if any.
    pub finding: Option<String>,
    /// "rerun" (the option was measured), "applied" (`--apply`: the sysctl was set in the lab's
    /// namespaces and measured), "system" (a system change, printed only) or "nothing" (no
    /// change one re-run can check).
    pub outcome: &'static str,
    /// The change: the fathom option and value, or the system command.
    pub change: String,
    /// The figure compared (the kind's main one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `--apply`: the lab namespaces the sysctl was set in (and set back in).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub applied_in: Vec<String>,
    /// The test as stored, as re-run.
    pub before_args: Vec<String>,
    /// The test with the change, as re-run.
    pub after_args: Vec<String>,
    /// The figure of each run without the change, in order.
    pub before: Vec<f64>,
    /// The figure of each run with it, in order.
    pub after: Vec<f64>,
    /// What the last run with the change really ran with: its report's test echo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_test: Option<TestEcho>,
    /// After / before, the means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// The ratio's confidence interval, low end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// Its high end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// Its level, 0..1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_level: Option<f64>,
}

/// Verifies the top finding of `advice` about the stored test `args`, `iterations` runs each;
/// with `apply`, a per-namespace sysctl it names is set in the test's lab namespaces for the
/// runs with the change (and set back after).
pub fn verify(
    args: &[String],
    advice: &[Advice],
    iterations: u32,
    apply: bool,
) -> Result<Verified, Failure> {
    let Some(top) = advice.first() else {
        return Ok(Verified {
            outcome: "nothing",
            change: "the advisor found nothing that limited the run".into(),
            ..Verified::default()
        });
    };
    let mut v = Verified {
        finding: Some(top.id.clone()),
        before_args: args.to_vec(),
        ..Verified::default()
    };
    match step(top) {
        Step::Option { flag, value } => {
            v.after_args = with_option(args, &flag, value.as_deref());
            v.change = [Some(flag), value]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            v.outcome = "rerun";
            measure(&mut v, iterations, &mut |_| Ok(()))?;
        }
        Step::System(command) => {
            v.change = command;
            v.outcome = "system";
            if apply {
                applied(&mut v, iterations)?;
            }
        }
        Step::Nothing => {
            v.outcome = "nothing";
            v.change = top.change.clone();
        }
    }
    Ok(v)
}

/// `--apply`: the system change, a per-namespace sysctl, set in the lab namespaces of the test's
/// hosts for the runs after (the old values for the runs before, and at the end).
fn applied(v: &mut Verified, iterations: u32) -> Result<(), Failure> {
    let Some(sysctl) = apply::parse(&v.change) else {
        return Err(Failure::Usage(format!(
            "--apply sets only a sysctl each network namespace has its own of ({}); run this yourself: {}",
            apply::PER_NAMESPACE.join(", "),
            v.change
        )));
    };
    v.applied_in = apply::namespaces(&v.before_args)?;
    let set = apply::Applied::prepare(&sysctl, &v.applied_in)?;
    v.after_args = v.before_args.clone();
    v.outcome = "applied";
    let value = sysctl.value.as_str();
    measure(v, iterations, &mut |after| set.set(after.then_some(value)))
}

/// Runs the test before and after the change, alternately (`set(after)` called before each
/// run), and fills the figures and ratio.
fn measure(
    v: &mut Verified,
    iterations: u32,
    set: &mut dyn FnMut(bool) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let plan = test_args(&v.before_args)?
        .plan()
        .map_err(|e| Failure::Usage(format!("--verify: the stored test: {e}")))?;
    let metric = plan.kind.descriptor().primary_metric;
    let figure = |args: &[String]| -> Result<(f64, TestEcho), Failure> {
        let r = run_args(args)?;
        let x = crate::method::iterate::value_of(&r, metric)
            .ok_or_else(|| Failure::Runtime(format!("--verify: the run has no {metric}")))?;
        Ok((x, r.test))
    };
    for _ in 0..iterations {
        set(false)?;
        v.before.push(figure(&v.before_args)?.0);
        set(true)?;
        let (x, test) = figure(&v.after_args)?;
        v.after.push(x);
        v.after_test = Some(test);
    }
    v.metric = Some(metric.to_string());
    if let Some(RatioCi {
        ratio,
        low,
        high,
        level,
    }) = ratio_ci(&v.before, &v.after, LEVEL)
    {
        (v.ratio, v.ci_low, v.ci_high, v.ci_level) =
            (Some(ratio), Some(low), Some(high), Some(level));
    }
    Ok(())
}

/// The terminal lines for what `--verify` did.
pub fn list(v: &Verified) -> String {
    let mut s = String::from("\nverify: ");
    let what = v.finding.as_deref().unwrap_or("no finding");
    match v.outcome {
        "rerun" | "applied" => {
            let metric = v.metric.as_deref().unwrap_or("");
            let show = |vals: &[f64]| {
                vals.iter()
                    .map(|x| crate::method::iterate::show(metric, *x))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = match v.applied_in.is_empty() {
                true => writeln!(
                    s,
                    "{what}: re-ran the test with {} ({} run(s) each, alternating)",
                    v.change,
                    v.before.len()
                ),
                false => writeln!(
                    s,
                    "{what}: applied `{}` in {} for the runs after, set back after ({} run(s) each, alternating)",
                    v.change,
                    v.applied_in.join(", "),
                    v.before.len()
                ),
            };
            let _ = writeln!(
                s,
                "  before: {}   fathom {}",
                show(&v.before),
                v.before_args.join(" ")
            );
            let _ = writeln!(
                s,
                "  after:  {}   fathom {}",
                show(&v.after),
                v.after_args.join(" ")
            );
            match (v.ratio, v.ci_low, v.ci_high) {
                (Some(r), Some(lo), Some(hi)) => {
                    let _ = writeln!(s, "  {metric} after / before: {r:.2} ({:.0}% confidence interval {lo:.2} to {hi:.2})", LEVEL * 100.0);
                }
                _ => {
                    let _ = writeln!(
                        s,
                        "  no ratio: it takes at least 2 runs each (--iterations 2)"
                    );
                }
            }
        }
        "system" => {
            let _ = writeln!(s, "{what} names a system change, not applied (run it yourself, or add --apply when the run was in a lab):\n  {}", v.change);
        }
        _ => {
            let _ = writeln!(
                s,
                "{what}: nothing a re-run with a fathom option can check: {}",
                v.change
            );
        }
    }
    s
}
