//! The live one-line progress display on stderr (only when stderr is a terminal), and the
//! writer that prints interval lines on stdout without mixing with it.

use crate::stdout::write_stdout;
use fathom_proto::sample::Snapshot;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Shows the receivers' current rate (or transactions per second) as snapshots arrive.
pub struct Progress {
    bar: Option<ProgressBar>,
    total_s: Option<f64>,
    /// Per end.
    ends: Vec<EndRate>,
}

/// One end's last reading and the rates since the one before.
#[derive(Clone, Copy, Default)]
struct EndRate {
    /// (t_ns, bytes received, transactions) at the last snapshot.
    last: Option<(i64, u64, u64)>,
    /// Bits received per second.
    rate: f64,
    /// Transactions per second.
    tps: f64,
}

impl Progress {
    /// A display over `ends` ends for a test of `total_s` seconds (None: counted test); off
    /// unless `wanted` and stderr is a terminal.
    pub fn new(wanted: bool, total_s: Option<f64>, ends: usize) -> Self {
        let bar = (wanted && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b.set_message("starting");
            b
        });
        Progress {
            bar,
            total_s,
            ends: vec![EndRate::default(); ends],
        }
    }

    /// Takes a snapshot of end `end`.
    pub fn snapshot(&mut self, end: usize, s: &Snapshot) {
        let Some(bar) = &self.bar else { return };
        let bytes: u64 = s.flows.iter().map(|f| f.received).sum();
        let tx: u64 = s.flows.iter().map(|f| f.transactions).sum();
        let Some(e) = self.ends.get_mut(end) else {
            return;
        };
        if let Some((t, b, n)) = e.last {
            let dt = (s.t_ns - t) as f64 / 1e9;
            if dt > 0.0 {
                e.rate = bytes.saturating_sub(b) as f64 * 8.0 / dt;
                e.tps = tx.saturating_sub(n) as f64 / dt;
            }
        }
        e.last = Some((s.t_ns, bytes, tx));
        let elapsed = s.t_ns as f64 / 1e9;
        let time = match self.total_s {
            Some(t) => format!("{elapsed:5.1}/{t:.0} s"),
            None => format!("{elapsed:5.1} s"),
        };
        let rate: f64 = self.ends.iter().map(|e| e.rate).sum();
        // The asking and the answering ends both count transactions: show the asking side's sum.
        let tps = self.ends.iter().map(|e| e.tps).sum::<f64>() / 2.0;
        let what = if tps > 0.0 {
            format!("{tps:.0} tx/s")
        } else {
            fathom_report::table::rate(rate)
        };
        bar.set_message(format!("{time}  {what}"));
    }

    /// Writes `text` on stdout, the line cleared meanwhile so that the two never mix.
    pub fn print(&self, text: &str) {
        let write = || write_stdout(text.as_bytes());
        match &self.bar {
            Some(b) => b.suspend(write),
            None => write(),
        }
    }

    /// Removes the line.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
