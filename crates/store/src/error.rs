//! The store's one error type. Every variant that concerns the database names its file, so a
//! message read far from the command that caused it still says which store was meant.

use std::path::PathBuf;

/// What went wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory holding the database could not be created.
    #[error("cannot create the directory for the store {}: {source}", path.display())]
    CreateDir {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// SQLite refused an operation (opening, a query, a lock held past the busy timeout).
    #[error("store {}: {source}", path.display())]
    Sql {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file cannot be used in WAL mode (some network file systems cannot).
    #[error(
        "store {}: cannot switch to WAL journal mode (SQLite kept '{mode}'); \
         put the store on a local disk with --store or FATHOM_STORE",
        path.display()
    )]
    NoWal {
        /// The database file.
        path: PathBuf,
        /// The journal mode SQLite kept.
        mode: String,
    },
    /// The database's schema is newer than this build knows.
    #[error(
        "store {} was written by a newer fathom (schema {found}); this one knows up to {known}: \
         upgrade fathom or use another store with --store",
        path.display()
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// The schema version found in the file.
        found: i64,
        /// The newest schema version this build knows.
        known: i64,
    },
    /// The database's schema version is not one any fathom writes.
    #[error("store {} has schema version {found}, which no fathom writes: is it fathom's?", path.display())]
    BadVersion {
        /// The database file.
        path: PathBuf,
        /// The version found.
        found: i64,
    },
    /// No run has this id.
    #[error("no run {id} in {}", path.display())]
    NoRun {
        /// The database file.
        path: PathBuf,
        /// The id asked for.
        id: i64,
    },
    /// No series has this id.
    #[error("no series s{id} in {}", path.display())]
    NoSeries {
        /// The database file.
        path: PathBuf,
        /// The id asked for.
        id: i64,
    },
    /// A stored JSON document does not parse as what it should hold.
    #[error("store {}: {what} is damaged: {source}", path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// Which document ("run 42's report").
        what: String,
        /// The parse error.
        source: serde_json::Error,
    },
    /// A value could not be turned into JSON (a map with non-string keys, for example).
    #[error("store {}: cannot encode {what} as JSON: {source}", path.display())]
    Encode {
        /// The database file.
        path: PathBuf,
        /// Which value.
        what: &'static str,
        /// The serializer's error.
        source: serde_json::Error,
    },
    /// Text that is neither a run id nor a series id.
    #[error("'{0}' is not a run id (42) or a series id (s7)")]
    BadRef(String),
}
