//! A plan as the agents will run it, in words: per group its threads × flows, remote,
//! protocol and socket options, and each transaction's flowops with their sizes; and how many
//! flows it opens.

use crate::size::{format, Unit};
use fathom_proto::profile::{FlowOp, Group, Op, ProfilePlan, Protocol, Repeat, Transaction};
use std::fmt::Write;

/// The plan, one line per group, transaction and flowop.
pub fn show(plan: &ProfilePlan) -> String {
    let seed = plan
        .groups
        .first()
        .map_or(crate::DEFAULT_SEED, |g| g.program.seed);
    let mut out = format!(
        "profile {}: {} group{}, {} flows, seed {seed}\n",
        plan.name,
        plan.groups.len(),
        if plan.groups.len() == 1 { "" } else { "s" },
        flows(plan)
    );
    for g in &plan.groups {
        group(&mut out, g);
    }
    out
}

fn group(out: &mut String, g: &Group) {
    let plural = |n: u32, one: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    let remote = g.remote.as_deref().unwrap_or("the local agent");
    let protocol = match g.protocol {
        Protocol::Tcp => "tcp",
        Protocol::Udp => "udp",
        Protocol::Tls => "tls",
    };
    let window = g.window.map_or("autotuned".to_string(), |w| {
        fathom_units::size::format(u64::from(w))
    });
    let _ = writeln!(
        out,
        "group {}: {} x {} per thread = {} to {remote}, {protocol}, nodelay {}, window {window}",
        g.name,
        plural(g.threads, "thread"),
        plural(g.flows_per_thread, "flow"),
        plural(g.threads.saturating_mul(g.flows_per_thread), "flow"),
        if g.nodelay { "on" } else { "off" },
    );
    for (i, t) in g.program.transactions.iter().enumerate() {
        transaction(out, i + 1, t);
    }
}

fn transaction(out: &mut String, n: usize, t: &Transaction) {
    let repeat = match t.repeat {
        Repeat::Iterations(1) => "1 iteration".to_string(),
        Repeat::Iterations(i) => format!("{i} iterations"),
        Repeat::DurationMs(ms) => format!(
            "for {}",
            fathom_units::duration::format(std::time::Duration::from_millis(ms))
        ),
    };
    let rate = t
        .rate
        .map_or(String::new(), |r| format!(", at most {r}/s per flow"));
    let barrier = if t.barrier { ", then a barrier" } else { "" };
    let _ = writeln!(out, "  transaction {n}: {repeat}{rate}{barrier}");
    for f in &t.ops {
        let _ = writeln!(out, "    {}", flowop(f));
    }
}

fn flowop(f: &FlowOp) -> String {
    let what = match &f.op {
        Op::Connect | Op::Disconnect => f.op.name().to_string(),
        Op::Think(s) => format!("think {}", format(s, Unit::Micros)),
        Op::Write(s) | Op::Read(s) | Op::SendTo(s) | Op::Recv(s) => {
            format!("{} {}", f.op.name(), format(s, Unit::Bytes))
        }
    };
    let count = if f.count > 1 {
        format!(" x{}", f.count)
    } else {
        String::new()
    };
    let can_fail = if f.can_fail { " (can fail)" } else { "" };
    format!("{what}{count}{can_fail}")
}

/// How many flows a plan opens: threads × flows per thread, summed over its groups.
pub fn flows(plan: &ProfilePlan) -> u64 {
    plan.groups
        .iter()
        .map(|g| u64::from(g.threads) * u64::from(g.flows_per_thread))
        .sum()
}
