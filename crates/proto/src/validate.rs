//! The bounds of a [`TestPlan`], checked by the same code on both ends: the controller before it
//! opens a socket, the agent before it runs anything. Every bound keeps the engine's arithmetic
//! and allocations finite; an error names the plan field and the value.
//!
//! Also here: an estimate of the memory one end of a plan needs, which each end checks against
//! its budget ([`TEST_MEMORY_BUDGET`], and the agent's `--max-memory`).

use crate::plan::{KindId, Limit, SideOptions, TestPlan};

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
/// Memory one end of one test may need, by [`TestPlan::memory_estimate`].
pub const TEST_MEMORY_BUDGET: u64 = 1 << 30;

/// Per worker thread, besides its buffers: its latency histogram, event list and timer.
const WORKER_OVERHEAD: u64 = 256 << 10;
/// Per flow, besides its in-flight bookkeeping: its state, counters and sampled TCP_INFO.
const FLOW_OVERHEAD: u64 = 4 << 10;
/// Bookkeeping per transaction in flight.
const PER_IN_FLIGHT: u64 = 8;
/// In-flight cap of an open-loop flow (the engine's pacer holds at most this many).
const OPEN_LOOP_IN_FLIGHT: u64 = 65_536;
/// The read buffer an end picks itself when the plan leaves it (its L1 size) is at most this.
const DEFAULT_READ: u64 = 128 << 10;

/// A plan field out of bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct PlanError {
    /// The field, as a path into the plan (`rr.burst`, `server.affinity`).
    pub field: &'static str,
    /// What is wrong, with the value.
    pub message: String,
}

fn fail(field: &'static str, message: String) -> Result<(), PlanError> {
    Err(PlanError { field, message })
}

/// `value` within `lo..=hi`, else an error naming `field` and `unit`.
fn within(field: &'static str, value: u64, lo: u64, hi: u64, unit: &str) -> Result<(), PlanError> {
    if value < lo || value > hi {
        return fail(
            field,
            format!("{value}{unit} is outside {lo}{unit}..={hi}{unit}"),
        );
    }
    Ok(())
}

/// A duration within `lo..=hi` ns, else an error naming `field`, in readable units.
fn within_ns(field: &'static str, value: u64, lo: u64, hi: u64) -> Result<(), PlanError> {
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
fn readable_ns(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{} ms", n as f64 / 1e6),
        n => format!("{n} ns"),
    }
}

impl TestPlan {
    /// Checks every field against its bounds; the first one out of bounds is the error.
    pub fn validate(&self) -> Result<(), PlanError> {
        self.validate_flows()?;
        self.validate_timing()?;
        within(
            "write_size",
            self.write_size.into(),
            1,
            MAX_IO.into(),
            " bytes",
        )?;
        within(
            "read_size",
            self.read_size.into(),
            0,
            MAX_IO.into(),
            " bytes",
        )?;
        self.validate_rr()?;
        self.validate_udp()?;
        self.validate_file()?;
        self.validate_tls()?;
        self.validate_socket()?;
        validate_side(
            &self.client,
            ["client.affinity", "client.cpu_set", "client.threads"],
        )?;
        validate_side(
            &self.server,
            ["server.affinity", "server.cpu_set", "server.threads"],
        )
    }

    fn validate_flows(&self) -> Result<(), PlanError> {
        if self.flows.is_empty() {
            return fail("flows", "the test has no flows".into());
        }
        if self.flows.len() > MAX_FLOWS {
            return fail(
                "flows",
                format!("{} flows; at most {MAX_FLOWS}", self.flows.len()),
            );
        }
        match self
            .flows
            .iter()
            .enumerate()
            .find(|(i, f)| f.id as usize != *i)
        {
            Some((i, f)) => fail(
                "flows.id",
                format!("flow {i} has id {}; ids go 0, 1, 2, ... in order", f.id),
            ),
            None => Ok(()),
        }
    }

