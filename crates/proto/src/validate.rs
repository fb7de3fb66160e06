//! The bounds of a [`TestPlan`], checked by the same code on both ends: the controller before it
//! opens a socket, the agent before it runs anything. Every bound keeps the engine's arithmetic
//! and allocations finite; an error names the plan field and the value.
//!
//! Also here: an estimate of the memory one end of a plan needs, which each end checks against
//! its budget ([`TEST_MEMORY_BUDGET`], and the agent's `--max-memory`).

pub use crate::bounds::*;
use crate::plan::{Limit, SideOptions, TestPlan};

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
/// Most flows a clear stream runs with a worker thread each on a real path when the plan sets no
/// thread count and the host has fewer CPUs (the engine's `path::PER_FLOW_WORKERS`).
pub const PER_FLOW_WORKERS: u32 = 8;

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
        self.kind.validate(&self.flows, self.tls.is_some())?;
        if let Some(tls) = &self.tls {
            tls.validate(self.kind.id(), self.zerocopy)?;
        }
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
        if matches!(self.limit, Limit::Datagrams(_)) && self.udp().is_none() {
            return fail(
                "limit.datagrams",
                format!("{} tests do not count datagrams", self.kind.name()),
            );
        }
        if matches!(self.limit, Limit::Transactions(_)) && self.rr().is_none() {
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
    /// (the default thread count; a clear stream of at most [`PER_FLOW_WORKERS`] flows may
    /// have one per flow).
    pub fn memory_estimate(&self, side: &SideOptions, flows: usize, cpus: u32) -> u64 {
        let per_flow = flows <= PER_FLOW_WORKERS as usize;
        let default = match (&self.kind, &self.tls) {
            (crate::kind::KindPlan::Stream, None) if per_flow => cpus.max(flows as u32),
            _ => cpus,
        };
        let flows = flows as u64;
        let threads = u64::from(side.threads.unwrap_or(default)).clamp(1, flows.max(1));
        let read = match self.read_size {
            0 => DEFAULT_READ,
            n => n.into(),
        };
        let write = u64::from(self.write_size) * if self.zerocopy { 2 } else { 1 };
        let in_flight = self.rr().map_or(0, |rr| match rr.rate {
            Some(_) => OPEN_LOOP_IN_FLIGHT,
            None => rr.burst.into(),
        });
        let file_buffer = self.file().map_or(0, |f| u64::from(f.io));
        let tls = self.tls.as_ref().map_or(0, |_| crate::tls::SESSION_MEMORY);
        let udp = self.udp().map_or(0, |u| u.flow_memory());
        let datagrams = match (self.kind.id().is_datagram(), self.rr()) {
            (true, Some(rr)) => u64::from(rr.request) + u64::from(rr.response),
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
    use crate::plan::{Direction, FlowPlan, KindPlan, RrOptions};

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
            kind: KindPlan::Rr(RrOptions::default()),
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
        p.kind.rr_mut().unwrap().burst = u32::MAX;
        assert_eq!(field_of(&p), "rr.burst", "D2");
        let mut p = stream();
        p.limit = Limit::Bytes(10 << 20);
        p.interval_ns = 18_446_744_073_700_000_000;
        assert_eq!(field_of(&p), "interval", "D3");
        let mut p = rr();
        p.kind.rr_mut().unwrap().response = 0;
        assert_eq!(field_of(&p), "rr.response", "D4");
        let mut p = rr();
        p.kind.rr_mut().unwrap().request = 0;
        assert_eq!(field_of(&p), "rr.request", "D5");
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
            ("limit.transactions", |p| p.limit = Limit::Transactions(1)),
            ("limit.datagrams", |p| p.limit = Limit::Datagrams(1)),
        ];
        for (field, spoil) in cases {
            let mut p = stream();
            spoil(&mut p);
            assert_eq!(field_of(&p), field);
        }
        let mut p = rr();
        p.kind = KindPlan::UdpRr(RrOptions {
            request: MAX_UDP + 1,
            ..RrOptions::default()
        });
        assert_eq!(field_of(&p), "rr.request");
        let mut p = rr();
        p.kind.rr_mut().unwrap().rate = Some(f64::NAN);
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
        let threads = |t| SideOptions {
            threads: Some(t),
            ..SideOptions::default()
        };
        let one = p.memory_estimate(&threads(1), 8, 1);
        let eight = p.memory_estimate(&SideOptions::default(), 8, 64);
        assert!(one > 64 << 20 && one < 66 << 20, "{one}");
        // A clear stream of up to eight flows may run a worker per flow on one CPU.
        let per_flow = p.memory_estimate(&SideOptions::default(), 8, 1);
        assert!(per_flow > 512 << 20 && per_flow < 530 << 20, "{per_flow}");
        let shared = p.memory_estimate(&SideOptions::default(), 9, 1);
        assert!(
            shared > 64 << 20 && shared < 66 << 20,
            "{shared}: more share one"
        );
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
        p.kind = KindPlan::Udp(crate::udp::UdpOptions {
            size: MAX_UDP,
            batch: 1024,
            rate_bps: None,
            pps: None,
            blast: false,
            faults: None,
            gso: false,
        });
        p.write_size = p.udp().unwrap().write_bytes();
        p.read_size = p.udp().unwrap().read_bytes();
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
