//! A kind's report section: what the report's generic renderers ask of a kind (its interval
//! columns, its flow rows, its summary lines, its CSV columns). A section's JSON object is its
//! typed value in the model ([`crate::model::kind`]). Each kind's section lives in its
//! `table_<kind>.rs`; [`crate::sections`] picks the one of a report or a plan.

use crate::model::{Interval, Report};
use std::fmt::Debug;

/// One labelled summary line's printer.
pub type Item<'a> = dyn FnMut(&str, String) + 'a;

/// A kind's section of the terminal table and the CSV.
pub trait Section: Debug + Sync {
    /// The interval table's column heads.
    fn head(&self) -> String;

    /// One interval's figures under `label` (its time span, or a host's name).
    fn row(&self, label: &str, iv: &Interval) -> String;

    /// The per-flow table: its head and one line per flow.
    fn flows(&self, r: &Report) -> Vec<String>;

    /// The summary's lines after the TLS ones.
    fn summary(&self, r: &Report, item: &mut Item<'_>);

    /// The CSV columns after the common ones (none unless the kind has its own).
    fn csv_heads(&self) -> &'static [&'static str] {
        &[]
    }

    /// A CSV row's cells under [`Section::csv_heads`]: an interval's (`Some`) or a flow's.
    fn csv_cells(&self, _iv: Option<&Interval>) -> Vec<String> {
        Vec::new()
    }
}
