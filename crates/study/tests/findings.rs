//! Every study's findings from synthetic data with a known shape: the exact sentences.

mod common;

use common::{add, add_curve, fail, findings, line_rate, series, G};
use fathom_report::series::Series;

/// The rr-payload study's series run with `args`: each of `sizes`, with quick ACKs on and off.
fn rr_payload(args: &[&str], sizes: &[&str]) -> Series {
    series(args, &[("size", sizes), ("quickack", &["on", "off"])])
}

const BUFFERS: [&str; 8] = ["16K", "24K", "32K", "48K", "64K", "128K", "256K", "1M"];

#[test]
fn socket_buffers_finds_each_knee_and_the_common_size() {
    let bps = "bits_per_second";
    let mut snd = series(
        &["-t", "1s"],
        &[("sndbuf", &BUFFERS), ("parallel", &["1", "10"])],
    );
    let one = [10.0, 15.0, 20.0, 23.2, 23.5, 24.1, 24.0, 23.9].map(|v| v * G);
    let ten = [20.0, 22.0, 24.0, 25.0, 25.0, 25.0, 25.0, 25.0].map(|v| v * G);
    add_curve(&mut snd, &["*", "1"], &BUFFERS, bps, &one);
    add_curve(&mut snd, &["*", "10"], &BUFFERS, bps, &ten);
    let mut rcv = series(
        &["-t", "1s"],
        &[("rcvbuf", &BUFFERS), ("parallel", &["1", "10"])],
    );
    let rcv_one = [5.0, 8.0, 12.0, 18.0].map(|v| v * G);
    add_curve(&mut rcv, &["*", "1"], &BUFFERS[..4], bps, &rcv_one);
    fail(&mut rcv, &["64K", "1"]);
    add_curve(
        &mut rcv,
        &["*", "1"],
        &["128K", "256K"],
        bps,
        &[19.2 * G, 20.0 * G],
    );
    add(&mut rcv, &["1M", "1"], &[("cpu_s_per_gb", 1.0)]);
    add_curve(&mut rcv, &["*", "10"], &BUFFERS, bps, &[9.41 * G; 8]);
    assert_eq!(
        findings("socket-buffers", &[snd, rcv]),
        [
            "Send buffer, 1 connection: 48K reaches 96% of the best (128K, 24.1 Gbit/s); larger buffers add at most 3.9%.",
            "Send buffer, 10 connections: 32K reaches 96% of the best (48K, 25.0 Gbit/s); larger buffers add at most 4.2%.",
            "Send buffer: the knee is 48K with 1 connection and 32K with 10 connections; the classic gigabit study needed 48 KB for one connection.",
            "Receive buffer, 1 connection: 128K reaches 96% of the best (256K, 20.0 Gbit/s); larger buffers add at most 4.2%.",
            "Receive buffer, 10 connections: the smallest buffer, 16K, is already the best (9.41 Gbit/s); larger ones add nothing.",
            "Receive buffer: the knee is 128K with 1 connection and 16K with 10 connections; the classic gigabit study needed 48 KB for one connection.",
            "128K is the smallest buffer within 5% of the best in every case measured (the classic study chose 64 KB).",
        ]
    );
}

#[test]
fn socket_buffers_says_when_the_best_is_the_largest_or_nothing_ran() {
    let sizes = ["16K", "64K", "1M"];
    let mut s = series(&[], &[("rcvbuf", &sizes), ("parallel", &["1", "10"])]);
    add_curve(
        &mut s,
        &["*", "1"],
        &sizes,
        "bits_per_second",
        &[1.0 * G, 2.0 * G, 4.0 * G],
    );
    fail(&mut s, &["16K", "10"]);
    assert_eq!(
        findings("socket-buffers", &[s]),
        [
            "Receive buffer, 1 connection: the best is 1M (4.00 Gbit/s), the largest buffer tried; smaller buffers reach at most 50% of it.",
            "Receive buffer, 10 connections: no point succeeded.",
        ]
    );
}

