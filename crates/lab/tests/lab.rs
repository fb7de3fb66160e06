//! The lab for real: namespaces, veths, bridges and agents, built and removed as root.
//! Each test uses its own lab name and tears its lab down even when it fails.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use fathom_lab::{down, status, AgentCommand, Error, Lab, Topology, UpOptions};

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn up_exec_down_round_trip_leaves_nothing() {
    let Some((name, root_before)) = lab_test("up_exec_down_round_trip_leaves_nothing", "rt") else {
        return;
    };
    let (guard, lab) = up_star(&name, 3);

    let lab = Lab::load(lab.name()).unwrap();
    let h3 = lab.host("h3").unwrap();
    assert_eq!(h3.netns, format!("fl-{name}-h3"));
    assert_eq!(h3.address().to_string(), "10.77.0.3");
    assert_eq!(h3.agent_addr().to_string(), "10.77.0.3:5301");
    let key = std::fs::read_to_string(lab.key_file()).unwrap();
    assert!(
        key.len() == 64 && key.chars().all(|c| c.is_ascii_hexdigit()),
        "{key:?}"
    );
    assert_eq!(
        std::fs::metadata(lab.key_file())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );

    // h1 reaches h3's agent through the switch.
    reach(&lab, "h1", "h3");
    assert_eq!(
        shell(&lab, "h1", "getent hosts h3 | grep -q '^10.77.0.3 '"),
        0,
        "host names resolve inside the lab"
    );
    assert_eq!(
        shell(
            &lab,
            "h2",
            "ip -o addr show dev eth0 | grep -q 'inet 10.77.0.2/16'"
        ),
        0
    );
    assert_eq!(
        shell(&lab, "h2", "ip -o link show lo | grep -q LOWER_UP"),
        0
    );
    assert_eq!(
        shell(&lab, "sw1", "ip -o link show h1 | grep -q 'master sw1'"),
        0
    );
    assert_eq!(shell(&lab, "h1", "exit 7"), 7);
    assert!(matches!(
        lab.exec("h9", &["true".to_string()]),
        Err(Error::NoSuchNode { .. })
    ));

    let st = status(&name).unwrap();
    assert!(!st.stale, "{:?}", st.problems);
    let json = serde_json::to_value(&st).unwrap();
    assert_eq!(json["hosts"][1]["addresses"][0], "10.77.0.2/16");
    assert_eq!(json["hosts"][1]["agent"]["alive"], true);
    assert_eq!(json["links"][0]["ends"][1], "sw1:h1");

    let pids = agent_pids(&lab);
    let report = down(&name).unwrap();
    assert_eq!(report.namespaces.len(), 4);
    assert_eq!(report.agents_stopped, 3);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    drop(guard);
    assert_gone(&name, &pids, &root_before);
}

#[test]
fn a_panic_midway_still_tears_the_lab_down() {
    let Some((name, root_before)) = lab_test("a_panic_midway_still_tears_the_lab_down", "panic")
    else {
        return;
    };
    let thread_name = name.clone();
    let outcome = std::thread::spawn(move || {
        let (_guard, lab) = up_star(&thread_name, 2);
        assert!(lab.hosts().is_empty(), "deliberate failure with the lab up");
    })
    .join();
    assert!(outcome.is_err(), "the inner test should have panicked");
    assert_gone(&name, &[], &root_before);
}

#[test]
fn two_labs_coexist_on_the_same_subnet() {
    let Some((a, root_before)) = lab_test("two_labs_coexist_on_the_same_subnet", "a") else {
        return;
    };
    let b = unique_name("b");
    let (guard_a, lab_a) = up_star(&a, 2);
    let (_guard_b, lab_b) = up_star(&b, 2);
    for lab in [&lab_a, &lab_b] {
        let h2 = lab.host("h2").unwrap();
        assert_eq!(h2.address().to_string(), "10.77.0.2");
        reach(lab, "h1", "h2");
    }
    let pids_a = agent_pids(&lab_a);
    drop(guard_a);
    assert_gone(&a, &pids_a, &root_before);
    let st = status(&b).unwrap();
    assert!(!st.stale, "{:?}", st.problems);
    reach(&lab_b, "h1", "h2");
}

