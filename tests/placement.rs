//! An --affinity naming a CPU the machine does not have is refused before anything runs: on the
//! command line (exit 2) for this machine's ends, by the agent for its own.

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
