//! JSON output: a report (or any other [`Document`]) serialized as one document. Every
//! division in the builder is guarded (see `floor::ratio` and `floor::rate`), so no figure is
//! NaN or infinite; serde_json would write one as `null`, which the schema rejects and the
//! degenerate-run tests check. [`read`] reads a report back, older schema versions included.

use crate::export::{Document, Exporter};
use crate::model::Report;
use serde::Serialize;
use serde_json::{Map, Value};

/// The JSON exporter: any [`Document`], pretty-printed, with a trailing newline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

impl<D: Document> Exporter<D> for Json {
    fn export(&self, doc: &D) -> Vec<u8> {
        let mut v =
            serde_json::to_vec_pretty(doc).unwrap_or_else(|e| error_document(&e.to_string()));
        v.push(b'\n');
        v
    }
}

/// The report as one pretty-printed JSON document with a trailing newline.
pub fn render(r: &Report) -> Vec<u8> {
    Json.export(r)
}

/// The document of a command that failed before it had a result (`$defs/error_document`).
#[derive(Serialize)]
struct ErrorDocument<'a> {
    schema_version: u32,
    error: &'a str,
}

/// A minimal document for a run that failed before any report existed.
pub fn error_document(message: &str) -> Vec<u8> {
    let doc = ErrorDocument {
        schema_version: crate::model::SCHEMA_VERSION,
        error: message,
    };
    serde_json::to_vec_pretty(&doc)
        .unwrap_or_else(|_| b"{\"error\":\"unprintable error\"}".to_vec())
}

/// A report read back from its JSON, written by this fathom or an older one: a document at an
/// earlier schema version is brought to [`crate::model::SCHEMA_VERSION`] first, so stored runs
/// keep their figures.
pub fn read(text: &str) -> serde_json::Result<Report> {
    let mut doc: Value = serde_json::from_str(text)?;
    if doc["schema_version"] == 1 {
        v1_to_v2(&mut doc);
    }
    measured_from_edges(&mut doc);
    serde_json::from_value(doc)
}

/// Intervals written before `measured_start`/`measured_end` existed were cut by the snapshots'
/// instants: those are their `start` and `end`.
fn measured_from_edges(doc: &mut Value) {
    for iv in doc["intervals"].as_array_mut().into_iter().flatten() {
        for (m, e) in [("measured_start", "start"), ("measured_end", "end")] {
            if iv.get(m).is_none() {
                iv[m] = iv[e].clone();
            }
        }
    }
}

/// Schema 2 moved the request/response figures from flat fields into an `rr` object in `test`,
/// `summary`, each flow and each interval; `null` where the first field listed was `null`.
fn v1_to_v2(doc: &mut Value) {
    const TEST: &[&str] = &[
        "request_size",
        "response_size",
        "burst",
        "rate",
        "transactions",
        "udp_timeout_ms",
    ];
    const SUMMARY: &[&str] = &[
        "transactions",
        "transactions_per_second",
        "connections_per_second",
        "answered",
        "lost",
        "latency_us",
        "one_way_estimate_us",
        "cpu_us_per_transaction",
        "segments_per_transaction",
    ];
    const FLOW: &[&str] = &["transactions", "transactions_per_second"];
    const INTERVAL: &[&str] = &[
        "transactions_per_second",
        "latency_p50_us",
        "latency_p99_us",
        "lost",
    ];
    nest(&mut doc["test"], TEST);
    nest(&mut doc["summary"], SUMMARY);
    for (list, fields) in [("flows", FLOW), ("intervals", INTERVAL)] {
        if let Some(items) = doc[list].as_array_mut() {
            items.iter_mut().for_each(|o| nest(o, fields));
        }
    }
    doc["schema_version"] = Value::from(2);
}

/// Moves `fields` of object `o` into `o.rr`, or sets `o.rr` to `null` when the first is `null`.
fn nest(o: &mut Value, fields: &[&str]) {
    let Some(map) = o.as_object_mut() else {
        return;
    };
    let moved: Map<String, Value> = fields
        .iter()
        .map(|f| (f.to_string(), map.remove(*f).unwrap_or(Value::Null)))
        .collect();
    let present = moved.get(fields[0]).is_some_and(|v| !v.is_null());
    map.insert(
        "rr".into(),
        if present {
            Value::Object(moved)
        } else {
            Value::Null
        },
    );
}