#[test]
fn write_size_finds_knee_small_writes_and_the_second_writer() {
    let sizes = ["256", "4K", "64K", "1M"];
    let mut s = series(
        &["-t", "1s"],
        &[("write", &sizes), ("parallel", &["1", "2"])],
    );
    let bps = "bits_per_second";
    add_curve(
        &mut s,
        &["*", "1"],
        &sizes,
        bps,
        &[0.3 * G, 5.0 * G, 9.6 * G, 10.0 * G],
    );
    add_curve(
        &mut s,
        &["*", "2"],
        &sizes,
        bps,
        &[0.3 * G, 5.5 * G, 10.56 * G, 10.5 * G],
    );
    assert_eq!(
        findings("write-size", &[s]),
        [
            "1 writer: 64K reaches 96% of the best (1M, 10.0 Gbit/s); larger write sizes add at most 4.2%.",
            "1 writer: 256 B writes reach 3% of the best (33× less).",
            "2 writers: the best is 64K (10.6 Gbit/s); smaller write sizes reach at most 52% of it.",
            "2 writers: 256 B writes reach 2.8% of the best (35× less).",
            "At 64K and larger, 2 writers move 7.5% more than 1 on average over 2 sizes (the HIPPI study saw 5-10% more from 2 processes).",
        ]
    );
}

#[test]
fn rr_payload_compares_delayed_ack_and_reads_the_round_trip() {
    let sizes = ["4", "40", "100", "250", "536", "1024", "1460"];
    // The classic study's table: quick ACKs on = delayed ACK off.
    let quick = [6972.0, 6990.0, 6714.0, 5452.0, 4973.0, 4196.0, 3104.0];
    let delayed = [6978.0, 6885.0, 5358.0, 5634.0, 5157.0, 4302.0, 3244.0];
    let mut s = rr_payload(&["-t", "1s"], &sizes);
    for (i, size) in sizes.iter().enumerate() {
        for (q, tps) in [("on", quick[i]), ("off", delayed[i])] {
            let m = [
                ("transactions_per_second", tps),
                ("latency_p50_us", 1e6 / tps),
            ];
            add(&mut s, &[size, q], &m);
        }
    }
    assert_eq!(
        findings("rr-payload", &[s]),
        [
            "Delayed ACK on (quickack off) beats off at 5 of 7 payload sizes; on average it gives 1.1% fewer transactions/s.",
            "At 4 B: 6,978/s (p50 143 µs) with delayed ACK on, 6,972/s (p50 143 µs) with delayed ACK off.",
            "At 1460 B: 3,244/s (p50 308 µs) with delayed ACK on, 3,104/s (p50 322 µs) with delayed ACK off.",
            "The lowest round trip is 143 µs (p50 at 40 B, delayed ACK off): about 72 µs one way (the classic study: 140 µs, ~70 µs one way).",
        ]
    );
}

#[test]
fn rr_payload_copes_with_one_setting_and_no_latency() {
    let mut s = rr_payload(&[], &["4", "1460"]);
    add(&mut s, &["4", "on"], &[("transactions_per_second", 7000.0)]);
    fail(&mut s, &["4", "off"]);
    assert_eq!(
        findings("rr-payload", &[s]),
        ["At 4 B: 7,000/s with delayed ACK off."]
    );
}

#[test]
fn cpu_scaling_reports_speedup_cost_and_where_it_levels_off() {
    let cpus = ["1", "2", "3", "4"];
    let mut s = series(
        &["-t", "1s"],
        &[("cpus", &cpus), ("parallel", &["1", "10"])],
    );
    for (i, c) in cpus.iter().enumerate() {
        let bps = [10.0, 18.0, 19.0, 19.6][i] * G;
        let cost = [1.2, 1.3, 1.4, 1.5][i];
        add(
            &mut s,
            &[c, "1"],
            &[("bits_per_second", bps), ("cpu_s_per_gb", cost)],
        );
    }
    let linear = [5.0, 10.0, 15.0, 20.0].map(|v| v * G);
    add_curve(&mut s, &["*", "10"], &cpus, "bits_per_second", &linear);
    assert_eq!(
        findings("cpu-scaling", &[s]),
        [
            "1 connection: 1 CPU gives 10.0 Gbit/s, 4 CPUs 19.6 Gbit/s: 2.0× (scaling efficiency 49%; each added CPU adds 32% of the per-CPU throughput at 1 CPU).",
            "1 connection: CPU per GB goes from 1.20 to 1.50 CPU-seconds (+25%) from 1 CPU to 4 CPUs.",
            "1 connection: beyond 2 CPUs, more CPUs add under 10%.",
            "10 connections: 1 CPU gives 5.00 Gbit/s, 4 CPUs 20.0 Gbit/s: 4.0× (scaling efficiency 100%; each added CPU adds 100% of the per-CPU throughput at 1 CPU).",
            "10 connections: throughput still gains 10% or more up to 4 CPUs.",
        ]
    );
}

