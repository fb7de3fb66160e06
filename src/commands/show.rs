//! `fathom show RUN`: a stored run or series, rendered again exactly as when it ran.

use super::output::{self, Format};
use crate::cli::method::ShowArgs;
use crate::Failure;
use fathom_store::{Ref, Store};

/// Prints a stored run or series.
pub fn run(a: &ShowArgs) -> Result<(), Failure> {
    let r = Ref::parse(&a.run).map_err(|e| Failure::Usage(e.to_string()))?;
    let store = open_existing(&a.store)?;
    let format = Format::of(a.json, a.csv);
    match r {
        Ref::Run(id) => {
            let run = store
                .load_run(id)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
            output::print(&run.report, format);
        }
        Ref::Series(id) => {
            let s = store
                .load_series(id)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
            output::print(&s, format);
        }
    }
    Ok(())
}

/// The store the options name, which must already exist (reading never creates one).
pub fn open_existing(a: &crate::cli::common::ReadStoreArgs) -> Result<Store, Failure> {
    let path = a.resolved();
    if !path.exists() {
        return Err(Failure::Runtime(format!(
            "no results store at {}: run a test first, or pass --store PATH",
            path.display()
        )));
    }
    Store::open(&path).map_err(|e| Failure::Runtime(e.to_string()))
}
