//! `fathom compare A B`: two stored runs or series loaded and compared (the comparison and its
//! significance tests are `fathom_report::comparison`), printed as a table or JSON.

use super::output::print_json_or_table;
use super::show::open_existing;
use crate::cli::method::CompareArgs;
use crate::Failure;
use fathom_report::comparison::Comparison;
use fathom_report::model::Report;
use fathom_report::series::Series;
use fathom_report::settings;
use fathom_report::table_series::params_text;
use fathom_store::{Ref, Store};

/// Compares two stored results.
pub fn run(a: &CompareArgs) -> Result<(), Failure> {
    if !(50.0..100.0).contains(&a.level) {
        return Err(Failure::Usage(format!(
            "--level: {} is not a percentage between 50 and 100",
            a.level
        )));
    }
    let ra = Ref::parse(&a.a).map_err(|e| Failure::Usage(e.to_string()))?;
    let rb = Ref::parse(&a.b).map_err(|e| Failure::Usage(e.to_string()))?;
    let store = open_existing(&a.read.store)?;
    let level = a.level / 100.0;
    let names = (a.a.as_str(), a.b.as_str());
    let c = match (ra, rb) {
        (Ref::Run(x), Ref::Run(y)) => {
            let (ra, rb) = (load(&store, x)?, load(&store, y)?);
            same_kind(names, &ra.test.kind, &rb.test.kind, "runs")?;
            Comparison::of_runs(names, &ra, &rb, level)
        }
        (Ref::Series(x), Ref::Series(y)) => {
            let (sa, sb) = (load_s(&store, x)?, load_s(&store, y)?);
            same_kind(names, &sa.kind, &sb.kind, "series")?;
            let c = Comparison::of_series(names, &sa, &sb, level);
            if c.rows.is_empty() {
                return Err(Failure::Runtime(format!(
                    "{} and {} share no points: {} has {}, {} has {}",
                    a.a,
                    a.b,
                    a.a,
                    points(&sa),
                    a.b,
                    points(&sb)
                )));
            }
            c
        }
        _ => {
            return Err(Failure::Usage(
                "compare two runs (41 42) or two series (s3 s4), not one of each".into(),
            ))
        }
    };
    if c.rows.is_empty() {
        return Err(Failure::Runtime(format!(
            "{} and {} have no figures in common to compare",
            a.a, a.b
        )));
    }
    if !c.differences.is_empty() {
        eprintln!(
            "fathom: warning: {} and {} were not set up alike ({}): a difference in figures may \
             come from these",
            a.a,
            a.b,
            settings::summary(&c.differences)
        );
    }
    print_json_or_table(&c, a.read.json);
    Ok(())
}

/// Refuses to compare results of different kinds (a stream's bits/s against an rr's
/// transactions/s means nothing): bad usage.
fn same_kind((a, b): (&str, &str), ka: &str, kb: &str, what: &str) -> Result<(), Failure> {
    if ka == kb {
        return Ok(());
    }
    Err(Failure::Usage(format!(
        "{what} {a} ({ka}) and {b} ({kb}) are of different kinds: compare results of the same kind"
    )))
}

/// A series' points as `buffer=64K; buffer=128K`.
fn points(s: &Series) -> String {
    let all: Vec<String> = s.points.iter().map(params_text).collect();
    if all.is_empty() {
        "no points".into()
    } else {
        all.join("; ")
    }
}

fn load(store: &Store, id: i64) -> Result<Report, Failure> {
    store
        .load_run(id)
        .map(|r| r.report)
        .map_err(|e| Failure::Runtime(e.to_string()))
}

fn load_s(store: &Store, id: i64) -> Result<Series, Failure> {
    store
        .load_series(id)
        .map_err(|e| Failure::Runtime(e.to_string()))
}
