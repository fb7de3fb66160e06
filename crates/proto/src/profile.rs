//! A workload profile as the agents run it (uperf's model): groups of threads, each thread's
//! flows running a [`Program`] of transactions made of flow operations. The controller side
//! runs the program as written; the agent runs its mirror image ([`Op::mirror`]), so a `write`
//! here is a `read` of the same size there. Sizes drawn at random come from one generator per
//! flow seeded with [`Program::seed`] and the flow's id, so both ends draw the same sizes.
//!
//! A profile file (TOML, `crates/profile`) is parsed, its variables set and checked, and
//! expanded into a [`ProfilePlan`]; each group becomes one test whose plan carries its
//! [`Program`]. Everything here is data with bounds, checked by [`ProfilePlan::validate`] and
//! [`Program::validate`], so a program from a peer is bounded before it runs.

use crate::bounds::{fail, within, PlanError, MAX_IO};
use serde::{Deserialize, Serialize};

/// Most groups in a profile.
pub const MAX_GROUPS: usize = 64;
/// Most threads in one group.
pub const MAX_GROUP_THREADS: u32 = 100_000;
/// Most flows per thread.
pub const MAX_FLOWS_PER_THREAD: u32 = 1_024;
/// Most transactions in a program.
pub const MAX_TRANSACTIONS: usize = 64;
/// Most flow operations in one transaction.
pub const MAX_OPS: usize = 256;
/// Most sizes in a list size.
pub const MAX_SIZE_LIST: usize = 1_024;
/// Most repetitions of one flow operation in a row.
pub const MAX_OP_COUNT: u32 = 1 << 20;
/// Longest think time, µs (one minute).
pub const MAX_THINK_US: u32 = 60_000_000;
/// Longest transaction duration, ms (one day).
pub const MAX_TRANSACTION_MS: u64 = 86_400_000;
/// Most iterations of one transaction.
pub const MAX_ITERATIONS: u64 = 1 << 40;
/// Longest group or profile name.
pub const MAX_NAME: usize = 64;

/// A whole profile, expanded: every variable set, every group's program final.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ProfilePlan {
    /// The profile's name (its file's `name`, else the file's stem).
    pub name: String,
    /// Its groups, in file order; each runs as one test, all at once.
    pub groups: Vec<Group>,
}

/// A group of threads that run the same program against one remote.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Group {
    /// Its name, unique in the profile (the report's label).
    pub name: String,
    /// Threads, each with `flows_per_thread` flows (connections, or UDP sockets).
    pub threads: u32,
    /// Flows per thread.
    pub flows_per_thread: u32,
    /// Where its flows go: a lab host name or an agent's HOST[:PORT]; none: the local
    /// (in-process, loopback) agent.
    pub remote: Option<String>,
    /// What carries its flows.
    pub protocol: Protocol,
    /// TCP_NODELAY on its TCP flows.
    pub nodelay: bool,
    /// SO_SNDBUF and SO_RCVBUF, bytes (uperf's `wndsz`); none: the kernel's autotuning.
    pub window: Option<u32>,
    /// What each of its flows runs.
    pub program: Program,
}

/// What carries a group's flows.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// TCP.
    Tcp,
    /// UDP datagrams (`sendto` and `recv`).
    Udp,
    /// TLS over TCP.
    Tls,
}

/// The transactions one flow runs, in order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Program {
    /// Its transactions, each run to its end before the next starts.
    pub transactions: Vec<Transaction>,
    /// Seeds the random sizes (with the flow id), the same at both ends.
    pub seed: u64,
}

/// Flow operations repeated a number of times or for a while, optionally at a rate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Transaction {
    /// How long it repeats its operations.
    pub repeat: Repeat,
    /// Iterations per second per flow at most (open loop: a late iteration is not made up);
    /// none: as fast as they go.
    pub rate: Option<u32>,
    /// Every flow of every group waits here for the others before the next transaction.
    pub barrier: bool,
    /// The operations of one iteration, in order.
    pub ops: Vec<FlowOp>,
}

