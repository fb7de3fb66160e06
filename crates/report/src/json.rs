//! JSON output: the report serialized as one document. Every division in the builder is guarded
//! (see `build::ratio` and `build::rate`), so no figure is NaN or infinite; serde_json would
//! write one as `null`, which the schema rejects and the degenerate-run tests check.

use crate::model::Report;

/// The report as one pretty-printed JSON document with a trailing newline.
pub fn render(r: &Report) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(r).unwrap_or_else(|e| error_document(&e.to_string()));
    v.push(b'\n');
    v
}

/// A minimal document for a run that failed before any report existed.
pub fn error_document(message: &str) -> Vec<u8> {
    let doc =
        serde_json::json!({ "schema_version": crate::model::SCHEMA_VERSION, "error": message });
    serde_json::to_vec_pretty(&doc)
        .unwrap_or_else(|_| b"{\"error\":\"unprintable error\"}".to_vec())
}
