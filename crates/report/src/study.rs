//! The study document (`fathom study NAME --json`): the study's series, the findings computed
//! from them and the files written. Pinned by `$defs/study` in `docs/schema/series.schema.json`.

use crate::series::Series;
use serde::Serialize;

/// A finished study.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct StudyDocument {
    /// Always `"study"`.
    pub document: String,
    /// The study's name (`fathom study --list`).
    pub study: String,
    /// True for the short form (`--quick`).
    pub quick: bool,
    /// What the data show, one sentence each.
    pub findings: Vec<String>,
    /// The study's sweeps, in order.
    pub series: Vec<Series>,
    /// The files written: the text summary, an SVG and a PNG per chart, `index.html` last.
    pub files: Vec<String>,
}

impl crate::export::Document for StudyDocument {}

impl StudyDocument {
    /// The document of study `study` (quick or not) with its findings, series and files.
    pub fn new(
        study: &str,
        quick: bool,
        findings: Vec<String>,
        series: Vec<Series>,
        files: Vec<String>,
    ) -> StudyDocument {
        StudyDocument {
            document: "study".into(),
            study: study.into(),
            quick,
            findings,
            series,
            files,
        }
    }
}