    fn validate_timing(&self) -> Result<(), PlanError> {
        match self.limit {
            Limit::Time { duration_ns } => {
                within_ns("limit.duration", duration_ns, 1, MAX_DURATION_NS)?
            }
            Limit::Bytes(n) => within("limit.bytes", n, 1, MAX_COUNT, "")?,
            Limit::Transactions(n) => within("limit.transactions", n, 1, MAX_COUNT, "")?,
            Limit::Datagrams(n) => within("limit.datagrams", n, 1, MAX_COUNT, "")?,
        }
        if matches!(self.limit, Limit::Datagrams(_)) && self.udp.is_none() {
            return fail(
                "limit.datagrams",
                format!("{} tests do not count datagrams", self.kind.name()),
            );
        }
        if matches!(self.limit, Limit::Transactions(_)) && self.rr.is_none() {
            return fail(
                "limit.transactions",
                format!("{} tests do not count transactions", self.kind.name()),
            );
        }
        within_ns("omit", self.omit_ns, 0, MAX_DURATION_NS)?;
        within_ns(
            "interval",
            self.interval_ns,
            MIN_INTERVAL_NS,
            MAX_INTERVAL_NS,
        )?;
        // Sampling a timed test less than once is absurd; up to 1 s is always allowed, so that
        // the default interval fits a short test.
        if let Limit::Time { duration_ns } = self.limit {
            let test = self.omit_ns + duration_ns;
            if self.interval_ns > test.max(1_000_000_000) {
                return fail(
                    "interval",
                    format!(
                        "{} is longer than the whole test ({})",
                        readable_ns(self.interval_ns),
                        readable_ns(test)
                    ),
                );
            }
        }
        Ok(())
    }

    fn validate_rr(&self) -> Result<(), PlanError> {
        let Some(rr) = &self.rr else {
            if self.kind.is_request_response() {
                return fail(
                    "rr",
                    format!(
                        "{} is a request/response kind; the plan has no request/response options",
                        self.kind.name()
                    ),
                );
            }
            return Ok(());
        };
        if !self.kind.is_request_response() {
            return fail(
                "rr",
                format!(
                    "{} is not a request/response kind; the plan has request/response options",
                    self.kind.name()
                ),
            );
        }
        let largest = if self.kind.is_datagram() {
            MAX_UDP
        } else {
            MAX_IO
        };
        within("rr.request", rr.request.into(), 1, largest.into(), " bytes")?;
        within(
            "rr.response",
            rr.response.into(),
            1,
            largest.into(),
            " bytes",
        )?;
        within("rr.burst", rr.burst.into(), 1, MAX_BURST.into(), "")?;
        if let Some(r) = rr.rate {
            if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) {
                return fail(
                    "rr.rate",
                    format!("{r} is not a rate above 0 and at most {MAX_RATE} per second"),
                );
            }
        }
        within_ns("rr.udp_timeout", rr.udp_timeout_ns, 0, MAX_UDP_TIMEOUT_NS)?;
        if let Some(n) = rr.test_drop_every {
            within("rr.test_drop_every", n.into(), 1, u32::MAX.into(), "")?;
        }
        Ok(())
    }

    fn validate_socket(&self) -> Result<(), PlanError> {
        let s = &self.socket;
        let max = MAX_SOCKET_BUFFER.into();
        if let Some(b) = s.sndbuf {
            within("socket.sndbuf", b.into(), 1, max, " bytes")?;
        }
        if let Some(b) = s.rcvbuf {
            within("socket.rcvbuf", b.into(), 1, max, " bytes")?;
        }
        if let Some(m) = s.mss {
            within("socket.mss", m.into(), 88, 65_535, " bytes")?;
        }
        if let Some(cc) = &s.cc {
            let fine = !cc.is_empty()
                && cc.len() <= MAX_CC_NAME
                && cc.bytes().all(|b| b.is_ascii_graphic());
            if !fine {
                return fail(
                    "socket.cc",
                    format!("{cc:?} is not a name of 1 to {MAX_CC_NAME} ASCII letters"),
                );
            }
        }
        Ok(())
    }

    /// Bytes one end needs at most: its worker threads' buffers and its flows' bookkeeping and
    /// own buffers (a UDP sender's datagram slots, a udp_rr flow's request and response).
    /// `side` is that end's options, `flows` the number of flows it runs, `cpus` its CPUs
    /// (the default thread count).
    pub fn memory_estimate(&self, side: &SideOptions, flows: usize, cpus: u32) -> u64 {
        let flows = flows as u64;
        let threads = u64::from(side.threads.unwrap_or(cpus)).clamp(1, flows.max(1));
        let read = match self.read_size {
            0 => DEFAULT_READ,
            n => n.into(),
        };
        let write = u64::from(self.write_size) * if self.zerocopy { 2 } else { 1 };
        let in_flight = self.rr.as_ref().map_or(0, |rr| match rr.rate {
            Some(_) => OPEN_LOOP_IN_FLIGHT,
            None => rr.burst.into(),
        });
        let file_buffer = self.file.as_ref().map_or(0, |f| u64::from(f.io));
        let tls = self.tls.as_ref().map_or(0, |_| crate::tls::SESSION_MEMORY);
        let udp = self.udp.as_ref().map_or(0, |u| u.flow_memory());
        let datagrams = match (self.kind, &self.rr) {
            (KindId::UdpRr, Some(rr)) => u64::from(rr.request) + u64::from(rr.response),
            _ => 0,
        };
        let per_flow =
            FLOW_OVERHEAD + in_flight * PER_IN_FLIGHT + file_buffer + tls + udp + datagrams;
        threads
            .saturating_mul(WORKER_OVERHEAD + write + read)
            .saturating_add(flows.saturating_mul(per_flow))
    }
}

