//! Runs: saving one test's report with its intervals and flows in one transaction, loading it
//! back exactly, and listing runs newest first.

use crate::{rows, Store, StoreError};
use fathom_report::series::{metrics, primary_metric};
use fathom_report::Report;
use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

/// A run's place in a series (the listing's type, so that a listing is the store's rows as-is).
pub use fathom_report::listing::Place as SeriesSlot;

/// A run to save.
#[derive(Clone, Copy, Debug)]
pub struct NewRun<'a> {
    /// The result.
    pub report: &'a Report,
    /// The test's own arguments, as they would be typed after `fathom` to run it alone (a
    /// sweep's point: its kind, the shared options and the point's values).
    pub args: &'a [String],
    /// The whole command line as the user typed it, without the program name (`sweep rr
    /// --vary size=4,64`, `study rr-payload --quick`); empty when unknown.
    pub command: &'a [String],
    /// The environment it ran in, as the caller describes it (kernel, sysctls that matter, CPU
    /// model, fathom version): a JSON object.
    pub env: &'a serde_json::Value,
    /// Its place in a series, if it is part of one.
    pub series: Option<SeriesSlot>,
}

/// A run as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    /// Its id.
    pub id: i64,
    /// The result as saved (brought to the current JSON schema version).
    pub report: Report,
    /// The test's own arguments, as they would be typed after `fathom` to run it alone.
    pub args: Vec<String>,
    /// The whole command line as the user typed it, without the program name; empty for runs
    /// saved before the store kept it (schema version 3).
    pub command: Vec<String>,
    /// The environment, as the caller described it.
    pub env: serde_json::Value,
    /// Wall-clock start, Unix seconds.
    pub started_unix_s: f64,
    /// Its place in a series, if it is part of one.
    pub series: Option<SeriesSlot>,
}

/// One line of a run listing: the listing document's line.
pub use fathom_report::listing::RunLine as RunRow;

/// The series columns of a `runs` row starting at column `at`.
fn slot(row: &Row<'_>, at: usize) -> rusqlite::Result<Option<SeriesSlot>> {
    let id: Option<i64> = row.get(at)?;
    Ok(match id {
        Some(series_id) => Some(SeriesSlot {
            series_id,
            point: row.get(at + 1)?,
            iteration: row.get(at + 2)?,
        }),
        None => None,
    })
}

impl Store {
    /// Saves a run, its intervals and its flows in one transaction; returns its id.
    pub fn save_run(&mut self, run: &NewRun<'_>) -> Result<i64, StoreError> {
        let encoded = self.encode_run(run)?;
        let saved = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let id = insert_run(&tx, run, &encoded)?;
            tx.commit()?;
            Ok(id)
        })();
        saved.map_err(|e| self.sql(e))
    }

    /// A run's JSON columns, encoded before its transaction.
    pub(crate) fn encode_run(&self, run: &NewRun<'_>) -> Result<EncodedRun, StoreError> {
        let r = run.report;
        Ok(EncodedRun {
            args: self.encode("the arguments", run.args)?,
            command: self.encode("the command line", run.command)?,
            env: self.encode("the environment", run.env)?,
            plan: self.encode("the plan", &r.test)?,
            summary: self.encode("the summary", &r.summary)?,
            report: self.encode("the report", r)?,
        })
    }

    /// Loads run `id` as it was saved; a report saved at an older JSON schema version is read
    /// into the current one.
    pub fn load_run(&self, id: i64) -> Result<StoredRun, StoreError> {
        type Raw = (
            String,
            String,
            String,
            f64,
            Option<SeriesSlot>,
            Option<String>,
        );
        let raw: Option<Raw> = self
            .conn
            .query_row(
                "SELECT report, args, env, started_unix_s, series_id, point, iteration, command
                 FROM runs WHERE id = ?1",
                [id],
                |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        slot(row, 4)?,
                        row.get(7)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let (report, args, env, started_unix_s, series, command) =
            raw.ok_or_else(|| StoreError::NoRun {
                path: self.path.clone(),
                id,
            })?;
        Ok(StoredRun {
            id,
            report: self.parsed(fathom_report::json::read(&report), || {
                format!("run {id}'s report")
            })?,
            args: self.decode(&args, || format!("run {id}'s arguments"))?,
            command: match command {
                Some(c) => self.decode(&c, || format!("run {id}'s command line"))?,
                None => Vec::new(),
            },
            env: self.decode(&env, || format!("run {id}'s environment"))?,
            started_unix_s,
            series,
        })
    }

    /// The latest `limit` runs, newest (last saved) first.
    pub fn list_runs(&self, limit: usize) -> Result<Vec<RunRow>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let listed = self
            .conn
            .prepare(
                "SELECT id, started_unix_s, kind, server, clients, primary_value, error,
                     series_id, point, iteration
                 FROM runs ORDER BY id DESC LIMIT ?1",
            )
            .and_then(|mut stmt| {
                stmt.query_map([limit], |row| {
                    let kind: String = row.get(2)?;
                    Ok(RunRow {
                        id: row.get(0)?,
                        started_unix_s: row.get(1)?,
                        primary_metric: primary_metric(&kind).to_string(),
                        kind,
                        server: row.get(3)?,
                        clients: row.get(4)?,
                        primary_value: row.get(5)?,
                        error: row.get(6)?,
                        series: slot(row, 7)?,
                    })
                })?
                .collect()
            });
        listed.map_err(|e| self.sql(e))
    }
}

/// A run's JSON columns.
pub(crate) struct EncodedRun {
    args: String,
    command: String,
    env: String,
    plan: String,
    summary: String,
    report: String,
}

/// Inserts `run` (its JSON in `e`) with its intervals and flows in `tx`; returns its id.
pub(crate) fn insert_run(
    tx: &rusqlite::Transaction<'_>,
    run: &NewRun<'_>,
    e: &EncodedRun,
) -> rusqlite::Result<i64> {
    let r = run.report;
    let wanted = primary_metric(&r.test.kind);
    let primary = metrics(r).into_iter().find(|(n, _)| *n == wanted);
    let slot = run.series;
    tx.execute(
        "INSERT INTO runs (started_unix_s, kind, server, clients, args, fathom_version,
             plan, summary, report, env, error, primary_value, series_id, point, iteration,
             command)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        params![
            r.test.started_unix_s,
            r.test.kind,
            server(&r.test),
            r.test.clients.join(","),
            e.args,
            r.fathom_version,
            e.plan,
            e.summary,
            e.report,
            e.env,
            r.error,
            primary.map(|(_, v)| v),
            slot.map(|s| s.series_id),
            slot.map(|s| s.point),
            slot.map(|s| s.iteration),
            e.command,
        ],
    )?;
    let id = tx.last_insert_rowid();
    rows::insert_intervals(tx, id, &r.intervals)?;
    rows::insert_flows(tx, id, &r.flows)?;
    Ok(id)
}

/// The server column: the agent's address, or `embedded` when the test ran against the
/// in-process agent, whose ephemeral loopback port says nothing later.
fn server(t: &fathom_report::model::TestEcho) -> &str {
    if t.embedded_agent {
        "embedded"
    } else {
        &t.agent
    }
}
