//! Spinning workers (`--busy-poll`) and the CPUs they run on. A spinning worker never gives its
//! CPU up, so two on one CPU (the two ends of a loopback test, or two workers of one end) each
//! spin until the scheduler's tick lets the other run, and a transaction takes milliseconds:
//! `rr --busy-poll` on loopback fell from 114-118k to 112-124 transactions/s when both ends
//! were pinned to CPU 0 (issue 36). [`clash`] finds such a placement from the plan, before
//! anything starts: the command line refuses it for the ends on its machine (exit 2), an agent
//! for its own end. It is refused rather than run with a warning because what it would measure
//! is the scheduler's time slice, not the path nor the tool, and a figure outlives its warning.

use crate::clock;
use crate::kind::{Kind, Side, Wiring};
use crate::path;
use fathom_proto::plan::{SideOptions, TestPlan};

/// One end of a test that runs on this machine.
pub struct End {
    /// How a message names it: "this side's", "the agent's".
    pub label: &'static str,
    /// Which end it is.
    pub side: Side,
}

/// Where one end's spinning workers run.
struct Placed<'a> {
    label: &'a str,
    workers: usize,
    /// Worker `i` on `pins[i % pins.len()]`.
    pins: Option<Vec<u32>>,
    /// The CPUs an unpinned worker may run on.
    allowed: Vec<u32>,
}

/// Why the plan's spinning workers on this machine would share a CPU, with what to do; `None`
/// when they would not, or when nothing spins. `ends` are the ends that run on this machine;
/// both of them means a loopback path, with its default placement ([`path::apart`]).
pub fn clash(plan: &TestPlan, ends: &[End]) -> Option<String> {
    clash_on(plan, ends, &clock::usable_cpus())
}

/// [`clash`] on a machine that lets fathom use `cpus`.
fn clash_on(plan: &TestPlan, ends: &[End], cpus: &[u32]) -> Option<String> {
    if !plan.socket.busy_poll || ends.is_empty() {
        return None;
    }
    let placed: Vec<Placed> = ends
        .iter()
        .map(|e| place(plan, e, cpus, ends.len() > 1))
        .collect();
    let why = pinned_together(&placed).or_else(|| too_few(&placed, cpus))?;
    let fix = match (ends.len(), cpus.len()) {
        (1, _) => "give every spinning worker a CPU of its own",
        (_, 0 | 1) => "run the agent on another host",
        _ => {
            "give every spinning worker a CPU of its own (fathom's loopback placement does \
              when --affinity, --cpus and --threads are left out)"
        }
    };
    Some(format!(
        "--busy-poll{}: {why}; a spinning worker keeps its CPU until the scheduler's tick, so \
         each would wait milliseconds for the other: {fix}, or drop --busy-poll",
        flags(plan, ends),
    ))
}

/// Where `end`'s workers run, as its endpoint will place them; `loopback`: both ends are on
/// this machine.
fn place<'a>(plan: &TestPlan, end: &'a End, cpus: &[u32], loopback: bool) -> Placed<'a> {
    let opts = options(plan, end.side);
    let share = loopback
        .then(|| path::apart(plan, end.side, cpus))
        .flatten();
    let flows = match Kind::of(plan.kind.id()).map(Kind::wiring) {
        // The accepting end of a connection per transaction runs its listener's one flow.
        Ok(Wiring::TcpPerTransaction) if end.side == Side::Server => 1,
        _ => plan.flows.len(),
    };
    let workers =
        crate::endpoint::worker_count(plan, end.side, flows, share.as_ref().map(Vec::len));
    Placed {
        label: end.label,
        workers,
        pins: opts.affinity.clone().or(share).filter(|p| !p.is_empty()),
        allowed: opts.cpu_set.clone().unwrap_or_else(|| cpus.to_vec()),
    }
}

fn options(plan: &TestPlan, side: Side) -> &SideOptions {
    match side {
        Side::Client => &plan.client,
        Side::Server => &plan.server,
    }
}

/// Two pinned workers on one CPU.
fn pinned_together(placed: &[Placed]) -> Option<String> {
    let mut seen: Vec<(u32, &str, usize)> = Vec::new();
    for p in placed {
        let Some(pins) = &p.pins else { continue };
        for i in 0..p.workers {
            let cpu = pins[i % pins.len()];
            if let Some((_, label, j)) = seen.iter().find(|s| s.0 == cpu) {
                return Some(format!(
                    "{label} worker {j} and {} worker {i} would both spin on CPU {cpu}",
                    p.label
                ));
            }
            seen.push((cpu, p.label, i));
        }
    }
    None
}

/// More unpinned workers than the CPUs they may use that no pinned worker holds.
fn too_few(placed: &[Placed], cpus: &[u32]) -> Option<String> {
    let held: Vec<u32> = placed
        .iter()
        .filter_map(|p| p.pins.as_ref().map(|pins| (p, pins)))
        .flat_map(|(p, pins)| (0..p.workers).map(|i| pins[i % pins.len()]))
        .collect();
    let free = |p: &Placed| -> Vec<u32> {
        let mut f: Vec<u32> = p
            .allowed
            .iter()
            .copied()
            .filter(|c| cpus.contains(c) && !held.contains(c))
            .collect();
        f.sort_unstable();
        f
    };
    let loose: Vec<&Placed> = placed.iter().filter(|p| p.pins.is_none()).collect();
    let workers: usize = loose.iter().map(|p| p.workers).sum();
    let mut room: Vec<u32> = loose.iter().flat_map(|p| free(p)).collect();
    room.sort_unstable();
    room.dedup();
    let short = loose.iter().find(|p| p.workers > free(p).len());
    let (n, whose, cpus) = match short {
        Some(p) => (p.workers, format!("on {} end", p.label), free(p)),
        None if workers > room.len() => (workers, "on both ends".to_string(), room),
        None => return None,
    };
    Some(format!(
        "{n} spinning workers {whose} and {} CPU{} for them ({})",
        cpus.len(),
        if cpus.len() == 1 { "" } else { "s" },
        if cpus.is_empty() {
            "none".to_string()
        } else {
            cpus.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        }
    ))
}