#[test]
fn many_flows_finds_the_peak_the_drop_and_the_knee() {
    let counts = ["1", "10", "100", "500", "1000", "2000"];
    let mut s = series(&["-t", "1s"], &[("parallel", &counts)]);
    let ys = [9.4, 30.0, 31.5, 30.0, 22.0, 14.6].map(|v| v * G);
    add_curve(&mut s, &["*"], &counts, "bits_per_second", &ys);
    assert_eq!(
        findings("many-flows", &[s]),
        [
            "Peak aggregate 31.5 Gbit/s at 100 flows; at 2000 flows it is 14.6 Gbit/s, 54% below the peak.",
            "The aggregate first reaches 95% of the peak at 10 flows.",
        ]
    );
    let mut rising = series(&[], &[("parallel", &counts[..3])]);
    add_curve(
        &mut rising,
        &["*"],
        &counts[..3],
        "bits_per_second",
        &[1.0 * G, 2.0 * G, 3.0 * G],
    );
    assert_eq!(
        findings("many-flows", &[rising]),
        ["Peak aggregate 3.00 Gbit/s at 100 flows, the most tried."]
    );
}

#[test]
fn window_vs_rtt_finds_speedups_plateaus_and_the_window_bound() {
    let windows = ["48K", "1M", "4M"];
    let args = ["--server", "h1", "--clients", "h2", "-n", "48M"];
    let make = |advertised: bool| {
        let mut s = series(&args, &[("rtt", &["0ms", "100ms"]), ("rcvbuf", &windows)]);
        add_curve(
            &mut s,
            &["0ms", "*"],
            &windows,
            "seconds",
            &[0.5, 0.45, 0.45],
        );
        for (w, secs, bps, window) in [
            ("48K", 108.8, 3.7e6, 52_000.0),
            ("1M", 5.75, 70e6, 1.2e6),
            ("4M", 1.342, 250e6, 4.5e6),
        ] {
            let mut m = vec![("seconds", secs), ("bits_per_second", bps)];
            if advertised {
                m.push(("window_bytes", window));
            }
            add(&mut s, &["100ms", w], &m);
        }
        s
    };
    assert!(findings("window-vs-rtt", &[make(false)]).contains(
        &"At 100 ms RTT, throughput as a share of the window/RTT bound (the window asked for): 48K 94%, 1M 83%, 4M 75%.".to_string()
    ));
    let s = make(true);
    assert_eq!(
        findings("window-vs-rtt", &[s]),
        [
            "At 0 ms RTT a 4M window finishes the 48M transfer 1.1× faster than 48K (0.450 s vs 0.500 s).",
            "At 0 ms RTT, windows beyond 1M speed it up by under 10%.",
            "At 100 ms RTT a 4M window finishes the 48M transfer 81× faster than 48K (1.34 s vs 109 s).",
            "At 100 ms RTT, every larger window up to 4M still speeds it up by 10% or more.",
            "At 100 ms RTT, throughput as a share of the window/RTT bound (the window the receiver advertised): 48K 89%, 1M 73%, 4M 69%.",
            "At 100 ms RTT, 1M falls short of its bound, and slow start (about 7 round trips, 12% of the transfer) does not explain it.",
            "At 100 ms RTT, 4M falls short of its bound: slow start needs about 9 round trips (0.900 s) to open a 4.3M window, 67% of the 1.34 s transfer.",
            "The window matters most at 100 ms RTT: 81× (the classic scp study: up to 8× with 1 MB over 48 KB).",
        ]
    );
}

#[test]
fn rr_payload_says_where_repeated_points_really_differ() {
    use fathom_report::series::MetricStat;
    use fathom_report::stats::describe;
    let mut s = rr_payload(&[], &["4", "1460"]);
    // At 4 B the runs overlap (no separation); at 1460 B delayed ACK on is clearly ahead.
    let runs: [(&str, &str, [f64; 3]); 4] = [
        ("4", "on", [9000.0, 10000.0, 11000.0]),
        ("4", "off", [9500.0, 10500.0, 11500.0]),
        ("1460", "on", [3000.0, 3010.0, 3020.0]),
        ("1460", "off", [4000.0, 4010.0, 4020.0]),
    ];
    for (size, q, v) in runs {
        add(&mut s, &[size, q], &[("transactions_per_second", 0.0)]);
        let p = s.points.last_mut().unwrap();
        p.metrics = vec![MetricStat {
            name: "transactions_per_second".into(),
            stat: describe(&v, 0.95),
        }];
    }
    let f = findings("rr-payload", &[s]);
    assert_eq!(
        f[0],
        "Delayed ACK on (quickack off) beats off at 2 of 2 payload sizes; on average it gives 19% more transactions/s; the 95% intervals of the two separate at 1 of 2."
    );
}

