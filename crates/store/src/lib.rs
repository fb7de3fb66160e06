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
//!   fingerprint of its definition, and whether it completed.
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
mod path;
mod refs;
mod rows;
mod runs;
mod schema;
mod series;

pub use error::StoreError;
pub use path::{default_path, default_path_from};
pub use refs::Ref;
pub use runs::{NewRun, RunRow, SeriesSlot, StoredRun};
pub use schema::{CURRENT as SCHEMA_VERSION, MIGRATIONS};
pub use series::SeriesRow;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a writer waits for another to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and migrates it to [`SCHEMA_VERSION`].
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: path.clone(),
                source,
            })?;
        }
        let sql = |source| StoreError::Sql {
            path: path.clone(),
            source,
        };
        let mut conn = Connection::open(&path).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        let deadline = Instant::now() + BUSY_TIMEOUT;
        let outcome = loop {
            match prepare(&mut conn) {
                Err(e) if is_busy(&e) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => break other.map_err(sql)?,
            }
        };
        match outcome {
            Prepared::NoWal(mode) => Err(StoreError::NoWal { path, mode }),
            Prepared::Schema(schema::Outcome::TooNew(found)) => Err(StoreError::TooNew {
                path,
                found,
                known: schema::CURRENT,
            }),
            Prepared::Schema(schema::Outcome::Invalid(found)) => {
                Err(StoreError::BadVersion { path, found })
            }
            Prepared::Schema(schema::Outcome::Current) => Ok(Store { conn, path }),
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Wraps a SQLite error with this store's path.
    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    /// `value` as JSON text, or an error naming `what`.
    fn encode<T: serde::Serialize + ?Sized>(
        &self,
        what: &'static str,
        value: &T,
    ) -> Result<String, StoreError> {
        serde_json::to_string(value).map_err(|source| StoreError::Encode {
            path: self.path.clone(),
            what,
            source,
        })
    }

    /// Parses stored JSON `text`, or an error naming `what` (built only on failure).
    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        text: &str,
        what: impl FnOnce() -> String,
    ) -> Result<T, StoreError> {
        self.parsed(serde_json::from_str(text), what)
    }

    /// A parse's result, its failure as an error naming `what` (built only on failure).
    fn parsed<T>(
        &self,
        result: serde_json::Result<T>,
        what: impl FnOnce() -> String,
    ) -> Result<T, StoreError> {
        result.map_err(|source| StoreError::Corrupt {
            path: self.path.clone(),
            what: what(),
            source,
        })
    }
}

/// What setting up a connection found.
enum Prepared {
    NoWal(String),
    Schema(schema::Outcome),
}

/// Puts the file in WAL mode and migrates it. Two connections switching a new file to WAL at
/// once can deadlock on the lock upgrade; SQLite then answers one of them `SQLITE_BUSY` at once,
/// without its busy handler, so [`Store::open`] retries this whole step until [`BUSY_TIMEOUT`].
fn prepare(conn: &mut Connection) -> rusqlite::Result<Prepared> {
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Ok(Prepared::NoWal(mode));
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    schema::migrate(conn).map(Prepared::Schema)
}

/// Whether `e` is SQLite saying another connection holds the lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
