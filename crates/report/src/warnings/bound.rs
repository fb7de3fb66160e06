//! What bounded the result, each warning checked against the figures it cites: a receive window
//! that autotuning could not grow (the sysctl) or that the receiving application did not drain
//! (its CPU), and a saturated CPU that fathom's own threads were on, or someone else's work.

use crate::floor::ratio;
use crate::floor::text::human_bytes;
use crate::model::{CpuOne, HostResult, Report, ThreadResult};
use crate::run::{RunData, View};

/// A CPU this busy probably bounds the result, %.
pub const SATURATED_PCT: f64 = 95.0;
/// fathom's threads on a CPU are part of what filled it when they used this much of it, %.
pub const OURS_PCT: f64 = 10.0;
/// fathom's threads pinned to one CPU kept it full when together (every end on that machine)
/// they used at least this share of it, %, and it was at least this busy. Two ends of a flow
/// pinned to one CPU leave it idle between their turns while their work still sets the rate:
/// the two threads of a TLS stream pinned 0/0 on a lab's veth pair used 85-100% of that CPU
/// (8 runs, their agents given the CPU first; the rate the same), and in a CI run on a quiet
/// machine CPU 0 showed 94% busy, under [`SATURATED_PCT`].
pub const PINNED_PCT: f64 = 80.0;

/// Senders limited by the receive window `pct`% of the time while autotuning set the buffer:
/// the sysctl when some receiver's buffer reached net.ipv4.tcp_rmem's maximum, else the
/// receiving application: bound by its CPU, named, when a CPU its workers read on was
/// saturated, else named by its host's busiest CPU; `None` without a receiver.
pub(super) fn window_without_request(run: &RunData, r: &Report, pct: f64) -> Option<String> {
    let view = View::new(run);
    let receivers: Vec<(usize, u64)> = view
        .located
        .iter()
        .zip(&r.flows)
        .filter_map(|(l, f)| Some((l.as_ref()?.receiver.0, u64::from(f.rcvbuf_end))))
        .collect();
    let max_of = |end: usize| run.ends[end].info.limits.tcp_rmem[2];
    if let Some(&(end, _)) = receivers.iter().find(|&&(e, b)| b > 0 && b >= max_of(e)) {
        return Some(format!(
            "senders were limited by the receive window {pct:.0}% of the time: autotuning stops at net.ipv4.tcp_rmem's maximum ({}): raise it, or set --buffer",
            human_bytes(max_of(end))
        ));
    }
    let &(end, _) = receivers.iter().max_by_key(|&&(_, b)| b)?;
    let largest = receivers.iter().map(|&(_, b)| b).max().unwrap_or(0);
    let host = r.hosts.get(end)?;
    let (have, limit) = (human_bytes(largest), human_bytes(max_of(end)));
    if let Some(cpu) = receiving_cpu(host).filter(|c| full(r, host, c)) {
        return Some(format!(
            "senders were limited by the receive window {pct:.0}% of the time, but the receive buffer never reached autotuning's maximum (it ended at {have} of net.ipv4.tcp_rmem's {limit}): the receiving application was bound by its CPU, not the sysctl: CPU {} on {}, where it read, was {:.0}% busy (user {:.0}%, system {:.0}%, softirq {:.0}%); raising the sysctl will not help, spreading flows over more receiving CPUs (-P, --affinity) may",
            cpu.cpu, host.name, cpu.total, cpu.user, cpu.system, cpu.softirq
        ));
    }
    let busiest = &host.cpu.busiest_cpu;
    Some(format!(
        "senders were limited by the receive window {pct:.0}% of the time, but the receive buffer never reached autotuning's maximum (it ended at {} of net.ipv4.tcp_rmem's {}): the receiving application did not read fast enough, not the sysctl; its host {}'s busiest CPU, CPU {}, was {:.0}% busy",
        have,
        limit,
        host.name,
        busiest.cpu,
        busiest.total
    ))
}

/// The busiest of the CPUs the receiving end's workers read on (pinned there, else last seen
/// there), from the host's per-CPU figures.
pub fn receiving_cpu(host: &HostResult) -> Option<&CpuOne> {
    let on: Vec<u32> = host
        .threads
        .iter()
        .filter(|t| t.flows > 0)
        .map(|t| t.pinned_cpu.unwrap_or(t.last_cpu))
        .collect();
    host.cpu
        .per_cpu
        .iter()
        .filter(|c| on.contains(&c.cpu))
        .max_by(|a, b| a.total.total_cmp(&b.total))
}