#[test]
fn file_copy_names_the_fastest_io_size_the_distance_to_the_stream_and_why() {
    let io = ["16K", "60K", "960K", "1M"];
    let bps = "bits_per_second";
    let mut copies = series(&["put"], &[("size", &["1M", "16M"]), ("io", &io)]);
    let shares = [
        [0.6, 0.3, 0.4],
        [0.4, 0.5, 0.6],
        [0.1, 0.8, 0.9],
        [0.1, 0.8, 0.9],
    ];
    for ((i, y), [disk, snd, rcv]) in io.iter().zip([1.0, 2.0, 4.0, 3.0]).zip(shares) {
        let m = [
            (bps, y * G),
            ("file_sender_disk_share", 0.0),
            ("file_receiver_disk_share", disk),
            ("file_sender_net_share", snd),
            ("file_receiver_net_share", rcv),
        ];
        add(&mut copies, &["1M", i], &m);
    }
    fail(&mut copies, &["16M", "16K"]);
    add_curve(
        &mut copies,
        &["16M", "*"],
        &io[1..],
        bps,
        &[5.0 * G, 9.0 * G, 9.0 * G],
    );
    let mut streams = series(&[], &[("bytes", &["1M", "16M"])]);
    add_curve(
        &mut streams,
        &["*"],
        &["1M", "16M"],
        bps,
        &[8.0 * G, 10.0 * G],
    );
    assert_eq!(
        findings("file-copy", &[copies, streams]),
        [
            "1M files: 960K I/O copies fastest (4.00 Gbit/s, 50% of the stream's 8.00 Gbit/s on the same path); the slowest I/O size reaches 25% of it. Why: at 16K: 64.0 disk reads and as many writes per MB; blocked in disk reads 0%, disk writes 60%, waiting on the network 30% (sender) and 40% (receiver) of the copy; at 960K: 1.07 disk reads and as many writes per MB; blocked in disk reads 0%, disk writes 10%, waiting on the network 80% (sender) and 90% (receiver) of the copy.",
            "16M files: 960K I/O copies fastest (9.00 Gbit/s, 90% of the stream's 10.0 Gbit/s on the same path); the slowest I/O size reaches 56% of it. Why: at 60K: 17.1 disk reads and as many writes per MB; blocked in disk reads ?, disk writes ?, waiting on the network ? (sender) and ? (receiver) of the copy; at 960K: 1.07 disk reads and as many writes per MB; blocked in disk reads ?, disk writes ?, waiting on the network ? (sender) and ? (receiver) of the copy.",
        ]
    );
    assert_eq!(
        findings("file-copy", &[]),
        ["The copy or the stream sweep is missing: nothing to compare."]
    );
}

