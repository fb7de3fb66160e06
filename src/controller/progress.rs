//! The live one-line progress display on stderr (only when stderr is a terminal).

use fathom_proto::sample::Snapshot;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Shows the receivers' current rate as snapshots arrive.
pub struct Progress {
    bar: Option<ProgressBar>,
    total_s: Option<f64>,
    /// Per end (local, remote): last (t_ns, bytes received) and the latest rate.
    ends: [(Option<(i64, u64)>, f64); 2],
}

impl Progress {
    /// A display for a test of `total_s` seconds (None: counted test); off unless `wanted` and
    /// stderr is a terminal.
    pub fn new(wanted: bool, total_s: Option<f64>) -> Self {
        let bar = (wanted && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b.set_message("starting");
            b
        });
        Progress { bar, total_s, ends: [(None, 0.0); 2] }
    }

    /// Takes a snapshot of end `end` (0 local, 1 remote).
    pub fn snapshot(&mut self, end: usize, s: &Snapshot) {
        let Some(bar) = &self.bar else { return };
        let bytes: u64 = s.flows.iter().map(|f| f.received).sum();
        let (last, rate) = &mut self.ends[end];
        if let Some((t, b)) = *last {
            let dt = (s.t_ns - t) as f64 / 1e9;
            if dt > 0.0 {
                *rate = bytes.saturating_sub(b) as f64 * 8.0 / dt;
            }
        }
        *last = Some((s.t_ns, bytes));
        let total = self.ends[0].1 + self.ends[1].1;
        let elapsed = s.t_ns as f64 / 1e9;
        let time = match self.total_s {
            Some(t) => format!("{elapsed:5.1}/{t:.0} s"),
            None => format!("{elapsed:5.1} s"),
        };
        bar.set_message(format!("{time}  {:.2} Gbit/s", total / 1e9));
    }

    /// Removes the line.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
