//! The mesh's scheduler at scale, on a virtual clock: 1,000 members over a simulated day with
//! the mix of tests (rr 64 B every 30 s to 10 ring peers, a background UDP loss probe
//! every 60 s to the same peers, a 5 s stream every 15 min by rotation), printing each
//! member's exclusive tests per hour, the pairs covered, the spread of start times and the
//! skips. `cargo run --release -p fathom-mesh --example mesh_sim [MEMBERS [HOURS]]`.

use fathom_mesh::class::Class;
use fathom_mesh::sim::{run, Setting};
use fathom_mesh::spec::{Targets, TestSpec};

const S: u64 = 1_000_000_000;

fn main() {
    let mut args = std::env::args().skip(1);
    let members = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let hours: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(24.0);
    let rr = TestSpec::defaults("rr", "rr", 30 * S, S, S / 2);
    let mut loss = TestSpec::defaults("loss", "udp", 60 * S, S, S / 2);
    loss.class = Class::Background;
    loss.targets = Targets::Ring;
    let stream = TestSpec::defaults("stream", "stream", 900 * S, 5 * S, S);
    let set = Setting {
        members,
        span_ns: (hours * 3600.0 * 1e9) as u64,
        tests: vec![rr, loss, stream],
        peers: 10,
        seed: 1,
        busy_share: 0.9,
        vanish_every: Some(1000),
        outages: vec![(0, 3600 * S, 2 * 3600 * S)],
    };
    let started = std::time::Instant::now();
    let out = run(&set);
    print!("{}", out.render());
    println!(
        "(member m0000 down for the second hour; one holder in 1,000 vanishes; simulated in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
}
