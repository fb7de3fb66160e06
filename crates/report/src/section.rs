//! A kind's report section: what the report's generic code asks of a kind (its options as run,
//! its figures of the window and of each interval, its series metrics, its interval columns,
//! its flow rows, its summary lines, its CSV columns). A section's JSON object is its typed
//! value in the model ([`crate::model::kind`]). Each kind's section lives in its folder,
//! `sections/<kind>/` (`mod.rs` the section and its table, `figures.rs` the figures, `model.rs`
//! the records); [`crate::sections`] declares them and picks the one of a report or a plan.
//! The defaults write the stream's table (`table_stream.rs`), which is no section: the base
//! every stream-like kind shares.

use crate::metric::Metric;
use crate::model::{FlowResult, Interval, KindInterval, Report, Summary, TestEcho};
use crate::run::View;
use crate::table_stream;
use fathom_proto::plan::TestPlan;
use fathom_proto::sample::Snapshot;
use std::fmt::Debug;

pub use crate::cells::Item;

/// The snapshots bounding one interval at end `e`: `span(e)`, none if that end has no such
/// interval.
pub type Span<'s> = dyn Fn(usize) -> Option<(&'s Snapshot, &'s Snapshot)> + 's;

/// A kind's section of the report: its figures (filled by [`crate::build`]), the terminal table
/// and the CSV.
pub trait Section: Debug + Sync {
    /// Adds the kind's options as run to the test's echo: its `test.<kind>` part, and any
    /// shared field the kind decides (a file copy's byte count).
    fn echo(&self, _plan: &TestPlan, _echo: &mut TestEcho) {}

    /// What a `-n` test of the kind moves, `bytes` of it: "200 MB per direction" unless the
    /// kind moves something else (a copy: "a 200 MB file").
    fn bytes_limit(&self, bytes: u64) -> String {
        format!("{} per direction", crate::floor::text::human_bytes(bytes))
    }

    /// Fills the kind's figures of the measured window into the summary and the flows.
    fn fill(&self, _v: &View<'_>, _summary: &mut Summary, _flows: &mut [FlowResult]) {}

    /// The kind's figures of one interval (`intervals[].<kind>`), from each end's `span`.
    fn interval<'s>(&self, _v: &View<'_>, _span: &Span<'s>) -> Option<KindInterval> {
        None
    }

    /// A host's transactions/s from its flows (`flows`), none unless the kind counts
    /// transactions.
    fn transactions_per_second(
        &self,
        _flows: &mut dyn Iterator<Item = &FlowResult>,
    ) -> Option<f64> {
        None
    }

    /// The kind's own metrics (`sections/<kind>/metrics.rs`), which the registry
    /// ([`crate::metric`]) lists after the ones every run has; none by default.
    fn metrics(&self) -> &'static [Metric] {
        &[]
    }

    /// The interval table's column heads: the stream's unless the kind has its own.
    fn head(&self) -> String {
        table_stream::head()
    }

    /// One interval's figures under `label` (its time span, or a host's name): the stream's
    /// unless the kind has its own.
    fn row(&self, label: &str, iv: &Interval) -> String {
        table_stream::row(label, iv)
    }

    /// The per-flow table, its head and one line per flow: the stream's unless the kind has
    /// its own.
    fn flows(&self, r: &Report) -> Vec<String> {
        table_stream::flows(&r.flows)
    }

    /// The summary's lines after the TLS ones: the stream's, with
    /// [`Section::after_retransmits`] after its retransmits, unless the kind has its own.
    fn summary(&self, r: &Report, item: &mut Item<'_>) {
        table_stream::summary(r, item, &mut |item| self.after_retransmits(r, item));
    }

    /// A stream-like kind's own summary lines, printed after the stream's retransmits (a file
    /// copy's, a profile's); none by default.
    fn after_retransmits(&self, _r: &Report, _item: &mut Item<'_>) {}

    /// The CSV columns after the common ones (none unless the kind has its own).
    fn csv_heads(&self) -> &'static [&'static str] {
        &[]
    }

    /// A CSV row's cells under [`Section::csv_heads`]: an interval's (`Some`) or a flow's.
    fn csv_cells(&self, _iv: Option<&Interval>) -> Vec<String> {
        Vec::new()
    }
}
