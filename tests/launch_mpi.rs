//! `fathom launch` under Open MPI's real mpirun (Debian's openmpi-bin): four processes on this
//! node, so rank 0 is found on loopback; one stream test with exact byte counts.

mod launch_common;
use launch_common::*;
use std::time::{Duration, Instant};

#[test]
fn mpirun_np_4_runs_one_stream_test() {
    if !have("mpirun", "openmpi-bin") {
        return;
    }
    let port = free_port().to_string();
    let mpirun = [
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        "4",
        env!("CARGO_BIN_EXE_fathom"),
    ];
    let args = [
        &mpirun[..],
        &launch_args(&port, &["stream", "-n", "10M", "--json"]),
    ]
    .concat();
    let root_ok = [
        ("OMPI_ALLOW_RUN_AS_ROOT", "1".to_string()),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1".to_string()),
    ];
    let child = command("mpirun", &args, &root_ok).spawn().expect("mpirun");
    let out = finish(child, Instant::now() + Duration::from_secs(120), "mpirun");
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert_launched_stream(&doc(&out), 3, 10 << 20);
}
