//! `fathom compare A B`: two stored runs or series loaded and compared (the comparison and its
//! significance tests are `fathom_report::comparison`), printed as a table or JSON.

use super::output::print_json_or_table;
use super::show::open_existing;
use crate::cli::method::CompareArgs;
use crate::Failure;
use fathom_report::comparison::Comparison;
use fathom_report::model::Report;
use fathom_report::series::Series;
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
    let store = open_existing(&a.store)?;
    let level = a.level / 100.0;
    let names = (a.a.as_str(), a.b.as_str());
    let c = match (ra, rb) {
        (Ref::Run(x), Ref::Run(y)) => {
            Comparison::of_runs(names, &load(&store, x)?, &load(&store, y)?, level)
        }
        (Ref::Series(x), Ref::Series(y)) => {
            Comparison::of_series(names, &load_s(&store, x)?, &load_s(&store, y)?, level)
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
    print_json_or_table(&c, a.json);
    Ok(())
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