/// How long a transaction repeats.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeat {
    /// Exactly this many iterations.
    Iterations(u64),
    /// Iterations until this many ms have passed (the iteration under way finishes).
    DurationMs(u64),
}

/// One flow operation, run `count` times in a row.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FlowOp {
    /// What it does.
    pub op: Op,
    /// Times in a row (at least 1).
    pub count: u32,
    /// A failure of it is counted, not fatal (uperf's `canfail`).
    pub can_fail: bool,
}

/// What a flow operation does, seen from the side that runs the program as written.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum Op {
    /// Opens the flow's connection (TCP, TLS) or binds its socket (UDP).
    Connect,
    /// Closes it; a later `Connect` opens a new one.
    Disconnect,
    /// Writes this many bytes on the connection.
    Write(Size),
    /// Reads exactly this many bytes from the connection.
    Read(Size),
    /// Sends one datagram of this many bytes.
    SendTo(Size),
    /// Receives one datagram of this many bytes.
    Recv(Size),
    /// Waits this many µs, doing nothing on the flow.
    Think(Size),
}

/// A size (bytes, or µs for `Think`): fixed, uniform in a range, or drawn from a list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub enum Size {
    /// Always this.
    Fixed(u32),
    /// Uniform in `lo..=hi`.
    Rand {
        /// Smallest.
        lo: u32,
        /// Largest.
        hi: u32,
    },
    /// One of these, uniformly.
    List(Vec<u32>),
}

impl Op {
    /// What the other end runs for this operation: a write is read there, a sendto received,
    /// and the other way round; connect and disconnect are accepted and seen closed; think
    /// waits on the side that runs the program only (the mirror has nothing to do: `None`).
    pub fn mirror(&self) -> Option<Op> {
        match self {
            Op::Connect => Some(Op::Connect),
            Op::Disconnect => Some(Op::Disconnect),
            Op::Write(s) => Some(Op::Read(s.clone())),
            Op::Read(s) => Some(Op::Write(s.clone())),
            Op::SendTo(s) => Some(Op::Recv(s.clone())),
            Op::Recv(s) => Some(Op::SendTo(s.clone())),
            Op::Think(_) => None,
        }
    }

    /// Its name in profiles and reports ("write").
    pub fn name(&self) -> &'static str {
        match self {
            Op::Connect => "connect",
            Op::Disconnect => "disconnect",
            Op::Write(_) => "write",
            Op::Read(_) => "read",
            Op::SendTo(_) => "sendto",
            Op::Recv(_) => "recv",
            Op::Think(_) => "think",
        }
    }
}

impl Size {
    /// The largest value it can take.
    pub fn max(&self) -> u32 {
        match self {
            Size::Fixed(v) => *v,
            Size::Rand { hi, .. } => *hi,
            Size::List(l) => l.iter().copied().max().unwrap_or(0),
        }
    }

    fn validate(&self, field: &'static str, hi: u32) -> Result<(), PlanError> {
        match self {
            Size::Fixed(v) => within(field, u64::from(*v), 0, u64::from(hi), ""),
            Size::Rand { lo, hi: top } if lo > top => fail(
                field,
                format!("rand({lo},{top}): the low end is above the high end"),
            ),
            Size::Rand { hi: top, .. } => within(field, u64::from(*top), 0, u64::from(hi), ""),
            Size::List(l) if l.is_empty() || l.len() > MAX_SIZE_LIST => fail(
                field,
                format!("a list of {} sizes is outside 1..={MAX_SIZE_LIST}", l.len()),
            ),
            Size::List(l) => l
                .iter()
                .try_for_each(|v| within(field, u64::from(*v), 0, u64::from(hi), "")),
        }
    }
}

impl ProfilePlan {
    /// Checks every bound: names, group counts and each group's program.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.name.is_empty() || self.name.len() > MAX_NAME {
            return fail("profile.name", format!("must be 1..={MAX_NAME} bytes"));
        }
        if self.groups.is_empty() || self.groups.len() > MAX_GROUPS {
            let n = self.groups.len();
            return fail(
                "profile.groups",
                format!("{n} groups is outside 1..={MAX_GROUPS}"),
            );
        }
        for (i, g) in self.groups.iter().enumerate() {
            if self.groups[..i].iter().any(|o| o.name == g.name) {
                return fail("group.name", format!("'{}' names two groups", g.name));
            }
            g.validate()?;
        }
        Ok(())
    }
}