#[test]
fn small_packets_names_the_peak_the_gso_gain_and_what_limits_the_rate() {
    let axes: [(&str, &[&str]); 3] = [
        ("size", &["64", "1472"]),
        ("parallel", &["1", "4"]),
        ("gso", &["off", "on"]),
    ];
    let point = |dps: f64, sent: f64, lost: f64, cpu: f64| {
        [
            ("datagrams_per_second", dps),
            ("sender_datagrams_per_second", sent),
            ("lost_percent", lost),
            ("cpu_ns_per_datagram_local", cpu),
        ]
    };
    let mut s = series(&["-t", "1s"], &axes);
    add(
        &mut s,
        &["64", "1", "off"],
        &point(300e3, 301e3, 0.2, 3400.0),
    );
    add(&mut s, &["64", "1", "on"], &point(4.2e6, 4.3e6, 2.0, 240.0));
    add(
        &mut s,
        &["64", "4", "off"],
        &point(350e3, 360e3, 2.5, 3000.0),
    );
    fail(&mut s, &["64", "4", "on"]);
    add(
        &mut s,
        &["1472", "1", "off"],
        &point(200e3, 200e3, 0.0, 5000.0),
    );
    assert_eq!(
        findings("small-packets", &[s.clone()]),
        [
            "Peak 4,200,000 datagrams/s at 64 B, 1 flow, GSO on.",
            "64 B, 1 flow: 300,000/s without GSO, 4,200,000/s with it (14×); CPU per datagram 3400 ns and 240 ns. On loopback no device cuts GSO's super-packets: the datagrams with GSO are segments the receiver's GRO handed over, never packets, so that rate is no packet rate a NIC would carry; run with --lab (e.g. --lab delay=0ms) for the GSO arm to cross the lab's emulator, where each is a frame.",
            "The sender limits 64 B: the receiver read all but 0.2% of its 301,000/s, so each datagram's own trip through the sender's kernel sets the rate; GSO, which takes a batch through the kernel as one, lifts it 14× (on loopback, in segments that never were packets).",
        ]
    );
    let mut across = s.clone();
    across.args.extend(["--lab".into(), "study42".into()]);
    let said = findings("small-packets", &[across]);
    assert!(said[1].ends_with("Across the lab's emulator, each GSO datagram was a frame on the link (its counters show them)."), "{said:?}");
    assert!(said[2].ends_with("lifts it 14×."), "{said:?}");
    s.points[0] = {
        let mut t = series(&[], &axes);
        add(
            &mut t,
            &["64", "1", "off"],
            &point(150e3, 400e3, 62.0, 3400.0),
        );
        t.points.remove(0)
    };
    assert_eq!(
        findings("small-packets", &[s])[2],
        "The receiver limits 64 B: it lost 62% of the 400,000/s sent, dropped where it could not keep up (its socket buffer)."
    );
}

#[test]
fn streams_to_line_rate_names_the_streams_needed_and_the_cheapest_mode() {
    let m = 1e6;
    let clear = line_rate(
        &[],
        &[
            ("1", 150.0 * m, 2.0, 40.0, 35.0),
            ("2", 185.0 * m, 2.2, 50.0, 45.0),
        ],
    );
    let tls = line_rate(
        &["--tls"],
        &[
            ("1", 60.0 * m, 5.0, 50.0, 50.0),
            ("2", 110.0 * m, 5.1, 60.0, 60.0),
            ("4", 190.0 * m, 5.5, 90.0, 90.0),
            ("3", 170.0 * m, 5.3, 80.0, 80.0),
        ],
    );
    let mut ipsec = series(
        &["--ipsec", "aes-256-gcm"],
        &[("rate", &["200M"]), ("parallel", &["1"])],
    );
    fail(&mut ipsec, &["200M", "1"]);
    ipsec.points[0].error = Some(format!(
        "{}: this kernel lacks ESP itself (the kernel is built without CONFIG_INET_ESP)",
        fathom_study::UNAVAILABLE
    ));
    assert_eq!(
        findings("streams-to-line-rate", &[clear, tls, ipsec]),
        [
            "clear: 2 streams reach 185 Mbit/s, 93% of the 200M link; CPU there: 50% at the client end, 45% at the server end.",
            "clear: one stream carries 150 Mbit/s (75%) at 2.00 CPU-seconds per GB.",
            "TLS: 4 streams reach 190 Mbit/s, 95% of the 200M link; CPU there: 90% (both ends share this machine's CPUs).",
            "TLS: one stream carries 60.0 Mbit/s (30%) at 5.00 CPU-seconds per GB.",
            "IPsec aes-256-gcm: not available on this kernel: this kernel lacks ESP itself (the kernel is built without CONFIG_INET_ESP).",
            "The cheapest way to fill the 200M link to 90%: clear, 2 streams, 2.20 CPU-s/GB; TLS needs 4 streams, 5.50 CPU-s/GB, 2.5× the CPU per GB.",
        ]
    );
}

#[test]
fn streams_to_line_rate_says_when_the_link_is_not_reachable() {
    let m = 1e6;
    let tls = line_rate(
        &["--tls"],
        &[
            ("1", 50.0 * m, 5.0, 99.0, 99.0),
            ("2", 60.0 * m, 5.0, 99.0, 99.0),
        ],
    );
    let mut broken = line_rate(&[], &[]);
    fail(&mut broken, &["200M", "1"]);
    assert_eq!(
        findings("streams-to-line-rate", &[tls, broken]),
        [
            "TLS: not reachable on this machine: 2 streams (the most that ran) reach 60.0 Mbit/s, 30% of the 200M link.",
            "TLS: one stream carries 50.0 Mbit/s (25%) at 5.00 CPU-seconds per GB.",
            "clear: no point succeeded.",
            "No mode filled the 200M link to 90% on this machine.",
        ]
    );
}
