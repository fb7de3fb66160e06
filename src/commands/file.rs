//! `fathom file put|get`: one copy, on the agent the path names or an in-process agent rooted at
//! `--files-root`; a checksum mismatch fails the command (exit 1).

use super::argv::files_root;
use super::output::{self, Format};
use crate::cli::file::FileArgs;
use crate::method::Recorder;
use crate::testbed::Testbed;
use crate::Failure;
use fathom_report::model::KindSummary;

/// Runs a file copy and prints its report.
pub fn run(a: &FileArgs, argv: &[String]) -> Result<(), Failure> {
    let plan = a.plan()?;
    let c = a.common()?;
    let root = match &c.host {
        Some(_) => None,
        None => Some(files_root(a)?),
    };
    let format = Format::of(c.json, c.csv);
    let check = super::doctor_verify::runs(&c)?;
    let bed = Testbed::with_files_root(&c, plan.socket.ipv6, root)?;
    let mut report = bed.run(plan.clone())?;
    if a.compare_stream {
        let beside = bed.run(crate::cli::file::stream_beside(
            &plan,
            report.summary.transfer.total_bytes_received,
        ))?;
        if let Some(KindSummary::File(f)) = report.summary.section.as_mut() {
            f.stream_bits_per_second = Some(beside.summary.transfer.bits_per_second);
        }
    }
    if c.advise {
        super::doctor::advise(&mut report);
    }
    if let Some(runs) = check {
        super::doctor_verify::check(&mut report, runs, argv)?;
    }
    Recorder::open(&c.store, argv).save(&report, argv, None);
    output::print(&report, format);
    super::doctor::print_advice(&report, format);
    output::exit_status(&report, format)?;
    match report.summary.file().and_then(|f| f.checksum_match) {
        Some(true) => Ok(()),
        _ if format == Format::Table => {
            Err(Failure::Runtime("the copy's checksum did not match".into()))
        }
        _ => Err(Failure::Reported),
    }
}
