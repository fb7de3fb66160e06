//! Exporters: one per output format, each a pure function from a document to bytes behind one
//! trait, so a command picks a format without knowing what it does. The formats live in their
//! own files: [`crate::table::Table`] (the terminal), [`crate::json::Json`],
//! [`crate::csv::Csv`] and [`crate::html::Html`]. Plots are drawn by [`crate::plot::render`]
//! instead: a chart has a size and an image format, and drawing it can fail.
//!
//! The documents: a run's [`Report`](crate::Report), a [`Series`](crate::series::Series), a
//! [`Comparison`](crate::comparison::Comparison), the store's
//! [`RunListing`](crate::listing::RunListing) and
//! [`SeriesListing`](crate::listing::SeriesListing), and a
//! [`StudyDocument`](crate::study::StudyDocument); each declares itself a [`Document`] where
//! it is defined. Each is pinned by a schema under `docs/schema/` and described in
//! `docs/output.md`.

use serde::Serialize;

/// Writes documents of type `D` in one format.
pub trait Exporter<D: ?Sized> {
    /// The document in this format, ready for stdout or a file.
    fn export(&self, doc: &D) -> Vec<u8>;
}

/// A JSON document fathom prints: it has a schema under `docs/schema/`.
pub trait Document: Serialize {}
