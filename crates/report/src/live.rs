//! Interval lines while a run goes, as iperf3 prints them: the table's header and column heads
//! first, then each interval's line once every end still running has passed it (with, on
//! request, one line per client host under it), and after the run the rest of the table
//! ([`crate::table::rest`]). Together they read as the table printed after the run.

use crate::model::Report;
use crate::run::{Located, RunData, View};
use crate::table::{self, Columns};

/// What has been printed of one run's intervals.
#[derive(Clone, Debug)]
pub struct Live {
    columns: Columns,
    per_host: bool,
    printed: usize,
    /// Where each flow is sent and received, found once (the ends do not change).
    located: Vec<Option<Located>>,
}

impl Live {
    /// Lines for `run` (its plan and ends set, no snapshots needed); `per_host` adds each
    /// client host's share under every interval of a test with several client hosts.
    pub fn new(run: &RunData, per_host: bool) -> Live {
        Live {
            columns: Columns::of_plan(&run.plan),
            per_host: per_host && run.multi_host(),
            printed: 0,
            located: View::locate(run),
        }
    }

    /// The header line, a blank line and the column heads.
    pub fn head(&self, run: &RunData) -> String {
        let report = Report {
            test: crate::build::echo(run),
            ..Report::default()
        };
        format!("{}\n\n{}\n", table::header(&report), self.columns.head())
    }

    /// The lines of the intervals every end not yet `done` has passed since the last call
    /// (empty when there are none). Cheap until a new interval may have closed.
    pub fn lines(&mut self, run: &RunData, done: &[bool]) -> String {
        let mut out = String::new();
        let reached = run
            .ends
            .iter()
            .zip(done)
            .filter(|(_, d)| !**d)
            .map(|(e, _)| e.snaps.len().saturating_sub(1))
            .min();
        if reached.is_some_and(|r| r <= self.printed) {
            return out;
        }
        let v = View::with_located(run, self.located.clone());
        for (iv, hosts) in crate::intervals::live(&v, done, self.printed, self.per_host) {
            out += &self.columns.line(&iv);
            out.push('\n');
            for (name, h) in hosts {
                out += &self.columns.row(&name, &h);
                out.push('\n');
            }
            self.printed += 1;
        }
        out
    }
}