impl Group {
    /// Checks its name, thread and flow counts and its program.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.name.is_empty() || self.name.len() > MAX_NAME {
            return fail("group.name", format!("must be 1..={MAX_NAME} bytes"));
        }
        let threads = u64::from(self.threads);
        within(
            "group.threads",
            threads,
            1,
            u64::from(MAX_GROUP_THREADS),
            "",
        )?;
        let per = u64::from(self.flows_per_thread);
        within("group.flows", per, 1, u64::from(MAX_FLOWS_PER_THREAD), "")?;
        if let Some(w) = self.window {
            within(
                "group.window",
                u64::from(w),
                1,
                u64::from(crate::bounds::MAX_SOCKET_BUFFER),
                "",
            )?;
        }
        self.program.validate()
    }
}

impl Program {
    /// Checks its transactions and operations against their bounds.
    pub fn validate(&self) -> Result<(), PlanError> {
        let n = self.transactions.len();
        if n == 0 || n > MAX_TRANSACTIONS {
            return fail(
                "program.transactions",
                format!("{n} transactions is outside 1..={MAX_TRANSACTIONS}"),
            );
        }
        self.transactions.iter().try_for_each(Transaction::validate)
    }
}

impl Transaction {
    fn validate(&self) -> Result<(), PlanError> {
        match self.repeat {
            Repeat::Iterations(i) => within("transaction.iterations", i, 1, MAX_ITERATIONS, "")?,
            Repeat::DurationMs(d) => {
                within("transaction.duration", d, 1, MAX_TRANSACTION_MS, " ms")?
            }
        }
        if let Some(r) = self.rate {
            within("transaction.rate", u64::from(r), 1, 1_000_000_000, "/s")?;
        }
        let n = self.ops.len();
        if n == 0 || n > MAX_OPS {
            return fail(
                "transaction.ops",
                format!("{n} flowops is outside 1..={MAX_OPS}"),
            );
        }
        let thinks_only = self.ops.iter().all(|f| matches!(f.op, Op::Think(_)));
        if thinks_only && matches!(self.repeat, Repeat::DurationMs(_)) {
            // The accepting end learns that a timed transaction ended from the connection's
            // close; with nothing but thinks, its mirror would never wait for anything.
            return fail(
                "transaction.duration",
                "a timed transaction of think flowops alone cannot end at the accepting end: \
                 give it iterations (a think's time is how long it waits)"
                    .to_string(),
            );
        }
        for f in &self.ops {
            within(
                "flowop.count",
                u64::from(f.count),
                1,
                u64::from(MAX_OP_COUNT),
                "",
            )?;
            match &f.op {
                Op::Connect | Op::Disconnect => {}
                Op::Write(s) | Op::Read(s) => s.validate("flowop.size", MAX_IO)?,
                Op::SendTo(s) | Op::Recv(s) => s.validate("flowop.size", crate::bounds::MAX_UDP)?,
                Op::Think(s) => s.validate("flowop.think", MAX_THINK_US)?,
            }
        }
        Ok(())
    }
}

/// Flow operations of a profile counted one by one, in program order (the rest are counted
/// only in the flow's totals).
pub const PROFILE_OPS: usize = 12;

/// A profile flow's counts for each of its first [`PROFILE_OPS`] flow operations, in program
/// order over all its transactions (cumulative).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileCounters {
    /// One per flow operation.
    pub ops: [OpCounters; PROFILE_OPS],
}

/// One flow operation's counts at one end (cumulative).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounters {
    /// Times it completed.
    pub count: u64,
    /// Payload bytes it moved.
    pub bytes: u64,
    /// Time it took, summed, ns.
    pub ns: u64,
    /// Times it failed and was let go (`can_fail`), or, for a datagram the end waited for,
    /// times it did not come in time (lost).
    pub failed: u64,
}
