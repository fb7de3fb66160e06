//! streams-to-line-rate: how many concurrent streams it takes to fill a lab link of a set rate
//! to 90%, in clear, inside TLS and across IPsec, and what each costs in CPU there. The classic
//! encrypted-streams study drove netperf under mpirun for IPsec and uperf's `protocol=ssl` for
//! TLS. The stream count doubles from 1, then bisects between the last miss and the first hit.

use super::shared::{iterations, timing};
use crate::curve::{curve, metric, number_x, point, values};
use crate::search::Search;
use crate::spec::{args, axis, SweepSpec, UNAVAILABLE};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::{Point, Series};

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "streams-to-line-rate",
    question: "How many streams fill a link to 90% of its rate, in clear, with TLS and with IPsec?",
    source: "encrypted-streams study (netperf over IPsec, uperf protocol=ssl)",
    needs_lab: true,
    sweeps,
    findings,
};

const CPU_REMOTE: &str = metric::CPU_REMOTE_PERCENT.name;
const CPU_EMULATOR: &str = metric::EMULATOR_CPU_PERCENT.name;
/// The share of the link's rate the aggregate must reach.
const SHARE: f64 = 0.9;
/// The ESP algorithm of the IPsec mode.
const IPSEC_ALG: &str = "aes-256-gcm";

/// (link rate, largest stream count): quick 200M, full 1G (what this machine's emulated link
/// carries; the WAN emulator forwards in user space).
fn link(quick: bool) -> (&'static str, u32) {
    if quick {
        ("200M", 16)
    } else {
        ("1G", 64)
    }
}

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    let (rate, max) = link(quick);
    let target = fathom_units::rate::parse(rate).map_or(0.0, |b| b as f64) * SHARE;
    let steps: Vec<String> = (0..)
        .map(|i| 1u32 << i)
        .take_while(|n| *n <= max)
        .map(|n| n.to_string())
        .collect();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let modes: [(&str, &[&str], Option<&str>); 3] = [
        ("clear", &[], None),
        ("TLS", &["--tls"], None),
        ("IPsec", &[], Some(IPSEC_ALG)),
    ];
    modes
        .iter()
        .map(|(name, extra, ipsec)| {
            let mut a = args(&["--server", "h1", "--clients", "h2"]);
            a.extend(args(extra));
            a.extend(timing(quick));
            SweepSpec {
                title: format!("Streams to 90% of a {rate} link, {name}"),
                kind: KindId::Stream,
                args: a,
                axes: vec![axis("rate", &[rate]), axis("parallel", &steps)],
                iterations: iterations(quick),
                x_axis: "parallel".into(),
                metric: metric::BITS_PER_SECOND.name.into(),
                more_metrics: vec![
                    metric::CPU_S_PER_GB.name.into(),
                    metric::CPU_LOCAL_PERCENT.name.into(),
                    CPU_REMOTE.into(),
                ],
                search: Some(Search {
                    axis: "parallel".into(),
                    metric: metric::BITS_PER_SECOND.name.into(),
                    target,
                    max,
                }),
                ipsec: ipsec.map(str::to_string),
            }
        })
        .collect()
}

/// "clear", "TLS" or "IPsec aes-256-gcm", from the series' options.
fn mode(s: &Series) -> String {
    let after = |flag: &str| {
        let i = s.args.iter().position(|a| a == flag)?;
        Some(s.args.get(i + 1).cloned().unwrap_or_default())
    };
    if let Some(alg) = after("--ipsec") {
        format!("IPsec {alg}")
    } else if s.args.iter().any(|a| a == "--tls") {
        "TLS".into()
    } else {
        "clear".into()
    }
}

/// Where a mode filled the link: streams, CPU per GB there.
struct Fill {
    mode: String,
    streams: f64,
    cpu_per_gb: Option<f64>,
}

fn findings(series: &[Series]) -> Vec<String> {
    let mut out = Vec::new();
    let mut fills = Vec::new();
    let mut link_text = String::new();
    for s in series {
        let m = mode(s);
        if let Some(e) = s
            .points
            .iter()
            .find_map(|p| p.error.as_deref().filter(|e| e.starts_with(UNAVAILABLE)))
        {
            out.push(format!("{m}: {e}."));
            continue;
        }
        let Some(rate) = values(s, "rate")
            .first()
            .and_then(|r| fathom_units::rate::parse(r).ok())
        else {
            out.push(format!("{m}: the series sets no link rate."));
            continue;
        };
        link_text = fathom_units::rate::format(rate);
        out.extend(mode_findings(s, &m, rate as f64, &link_text, &mut fills));
        out.extend(datapath(s, &m));
    }
    if !link_text.is_empty() {
        out.push(cheapest(&fills, &link_text));
    }
    out
}

/// Where an IPsec mode's ESP ran (`--ipsec-datapath` in its options), and so what it measured.
fn datapath(s: &Series, m: &str) -> Option<String> {
    let i = s.args.iter().position(|a| a == "--ipsec-datapath")?;
    Some(match s.args.get(i + 1).map(String::as_str) {
        Some("userspace") => format!(
            "{m}: ESP ran in user space (strongSwan's charon, kernel-libipsec), so what it \
             measured is strongSwan's user-space ESP, not fathom."
        ),
        _ => format!("{m}: ESP ran in the kernel (strongSwan's charon negotiated the keys)."),
    })
}