/// The placement flags the plan sets for `ends`, e.g. " with --affinity 0/0", so the message
/// names what to change.
fn flags(plan: &TestPlan, ends: &[End]) -> String {
    let opts: Vec<&SideOptions> = ends.iter().map(|e| options(plan, e.side)).collect();
    let mut set = Vec::new();
    if opts.iter().any(|o| o.affinity.is_some()) {
        set.push("--affinity");
    }
    if opts.iter().any(|o| o.cpu_set.is_some()) {
        set.push("--cpus");
    }
    if opts.iter().any(|o| o.threads.is_some()) {
        set.push("--threads");
    }
    if plan.flows.len() > 1 {
        set.push("-P");
    }
    match set.as_slice() {
        [] => String::new(),
        s => format!(" with {}", s.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::plan::{Direction, FlowPlan, KindPlan, RrOptions};

    const BOTH: [End; 2] = [
        End {
            label: "this side's",
            side: Side::Client,
        },
        End {
            label: "the agent's",
            side: Side::Server,
        },
    ];

    /// A spinning `kind` test of `flows` connections.
    fn spinning(kind: fn(RrOptions) -> KindPlan, flows: u32) -> TestPlan {
        let mut plan = TestPlan {
            kind: kind(RrOptions::default()),
            flows: (0..flows)
                .map(|id| FlowPlan {
                    id,
                    dir: Direction::Forward,
                })
                .collect(),
            ..TestPlan::default()
        };
        plan.socket.busy_poll = true;
        plan
    }

    #[test]
    fn the_loopback_default_never_puts_two_spinning_workers_on_one_cpu() {
        for kind in [KindPlan::Rr, KindPlan::Crr, KindPlan::UdpRr] {
            for flows in [1, 4] {
                let plan = spinning(kind, flows);
                assert_eq!(clash_on(&plan, &BOTH, &[0, 1]), None, "{flows} flows");
                assert_eq!(clash_on(&plan, &BOTH, &[0, 1, 2, 3]), None, "{flows} flows");
            }
        }
    }

    #[test]
    fn both_ends_asked_onto_one_cpu_are_refused_naming_the_flag() {
        let mut plan = spinning(KindPlan::Rr, 1);
        plan.client.affinity = Some(vec![0]);
        plan.server.affinity = Some(vec![0]);
        let why = clash_on(&plan, &BOTH, &[0, 1]).unwrap();
        assert!(why.starts_with("--busy-poll with --affinity: this side's worker 0 and the agent's worker 0 would both spin on CPU 0"), "{why}");
        plan.server.affinity = Some(vec![1]);
        assert_eq!(clash_on(&plan, &BOTH, &[0, 1]), None);
        plan.socket.busy_poll = false;
        plan.server.affinity = Some(vec![0]);
        assert_eq!(clash_on(&plan, &BOTH, &[0, 1]), None, "nothing spins");
    }

    #[test]
    fn more_spinning_workers_than_cpus_are_refused() {
        let mut plan = spinning(KindPlan::Rr, 2);
        plan.client.threads = Some(2);
        plan.server.threads = Some(2);
        let why = clash_on(&plan, &BOTH, &[0, 1]).unwrap();
        assert!(
            why.contains(
                "with --threads, -P: 4 spinning workers on both ends and 2 CPUs for them (0,1)"
            ),
            "{why}"
        );
        let mut cpus = spinning(KindPlan::Rr, 1);
        cpus.client.cpu_set = Some(vec![0]);
        cpus.server.cpu_set = Some(vec![0]);
        let why = clash_on(&cpus, &BOTH, &[0, 1]).unwrap();
        assert!(
            why.contains("with --cpus: 2 spinning workers on both ends and 1 CPU"),
            "{why}"
        );
        let why = clash_on(&spinning(KindPlan::Rr, 1), &BOTH, &[0]).unwrap();
        assert!(why.contains("run the agent on another host"), "{why}");
    }

    #[test]
    fn one_end_alone_is_checked_on_its_own_cpus() {
        let agent = [End {
            label: "this agent's",
            side: Side::Server,
        }];
        let mut plan = spinning(KindPlan::Rr, 4);
        plan.server.threads = Some(3);
        let why = clash_on(&plan, &agent, &[0, 1]).unwrap();
        assert!(
            why.contains("3 spinning workers on this agent's end and 2 CPUs"),
            "{why}"
        );
        plan.server.threads = Some(2);
        assert_eq!(clash_on(&plan, &agent, &[0, 1]), None);
        let mut crr = spinning(KindPlan::Crr, 4);
        crr.server.threads = Some(3);
        assert_eq!(
            clash_on(&crr, &agent, &[0]),
            None,
            "crr's accepting end runs one flow"
        );
    }
}
