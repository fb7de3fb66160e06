//! The bounds every plan is held to, and the error that names the field out of them: shared by
//! the plan's own checks ([`crate::validate`]) and each kind's options (rr.rs, udp.rs, file.rs,
//! tls.rs), which check their own fields.

/// Most flows in one plan (an agent's own `--max-flows` is usually lower).
pub const MAX_FLOWS: usize = 1_000_000;
/// Largest read or write per call, and largest request or response.
pub const MAX_IO: u32 = 64 << 20;
/// Largest UDP payload over IPv4.
pub const MAX_UDP: u32 = 65_507;
/// Longest measured window, and longest warm-up: 30 days each, so that instants stay far from
/// overflowing 64-bit nanoseconds.
pub const MAX_DURATION_NS: u64 = 30 * 86_400 * 1_000_000_000;
/// Shortest interval between samples.
pub const MIN_INTERVAL_NS: u64 = 10_000_000;
/// Longest interval between samples.
pub const MAX_INTERVAL_NS: u64 = 3_600 * 1_000_000_000;
/// Most bytes or transactions a counted test may ask for.
pub const MAX_COUNT: u64 = 1 << 60;
/// Most transactions in flight per connection (each costs 8 bytes of bookkeeping).
pub const MAX_BURST: u32 = 65_536;
/// Highest open-loop rate, transactions per second.
pub const MAX_RATE: f64 = 1e9;
/// Longest UDP transaction timeout.
pub const MAX_UDP_TIMEOUT_NS: u64 = 60 * 1_000_000_000;
/// CPU numbers must be below this (glibc's CPU_SETSIZE), and CPU lists at most this long.
pub const CPU_SETSIZE: u32 = 1024;
/// Most worker threads on one end.
pub const MAX_THREADS: u32 = 1024;
/// Largest socket buffer request.
pub const MAX_SOCKET_BUFFER: u32 = 1 << 30;
/// Longest congestion control name (the kernel's TCP_CA_NAME_MAX, its NUL excluded).
pub const MAX_CC_NAME: usize = 15;
/// Memory one end of one test may need, by `TestPlan::memory_estimate`.
pub const TEST_MEMORY_BUDGET: u64 = 1 << 30;

/// A plan field out of bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct PlanError {
    /// The field, as a path into the plan (`rr.burst`, `server.affinity`).
    pub field: &'static str,
    /// What is wrong, with the value.
    pub message: String,
}

pub(crate) fn fail(field: &'static str, message: String) -> Result<(), PlanError> {
    Err(PlanError { field, message })
}

/// `value` within `lo..=hi`, else an error naming `field` and `unit`.
pub(crate) fn within(
    field: &'static str,
    value: u64,
    lo: u64,
    hi: u64,
    unit: &str,
) -> Result<(), PlanError> {
    if value < lo || value > hi {
        return fail(
            field,
            format!("{value}{unit} is outside {lo}{unit}..={hi}{unit}"),
        );
    }
    Ok(())
}

/// A duration within `lo..=hi` ns, else an error naming `field`, in readable units.
pub(crate) fn within_ns(
    field: &'static str,
    value: u64,
    lo: u64,
    hi: u64,
) -> Result<(), PlanError> {
    if value < lo || value > hi {
        return fail(
            field,
            format!(
                "{} is outside {}..={}",
                readable_ns(value),
                readable_ns(lo),
                readable_ns(hi)
            ),
        );
    }
    Ok(())
}

/// `ns` in s, ms or ns, whichever reads best.
pub(crate) fn readable_ns(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{} ms", n as f64 / 1e6),
        n => format!("{n} ns"),
    }
}