/// The busiest CPU of the machine that `hosts[first]` runs on, when saturated: bound by it when
/// fathom's threads on that machine were on it (pinned there, or last run there with a share of
/// it), else whose work filled it. `span_s`: each host's test span, seconds.
pub(super) fn saturated(hosts: &[HostResult], first: usize, span_s: &[f64]) -> Option<String> {
    let h = &hosts[first];
    let busy = &h.cpu.busiest_cpu;
    if busy.total < SATURATED_PCT {
        return None;
    }
    let same: Vec<usize> = (0..hosts.len())
        .filter(|&i| hosts[i].hostname == h.hostname)
        .collect();
    let share = |on: &dyn Fn(&ThreadResult) -> bool| -> f64 {
        same.iter()
            .map(|&i| thread_share(&hosts[i], on, span_s.get(i).copied().unwrap_or(0.0)))
            .fold(0.0, |a, b| a + b)
    };
    let pinned = same.iter().any(|&i| {
        hosts[i]
            .threads
            .iter()
            .any(|t| t.pinned_cpu == Some(busy.cpu))
    });
    let there = share(&|t| t.pinned_cpu.unwrap_or(t.last_cpu) == busy.cpu);
    if pinned || there >= OURS_PCT {
        return Some(format!(
            "CPU {} on {} was {:.0}% busy: the result may be bound by that CPU, not the network; spread flows with -P and --affinity",
            busy.cpu, h.name, busy.total
        ));
    }
    let all = share(&|_| true);
    Some(format!(
        "CPU {} on {} was {:.0}% busy (user {:.0}%, system {:.0}%, softirq {:.0}%), but not with fathom's threads: they used {} of a CPU in all and {} on CPU {}; other processes, or the kernel's packet work (softirq), filled it, and may have slowed the test",
        busy.cpu,
        h.name,
        busy.total,
        busy.user,
        busy.system,
        busy.softirq,
        share_text(all),
        share_text(there),
        busy.cpu
    ))
}

/// Whether CPU `c` of `host` was full for run `r`: saturated, or kept busy by fathom's threads
/// pinned there ([`PINNED_PCT`]).
fn full(r: &Report, host: &HostResult, c: &CpuOne) -> bool {
    c.total >= SATURATED_PCT
        || (c.total >= PINNED_PCT && pinned_share(r, host, c.cpu) >= PINNED_PCT)
}

/// The share of CPU `cpu`, %, that fathom's threads pinned to it used, summed over the hosts of
/// run `r` on `host`'s machine (a lab's hosts share one); at most 100 (the threads' CPU seconds
/// include their set-up and close, outside the span).
pub fn pinned_share(r: &Report, host: &HostResult, cpu: u32) -> f64 {
    let on = |t: &ThreadResult| t.pinned_cpu == Some(cpu);
    r.hosts
        .iter()
        .filter(|h| h.hostname == host.hostname)
        .map(|h| thread_share(h, &on, span_s(r)))
        .sum::<f64>()
        .min(100.0)
}

/// Run `r`'s span in seconds, warm-up included: the time its threads' CPU seconds cover.
pub fn span_s(r: &Report) -> f64 {
    r.test.duration_s.unwrap_or(r.summary.seconds) + r.test.omit_s
}

/// The share of one CPU, %, that `host`'s worker threads matching `on` used over `span_s`
/// seconds (0 without a span): with [`OURS_PCT`], whether fathom helped fill a CPU.
pub fn thread_share(host: &HostResult, on: &dyn Fn(&ThreadResult) -> bool, span_s: f64) -> f64 {
    let s: f64 = host.threads.iter().filter(|t| on(t)).map(|t| t.cpu_s).sum();
    ratio(s * 100.0, span_s)
}

