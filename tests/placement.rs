//! Where worker threads run. An --affinity naming a CPU the machine does not have is refused
//! before anything runs: on the command line (exit 2) for this machine's ends, by the agent for
//! its own. A loopback request/response test puts each end on CPUs of its own, and spinning
//! (--busy-poll) workers never share a CPU.

mod common;
use common::*;

fn beyond() -> String {
    (fathom_engine::clock::usable_cpus().last().unwrap() + 1).to_string()
}

#[test]
fn a_cpu_this_machine_lacks_is_a_usage_error_for_either_local_end() {
    let cpu = beyond();
    for (aff, whose) in [
        (cpu.clone(), "this side's"),
        (format!("/{cpu}"), "the agent's"),
    ] {
        let out = run(&["rr", "-t", "1", "--affinity", &aff, "--no-store"], 30);
        assert_eq!(out.status.code(), Some(2), "{aff}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("CPU {cpu} ({whose})")), "{err}");
        assert!(out.stdout.is_empty(), "no table before the refusal");
    }
}

#[test]
fn a_remote_agent_refuses_a_cpu_it_lacks_before_the_test() {
    let agent = Agent::start(&[]);
    let cpu = beyond();
    let aff = format!("/{cpu}");
    let out = run(
        &[
            "rr",
            &agent.target(),
            "-t",
            "1",
            "--affinity",
            &aff,
            "--no-store",
        ],
        30,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("CPU {cpu}")),
        "{}",
        stderr(&out)
    );
    assert!(
        out.stdout.is_empty(),
        "no table: the agent refused at setup"
    );
}

/// Where each host's workers were pinned (`None`: unpinned), server first, from the result's
/// `hosts[].threads`.
fn pins(doc: &serde_json::Value) -> Vec<Vec<Option<u64>>> {
    let hosts = doc["hosts"].as_array().expect("hosts[]");
    hosts
        .iter()
        .map(|h| {
            let threads = h["threads"].as_array().expect("threads[]");
            threads.iter().map(|t| t["pinned_cpu"].as_u64()).collect()
        })
        .collect()
}

/// A loopback request/response test places its ends as two hosts would have them: each end on
/// CPUs of its own, one worker per CPU of its share (issue 36: both ends on CPU 0 made rr 13x
/// sockperf's rate, a figure no network gives).
#[test]
fn a_loopback_request_response_puts_each_end_on_cpus_of_its_own() {
    let cpus = fathom_engine::clock::usable_cpus();
    // Each case with its flows at the connecting end and at the accepting end.
    for (args, flows) in [
        (&["rr"][..], (1, 1)),
        (&["rr", "-P", "4"], (4, 4)),
        (&["rr", "--udp"], (1, 1)),
        (&["crr", "-P", "4"], (4, 1)),
        (&["rr", "--busy-poll"], (1, 1)),
    ] {
        let doc = run_json(&[args, &["-t", "1", "--json", "--no-store"]].concat(), 60);
        let [server, client] = &pins(&doc)[..] else {
            panic!("{args:?}: two hosts in {}", doc["hosts"]);
        };
        if cpus.len() < 2 {
            assert!(client.iter().chain(server).all(Option::is_none), "{args:?}");
            continue;
        }
        // The client end the first half of the CPUs, the server end the rest; a worker per CPU
        // of its share, at most one per flow.
        let (ours, theirs) = cpus.split_at(cpus.len() / 2);
        let expect = |share: &[u32], flows: usize| -> Vec<Option<u64>> {
            share
                .iter()
                .take(flows)
                .map(|&c| Some(u64::from(c)))
                .collect()
        };
        assert_eq!(*client, expect(ours, flows.0), "{args:?}: the client end");
        assert_eq!(*server, expect(theirs, flows.1), "{args:?}: the server end");
        let said = doc["warnings"].to_string();
        assert!(
            said.contains("each end on CPUs of its own"),
            "{args:?}: {said}"
        );
    }
}

/// `--busy-poll` never puts two spinning workers on one CPU, whatever the placement flags: the
/// plan either runs with every spinning worker pinned apart, or is refused before anything
/// runs (exit 2) naming --busy-poll and the flag that would put them together (issue 36: both
/// ends spinning on CPU 0 made 112-124 transactions/s of 114-118k).
#[test]
fn busy_poll_never_puts_two_spinning_workers_on_one_cpu() {
    let cpus = fathom_engine::clock::usable_cpus();
    let same = format!("{0}/{0}", cpus[0]);
    for (args, flag) in [
        (&[][..], ""),
        (&["-P", "4"], ""),
        (&["--udp"], ""),
        (&["--affinity", &same], "--affinity"),
        (&["--threads", "2", "-P", "2"], "--threads"),
        (&["--cpus", "1"], "--cpus"),
    ] {
        let all = [
            &["rr", "--busy-poll", "-t", "1", "--json", "--no-store"],
            args,
        ]
        .concat();
        let out = run(&all, 60);
        let refused = out.status.code() == Some(2);
        if refused {
            let err = stderr(&out);
            assert!(
                err.contains("--busy-poll") && err.contains(flag),
                "{args:?}: {err}"
            );
            assert!(
                !flag.is_empty() || cpus.len() < 2,
                "{args:?}: the default is refused: {err}"
            );
            continue;
        }
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let placed: Vec<Option<u64>> = pins(&json(&out)).concat();
        let mut pinned: Vec<u64> = placed.iter().flatten().copied().collect();
        pinned.sort_unstable();
        pinned.dedup();
        assert_eq!(
            pinned.len(),
            placed.len(),
            "{args:?}: spinning workers on {placed:?}"
        );
    }
}

/// An agent checks its own end's spinning workers before the test: two pinned to one of its
/// CPUs are refused, naming them.
#[test]
fn a_remote_agent_refuses_two_spinning_workers_on_one_of_its_cpus() {
    let agent = Agent::start(&[]);
    let cpu = fathom_engine::clock::usable_cpus()[0];
    let aff = format!("/{cpu},{cpu}");
    let target = agent.target();
    let args = ["rr", &target, "--busy-poll", "-P", "2", "--affinity", &aff];
    let out = run(&[&args[..], &["-t", "1", "--no-store"]].concat(), 30);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let both =
        format!("this agent's worker 0 and this agent's worker 1 would both spin on CPU {cpu}");
    assert!(err.contains(&both), "{err}");
    assert!(
        out.stdout.is_empty(),
        "no table: the agent refused at setup"
    );
}
