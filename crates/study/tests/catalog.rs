//! The catalogue: every study's sweeps use real options and stay quick in their quick form,
//! `find` and `list_text` work, and findings survive degenerate data without a panic or a NaN.

mod common;

use common::{fail, flat, series};
use fathom_proto::plan::KindId;
use fathom_study::{all, find, list_text};

/// The test CLI's long options a study may sweep (`rtt` and `rate` are the lab runner's
/// pseudo-options).
const OPTIONS: [&str; 12] = [
    "sndbuf", "rcvbuf", "parallel", "write", "size", "quickack", "cpus", "rtt", "rate", "gso",
    "io", "bytes",
];

#[test]
fn every_study_is_listed_and_found_by_name() {
    let names: Vec<&str> = all().iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "socket-buffers",
            "write-size",
            "rr-payload",
            "cpu-scaling",
            "many-flows",
            "window-vs-rtt",
            "small-packets",
            "file-copy",
            "streams-to-line-rate"
        ]
    );
    assert_eq!(find("rr-payload").map(|s| s.name), Some("rr-payload"));
    assert!(find("no-such-study").is_none());
    assert!(find("window-vs-rtt").is_some_and(|s| s.needs_lab));
    let text = list_text();
    for s in all() {
        assert!(text.contains(s.name), "{text}");
        assert!(text.contains(s.question), "{text}");
        assert!(text.contains(s.source), "{text}");
    }
    assert_eq!(text.matches("quick: ").count(), all().len());
}

#[test]
fn quick_sweeps_use_real_options_and_stay_under_50_seconds() {
    for cpus in [1, 2, 8, 128] {
        for s in all() {
            let quick = (s.sweeps)(true, cpus);
            let full = (s.sweeps)(false, cpus);
            assert!(!quick.is_empty(), "{}", s.name);
            assert_eq!(quick.len(), full.len(), "{}", s.name);
            let secs: f64 = quick.iter().map(|q| q.estimated_seconds()).sum();
            assert!(
                secs < 50.0,
                "{} quick takes {secs} s with {cpus} CPUs",
                s.name
            );
            for q in quick.iter().chain(&full) {
                assert!(
                    [KindId::Stream, KindId::Rr, KindId::Udp, KindId::File].contains(&q.kind),
                    "{}",
                    s.name
                );
                assert!(q.iterations >= 1);
                assert!(q.axes.iter().any(|a| a.name == q.x_axis), "{}", s.name);
                for a in &q.axes {
                    assert!(OPTIONS.contains(&a.name.as_str()), "{}: {}", s.name, a.name);
                    assert!(!a.values.is_empty(), "{}: {}", s.name, a.name);
                }
            }
            let points = |v: &[fathom_study::SweepSpec]| -> usize {
                v.iter().map(|q| q.points().len()).sum()
            };
            assert!(points(&full) >= points(&quick), "{}", s.name);
        }
    }
}

#[test]
fn cpu_scaling_sweeps_one_to_all_cpus() {
    let cpus = |quick, n| -> Vec<String> {
        let s = find("cpu-scaling")
            .map(|s| (s.sweeps)(quick, n))
            .unwrap_or_default();
        s[0].axes[0].values.clone()
    };
    assert_eq!(cpus(false, 4), ["1", "2", "3", "4"]);
    assert_eq!(cpus(true, 16), ["1", "2", "8", "16"]);
    assert_eq!(cpus(true, 0), ["1"]);
}

#[test]
fn findings_survive_degenerate_data() {
    for s in all() {
        let specs = (s.sweeps)(true, 4);
        let mut cases = vec![
            Vec::new(),
            specs.iter().map(|q| flat(q, 0.0)).collect::<Vec<_>>(),
            specs.iter().map(|q| flat(q, 5e9)).collect(),
            specs.iter().map(|q| flat(q, f64::NAN)).collect(),
        ];
        let mut failed = Vec::new();
        let mut one = Vec::new();
        for q in &specs {
            let mut all_failed = flat(q, 1.0);
            all_failed
                .points
                .iter_mut()
                .for_each(|p| p.error = Some("down".into()));
            failed.push(all_failed);
            let mut single = flat(q, 1e9);
            single.points.truncate(1);
            one.push(single);
        }
        cases.extend([failed, one]);
        let mut empty = series(&[], &[("parallel", &["1"])]);
        fail(&mut empty, &["1"]);
        cases.push(vec![empty]);
        for case in &cases {
            for line in (s.findings)(case) {
                assert!(
                    !line.contains("NaN") && !line.contains("inf"),
                    "{}: {line}",
                    s.name
                );
            }
        }
    }
}
