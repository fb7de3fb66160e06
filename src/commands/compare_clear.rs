//! `--compare-clear`: a TLS test and the same test in clear, run alternately (TLS first) for a
//! few rounds in one process, so both see the same machine; reports the medians and TLS's cost
//! as ratios (TLS / clear).

use super::output::{write_stdout, Format};
use crate::cli::common::CommonArgs;
use crate::method::Recorder;
use crate::testbed::Testbed;
use crate::Failure;
use fathom_proto::plan::TestPlan;
use fathom_report::stats::describe;
use fathom_report::Report;
use serde::Serialize;

/// Rounds (one TLS and one clear run each) unless `--iterations` says.
const ROUNDS: u32 = 3;

/// The figures compared, each the median over the rounds.
#[derive(Serialize, Default, Clone, Copy)]
struct Figures {
    /// Main throughput: bits/s for streams, transactions/s for request/response kinds.
    rate: f64,
    /// Streams: busy CPU s per 10^9 bytes received; request/response: µs per transaction.
    cpu_local: f64,
    /// The same on the agent's host.
    cpu_remote: f64,
    /// Request/response kinds: median round trip, µs.
    p50_us: Option<f64>,
}

/// The JSON document `--compare-clear --json` prints.
#[derive(Serialize)]
struct Comparison {
    document: &'static str,
    schema_version: u32,
    kind: String,
    rounds: u32,
    /// What `rate` counts ("bits_per_second" or "transactions_per_second").
    rate_unit: &'static str,
    /// What `cpu_*` count ("cpu_s_per_gb" or "cpu_us_per_transaction").
    cpu_unit: &'static str,
    tls: Figures,
    clear: Figures,
    /// TLS / clear for each figure.
    ratio: Ratios,
}

/// TLS / clear for each figure; null where the clear figure is 0 (a CPU time read in clock
/// ticks can be, for a short run) and the ratio has no value.
#[derive(Serialize)]
struct Ratios {
    rate: Option<f64>,
    cpu_local: Option<f64>,
    cpu_remote: Option<f64>,
    p50_us: Option<f64>,
}

fn figures(r: &Report) -> Figures {
    let s = &r.summary;
    match s.rr() {
        Some(rr) => Figures {
            rate: rr.transactions_per_second,
            cpu_local: rr.cpu_us_per_transaction.local,
            cpu_remote: rr.cpu_us_per_transaction.remote,
            p50_us: rr.latency_us.as_ref().map(|l| l.p50),
        },
        None => Figures {
            rate: s.transfer.bits_per_second,
            cpu_local: s.service_demand_us_per_kb.local * 1e3 / 1024.0,
            cpu_remote: s.service_demand_us_per_kb.remote * 1e3 / 1024.0,
            p50_us: None,
        },
    }
}

fn medians(all: &[Figures]) -> Figures {
    let m = |f: fn(&Figures) -> f64| describe(&all.iter().map(f).collect::<Vec<_>>(), 0.95).median;
    Figures {
        rate: m(|f| f.rate),
        cpu_local: m(|f| f.cpu_local),
        cpu_remote: m(|f| f.cpu_remote),
        p50_us: all[0].p50_us.map(|_| m(|f| f.p50_us.unwrap_or(0.0))),
    }
}

/// `a / b`, or none when `b` is 0 (or either is not a number).
fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite()).then(|| a / b)
}