/// "0.1%", "35%": a share of one CPU, small ones with a decimal.
fn share_text(pct: f64) -> String {
    match pct < 10.0 {
        true => format!("{pct:.1}%"),
        false => format!("{pct:.0}%"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, busy: f64, threads: Vec<ThreadResult>) -> HostResult {
        let mut h = HostResult {
            name: name.into(),
            hostname: "one-machine".into(),
            threads,
            ..HostResult::default()
        };
        h.cpu.busiest_cpu = CpuOne {
            cpu: 0,
            total: busy,
            user: 70.0,
            system: 20.0,
            softirq: 10.0,
        };
        h
    }

    fn thread(pinned_cpu: Option<u32>, last_cpu: u32, cpu_s: f64) -> ThreadResult {
        ThreadResult {
            pinned_cpu,
            last_cpu,
            flows: 1,
            cpu_s,
        }
    }

    /// The figures: a window-limited flow whose receive buffer ended at 4.3 MB of
    /// tcp_rmem's 32 MB while the CPU its receiver read on was 100% busy.
    #[test]
    fn a_receiver_short_of_the_maximum_on_a_full_cpu_is_cpu_bound_not_sysctl_bound() {
        let mut run = crate::fake::run_data(1, false);
        for e in &mut run.ends {
            e.info.limits.tcp_rmem[2] = 32 << 20;
            e.info
                .flows
                .iter_mut()
                .for_each(|f| f.rcvbuf_end = 4_509_000);
        }
        let receiver = &mut run.ends[0];
        for s in &mut receiver.snaps {
            s.cpu.per_cpu[1].idle = 100_000;
        }
        receiver
            .info
            .threads
            .iter_mut()
            .for_each(|t| t.last_cpu = 1);
        let w = crate::build(&run).warnings;
        let l = w.iter().find(|l| l.contains("receive window")).unwrap();
        assert!(!l.contains("raise it"), "{l}");
        assert!(
            l.contains("it ended at 4.3 MB of net.ipv4.tcp_rmem's 32 MB"),
            "{l}"
        );
        assert!(
            l.contains("the receiving application was bound by its CPU, not the sysctl: CPU 1 on 192.0.2.10:5301, where it read, was 100% busy"),
            "{l}"
        );
    }

    /// A CI run's figures: both ends pinned to CPU 0, which was 94% busy, 90% of it their own.
    #[test]
    fn a_cpu_that_pinned_threads_kept_busy_is_full() {
        let mut r = Report::default();
        r.test.duration_s = Some(1.0);
        r.hosts = vec![host("h1", 94.0, vec![thread(Some(0), 0, 0.5)]); 2];
        let c = r.hosts[0].cpu.busiest_cpu.clone();
        assert!(full(&r, &r.hosts[0], &c));
        r.hosts[1].threads[0].cpu_s = 0.2;
        assert!(!full(&r, &r.hosts[0], &c), "70% of it fathom's");
        r.hosts[1].hostname = "another".into();
        r.hosts[1].threads[0].cpu_s = 0.5;
        assert!(
            !full(&r, &r.hosts[0], &c),
            "the other end on another machine"
        );
    }

    #[test]
    fn a_cpu_filled_by_other_work_is_not_called_the_bound() {
        let hosts = [
            host("h1", 100.0, vec![thread(None, 1, 0.004)]),
            host("h2", 100.0, vec![thread(None, 1, 0.001)]),
        ];
        let w = saturated(&hosts, 0, &[5.0, 5.0]).unwrap();
        assert!(!w.contains("may be bound"), "{w}");
        assert!(w.contains("not with fathom's threads"), "{w}");
        assert!(w.contains("0.1% of a CPU in all and 0.0% on CPU 0"), "{w}");
        assert!(w.contains("user 70%"), "{w}");
    }

    #[test]
    fn a_cpu_fathom_ran_on_is_the_bound() {
        let busy = [host("h1", 100.0, vec![thread(None, 0, 4.0)])];
        let w = saturated(&busy, 0, &[5.0]).unwrap();
        assert!(w.contains("may be bound by that CPU"), "{w}");
        let pinned = [host("h1", 99.0, vec![thread(Some(0), 1, 0.001)])];
        let w = saturated(&pinned, 0, &[5.0]).unwrap();
        assert!(w.contains("may be bound by that CPU"), "{w}");
        let idle = [host("h1", 60.0, vec![thread(None, 0, 4.0)])];
        assert_eq!(saturated(&idle, 0, &[5.0]), None);
    }
}
