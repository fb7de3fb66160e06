//! Exporters: one per output format, each a pure function from a document to bytes behind one
//! trait, so a command picks a format without knowing what it does. The formats live in their
//! own files: [`crate::table::Table`] (the terminal), [`crate::json::Json`],
//! [`crate::csv::Csv`] and [`crate::html::Html`]. Plots are drawn by [`crate::plot::render`]
//! instead: a chart has a size and an image format, and drawing it can fail.
//!
//! The documents: a run's [`Report`], a [`Series`], a [`Comparison`], the store's
//! [`RunListing`] and [`SeriesListing`], and a [`StudyDocument`]. Each is pinned by a schema
//! under `docs/schema/` and described in `docs/output.md`.

use crate::comparison::Comparison;
use crate::listing::{RunListing, SeriesListing};
use crate::series::Series;
use crate::study::StudyDocument;
use crate::Report;
use serde::Serialize;

/// Writes documents of type `D` in one format.
pub trait Exporter<D: ?Sized> {
    /// The document in this format, ready for stdout or a file.
    fn export(&self, doc: &D) -> Vec<u8>;
}

/// A JSON document fathom prints: it has a schema under `docs/schema/`.
pub trait Document: Serialize {}

impl Document for Report {}
impl Document for Series {}
impl Document for Comparison {}
impl Document for RunListing {}
impl Document for SeriesListing {}
impl Document for StudyDocument {}