#[test]
fn up_refuses_a_lab_that_exists() {
    let Some((name, _)) = lab_test("up_refuses_a_lab_that_exists", "twice") else {
        return;
    };
    let (_guard, _lab) = up_star(&name, 1);
    let again = Lab::up(
        &Topology::star(1, None, None, None).unwrap(),
        &standin_options(&name),
    );
    assert!(matches!(again, Err(Error::Exists { .. })), "{again:?}");
    assert!(
        !status(&name).unwrap().stale,
        "the refused up must not harm the running lab"
    );
}

#[test]
fn an_agent_that_exits_fails_up_clearly_and_cleans_up() {
    let Some((name, root_before)) = lab_test(
        "an_agent_that_exits_fails_up_clearly_and_cleans_up",
        "noagent",
    ) else {
        return;
    };
    let _guard = LabGuard(name.clone());
    let agent = AgentCommand {
        program: "sh".into(),
        args: vec!["-c".into(), "echo cannot serve >&2; exit 2".into()],
    };
    let err = Lab::up(
        &Topology::star(2, None, None, None).unwrap(),
        &UpOptions::new(&name, agent),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::AgentNotReady { .. }), "{msg}");
    assert!(
        msg.contains("exited") && msg.contains("cannot serve"),
        "{msg}"
    );
    assert_gone(&name, &[], &root_before);
}

#[test]
fn link_rate_and_mtu_are_applied() {
    let Some((name, _)) = lab_test("link_rate_and_mtu_are_applied", "shape") else {
        return;
    };
    let _guard = LabGuard(name.clone());
    let topology = Topology::star(2, Some("192.168.7.0/24"), Some(9000), Some("100M")).unwrap();
    let lab = Lab::up(&topology, &standin_options(&name)).unwrap();
    assert_eq!(
        shell(
            &lab,
            "h1",
            "tc qdisc show dev eth0 | grep -q 'tbf .*rate 100Mbit'"
        ),
        0
    );
    assert_eq!(
        shell(
            &lab,
            "sw1",
            "tc qdisc show dev h2 | grep -q 'tbf .*rate 100Mbit'"
        ),
        0
    );
    assert_eq!(
        shell(&lab, "h2", "ip -o link show eth0 | grep -q 'mtu 9000'"),
        0
    );
    assert_eq!(lab.host("h2").unwrap().address().to_string(), "192.168.7.2");
    reach(&lab, "h1", "h2");
}

