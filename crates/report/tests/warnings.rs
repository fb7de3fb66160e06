//! Warnings checked against the figures they cite, on the deterministic fake run: the receive
//! window names the sysctl only when the buffer reached its maximum, and a busy CPU is called the
//! bound only when fathom's threads were on it.

use fathom_report::{build, fake, RunData};

/// The fake stream (limited by the receive window 30% of the time) with autotuning's maximum
/// at 32 MB and every receive buffer ending at `end` bytes.
fn window_limited(end: u32) -> Vec<String> {
    let mut run = fake::run_data(1, false);
    for e in &mut run.ends {
        e.info.limits.tcp_rmem[2] = 32 << 20;
        e.info.flows.iter_mut().for_each(|f| f.rcvbuf_end = end);
    }
    build(&run).warnings
}

fn line<'a>(w: &'a [String], word: &str) -> &'a str {
    w.iter()
        .find(|l| l.contains(word))
        .unwrap_or_else(|| panic!("no warning with {word:?}: {w:?}"))
}

#[test]
fn a_receive_buffer_below_the_maximum_names_the_receiver_not_the_sysctl() {
    let w = window_limited(4_509_000);
    let l = line(&w, "receive window");
    assert!(!l.contains("raise it"), "{l}");
    assert!(
        l.contains("it ended at 4.3 MB of net.ipv4.tcp_rmem's 32 MB"),
        "{l}"
    );
    assert!(
        l.contains("the receiving application did not read fast enough"),
        "{l}"
    );
    assert!(
        l.contains("192.0.2.10:5301's busiest CPU, CPU 0, was 72% busy"),
        "{l}"
    );
    let at_max = window_limited(32 << 20);
    let l = line(&at_max, "receive window");
    assert!(
        l.contains("net.ipv4.tcp_rmem's maximum (32 MB): raise it"),
        "{l}"
    );
}

/// The fake run with the agent's CPU 0 never idle and its threads last on CPU `last`, using
/// `ns` of CPU each.
fn cpu0_saturated(last: u32, ns: u64) -> RunData {
    let mut run = fake::run_data(1, false);
    let server = &mut run.ends[0];
    for s in &mut server.snaps {
        s.cpu.per_cpu[0].idle = 100_000;
    }
    for t in &mut server.info.threads {
        t.last_cpu = last;
        t.cpu_ns = ns;
    }
    run
}

#[test]
fn a_busy_cpu_fathom_was_not_on_is_not_called_the_bound() {
    let w = build(&cpu0_saturated(1, 4_500_000)).warnings;
    let l = line(&w, "CPU 0 on 192.0.2.10:5301 was 100% busy");
    assert!(!l.contains("may be bound"), "{l}");
    assert!(l.contains("not with fathom's threads"), "{l}");
    assert!(
        l.contains("they used 0.1% of a CPU in all and 0.0% on CPU 0"),
        "{l}"
    );
    let w = build(&cpu0_saturated(0, 4_000_000_000)).warnings;
    let l = line(&w, "CPU 0 on 192.0.2.10:5301 was 100% busy");
    assert!(l.contains("the result may be bound by that CPU"), "{l}");
}
