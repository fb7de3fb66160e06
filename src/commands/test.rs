//! Running one test: [`run_args`] is what `stream`, `rr`, `crr`, `udp` and `file` do; [`run`]
//! runs one plan, once or `--iterations` times, on a [`Testbed`].

use super::output::{self, Format};
use crate::cli::common::{CommonArgs, StoreArgs};
use crate::cli::test_args::TestArgs;
use crate::cli::tls::TlsArgs;
use crate::method::iterate::{self, now_unix_s, Rule, Slot};
use crate::method::Recorder;
use crate::testbed::Testbed;
use crate::Failure;
use fathom_proto::plan::TestPlan;
use fathom_report::series::{Series, SERIES_SCHEMA_VERSION};

/// `fathom stream|rr|crr|udp|file`: validates the test's options, runs it and prints its report.
pub fn run_args(t: &TestArgs, argv: &[String]) -> Result<(), Failure> {
    if let TestArgs::File(a) = t {
        return super::file::run(a, argv);
    }
    let plan = t.plan()?;
    check_ktls(t)?;
    if t.tls().is_some_and(|tls| tls.compare_clear) {
        super::doctor::refuse_advise(t.common(), "--compare-clear")?;
        return super::compare_clear::run(t.common(), plan, argv);
    }
    run(t.common(), plan, argv)
}

/// With `--ktls`: whether this host's kernel can take the test's TLS sessions.
pub fn check_ktls(t: &TestArgs) -> Result<(), Failure> {
    t.tls()
        .map_or(Ok(()), TlsArgs::check_ktls)
        .map_err(|e| Failure::Runtime(e.to_string()))
}

/// Runs `plan` as the shared options say (once, or `--iterations` times), stores and prints it.
/// A single run prints its interval lines as they close (unless `--quiet`, `--json` or `--csv`:
/// then stdout holds only the document), then the rest of the table.
/// `args` are the command's arguments as typed, kept with the stored run.
pub fn run(c: &CommonArgs, plan: TestPlan, args: &[String]) -> Result<(), Failure> {
    run_on(Testbed::new(c, plan.socket.ipv6)?, c, plan, args)
}

/// As [`run`], on the agents of `bed`.
pub fn run_on(
    mut bed: Testbed,
    c: &CommonArgs,
    plan: TestPlan,
    args: &[String],
) -> Result<(), Failure> {
    let format = Format::of(c.json, c.csv);
    let check = super::doctor_verify::runs(c)?;
    if let Some((max, min)) = c.iterations.filter(|_| check.is_none()) {
        super::doctor::refuse_advise(c, "--iterations")?;
        let rule = Rule {
            max,
            min,
            confidence: c.confidence,
        };
        return iterations(&bed, plan, rule, &c.store, args, format);
    }
    let live = format == Format::Table && !c.quiet;
    if live {
        bed.print_intervals(c.per_host);
    }
    let mut report = bed.run(plan)?;
    if c.advise {
        super::doctor::advise(&mut report);
    }
    if let Some(runs) = check {
        super::doctor_verify::check(&mut report, runs, args)?;
    }
    Recorder::open(&c.store, args).save(&report, args, None);
    if live {
        output::write_stdout(&fathom_report::table::rest(&report));
    } else {
        output::print(&report, format);
    }
    super::doctor::print_advice(&report, format);
    output::exit_status(&report, format)
}

/// `fathom stream|rr|crr --iterations`: one point, stored as a series, printed as one.
fn iterations(
    bed: &Testbed,
    plan: TestPlan,
    rule: Rule,
    store: &StoreArgs,
    args: &[String],
    format: Format,
) -> Result<(), Failure> {
    let rec = Recorder::open(store, args);
    let kind = plan.kind.name().to_string();
    let mut s = Series {
        schema_version: SERIES_SCHEMA_VERSION,
        document: "series".into(),
        fathom_version: env!("CARGO_PKG_VERSION").into(),
        kind: kind.clone(),
        args: args.to_vec(),
        command: args.to_vec(),
        iterations: rule.max,
        min_iterations: rule.min,
        confidence: rule.confidence,
        primary_metric: plan.kind.descriptor().primary_metric.into(),
        started_unix_s: now_unix_s(),
        ..Series::default()
    };
    let id = rec.create_series(&s, "")?;
    s.id = id.map(|i| format!("s{i}"));
    let slot = id.map(|series_id| Slot {
        series_id,
        point: 0,
    });
    let point = iterate::run_point(bed, &plan, &rule, &rec, args, slot, Vec::new());
    let failed = point.error.clone();
    s.points.push(point);
    s.complete = true;
    rec.update_series(id, &s);
    if let (Some(path), Some(i)) = (rec.path(), id) {
        eprintln!("fathom: stored as series s{i} in {}", path.display());
    }
    output::print(&s, format);
    match failed {
        Some(e) if format == Format::Table => Err(Failure::Runtime(e)),
        Some(_) => Err(Failure::Reported),
        None => Ok(()),
    }
}