/// Checks one end's options; `fields` name its affinity, cpu_set and threads.
fn validate_side(s: &SideOptions, fields: [&'static str; 3]) -> Result<(), PlanError> {
    let [affinity, cpu_set, threads] = fields;
    for (field, list) in [(affinity, &s.affinity), (cpu_set, &s.cpu_set)] {
        let Some(list) = list else { continue };
        if list.len() > CPU_SETSIZE as usize {
            return fail(
                field,
                format!("{} CPUs listed; at most {CPU_SETSIZE}", list.len()),
            );
        }
        if let Some(cpu) = list.iter().find(|c| **c >= CPU_SETSIZE) {
            return fail(
                field,
                format!("CPU {cpu} is not below {CPU_SETSIZE} (CPU_SETSIZE)"),
            );
        }
    }
    if let Some(t) = s.threads {
        within(threads, t.into(), 1, MAX_THREADS.into(), "")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Direction, FlowPlan, KindId, RrOptions};

    fn stream() -> TestPlan {
        TestPlan {
            flows: vec![FlowPlan {
                id: 0,
                dir: Direction::Forward,
            }],
            ..TestPlan::default()
        }
    }

    fn rr() -> TestPlan {
        TestPlan {
            kind: KindId::Rr,
            rr: Some(RrOptions {
                request: 1,
                response: 1,
                burst: 1,
                rate: None,
                udp_timeout_ns: 0,
                test_drop_every: None,
            }),
            ..stream()
        }
    }

    /// Puts one field of a sane plan out of bounds.
    type Spoil = fn(&mut TestPlan);

    fn field_of(p: &TestPlan) -> &'static str {
        p.validate().expect_err("out of bounds").field
    }

    #[test]
    fn sane_plans_pass() {
        stream().validate().unwrap();
        rr().validate().unwrap();
    }

    #[test]
    fn each_defect_of_the_hostile_probe_is_refused_by_field() {
        let mut p = stream();
        p.server.affinity = Some(vec![1024]);
        assert_eq!(field_of(&p), "server.affinity", "D1");
        let mut p = rr();
        p.rr.as_mut().unwrap().burst = u32::MAX;
        assert_eq!(field_of(&p), "rr.burst", "D2");
        let mut p = stream();
        p.limit = Limit::Bytes(10 << 20);
        p.interval_ns = 18_446_744_073_700_000_000;
        assert_eq!(field_of(&p), "interval", "D3");
        let mut p = rr();
        p.rr.as_mut().unwrap().response = 0;
        assert_eq!(field_of(&p), "rr.response", "D4");
        let mut p = rr();
        p.rr.as_mut().unwrap().request = 0;
        assert_eq!(field_of(&p), "rr.request", "D5");
        let mut p = rr();
        p.rr = None;
        let e = p.validate().unwrap_err();
        assert!(e.to_string().contains("no request/response options"), "{e}");
    }

    #[test]
    fn every_field_is_bounded() {
        let cases: Vec<(&str, Spoil)> = vec![
            ("flows", |p| p.flows.clear()),
            ("flows.id", |p| p.flows[0].id = 7),
            ("write_size", |p| p.write_size = 0),
            ("read_size", |p| p.read_size = MAX_IO + 1),
            ("limit.duration", |p| {
                p.limit = Limit::Time {
                    duration_ns: u64::MAX,
                }
            }),
            ("limit.bytes", |p| p.limit = Limit::Bytes(0)),
            ("omit", |p| p.omit_ns = u64::MAX),
            ("interval", |p| p.interval_ns = 1),
            ("interval", |p| p.interval_ns = 60_000_000_000),
            ("socket.mss", |p| p.socket.mss = Some(1)),
            ("socket.sndbuf", |p| p.socket.sndbuf = Some(0)),
            ("socket.cc", |p| p.socket.cc = Some("x".repeat(16))),
            ("client.cpu_set", |p| p.client.cpu_set = Some(vec![0; 1025])),
            ("client.threads", |p| p.client.threads = Some(0)),
            ("rr", |p| p.rr = rr().rr),
        ];
        for (field, spoil) in cases {
            let mut p = stream();
            spoil(&mut p);
            assert_eq!(field_of(&p), field);
        }
        let mut p = rr();
        p.kind = KindId::UdpRr;
        p.rr.as_mut().unwrap().request = MAX_UDP + 1;
        assert_eq!(field_of(&p), "rr.request");
        let mut p = rr();
        p.rr.as_mut().unwrap().rate = Some(f64::NAN);
        assert_eq!(field_of(&p), "rr.rate");
    }

    #[test]
    fn memory_counts_threads_buffers_and_flows() {
        let mut p = stream();
        p.write_size = 64 << 20;
        p.flows = (0..8)
            .map(|id| FlowPlan {
                id,
                dir: Direction::Forward,
            })
            .collect();
        let one = p.memory_estimate(&SideOptions::default(), 8, 1);
        let eight = p.memory_estimate(&SideOptions::default(), 8, 64);
        assert!(one > 64 << 20 && one < 66 << 20, "{one}");
        assert!(
            eight > 512 << 20 && eight < 530 << 20,
            "{eight}: at most one thread per flow"
        );
    }

    /// `udp -R -P 32 --size 65507 --batch 1024` peaked at 2,167 MB on an agent that admitted it
    /// under `--max-memory 512M`: each sending flow holds a batch of datagram slots, 64 MB here.
    #[test]
    fn memory_counts_udp_senders_datagram_slots() {
        let mut p = stream();
        p.kind = KindId::Udp;
        p.udp = Some(crate::udp::UdpOptions {
            size: MAX_UDP,
            batch: 1024,
            rate_bps: None,
            pps: None,
            blast: false,
            faults: None,
            gso: false,
        });
        p.write_size = p.udp.as_ref().unwrap().write_bytes();
        p.read_size = p.udp.as_ref().unwrap().read_bytes();
        p.flows = (0..32)
            .map(|id| FlowPlan {
                id,
                dir: Direction::Reverse,
            })
            .collect();
        p.validate().unwrap();
        let need = p.memory_estimate(&SideOptions::default(), 32, 2);
        let slots = 32 * u64::from(MAX_UDP) * 1024;
        assert!(
            need > slots && need < slots + (400 << 20),
            "{} MB for 32 flows of 64 MB of slots each",
            need >> 20
        );
    }
}
