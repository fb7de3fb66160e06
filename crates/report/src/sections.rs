//! The sections' registry: which kind's section builds and renders a report or a plan. The
//! only place that knows every kind's section; each record's kind value (a variant per kind
//! that extends the record, its type from `sections/<kind>/model.rs`) is declared beside the
//! record in `model.rs`.

pub mod file;
pub mod profile;
pub mod rr;
pub mod stream;
pub mod udp;

use crate::model::{Interval, KindSummary, KindTest, Report};
use crate::section::Section;
use fathom_proto::kind::{Figure, KindId, Pattern};
use fathom_proto::plan::TestPlan;
use file::FILE;
use profile::PROFILE;
use stream::STREAM;
use udp::Udp;

/// The section of a report's summary and intervals: its kind's, or the stream's when the
/// summary has no kind figures (a failed test's, a stream's).
pub fn of_summary(r: &Report) -> &'static dyn Section {
    match &r.summary.section {
        Some(KindSummary::Rr(_)) => {
            let lossy = r
                .intervals
                .iter()
                .filter_map(Interval::rr)
                .any(|rr| rr.lost.is_some());
            rr::section(lossy)
        }
        Some(KindSummary::Udp(_)) => &Udp,
        Some(KindSummary::File(_)) => &FILE,
        Some(KindSummary::Profile(_)) => &PROFILE,
        None => &STREAM,
    }
}

/// The section of the options a report echoes (what its CSV columns follow).
pub fn of_test(r: &Report) -> &'static dyn Section {
    match &r.test.section {
        Some(KindTest::Rr(_)) => rr::section(false),
        Some(KindTest::Udp(_)) => &Udp,
        None if is_profile(&r.test.kind) => &PROFILE,
        None => &STREAM,
    }
}

/// Whether the kind named `name` runs profile programs.
fn is_profile(name: &str) -> bool {
    KindId::from_name(name).is_some_and(|k| k.descriptor().pattern == Pattern::Program)
}

/// The section of the kind a report's echo names (`test.kind`), for what the kind alone decides
/// even when the test failed before any figure; the stream's for a name it does not know.
pub fn of_kind(name: &str) -> &'static dyn Section {
    match KindId::from_name(name).map(KindId::descriptor) {
        Some(d) if d.is_rr() => rr::section(d.adds(Figure::Lost)),
        Some(d) if d.id == KindId::Udp => &Udp,
        Some(d) if d.id == KindId::File => &FILE,
        Some(d) if d.pattern == Pattern::Program => &PROFILE,
        _ => &STREAM,
    }
}

/// The section a plan's intervals will show while it runs.
pub fn of_plan(plan: &TestPlan) -> &'static dyn Section {
    let d = plan.kind.descriptor();
    if d.is_rr() {
        rr::section(d.adds(Figure::Lost))
    } else if plan.udp().is_some() {
        &Udp
    } else if plan.file().is_some() {
        &FILE
    } else if d.pattern == Pattern::Program {
        &PROFILE
    } else {
        &STREAM
    }
}

/// Every kind's section, once: what the metric registry ([`crate::metric`]) reads each kind's
/// metrics from.
pub fn all() -> [&'static dyn Section; 5] {
    [&STREAM, rr::section(false), &Udp, &FILE, &PROFILE]
}