/// Runs `plan` (with TLS) and its clear twin alternately, stores every run, prints the ratios.
pub fn run(c: &CommonArgs, plan: TestPlan, args: &[String]) -> Result<(), Failure> {
    let rounds = c.iterations.map_or(ROUNDS, |(max, _)| max);
    let bed = Testbed::new(c, plan.socket.ipv6)?;
    let rec = Recorder::open(&c.store, args);
    let clear_plan = TestPlan {
        tls: None,
        ..plan.clone()
    };
    let (mut tls, mut clear) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for (p, into) in [(&plan, &mut tls), (&clear_plan, &mut clear)] {
            let report = bed.run(p.clone())?;
            rec.save(&report, args, None);
            if let Some(e) = report.error {
                return Err(Failure::Runtime(e));
            }
            into.push(figures(&report));
        }
    }
    let (t, k) = (medians(&tls), medians(&clear));
    let rr = plan.rr().is_some();
    let doc = Comparison {
        document: "tls-comparison",
        schema_version: 1,
        kind: plan.kind.name().into(),
        rounds,
        rate_unit: if rr {
            "transactions_per_second"
        } else {
            "bits_per_second"
        },
        cpu_unit: if rr {
            "cpu_us_per_transaction"
        } else {
            "cpu_s_per_gb"
        },
        tls: t,
        clear: k,
        ratio: Ratios {
            rate: ratio(t.rate, k.rate),
            cpu_local: ratio(t.cpu_local, k.cpu_local),
            cpu_remote: ratio(t.cpu_remote, k.cpu_remote),
            p50_us: t.p50_us.zip(k.p50_us).and_then(|(a, b)| ratio(a, b)),
        },
    };
    if Format::of(c.json, c.csv) == Format::Json {
        let mut bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        bytes.push(b'\n');
        write_stdout(&bytes);
    } else {
        write_stdout(table(&doc).as_bytes());
    }
    Ok(())
}

fn table(d: &Comparison) -> String {
    let (rate, cpu) = if d.rate_unit == "bits_per_second" {
        ("Gbit/s", "CPU s/GB")
    } else {
        ("tx/s", "CPU µs/tx")
    };
    let scale = if rate == "Gbit/s" { 1e-9 } else { 1.0 };
    let mut out = format!(
        "{} with TLS against clear, {} alternating rounds (medians)\n{:<18}{:>12}{:>12}{:>10}\n",
        d.kind, d.rounds, "", "tls", "clear", "tls/clear"
    );
    let mut row = |name: &str, t: f64, k: f64, r: Option<f64>| {
        let r = r.map_or("n/a".to_string(), |r| format!("{r:.3}"));
        out += &format!("{name:<18}{t:>12.3}{k:>12.3}{r:>10}\n");
    };
    row(rate, d.tls.rate * scale, d.clear.rate * scale, d.ratio.rate);
    row(
        &format!("{cpu} local"),
        d.tls.cpu_local,
        d.clear.cpu_local,
        d.ratio.cpu_local,
    );
    row(
        &format!("{cpu} remote"),
        d.tls.cpu_remote,
        d.clear.cpu_remote,
        d.ratio.cpu_remote,
    );
    if let (Some(t), Some(k)) = (d.tls.p50_us, d.clear.p50_us) {
        row("p50 µs", t, k, d.ratio.p50_us);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison whose clear run read no CPU time on either end.
    fn no_clear_cpu() -> Comparison {
        let tls = Figures {
            rate: 8e9,
            cpu_local: 0.5,
            cpu_remote: 0.25,
            p50_us: None,
        };
        let clear = Figures {
            rate: 16e9,
            ..Figures::default()
        };
        Comparison {
            document: "tls-comparison",
            schema_version: 1,
            kind: "stream".into(),
            rounds: 1,
            rate_unit: "bits_per_second",
            cpu_unit: "cpu_s_per_gb",
            tls,
            clear,
            ratio: Ratios {
                rate: ratio(tls.rate, clear.rate),
                cpu_local: ratio(tls.cpu_local, clear.cpu_local),
                cpu_remote: ratio(tls.cpu_remote, clear.cpu_remote),
                p50_us: None,
            },
        }
    }

    #[test]
    fn a_clear_cpu_of_zero_gives_no_ratio_in_json_and_table() {
        let d = no_clear_cpu();
        let j = serde_json::to_value(&d).unwrap();
        assert_eq!(j["ratio"]["rate"].as_f64(), Some(0.5));
        assert!(j["ratio"]["cpu_local"].is_null(), "{j}");
        assert!(j["ratio"]["cpu_remote"].is_null(), "{j}");
        let t = table(&d);
        let cpu_rows: Vec<_> = t.lines().filter(|l| l.starts_with("CPU s/GB")).collect();
        assert_eq!(cpu_rows.len(), 2, "{t}");
        assert!(cpu_rows.iter().all(|l| l.ends_with("n/a")), "{t}");
        assert!(
            t.lines()
                .any(|l| l.starts_with("Gbit/s") && l.ends_with("0.500")),
            "{t}"
        );
    }
}