/// The mode's sentences: where it reaches 90% (or that it never does), then one stream.
fn mode_findings(s: &Series, m: &str, rate: f64, link: &str, fills: &mut Vec<Fill>) -> Vec<String> {
    let c = curve(s, "parallel", metric::BITS_PER_SECOND.name, &[], number_x);
    if c.is_empty() {
        return vec![format!("{m}: no point succeeded.")];
    }
    let streams = |i: usize| say::plural(&c.labels[i], "stream", "streams");
    let share = |y: f64| say::pct(shape::ratio(y, rate).unwrap_or(0.0));
    let mut out = Vec::new();
    match c.ys.iter().position(|y| *y >= rate * SHARE) {
        Some(i) => {
            let p = point(s, &[("parallel", &c.labels[i])]);
            let reach = if c.labels[i] == "1" {
                "reaches"
            } else {
                "reach"
            };
            out.push(format!(
                "{m}: {} {reach} {}, {} of the {link} link; {}.",
                streams(i),
                say::rate(c.ys[i]),
                share(c.ys[i]),
                cpu_there(p)
            ));
            fills.push(Fill {
                mode: m.to_string(),
                streams: c.xs[i],
                cpu_per_gb: p.and_then(|p| metric(p, metric::CPU_S_PER_GB.name)),
            });
        }
        None => {
            let last = c.len() - 1;
            out.push(format!(
                "{m}: not reachable on this machine: {} (the most that ran) reach {}, {} of the {link} link.",
                streams(last),
                say::rate(c.ys[last]),
                share(c.ys[last])
            ));
        }
    }
    if c.labels[0] == "1" {
        let cost = point(s, &[("parallel", "1")])
            .and_then(|p| metric(p, metric::CPU_S_PER_GB.name))
            .map_or(String::new(), |g| {
                format!(" at {} CPU-seconds per GB", say::num(g))
            });
        let cost = match point(s, &[("parallel", "1")]).and_then(|p| metric(p, CPU_EMULATOR)) {
            Some(_) if !cost.is_empty() => format!("{cost} at the ends (the emulator left out)"),
            _ => cost,
        };
        out.push(format!(
            "{m}: one stream carries {} ({}){cost}.",
            say::rate(c.ys[0]),
            share(c.ys[0])
        ));
    }
    out
}

/// "CPU there: 40% at the client end, 35% at the server end", or one figure when both ends
/// report the same (lab hosts share this machine's CPUs), with the lab emulator's share of it
/// apart: CPU per GB leaves the emulator out, so that the modes compare what the ends spent.
fn cpu_there(p: Option<&Point>) -> String {
    let cpu = |name: &str| p.and_then(|p| metric(p, name));
    let emulator = cpu(CPU_EMULATOR).map_or(String::new(), |e| {
        format!(
            "; of it the WAN emulator's forwarder took {}, left out of CPU per GB",
            say::percent(e)
        )
    });
    match (cpu(metric::CPU_LOCAL_PERCENT.name), cpu(CPU_REMOTE)) {
        (Some(l), Some(r)) if say::percent(l) == say::percent(r) => format!(
            "CPU there: {} (both ends share this machine's CPUs{emulator})",
            say::percent(l)
        ),
        (l, r) => {
            let show = |v: Option<f64>| v.map_or("n/a".into(), say::percent);
            format!(
                "CPU there: {} at the client end, {} at the server end",
                show(l),
                show(r)
            )
        }
    }
}

/// The mode that fills the link with the fewest streams, then the least CPU per GB.
fn cheapest(fills: &[Fill], link: &str) -> String {
    let key = |f: &Fill| (f.streams, f.cpu_per_gb.unwrap_or(f64::INFINITY));
    let Some(best) = fills.iter().min_by(|a, b| {
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    }) else {
        return format!("No mode filled the {link} link to 90% on this machine.");
    };
    let cost = |f: &Fill| {
        f.cpu_per_gb
            .map_or(String::new(), |g| format!(", {} CPU-s/GB", say::num(g)))
    };
    let others: Vec<String> = fills
        .iter()
        .filter(|f| f.mode != best.mode)
        .map(|f| {
            let ratio = match (f.cpu_per_gb, best.cpu_per_gb) {
                (Some(a), Some(b)) => shape::ratio(a, b).map_or(String::new(), |r| {
                    format!(", {} the CPU per GB", say::times(r))
                }),
                _ => String::new(),
            };
            format!(
                "{} needs {}{}{ratio}",
                f.mode,
                say::plural(&format!("{:.0}", f.streams), "stream", "streams"),
                cost(f)
            )
        })
        .collect();
    let rest = if others.is_empty() {
        String::new()
    } else {
        format!("; {}", others.join("; "))
    };
    format!(
        "The cheapest way to fill the {link} link to 90%: {}, {}{}{rest}.",
        best.mode,
        say::plural(&format!("{:.0}", best.streams), "stream", "streams"),
        cost(best)
    )
}
