//! `fathom runs`: the stored runs or series, newest first.

use super::output::print_json_or_table;
use crate::cli::method::RunsArgs;
use crate::Failure;
use fathom_report::listing::{RunListing, SeriesListing};

/// Lists stored runs (or series).
pub fn run(a: &RunsArgs) -> Result<(), Failure> {
    let store = super::show::open_existing(&a.read.store)?;
    let path = store.path().to_path_buf();
    let failed = |e: fathom_store::StoreError| Failure::Runtime(e.to_string());
    if a.series {
        let rows = store.list_series(a.limit).map_err(failed)?;
        let listing = SeriesListing {
            store: path,
            series: rows,
        };
        print_json_or_table(&listing, a.read.json);
    } else {
        let rows = store.list_runs(a.limit).map_err(failed)?;
        let listing = RunListing {
            store: path,
            runs: rows,
        };
        print_json_or_table(&listing, a.read.json);
    }
    Ok(())
}
