//! Diagnosis from measurements: a finished run's [`Report`] and the settings read on the host
//! in, ranked findings ([`Advice`]) out. One file per cause; each cause checks the figures it
//! cites before it speaks, and stays silent when a figure it needs is missing. The causes and
//! their thresholds are in docs/advisor.md ("Findings from a run").

mod cpu;
mod file;
#[cfg(test)]
mod fixture;
mod found;
mod loss;
mod nagle;
mod render;
#[cfg(test)]
mod tests;
mod tls;
mod window;

pub use render::list;

use crate::{Confidence, Settings, Severity};
use fathom_report::model::{Advice, Report};
use found::Found;

/// Every cause's id, in the order the causes are checked (docs/advisor.md).
pub const IDS: &[&str] = &[
    "buffer_clamped",
    "receive_window",
    "autotuning_max",
    "receiver_slow",
    "send_buffer",
    "cpu_bound",
    "path_loss",
    "udp_socket_buffer",
    "udp_path_loss",
    "nagle_delayed_ack",
    "file_io_size",
    "file_disk",
    "tls_cipher",
];

/// The findings for run `r` with the settings `s` (read on the host; empty when unknown),
/// ranked: warnings before notes, surer before less sure, then in the order of [`IDS`].
pub fn diagnose(r: &Report, s: &Settings) -> Vec<Advice> {
    let mut out = window::findings(r, s);
    out.extend(cpu::findings(r, s));
    out.extend(loss::findings(r));
    out.extend(nagle::findings(r));
    out.extend(file::findings(r));
    out.extend(tls::findings(r));
    if on_loopback(r) {
        out.iter_mut().for_each(loopback_note);
    }
    if out.iter().any(|f| f.id == "path_loss") {
        out.iter_mut().for_each(after_loss);
    }
    if out.iter().any(|f| f.id == "file_disk") {
        out.iter_mut().for_each(after_disk);
    }
    if out.iter().any(|f| f.id == "tls_cipher") {
        out.iter_mut().for_each(after_tls);
    }
    out.sort_by_key(|f| (f.severity, f.confidence));
    out.into_iter().map(Found::advice).collect()
}

/// The causes of [`IDS`] from `first` to `last`, both included.
fn ids_from(first: &str, last: &str) -> &'static [&'static str] {
    let at = |id| IDS.iter().position(|i| *i == id).unwrap_or(IDS.len());
    IDS.get(at(first)..=at(last)).unwrap_or(&[])
}

/// Window, buffer, CPU and TCP loss findings on loopback become notes: there the RTT measures
/// scheduling, not a path, a CPU (where fathom places each end by default) is what carries the
/// bytes, and a retransmit is a timeout of a starved end, not a loss on a wire.
/// These are the causes of [`IDS`] from `receive_window` to `path_loss`.
fn loopback_note(f: &mut Found) {
    if ids_from("receive_window", "path_loss").contains(&f.id) {
        f.severity = Severity::Note;
        f.confidence = Confidence::Low;
        f.why = format!(
            "on loopback the RTT measures scheduling and the CPU is the path: {}",
            f.why
        );
    }
}

/// A buffer or window limit on a path that lost packets ranks after the loss: recovery keeps
/// the unacknowledged data in the send buffer and the out-of-order data in the receive buffer,
/// so the limit is partly the loss's doing (a 1% lossy link showed the send buffer limiting 31%
/// of the time beside 1077 retransmits), and mending the loss comes first.
fn after_loss(f: &mut Found) {
    if matches!(f.id, "send_buffer" | "receive_window") {
        f.confidence = Confidence::Low;
        f.why = format!(
            "{}; the path also lost packets, and loss recovery holds data in the buffers, so \
             the loss comes first",
            f.why
        );
    }
}

/// A copy whose time went to a disk: what the network findings say ranks after the disk's,
/// since the network's share of the copy's time was the smaller (the stages say so).
fn after_disk(f: &mut Found) {
    if ids_from("buffer_clamped", "path_loss").contains(&f.id) {
        f.confidence = Confidence::Low;
        f.why = format!(
            "{}; the copy spent longer in a disk than in the network, so the disk comes first",
            f.why
        );
    }
}

/// On a TLS stream the full CPU is the cipher's doing: the CPU-bound finding ranks after the
/// TLS one, which names the cheaper cipher to measure.
fn after_tls(f: &mut Found) {
    if f.id == "cpu_bound" {
        f.confidence = Confidence::Low;
        f.why = format!(
            "{}; the stream is TLS, and encryption is what filled the CPU (tls_cipher)",
            f.why
        );
    }
}

/// True when every flow's receiver is a loopback address.
fn on_loopback(r: &Report) -> bool {
    !r.flows.is_empty()
        && r.flows.iter().all(|f| {
            f.receiver
                .parse::<std::net::SocketAddr>()
                .is_ok_and(|a| a.ip().is_loopback())
        })
}
