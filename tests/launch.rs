//! `fathom launch` without a launcher: the rank variables set by hand for each process, every
//! rank on loopback (cheap and deterministic); the real srun and mpirun runs are in
//! launch_slurm.rs and launch_mpi.rs.

mod common;
mod launch_common;
use common::assert_exit;
use launch_common::*;
use std::process::Output;
use std::time::{Duration, Instant};

const FATHOM: &str = env!("CARGO_BIN_EXE_fathom");

/// Starts ranks `ranks` of `size` (the others first, rank 0 last), each with `vars(rank)` and
/// `args`, and waits for all of them (bounded); their outputs by rank.
fn launch(
    ranks: &[u32],
    vars: impl Fn(u32) -> Vec<(&'static str, String)>,
    args: &[&str],
) -> Vec<(u32, Output)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut children: Vec<_> = ranks
        .iter()
        .rev()
        .map(|&r| {
            let child = command(FATHOM, args, &vars(r)).spawn().expect("fathom");
            (r, child)
        })
        .collect();
    children.sort_by_key(|(r, _)| *r);
    children
        .into_iter()
        .map(|(r, c)| (r, finish(c, deadline, &format!("rank {r}"))))
        .collect()
}

/// Open MPI's variables with every rank on this node: rank 0 is on loopback.
fn ompi(size: u32) -> impl Fn(u32) -> Vec<(&'static str, String)> {
    move |r| {
        vec![
            ("OMPI_COMM_WORLD_RANK", r.to_string()),
            ("OMPI_COMM_WORLD_SIZE", size.to_string()),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", size.to_string()),
        ]
    }
}

#[test]
fn three_ranks_run_one_stream_test_with_exact_bytes() {
    let port = free_port().to_string();
    let args = launch_args(&port, &["stream", "-n", "10M", "--json"]);
    let outs = launch(&[0, 1, 2], ompi(3), &args);
    for (r, o) in &outs {
        assert_eq!(o.status.code(), Some(0), "rank {r}: {}", err(o));
        if *r != 0 {
            assert!(o.stdout.is_empty(), "only rank 0 prints results");
        }
    }
    assert_launched_stream(&doc(&outs[0].1), 2, 10 << 20);
}

/// MPICH's variables, rank 0 named with --controller, a key, and rank 2's agent as the server.
#[test]
fn rr_with_a_key_and_another_server_rank() {
    let key = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(key.path(), "launch-test-key-0123456789").unwrap();
    let controller = format!("127.0.0.1:{}", free_port());
    let args = [
        "launch",
        "--controller",
        &controller,
        "--server-rank",
        "2",
        "rr",
        "-n",
        "3000",
        "--json",
        "--key-file",
        key.path().to_str().unwrap(),
    ];
    let hydra = |r: u32| vec![("PMI_RANK", r.to_string()), ("PMI_SIZE", "3".to_string())];
    let outs = launch(&[0, 1, 2], hydra, &args);
    for (r, o) in &outs {
        assert_eq!(o.status.code(), Some(0), "rank {r}: {}", err(o));
    }
    let d = doc(&outs[0].1);
    assert_eq!(d["summary"]["rr"]["transactions"].as_u64(), Some(3000));
    assert!(
        d["test"]["agent"].as_str().unwrap().starts_with("rank2@"),
        "{}",
        d["test"]
    );
}

#[test]
fn a_refused_test_is_every_ranks_exit_code() {
    let port = free_port().to_string();
    // A congestion control the hosts lack is bad usage: each rank checks its own host, and
    // rank 0 passes on the agents' refusal, so every rank exits 2.
    let args = launch_args(&port, &["stream", "-n", "1M", "--cc", "no-such-cc"]);
    for (r, o) in launch(&[0, 1, 2], ompi(3), &args) {
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "rank {r}: {e}");
        assert!(
            e.contains("no-such-cc is not a congestion control this host offers")
                || e.contains(&format!("rank {r}: the test failed (exit 2)")),
            "rank {r}: {e}"
        );
    }
}

#[test]
fn missing_ranks_are_named_and_the_others_exit_1() {
    let port = free_port().to_string();
    let args = [
        "launch",
        "--rendezvous-port",
        &port,
        "--rendezvous-timeout",
        "2s",
        "stream",
    ];
    let t = Instant::now();
    let outs = launch(&[0, 2], ompi(4), &args);
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let e = err(&outs[0].1);
    assert_eq!(outs[0].1.status.code(), Some(1), "{e}");
    assert!(
        e.contains("2 of 3 ranks did not register within 2 s: 1, 3"),
        "{e}"
    );
    assert_eq!(outs[1].1.status.code(), Some(1), "{}", err(&outs[1].1));
}

/// Rank 0 killed in the middle of a test: the other rank says so and exits 1, soon.
#[test]
fn a_rank_that_loses_rank_0_exits_1() {
    let port = free_port().to_string();
    let args = ["launch", "--rendezvous-port", &port, "stream", "-t", "30s"];
    let one = command(FATHOM, &args, &ompi(2)(1)).spawn().unwrap();
    let mut zero = command(FATHOM, &args, &ompi(2)(0)).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    zero.kill().unwrap();
    let _ = zero.wait();
    let o = finish(one, Instant::now() + Duration::from_secs(15), "rank 1");
    assert_exit(&o, 1, "rank 1: lost rank 0 at 127.0.0.1:");
}

#[test]
fn usage_errors_exit_2_at_every_rank() {
    let no_launcher = command(FATHOM, &["launch", "stream"], &[])
        .output()
        .unwrap();
    assert_eq!(no_launcher.status.code(), Some(2));
    let e = err(&no_launcher);
    for v in [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
    ] {
        assert!(e.contains(v), "{e}");
    }
    let cases: [(&[&str], &str); 5] = [
        (
            &["launch", "stream", "--server", "h"],
            "HOST/--server/--clients",
        ),
        (&["launch", "stream", "-P", "0"], "-P/--parallel"),
        (
            &["launch", "--server-rank", "5", "rr"],
            "--server-rank: 5 is not a rank",
        ),
        (
            &["launch", "--controller", "[::1", "rr"],
            "--controller: '[::1'",
        ),
        (&["launch", "udp"], "does not say where rank 0 runs"),
    ];
    for (args, says) in cases {
        let hydra = [("PMI_RANK", "1".to_string()), ("PMI_SIZE", "2".to_string())];
        let o = command(FATHOM, args, &hydra).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(err(&o).contains(says), "{args:?}: {}", err(&o));
    }
    let alone = [
        ("SLURM_PROCID", "0".to_string()),
        ("SLURM_NTASKS", "1".to_string()),
    ];
    let o = command(FATHOM, &["launch", "stream"], &alone)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("at least 2 processes"), "{}", err(&o));
}
