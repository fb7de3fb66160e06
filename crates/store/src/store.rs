//! The open store: the connection, its file, and how it is opened (WAL mode, migrated, several
//! processes waiting on each other); `runs.rs` and `series.rs` add what is saved and read.

use crate::error::StoreError;
use crate::schema;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a writer waits for another to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open store.
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and migrates it to
    /// [`SCHEMA_VERSION`](crate::SCHEMA_VERSION).
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
    pub(crate) fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    /// `value` as JSON text, or an error naming `what`.
    pub(crate) fn encode<T: serde::Serialize + ?Sized>(
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
    pub(crate) fn decode<T: serde::de::DeserializeOwned>(
        &self,
        text: &str,
        what: impl FnOnce() -> String,
    ) -> Result<T, StoreError> {
        self.parsed(serde_json::from_str(text), what)
    }

    /// A parse's result, its failure as an error naming `what` (built only on failure).
    pub(crate) fn parsed<T>(
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
