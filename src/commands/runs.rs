//! `fathom runs`: the stored runs or series, newest first.

use super::output::write_stdout;
use crate::cli::method::RunsArgs;
use crate::Failure;
use fathom_report::table_series::cell;

/// Lists stored runs (or series).
pub fn run(a: &RunsArgs) -> Result<(), Failure> {
    let store = super::show::open_existing(&a.store)?;
    let path = store.path().to_path_buf();
    let text = if a.series {
        let rows = store
            .list_series(a.limit)
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        if a.json {
            json(&serde_json::json!({ "store": path, "series": rows }))
        } else {
            let mut t = vec![format!(
                "{:<6} {:<19} {:<7} {:>6}  {:<9} axes",
                "id", "started", "kind", "points", "state"
            )];
            t.extend(rows.iter().map(|r| {
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
    } else {
        let rows = store
            .list_runs(a.limit)
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        if a.json {
            json(&serde_json::json!({ "store": path, "runs": rows }))
        } else {
            let mut t = vec![format!(
                "{:<6} {:<19} {:<7} {:<22} {:>16}  {:<14} note",
                "id", "started", "kind", "server", "result", "series"
            )];
            t.extend(rows.iter().map(|r| {
                let value = r
                    .primary_value
                    .map_or("-".to_string(), |v| cell(&r.primary_metric, v));
                let series = r.series.map_or(String::new(), |s| {
                    format!("s{} #{}.{}", s.series_id, s.point + 1, s.iteration + 1)
                });
                format!(
                    "{:<6} {:<19} {:<7} {:<22} {:>16}  {:<14} {}",
                    r.id,
                    when(r.started_unix_s),
                    r.kind,
                    r.server,
                    value,
                    series,
                    r.error
                        .as_deref()
                        .map_or(String::new(), |e| format!("error: {e}"))
                )
            }));
            lines(t)
        }
    };
    write_stdout(&text);
    Ok(())
}

fn json(v: &serde_json::Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
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
    #[test]
    fn unix_times_read_as_utc_dates() {
        assert_eq!(super::when(0.0), "1970-01-01 00:00:00");
        assert_eq!(super::when(1_795_388_400.0), "2026-11-22 23:00:00");
        assert_eq!(super::when(951_782_400.0), "2000-02-29 00:00:00");
    }
}
