//! The store's listings (`fathom runs [--series] --json`): runs or series, newest first, one
//! line each. Pinned by `$defs/run_listing` and `$defs/series_listing` in
//! `docs/schema/series.schema.json`; the terminal shows them as fixed-width columns.

use crate::export::Exporter;
use crate::table::Table;
use crate::table_series::cell;
use serde::Serialize;
use std::path::PathBuf;

/// `fathom runs --json`: stored runs.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct RunListing {
    /// The store's file.
    pub store: PathBuf,
    /// The runs, newest first.
    pub runs: Vec<RunLine>,
}

impl crate::export::Document for RunListing {}

/// One stored run in a listing.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct RunLine {
    /// Run id (`fathom show 42`).
    pub id: i64,
    /// When it started, Unix seconds.
    pub started_unix_s: f64,
    /// Its kind (`stream`, `rr`...).
    pub kind: String,
    /// The server agent as named, or its address.
    pub server: String,
    /// Client hosts, comma-separated; empty when the controller was the client.
    pub clients: String,
    /// The kind's headline metric.
    pub primary_metric: String,
    /// The run's value of it, if it measured it.
    pub primary_value: Option<f64>,
    /// Why the run failed, if it did.
    pub error: Option<String>,
    /// Where the run sits in a series, if it belongs to one.
    pub series: Option<Place>,
}

/// A run's place in a series.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The series (`s7` is 7).
    pub series_id: i64,
    /// Its point, from 0.
    pub point: u32,
    /// Its iteration at that point, from 0.
    pub iteration: u32,
}

/// `fathom runs --series --json`: stored series.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SeriesListing {
    /// The store's file.
    pub store: PathBuf,
    /// The series, newest first.
    pub series: Vec<SeriesLine>,
}

impl crate::export::Document for SeriesListing {}

/// One stored series in a listing.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct SeriesLine {
    /// The `N` of `sN`.
    pub id: i64,
    /// When it started, Unix seconds.
    pub started_unix_s: f64,
    /// Its kind.
    pub kind: String,
    /// True once every point ran.
    pub complete: bool,
    /// Points run so far.
    pub points: usize,
    /// The swept options joined by ` × `; empty for an iterated test.
    pub axes: String,
}

impl Exporter<RunListing> for Table {
    fn export(&self, l: &RunListing) -> Vec<u8> {
        let mut t = vec![format!(
            "{:<6} {:<19} {:<7} {:<22} {:>16}  {:<14} note",
            "id", "started", "kind", "server", "result", "series"
        )];
        t.extend(l.runs.iter().map(|r| {
            let value = r
                .primary_value
                .map_or("-".to_string(), |v| cell(&r.primary_metric, v));
            let series = r.series.map_or(String::new(), |s| {
                format!("s{} #{}.{}", s.series_id, s.point + 1, s.iteration + 1)
            });
            let note = r
                .error
                .as_deref()
                .map_or(String::new(), |e| format!("error: {e}"));
            format!(
                "{:<6} {:<19} {:<7} {:<22} {:>16}  {:<14} {note}",
                r.id,
                when(r.started_unix_s),
                r.kind,
                r.server,
                value,
                series,
            )
        }));
        lines(t)
    }
}

impl Exporter<SeriesListing> for Table {
    fn export(&self, l: &SeriesListing) -> Vec<u8> {
        let mut t = vec![format!(
            "{:<6} {:<19} {:<7} {:>6}  {:<9} axes",
            "id", "started", "kind", "points", "state"
        )];
        t.extend(l.series.iter().map(|r| {
            format!(
                "{:<6} {:<19} {:<7} {:>6}  {:<9} {}",
                format!("s{}", r.id),
                when(r.started_unix_s),
                r.kind,
                r.points,
                if r.complete { "complete" } else { "partial" },
                r.axes
            )
        }));
        lines(t)
    }
}

fn lines(t: Vec<String>) -> Vec<u8> {
    let mut s = t.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// A Unix time as UTC "2026-11-22 23:10:05".
pub fn when(unix_s: f64) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    time::OffsetDateTime::from_unix_timestamp(unix_s as i64)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_listing_is_a_line_per_run_started_at_a_utc_time() {
        let l = RunListing {
            store: "/tmp/f.db".into(),
            runs: vec![RunLine {
                id: 7,
                started_unix_s: 0.0,
                kind: "rr".into(),
                server: "embedded".into(),
                clients: String::new(),
                primary_metric: "transactions_per_second".into(),
                primary_value: Some(1234.4),
                error: Some("interrupted".into()),
                series: Some(Place {
                    series_id: 3,
                    point: 0,
                    iteration: 1,
                }),
            }],
        };
        let text = String::from_utf8(Table.export(&l)).unwrap();
        let line = text.lines().nth(1).unwrap();
        let dates = [0.0, 1_795_388_400.0, 951_782_400.0].map(when);
        assert_eq!(
            dates,
            [
                "1970-01-01 00:00:00",
                "2026-11-22 23:00:00",
                "2000-02-29 00:00:00"
            ],
            "UTC"
        );
        assert!(
            line.starts_with("7      1970-01-01 00:00:00 rr      embedded"),
            "{text}"
        );
        assert!(
            line.ends_with("1234/s  s3 #1.2        error: interrupted"),
            "{text}"
        );
    }
}
