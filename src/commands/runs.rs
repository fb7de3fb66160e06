//! `fathom runs`: the stored runs or series, newest first.

use super::output::print_json_or_table;
use crate::cli::method::RunsArgs;
use crate::Failure;
use fathom_report::listing::{Place, RunLine, RunListing, SeriesLine, SeriesListing};

/// Lists stored runs (or series).
pub fn run(a: &RunsArgs) -> Result<(), Failure> {
    let store = super::show::open_existing(&a.store)?;
    let path = store.path().to_path_buf();
    let failed = |e: fathom_store::StoreError| Failure::Runtime(e.to_string());
    if a.series {
        let rows = store.list_series(a.limit).map_err(failed)?;
        let listing = SeriesListing {
            store: path,
            series: rows.into_iter().map(series_line).collect(),
        };
        print_json_or_table(&listing, a.json);
    } else {
        let rows = store.list_runs(a.limit).map_err(failed)?;
        let listing = RunListing {
            store: path,
            runs: rows.into_iter().map(run_line).collect(),
        };
        print_json_or_table(&listing, a.json);
    }
    Ok(())
}

/// A stored run's line of the listing document.
fn run_line(r: fathom_store::RunRow) -> RunLine {
    RunLine {
        id: r.id,
        started_unix_s: r.started_unix_s,
        kind: r.kind,
        server: r.server,
        clients: r.clients,
        primary_metric: r.primary_metric,
        primary_value: r.primary_value,
        error: r.error,
        series: r.series.map(|s| Place {
            series_id: s.series_id,
            point: s.point,
            iteration: s.iteration,
        }),
    }
}

/// A stored series' line of the listing document.
fn series_line(r: fathom_store::SeriesRow) -> SeriesLine {
    SeriesLine {
        id: r.id,
        started_unix_s: r.started_unix_s,
        kind: r.kind,
        complete: r.complete,
        points: r.points,
        axes: r.axes,
    }
}
