//! Meshes: each mesh test's pair, times, figure and judgement (`mesh_runs`), its run when one
//! was measured (a run of the pair's series: one series per mesh, test, source and target,
//! found again by its fingerprint), and the members marked down (`mesh_members`).

use crate::runs::{insert_run, NewRun, SeriesSlot};
use crate::{Store, StoreError};
use fathom_report::series::Series;
use rusqlite::{params, Row, TransactionBehavior};

/// One mesh test as judged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshRun {
    /// The mesh's name.
    pub mesh: String,
    /// The test's name in the mesh file.
    pub test: String,
    /// The member that ran the connecting end.
    pub source: String,
    /// The member it tested.
    pub target: String,
    /// Its interference class.
    pub class: String,
    /// When it started (its slot), Unix seconds.
    pub started_unix_s: f64,
    /// When it ended, Unix seconds.
    pub ended_unix_s: f64,
    /// The metric it is judged by.
    pub figure: String,
    /// Its figure; none when it failed.
    pub value: Option<f64>,
    /// The baseline's mean it was judged against; none while learning.
    pub baseline: Option<f64>,
    /// The band's low end.
    pub band_low: Option<f64>,
    /// The band's high end.
    pub band_high: Option<f64>,
    /// True when the pair's alert is raised after it.
    pub alert: bool,
    /// "raised" or "cleared" when it changed the alert.
    pub change: Option<String>,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// The latest judgement of one pair, with its counts.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshPair {
    /// The latest test.
    pub last: MeshRun,
    /// Tests stored for the pair.
    pub runs: u64,
    /// Of which failed.
    pub failed: u64,
    /// When its raised alert was raised (the latest "raised"), Unix seconds.
    pub alert_since_unix_s: Option<f64>,
}

/// A member marked down, or up again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshMember {
    /// Its name.
    pub name: String,
    /// True while down.
    pub down: bool,
    /// Since when, Unix seconds.
    pub since_unix_s: Option<f64>,
    /// Why it was marked down.
    pub reason: Option<String>,
}

/// The columns of a `mesh_runs` row, in [`row`]'s order.
const COLUMNS: &str = "mesh, test, source, target, class, started_unix_s, ended_unix_s, figure,
     value, baseline, band_low, band_high, alert, change, error";

/// A `mesh_runs` row read from [`COLUMNS`].
fn row(r: &Row<'_>) -> rusqlite::Result<MeshRun> {
    Ok(MeshRun {
        mesh: r.get(0)?,
        test: r.get(1)?,
        source: r.get(2)?,
        target: r.get(3)?,
        class: r.get(4)?,
        started_unix_s: r.get(5)?,
        ended_unix_s: r.get(6)?,
        figure: r.get(7)?,
        value: r.get(8)?,
        baseline: r.get(9)?,
        band_low: r.get(10)?,
        band_high: r.get(11)?,
        alert: r.get(12)?,
        change: r.get(13)?,
        error: r.get(14)?,
    })
}

impl Store {
    /// The series of `m`'s pair (made from `series` the first time), by its fingerprint.
    pub fn mesh_series(&mut self, m: &MeshRun, series: &Series) -> Result<i64, StoreError> {
        let fingerprint = fingerprint(m);
        match self.find_incomplete_series(&fingerprint)? {
            Some((id, _)) => Ok(id),
            None => self.create_series(series, &fingerprint),
        }
    }

