//! Interval lines while a run goes, as iperf3 prints them: the table's header and column heads
//! first, then each interval's line once every end still running has passed it (with, on
//! request, one line per client host under it), and after the run the rest of the table
//! ([`crate::table::rest`]). Together they read as the table printed after the run.

use crate::model::Report;
use crate::run::RunData;
use crate::table::{self, Columns};

/// What has been printed of one run's intervals.
#[derive(Clone, Debug)]
pub struct Live {
    columns: Columns,
    per_host: bool,
    printed: usize,
}

impl Live {
    /// Lines for `run` (its plan and ends set, no snapshots needed); `per_host` adds each
    /// client host's share under every interval of a test with several client hosts.
    pub fn new(run: &RunData, per_host: bool) -> Live {
        Live {
            columns: Columns::of_plan(&run.plan),
            per_host: per_host && run.multi_host(),
            printed: 0,
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
    /// (empty when there are none).
    pub fn lines(&mut self, run: &RunData, done: &[bool]) -> String {
        let mut out = String::new();
        for (iv, hosts) in crate::intervals::live(run, done, self.printed, self.per_host) {
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
