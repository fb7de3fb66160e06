//! Series: sweeps and iterated tests. The row keeps the latest JSON document, rewritten after
//! each point, and a fingerprint of the sweep's definition so that an interrupted sweep can be
//! found and resumed; its runs point back at it from `runs.series_id`.

use crate::{Store, StoreError};
use fathom_report::series::Series;
use rusqlite::{params, OptionalExtension};

/// One line of a series listing: the listing document's line.
pub use fathom_report::listing::SeriesLine as SeriesRow;

impl Store {
    /// Saves a new series; returns its id. `fingerprint` identifies the sweep's definition (the
    /// same command gives the same fingerprint), for [`Store::find_incomplete_series`].
    pub fn create_series(&mut self, series: &Series, fingerprint: &str) -> Result<i64, StoreError> {
        let document = self.encode("the series", series)?;
        self.conn
            .execute(
                "INSERT INTO series (started_unix_s, kind, fingerprint, document, complete)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    series.started_unix_s,
                    series.kind,
                    fingerprint,
                    document,
                    series.complete
                ],
            )
            .map_err(|e| self.sql(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Replaces series `id`'s document with `series` and records whether it is complete.
    pub fn update_series(&mut self, id: i64, series: &Series) -> Result<(), StoreError> {
        let document = self.encode("the series", series)?;
        let changed = self
            .conn
            .execute(
                "UPDATE series SET document = ?1, complete = ?2, kind = ?3 WHERE id = ?4",
                params![document, series.complete, series.kind, id],
            )
            .map_err(|e| self.sql(e))?;
        if changed == 0 {
            return Err(self.no_series(id));
        }
        Ok(())
    }

    /// Loads series `id`, its `id` field set to `s<id>`.
    pub fn load_series(&self, id: i64) -> Result<Series, StoreError> {
        let document: Option<String> = self
            .conn
            .query_row("SELECT document FROM series WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql(e))?;
        let document = document.ok_or_else(|| self.no_series(id))?;
        self.parse_series(id, &document)
    }

    /// The latest `limit` series, newest first.
    pub fn list_series(&self, limit: usize) -> Result<Vec<SeriesRow>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let raw: Vec<(i64, f64, String, bool, String)> = self
            .conn
            .prepare(
                "SELECT id, started_unix_s, kind, complete, document
                 FROM series ORDER BY id DESC LIMIT ?1",
            )
            .and_then(|mut stmt| {
                stmt.query_map([limit], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect()
            })
            .map_err(|e| self.sql(e))?;
        raw.into_iter()
            .map(|(id, started_unix_s, kind, complete, document)| {
                let s = self.parse_series(id, &document)?;
                let names: Vec<&str> = s.axes.iter().map(|a| a.name.as_str()).collect();
                Ok(SeriesRow {
                    id,
                    started_unix_s,
                    kind,
                    complete,
                    points: s.points.len(),
                    axes: names.join(" × "),
                })
            })
            .collect()
    }

    /// The newest incomplete series made with `fingerprint`, to resume.
    pub fn find_incomplete_series(
        &self,
        fingerprint: &str,
    ) -> Result<Option<(i64, Series)>, StoreError> {
        let found: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT id, document FROM series WHERE fingerprint = ?1 AND complete = 0
                 ORDER BY id DESC LIMIT 1",
                [fingerprint],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        found
            .map(|(id, document)| Ok((id, self.parse_series(id, &document)?)))
            .transpose()
    }

    /// The runs saved for series `series_id` as (point, iteration, run id), by point, then
    /// iteration, then id: what an interrupted sweep has already done. Failed runs are listed
    /// too (their reports carry the error).
    pub fn series_runs(&self, series_id: i64) -> Result<Vec<(u32, u32, i64)>, StoreError> {
        self.conn
            .prepare(
                "SELECT point, iteration, id FROM runs WHERE series_id = ?1
                 ORDER BY point, iteration, id",
            )
            .and_then(|mut stmt| {
                stmt.query_map([series_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map_err(|e| self.sql(e))
    }

    /// Parses series `id`'s stored document and sets its id.
    fn parse_series(&self, id: i64, document: &str) -> Result<Series, StoreError> {
        let mut series: Series = self.decode(document, || format!("series s{id}'s document"))?;
        series.id = Some(format!("s{id}"));
        Ok(series)
    }

    /// The error for a missing series.
    fn no_series(&self, id: i64) -> StoreError {
        StoreError::NoSeries {
            path: self.path.clone(),
            id,
        }
    }
}
