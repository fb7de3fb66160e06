//! `fathom doctor --run N --verify`: the stored test re-run with the fathom-level change its top
//! finding names (a larger `--buffer`, `--nodelay`, a cheaper `--cipher`, ...) and without it,
//! alternately, `--iterations` times each, and the ratio of its main figure after to before
//! with its confidence interval. A system change (a sysctl) is printed and never applied.
//! A test's `--advise --verify-advice` does the same with the run it just made ([`check`]).

use super::argv::{run_args, test_args};
use super::doctor_apply as apply;
use crate::cli::common::CommonArgs;
use crate::Failure;
use fathom_advisor::verify::{ratio_ci, step, with_option, RatioCi, Step};
use fathom_report::model::{Advice, AdviceCheck, TestEcho};
use fathom_report::Report;
use std::fmt::Write;

/// The confidence level of the ratio's interval.
const LEVEL: f64 = 0.95;

/// What `--verify` did, as `fathom doctor --json` shows it under `verify` (and a test's
/// `--advise --verify-advice` under `advice_check`).
pub type Verified = AdviceCheck;

/// Runs of each, before and after, that `--verify-advice` takes.
const RUNS: std::ops::RangeInclusive<u32> = 2..=20;

/// `--advise --verify-advice` on a test command: how many runs of each it takes (`--iterations`
/// MAX, 3 by default), checked before the test runs; `None` without it.
pub fn runs(c: &CommonArgs) -> Result<Option<u32>, Failure> {
    if !c.verify_advice {
        return Ok(None);
    }
    if c.confidence.is_some() {
        return Err(Failure::Usage(
            "--confidence: --verify-advice runs a fixed number of runs each (--iterations N)"
                .into(),
        ));
    }
    match c.iterations {
        None => Ok(Some(3)),
        Some((max, _)) if RUNS.contains(&max) => Ok(Some(max)),
        Some((max, _)) => Err(Failure::Usage(format!(
            "--iterations: {max} runs of each; --verify-advice takes 2 to 20"
        ))),
    }
}

/// `--advise --verify-advice`: the top finding of `report` (already advised) checked by re-running
/// the test as typed (`argv`, after `fathom`), `runs` times with the change and without,
/// alternately; the result goes into the report's `advice_check`. A failed run is not checked.
pub fn check(report: &mut Report, runs: u32, argv: &[String]) -> Result<(), Failure> {
    if report.error.is_some() {
        return Ok(());
    }
    let advice = report.advice.clone().unwrap_or_default();
    let args = without_own_flags(argv);
    eprintln!("fathom: --verify-advice: re-running the test {runs} times with the top finding's change and {runs} times without");
    report.advice_check = Some(verify(&args, &advice, runs, false)?);
    Ok(())
}

/// `argv` without the options that ask for the check (`--advise`, `--verify-advice`,
/// `--iterations N`): the test as each re-run runs it.
fn without_own_flags(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut skip_value = false;
    for a in argv {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        match a.as_str() {
            "--advise" | "--verify-advice" => {}
            "--iterations" => skip_value = true,
            _ if a.starts_with("--iterations=") => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// `args` as a re-run takes them: a file copy replaces the file the run before it wrote, so
/// it gets `--force`.
fn rerunnable(args: &[String]) -> Vec<String> {
    let mut v = args.to_vec();
    if args.first().is_some_and(|a| a == "file") && !args.iter().any(|a| a == "--force") {
        v.push("--force".into());
    }
    v
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
            outcome: "nothing".into(),
            change: "the advisor found nothing that limited the run".into(),
            ..Verified::default()
        });
    };
    let mut v = Verified {
        finding: Some(top.id.clone()),
        before_args: rerunnable(args),
        ..Verified::default()
    };
    match step(top) {
        Step::Option { flag, value } => {
            v.after_args = with_option(&v.before_args, &flag, value.as_deref());
            v.change = [Some(flag), value]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            v.outcome = "rerun".into();
            measure(&mut v, iterations, &mut |_| Ok(()))?;
        }
        Step::System(command) => {
            v.change = command;
            v.outcome = "system".into();
            if apply {
                applied(&mut v, iterations)?;
            }
        }
        Step::Nothing => {
            v.outcome = "nothing".into();
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
    v.outcome = "applied".into();
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
    match v.outcome.as_str() {
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