#[test]
fn a_stale_lab_is_reported_and_removed() {
    let Some((name, root_before)) = lab_test("a_stale_lab_is_reported_and_removed", "stale") else {
        return;
    };
    let (_guard, lab) = up_star(&name, 2);
    let pids = agent_pids(&lab);
    // The agent of h2 dies and the namespace of h1 vanishes behind the lab's back.
    // SAFETY: kill has no memory effects; pids[1] is the agent this test's lab started.
    unsafe { libc::kill(pids[1] as i32, libc::SIGKILL) };
    let status_ok = Command::new("ip")
        .args(["netns", "del", &format!("fl-{name}-h1")])
        .status()
        .unwrap();
    assert!(status_ok.success());
    let deadline = Instant::now() + 5 * SECOND;
    let st = loop {
        let st = status(&name).unwrap();
        if st.problems.len() >= 2 || Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(st.stale);
    let problems = st.problems.join("\n");
    assert!(
        problems.contains(&format!("namespace fl-{name}-h1 of host h1 is gone")),
        "{problems}"
    );
    assert!(problems.contains("agent of host h2"), "{problems}");

    let report = down(&name).unwrap();
    assert_eq!(
        report.agents_stopped, 1,
        "h1's agent still ran in its detached namespace"
    );
    assert_gone(&name, &pids, &root_before);
}

#[test]
fn namespaces_without_state_are_reported_and_removed() {
    let Some((name, _)) = lab_test(
        "namespaces_without_state_are_reported_and_removed",
        "orphan",
    ) else {
        return;
    };
    let _guard = LabGuard(name.clone());
    for node in ["h1", "sw1"] {
        let ok = Command::new("ip")
            .args(["netns", "add", &format!("fl-{name}-{node}")])
            .status()
            .unwrap();
        assert!(ok.success());
    }
    let st = status(&name).unwrap();
    assert!(st.stale);
    assert!(
        st.problems[0].contains("exist but the lab has no state"),
        "{:?}",
        st.problems
    );
    assert!(matches!(Lab::load(&name), Err(Error::NoSuchLab(_))));
    let report = down(&name).unwrap();
    assert_eq!(
        report.namespaces,
        [format!("fl-{name}-h1"), format!("fl-{name}-sw1")]
    );
    assert!(matches!(status(&name), Err(Error::NoSuchLab(_))));
    assert!(matches!(down(&name), Err(Error::NoSuchLab(_))));
}

/// Run by `a_crash_during_up_is_cleaned_up_by_down` in a child process: starts `up` with agents
/// that never listen, so it waits until the parent kills it. Does nothing on its own.
#[test]
#[ignore = "helper process for a_crash_during_up_is_cleaned_up_by_down"]
fn crash_helper() {
    let Ok(name) = std::env::var("FATHOM_LAB_CRASH_NAME") else {
        return;
    };
    let agent = AgentCommand {
        program: "sleep".into(),
        args: vec!["600".into()],
    };
    let opts = UpOptions {
        ready_timeout: 120 * SECOND,
        ..UpOptions::new(&name, agent)
    };
    let _ = Lab::up(&Topology::star(3, None, None, None).unwrap(), &opts);
    unreachable!("the parent test kills this process while `up` waits");
}

#[test]
fn a_crash_during_up_is_cleaned_up_by_down() {
    let Some((name, root_before)) = lab_test("a_crash_during_up_is_cleaned_up_by_down", "crash")
    else {
        return;
    };
    let _guard = LabGuard(name.clone());
    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_helper", "--ignored", "--nocapture"])
        .env("FATHOM_LAB_CRASH_NAME", &name)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + 20 * SECOND;
    let lab = loop {
        if let Ok(lab) = Lab::load(&name) {
            if lab.hosts().iter().all(|h| h.agent.is_some()) {
                break lab;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the helper never started its agents"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    helper.kill().unwrap();
    helper.wait().unwrap();

    let st = status(&name).unwrap();
    assert!(st.stale && !st.complete, "{:?}", st.problems);
    assert!(
        st.problems[0].contains("did not finish"),
        "{:?}",
        st.problems
    );
    assert!(st.hosts.iter().all(|h| h.agent.alive && h.netns_present));

    let pids = agent_pids(&lab);
    let report = down(&name).unwrap();
    assert_eq!(report.agents_stopped, 3);
    assert_gone(&name, &pids, &root_before);
}

#[test]
fn up_and_down_of_32_hosts_timed() {
    let Some((name, root_before)) = lab_test("up_and_down_of_32_hosts_timed", "32") else {
        return;
    };
    let _guard = LabGuard(name.clone());
    let topology = Topology::star(32, None, None, None).unwrap();
    // The real agent when FATHOM_EXE names one, else the stand-in.
    let exe = std::env::var_os("FATHOM_EXE").map(std::path::PathBuf::from);
    let agent = AgentCommand::fathom(exe.as_deref().unwrap_or(standin_exe()));
    let started = Instant::now();
    let lab = Lab::up(&topology, &UpOptions::new(&name, agent)).unwrap();
    let up = started.elapsed();
    let pids = agent_pids(&lab);
    let started = Instant::now();
    let report = down(&name).unwrap();
    let down_took = started.elapsed();
    let which = if exe.is_some() {
        "fathom serve"
    } else {
        "stand-in"
    };
    println!(
        "lab of 32 hosts ({which}): up {:.2} s, down {:.2} s",
        up.as_secs_f64(),
        down_took.as_secs_f64()
    );
    assert_eq!(report.namespaces.len(), 33);
    assert_gone(&name, &pids, &root_before);
}

/// With `FATHOM_EXE` set to a fathom binary, its real agent (`serve --listen --key-file`) runs
/// in every host. Skipped without it: the root-level tests run the real binary in labs.
#[test]
fn the_real_fathom_agent_runs_in_every_host() {
    let Some(exe) = std::env::var_os("FATHOM_EXE") else {
        eprintln!(
            "SKIP the_real_fathom_agent_runs_in_every_host: set FATHOM_EXE to a fathom binary"
        );
        return;
    };
    let Some((name, root_before)) = lab_test("the_real_fathom_agent_runs_in_every_host", "real")
    else {
        return;
    };
    let guard = LabGuard(name.clone());
    let opts = UpOptions::new(&name, AgentCommand::fathom(std::path::Path::new(&exe)));
    let lab = Lab::up(&Topology::star(3, None, None, None).unwrap(), &opts).unwrap();
    for host in lab.hosts() {
        reach(&lab, "h1", &host.name);
    }
    assert!(!status(&name).unwrap().stale);
    let pids = agent_pids(&lab);
    drop(guard);
    assert_gone(&name, &pids, &root_before);
}
