//! Runs the WAN emulator in a router namespace until SIGTERM, SIGINT or a time limit, then prints
//! its counters as JSON. Used by `bench/wan.sh`.
//!
//! ```text
//! forward NETNS IF_A IF_B "PARAMS" [SECONDS]
//! ```
//! PARAMS apply to both directions (`"delay=25ms,loss=0.1%"`); SECONDS defaults to 60.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fathom_wan::{netns, Forwarder, LinkParams};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(4..=5).contains(&args.len()) {
        eprintln!("usage: forward NETNS IF_A IF_B \"PARAMS\" [SECONDS]");
        std::process::exit(2);
    }
    let params: LinkParams = args[3].parse().unwrap_or_else(|e| {
        eprintln!("forward: {e}");
        std::process::exit(2)
    });
    let limit = Duration::from_secs(args.get(4).map_or(Ok(60), |s| s.parse()).unwrap_or_else(
        |_| {
            eprintln!("forward: SECONDS must be a whole number");
            std::process::exit(2)
        },
    ));
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
    let result = netns::enter(&args[0])
        .and_then(|()| Forwarder::start(&args[1], &args[2], params.clone(), params));
    let forwarder = result.unwrap_or_else(|e| {
        eprintln!("forward: {e}");
        std::process::exit(1)
    });
    eprintln!(
        "forward: running in {} between {} and {}",
        args[0], args[1], args[2]
    );
    let started = Instant::now();
    while !STOP.load(Ordering::Relaxed) && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    match forwarder.stop() {
        Ok(counters) => println!(
            "{}",
            serde_json::to_string(&counters).expect("counters serialise")
        ),
        Err(e) => {
            eprintln!("forward: {e}");
            std::process::exit(1)
        }
    }
}
