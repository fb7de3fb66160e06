//! JSON output: a report (or any other [`Document`]) serialized as one document. Every division in the builder is guarded
//! (see `build::ratio` and `build::rate`), so no figure is NaN or infinite; serde_json would
//! write one as `null`, which the schema rejects and the degenerate-run tests check.

use crate::export::{Document, Exporter};
use crate::model::Report;
use serde::Serialize;

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
