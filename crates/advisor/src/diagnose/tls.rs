//! The TLS cause: a TLS stream whose encrypting or decrypting CPU was full (`cpu::full_cpu`), so
//! the cipher's CPU cost (the report's CPU seconds per GB) set the rate. It is a warning, and the
//! CPU-bound finding on the same run ranks after it (the cipher is what filled the CPU).

use super::found::{pct, Found};
use crate::{Confidence, Severity};
use fathom_report::model::Report;

/// The TLS finding of run `r`.
pub(super) fn findings(r: &Report) -> Option<Found> {
    let tls = r.summary.tls.as_ref()?;
    let per_gb = tls.cpu_s_per_gb.as_ref()?;
    let (host, (cpu, _)) = r
        .hosts
        .iter()
        .find_map(|h| Some((h, super::cpu::full_cpu(r, h)?)))?;
    let cost = per_gb.local.max(per_gb.remote);
    let ours = fathom_report::warnings::bound::pinned_share(r, host, cpu.cpu);
    let pinned = match ours > 0.0 {
        true => format!(", {} of it by fathom's threads pinned there", pct(ours)),
        false => String::new(),
    };
    Some(Found {
        id: "tls_cipher",
        severity: Severity::Warning,
        confidence: Confidence::Medium,
        seen: format!(
            "the sessions used {} and cost {cost:.2} CPU s per GB; CPU {} on {}, where fathom's threads ran, was {} busy{pinned}",
            tls.suite,
            cpu.cpu,
            host.name,
            pct(cpu.total)
        ),
        figures: vec![
            ("cpu_s_per_gb", cost),
            ("cpu", f64::from(cpu.cpu)),
            ("cpu_busy_pct", cpu.total),
            ("fathom_pinned_pct", ours),
        ],
        why: "encryption runs on the CPU that sends or reads each flow: when that CPU is full the cipher's cost sets the rate".into(),
        change: change(&tls.suite),
    })
}

/// A cheaper cipher first, unless the sessions already used the cheapest with AES instructions.
fn change(suite: &str) -> String {
    let rest = "--ktls to encrypt in the kernel, or more flows (-P) on more CPUs; compare with the clear stream: --compare-clear";
    match suite.contains("AES_128_GCM") {
        true => format!("more flows on more CPUs (-P 4 with --affinity), or {rest}"),
        false => format!(
            "--cipher aes-128-gcm (cheapest with AES instructions; chacha20-poly1305 without them), {rest}"
        ),
    }
}
