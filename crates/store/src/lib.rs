//! fathom's results store: every run, and every series of runs (sweeps, iterations), saved in one
//! embedded SQLite file.
//!
//! # Where it lives
//! `fathom --store PATH` names the file. Without it, [`default_path`] decides:
//! `$FATHOM_STORE` if set and non-empty, else `$XDG_DATA_HOME/fathom/fathom.db`, else
//! `$HOME/.local/share/fathom/fathom.db`, else `./fathom.db`. Missing directories are created.
//!
//! # What it holds
//! - `runs`: one row per test: when, kind, server, clients, the test's own arguments (JSON array:
//!   what would run it alone), the whole command line as the user typed it (JSON array: a sweep's
//!   or a study's for their runs; null before schema version 3), fathom's version, the plan (the report's `test`, JSON), the summary (JSON), the
//!   whole report (JSON, for exact re-rendering), the environment the caller described (JSON:
//!   kernel, sysctls, CPU model...), the error if any, the kind's primary figure, and, for runs of
//!   a series, the series, point and iteration.
//! - `intervals` and `flows`: the report's intervals and flows, one row each, so that they can be
//!   queried with `sqlite3`.
//! - `series`: one row per sweep or iterated test: its latest JSON document, a caller-given
//!   fingerprint of its definition, and whether it completed; and one per pair of a mesh's
//!   test (mesh, test, source, target), whose runs are that pair's measured tests.
//! - `mesh_runs` and `mesh_members`: each mesh test's pair, start and end, figure and
//!   judgement (the band, the alert), and each member marked down (see [`MeshRun`]).
//!
//! # Safety
//! The file is in WAL mode; a run and its rows are written in one transaction, so a process
//! killed mid-save leaves the whole run or nothing. Writers wait up to [`BUSY_TIMEOUT`] for each
//! other, so several fathom processes can share one store. The schema is versioned
//! (`PRAGMA user_version`) and migrated on open; a file from a newer fathom is refused.
//!
//! # Resuming a series
//! A sweep creates its series ([`Store::create_series`]) with a fingerprint of its definition,
//! saves each run with its [`SeriesSlot`], and updates the document after each point. After an
//! interruption, [`Store::find_incomplete_series`] finds it again by fingerprint and
//! [`Store::series_runs`] lists the runs already done, which need not run again.
#![forbid(unsafe_code)]

mod error;
mod mesh;
mod path;
mod refs;
mod rows;
mod runs;
mod schema;
mod series;
mod store;

pub use error::StoreError;
pub use mesh::{MeshMember, MeshPair, MeshRun};
pub use path::{default_path, default_path_from};
pub use refs::Ref;
pub use runs::{NewRun, RunRow, SeriesSlot, StoredRun};
pub use schema::{CURRENT as SCHEMA_VERSION, MIGRATIONS};
pub use series::SeriesRow;
pub use store::{Store, BUSY_TIMEOUT};
