//! The schema and its history. `PRAGMA user_version` holds the version a database is at;
//! [`MIGRATIONS`] lists the steps from an empty file to the current schema, in order. Each step
//! runs in its own write transaction together with the version bump, so a process killed while
//! migrating leaves the database at the last finished version. A step, once released, never
//! changes: databases out there were made by it. Change the schema by adding a step.
//!
//! Rows hold the figures worth querying with `sqlite3` (summary per run, intervals, flows); each
//! run also keeps its whole report as JSON, so it re-renders exactly.

use rusqlite::{Connection, TransactionBehavior};

/// Version 1: runs with their intervals and flows.
const V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_unix_s REAL NOT NULL,
    kind TEXT NOT NULL,
    server TEXT NOT NULL,
    clients TEXT NOT NULL,
    args TEXT NOT NULL,
    fathom_version TEXT NOT NULL,
    plan TEXT NOT NULL,
    summary TEXT NOT NULL,
    report TEXT NOT NULL,
    env TEXT NOT NULL,
    error TEXT,
    primary_value REAL
);
CREATE INDEX runs_started ON runs(started_unix_s);
CREATE TABLE intervals (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    start_s REAL NOT NULL,
    end_s REAL NOT NULL,
    omitted INTEGER NOT NULL,
    bits_per_second REAL,
    sender_bits_per_second REAL,
    bytes INTEGER NOT NULL,
    retransmits INTEGER NOT NULL,
    rtt_us REAL,
    cwnd INTEGER NOT NULL,
    cpu_local REAL,
    cpu_remote REAL,
    transactions_per_second REAL,
    latency_p50_us REAL,
    latency_p99_us REAL,
    lost INTEGER,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE TABLE flows (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    id INTEGER NOT NULL,
    direction TEXT NOT NULL,
    bits_per_second REAL,
    sender_bits_per_second REAL,
    bytes INTEGER NOT NULL,
    sender_bytes INTEGER NOT NULL,
    retransmits INTEGER NOT NULL,
    rtt_us INTEGER NOT NULL,
    rttvar_us INTEGER NOT NULL,
    min_rtt_us INTEGER NOT NULL,
    cwnd INTEGER NOT NULL,
    window INTEGER NOT NULL,
    mss INTEGER NOT NULL,
    data_segs_per_ack REAL,
    delivery_rate_bps REAL,
    rwnd_limited_pct REAL,
    sndbuf_limited_pct REAL,
    busy_pct REAL,
    sndbuf INTEGER NOT NULL,
    rcvbuf INTEGER NOT NULL,
    cc TEXT NOT NULL,
    transactions INTEGER,
    transactions_per_second REAL,
    sender TEXT NOT NULL,
    receiver TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
) WITHOUT ROWID;
";

/// Version 2: series (sweeps and iterated tests), and each run's place in one.
const V2: &str = "
CREATE TABLE series (
    id INTEGER PRIMARY KEY,
    started_unix_s REAL NOT NULL,
    kind TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    document TEXT NOT NULL,
    complete INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX series_fingerprint ON series(fingerprint, complete);
ALTER TABLE runs ADD COLUMN series_id INTEGER REFERENCES series(id);
ALTER TABLE runs ADD COLUMN point INTEGER;
ALTER TABLE runs ADD COLUMN iteration INTEGER;
CREATE INDEX runs_series ON runs(series_id, point, iteration);
";

/// Version 3: each run's whole command line as typed (JSON array, the program name left out), a
/// sweep's or a study's for their runs; null for runs saved before.
const V3: &str = "
ALTER TABLE runs ADD COLUMN command TEXT;
";

/// Version 4: meshes (`fathom mesh run`, `fathom serve --mesh`): each mesh test's pair, start
/// and end, figure and judgement (its run, when one was measured, in `runs` as a run of the
/// pair's series), and each member marked down.
const V4: &str = "
CREATE TABLE mesh_runs (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    series_id INTEGER NOT NULL REFERENCES series(id),
    mesh TEXT NOT NULL,
    test TEXT NOT NULL,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    class TEXT NOT NULL,
    started_unix_s REAL NOT NULL,
    ended_unix_s REAL NOT NULL,
    figure TEXT NOT NULL,
    value REAL,
    baseline REAL,
    band_low REAL,
    band_high REAL,
    alert INTEGER NOT NULL,
    change TEXT,
    error TEXT
);
CREATE INDEX mesh_runs_pair ON mesh_runs(mesh, test, source, target, id);
CREATE TABLE mesh_members (
    mesh TEXT NOT NULL,
    name TEXT NOT NULL,
    down INTEGER NOT NULL,
    since_unix_s REAL,
    reason TEXT,
    PRIMARY KEY (mesh, name)
) WITHOUT ROWID;
";

/// The steps, in order: step `i` takes a database from version `i` to `i + 1` (public so the
/// migration tests build an old database with the very step that made it).
pub const MIGRATIONS: [&str; 4] = [V1, V2, V3, V4];

/// The schema version this build writes.
pub const CURRENT: i64 = MIGRATIONS.len() as i64;

/// What [`migrate`] found.
pub enum Outcome {
    /// The database is at [`CURRENT`].
    Current,
    /// The database is at this version, newer than [`CURRENT`]; nothing was changed.
    TooNew(i64),
    /// The database claims a negative version, which no fathom writes; nothing was changed.
    Invalid(i64),
}

/// The database's schema version.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Brings `conn`'s database to [`CURRENT`], one step per transaction. The version is read again
/// under the write lock, so several processes opening one new file at once migrate it once.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<Outcome> {
    loop {
        let found = version(conn)?;
        if found < 0 {
            return Ok(Outcome::Invalid(found));
        }
        if found > CURRENT {
            return Ok(Outcome::TooNew(found));
        }
        if found == CURRENT {
            return Ok(Outcome::Current);
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let at = version(&tx)?;
        if let Some(step) = MIGRATIONS.get(at as usize).filter(|_| at == found) {
            tx.execute_batch(step)?;
            tx.pragma_update(None, "user_version", at + 1)?;
        }
        tx.commit()?;
    }
}
