//! The file copy's section: a stream's terminal table with the copy's lines after the
//! retransmits (checksum, bytes and time at each stage, page cache, bottleneck); its figures in
//! [`figures`], its records in [`model`].

pub mod figures;
pub mod metrics;
pub mod model;

use crate::floor::ratio;
use crate::floor::text::rate;
use crate::metric::Metric;
use crate::model::file::FileSummary;
use crate::model::{FlowResult, KindInterval, Report, Summary, TestEcho};
use crate::run::View;
use crate::section::{Item, Section, Span};
use fathom_proto::plan::TestPlan;

/// The file copy's section: a stream's, with the copy's lines after the retransmits, and the
/// copy's figures.
#[derive(Debug)]
pub struct File;

/// The file copy's section.
pub static FILE: File = File;

impl Section for File {
    /// A copy moves its file; a get does not know the size until the agent opens it.
    fn echo(&self, plan: &TestPlan, echo: &mut TestEcho) {
        echo.bytes = plan.file().and_then(|f| f.size);
    }

    /// A copy moves one file, one way.
    fn bytes_limit(&self, bytes: u64) -> String {
        format!("a {} file", crate::floor::text::human_bytes(bytes))
    }

    fn fill(&self, v: &View<'_>, summary: &mut Summary, _flows: &mut [FlowResult]) {
        figures::fill(v, summary);
    }

    fn interval<'s>(&self, v: &View<'_>, span: &Span<'s>) -> Option<KindInterval> {
        Some(KindInterval::File(figures::interval(v, span)))
    }

    fn metrics(&self) -> &'static [Metric] {
        metrics::METRICS
    }

    /// The copy's lines after the stream's retransmits.
    fn after_retransmits(&self, r: &Report, item: &mut Item<'_>) {
        if let Some(f) = r.summary.file() {
            lines(f, r.summary.transfer.bits_per_second, item);
        }
    }
}

/// The copy's lines: checksum, bytes and time at each stage, page cache, bottleneck.
fn lines(f: &FileSummary, copy_bps: f64, item: &mut Item<'_>) {
    let verdict = match f.checksum_match {
        Some(true) => "match",
        Some(false) => "MISMATCH",
        None => "incomplete",
    };
    item("checksum", format!("{} {verdict}", f.verify));
    item(
        "file bytes",
        format!(
            "read {}, sent {}, received {}, written {}",
            f.stages.disk_read_bytes, f.sent_bytes, f.received_bytes, f.stages.disk_written_bytes
        ),
    );
    item(
        "sending end",
        format!(
            "disk read {:.3} s, network send {:.3} s",
            f.stages.sender_disk_s, f.stages.sender_net_s
        ),
    );
    item(
        "receiving end",
        format!(
            "disk write {:.3} s, network receive {:.3} s, sync+rename {:.3} s",
            f.stages.receiver_disk_s, f.stages.receiver_net_s, f.sync_s
        ),
    );
    if let Some(c) = f.cached_percent {
        item(
            "page cache",
            format!("{c:.0}% of the source cached at the start"),
        );
    }
    item("bottleneck", f.bottleneck.clone());
    if let Some(bps) = f.stream_bits_per_second {
        item(
            "stream beside",
            format!(
                "{} memory to memory on the same path; the copy ran at {:.0}% of it",
                rate(bps),
                100.0 * ratio(copy_bps, bps)
            ),
        );
    }
}