    /// Saves one mesh test of series `series_id`: its run (when one was measured, as the
    /// series' `iteration`-th) and its judgement, in one transaction; returns the judgement's id.
    pub fn save_mesh_run(
        &mut self,
        series_id: i64,
        run: Option<&NewRun<'_>>,
        m: &MeshRun,
    ) -> Result<i64, StoreError> {
        let encoded = run.map(|r| self.encode_run(r)).transpose()?;
        let saved = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let iteration: u32 = tx.query_row(
                "SELECT COUNT(*) FROM runs WHERE series_id = ?1",
                [series_id],
                |r| r.get(0),
            )?;
            let run_id = match (run, &encoded) {
                (Some(r), Some(e)) => {
                    let slot = Some(SeriesSlot {
                        series_id,
                        point: 0,
                        iteration,
                    });
                    Some(insert_run(&tx, &NewRun { series: slot, ..*r }, e)?)
                }
                _ => None,
            };
            tx.execute(
                &format!(
                    "INSERT INTO mesh_runs (run_id, series_id, {COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                             ?16, ?17)"
                ),
                params![
                    run_id,
                    series_id,
                    m.mesh,
                    m.test,
                    m.source,
                    m.target,
                    m.class,
                    m.started_unix_s,
                    m.ended_unix_s,
                    m.figure,
                    m.value,
                    m.baseline,
                    m.band_low,
                    m.band_high,
                    m.alert,
                    m.change,
                    m.error,
                ],
            )?;
            let id = tx.last_insert_rowid();
            tx.commit()?;
            Ok(id)
        })();
        saved.map_err(|e| self.sql(e))
    }

    /// Every mesh test of mesh `mesh`, oldest first.
    pub fn mesh_runs(&self, mesh: &str) -> Result<Vec<MeshRun>, StoreError> {
        self.mesh_runs_since(mesh, None)
    }

    /// The mesh tests of mesh `mesh` that started at or after `since_unix_s` (all when
    /// `None`), oldest first: what `mesh report --since` charts, read without the older ones.
    pub fn mesh_runs_since(
        &self,
        mesh: &str,
        since_unix_s: Option<f64>,
    ) -> Result<Vec<MeshRun>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM mesh_runs WHERE mesh = ?1
               AND (?2 IS NULL OR started_unix_s >= ?2) ORDER BY id"
        );
        let listed = self
            .conn
            .prepare(&sql)
            .and_then(|mut stmt| stmt.query_map(params![mesh, since_unix_s], row)?.collect());
        listed.map_err(|e| self.sql(e))
    }

    /// The latest `limit` figures of a pair (none for a failed test), oldest first: what a
    /// restarted mesh judges its next runs against.
    pub fn mesh_history(
        &self,
        mesh: &str,
        test: &str,
        source: &str,
        target: &str,
        limit: usize,
    ) -> Result<Vec<Option<f64>>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let listed: rusqlite::Result<Vec<Option<f64>>> = self
            .conn
            .prepare(
                "SELECT value FROM mesh_runs WHERE mesh = ?1 AND test = ?2 AND source = ?3
                   AND target = ?4 ORDER BY id DESC LIMIT ?5",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![mesh, test, source, target, limit], |r| r.get(0))?
                    .collect()
            });
        let mut values = listed.map_err(|e| self.sql(e))?;
        values.reverse();
        Ok(values)
    }

    /// Each pair's latest judgement in mesh `mesh`, with its counts.
    pub fn mesh_pairs(&self, mesh: &str) -> Result<Vec<MeshPair>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS}, n, failed, since FROM mesh_runs m JOIN (
                 SELECT MAX(id) AS last, COUNT(*) AS n, COUNT(*) - COUNT(value) AS failed,
                     MAX(CASE WHEN change = 'raised' THEN started_unix_s END) AS since
                 FROM mesh_runs WHERE mesh = ?1 GROUP BY test, source, target
             ) p ON m.id = p.last ORDER BY test, source, target"
        );
        let listed = self.conn.prepare(&sql).and_then(|mut stmt| {
            stmt.query_map([mesh], |r| {
                let last = row(r)?;
                Ok(MeshPair {
                    alert_since_unix_s: if last.alert { r.get(17)? } else { None },
                    last,
                    runs: r.get(15)?,
                    failed: r.get(16)?,
                })
            })?
            .collect()
        });
        listed.map_err(|e| self.sql(e))
    }

    /// Records member `m` of mesh `mesh` as down or up.
    pub fn set_mesh_member(&mut self, mesh: &str, m: &MeshMember) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO mesh_members (mesh, name, down, since_unix_s, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![mesh, m.name, m.down, m.since_unix_s, m.reason],
            )
            .map(drop)
            .map_err(|e| self.sql(e))
    }

    /// The members of mesh `mesh` ever marked down, with their state now.
    pub fn mesh_members(&self, mesh: &str) -> Result<Vec<MeshMember>, StoreError> {
        let listed = self
            .conn
            .prepare(
                "SELECT name, down, since_unix_s, reason FROM mesh_members WHERE mesh = ?1
                 ORDER BY name",
            )
            .and_then(|mut stmt| {
                stmt.query_map([mesh], |r| {
                    Ok(MeshMember {
                        name: r.get(0)?,
                        down: r.get(1)?,
                        since_unix_s: r.get(2)?,
                        reason: r.get(3)?,
                    })
                })?
                .collect()
            });
        listed.map_err(|e| self.sql(e))
    }

    /// The meshes the store holds tests of, most recently tested first.
    pub fn mesh_names(&self) -> Result<Vec<String>, StoreError> {
        let listed = self
            .conn
            .prepare("SELECT mesh FROM mesh_runs GROUP BY mesh ORDER BY MAX(id) DESC")
            .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect());
        listed.map_err(|e| self.sql(e))
    }
}

/// The fingerprint of a pair's series: the mesh, the test and the pair.
fn fingerprint(m: &MeshRun) -> String {
    format!(
        "mesh\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        m.mesh, m.test, m.source, m.target
    )
}
