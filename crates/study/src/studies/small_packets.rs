//! small-packets: UDP datagrams per second, loss and CPU per datagram over datagram size × flows,
//! with and without GSO (UDP_SEGMENT/UDP_GRO), and what limits the rate. The classic 10 GbE
//! study needed 1,000 threads to pass 1.5 M packets/s of 64 bytes; one `sendto` per datagram
//! keeps today's tools near 300 k/s on one core.

use super::shared::{iterations, size_label, timing};
use crate::curve::{metric, point};
use crate::spec::{axis, SweepSpec};
use crate::{say, shape, Study};
use fathom_proto::plan::KindId;
use fathom_report::metric;
use fathom_report::series::{Point, Series};

/// The study.
pub(crate) const STUDY: Study = Study {
    name: "small-packets",
    question: "How many datagrams per second pass, and what limits them, from 64 B to 64 KB, 1 to 16 flows, with and without GSO?",
    source: "T5440 10 GbE study (64-byte UDP packets/s as threads grow)",
    needs_lab: false,
    sweeps,
    findings,
};

const FULL_SIZES: [&str; 5] = ["64", "512", "1472", "8K", "65507"];
const QUICK_SIZES: [&str; 2] = ["64", "1472"];
const FULL_FLOWS: [&str; 3] = ["1", "4", "16"];
const QUICK_FLOWS: [&str; 2] = ["1", "4"];
const SENT: &str = metric::udp::SENDER_DATAGRAMS_PER_SECOND.name;
const LOST: &str = metric::udp::LOST_PERCENT.name;
const CPU: &str = metric::udp::CPU_NS_PER_DATAGRAM_LOCAL.name;
/// Loss above this share (percent) says the receiver, not the sender, set the rate.
const RECEIVER_BOUND: f64 = 1.0;

fn sweeps(quick: bool, _cpus: u32) -> Vec<SweepSpec> {
    vec![SweepSpec {
        title: "Datagram size, flows, GSO".into(),
        kind: KindId::Udp,
        args: timing(quick),
        axes: vec![
            axis("size", if quick { &QUICK_SIZES } else { &FULL_SIZES }),
            axis("parallel", if quick { &QUICK_FLOWS } else { &FULL_FLOWS }),
            axis("gso", &["off", "on"]),
        ],
        iterations: iterations(quick),
        x_axis: "size".into(),
        metric: metric::udp::DATAGRAMS_PER_SECOND.name.into(),
        more_metrics: vec![SENT.into(), LOST.into(), CPU.into()],
        ..SweepSpec::default()
    }]
}

fn at<'a>(s: &'a Series, size: &str, flows: &str, gso: &str) -> Option<&'a Point> {
    point(s, &[("size", size), ("parallel", flows), ("gso", gso)])
}

/// "64 B, 4 flows, GSO on".
fn where_(p: &Point) -> String {
    let flows = p.param("parallel").unwrap_or("?");
    format!(
        "{}, {}, GSO {}",
        size_label(p.param("size").unwrap_or("?")),
        say::plural(flows, "flow", "flows"),
        p.param("gso").unwrap_or("?")
    )
}

fn findings(series: &[Series]) -> Vec<String> {
    let Some(s) = series.first() else {
        return Vec::new();
    };
    let Some((peak, rate)) = s
        .points
        .iter()
        .filter_map(|p| Some((p, metric(p, metric::udp::DATAGRAMS_PER_SECOND.name)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return vec!["No point succeeded.".into()];
    };
    let mut out = vec![format!(
        "Peak {} datagrams/s at {}.",
        say::count(rate),
        where_(peak)
    )];
    let smallest = s
        .axes
        .iter()
        .find(|a| a.name == "size")
        .and_then(|a| a.values.first());
    if let Some(size) = smallest {
        out.extend(gso_gain(s, size));
        out.extend(limit(s, size));
    }
    out
}

/// One flow of the smallest datagrams with and without GSO: rates and CPU per datagram.
fn gso_gain(s: &Series, size: &str) -> Option<String> {
    let (off, on) = (at(s, size, "1", "off")?, at(s, size, "1", "on")?);
    let (a, b) = (
        metric(off, metric::udp::DATAGRAMS_PER_SECOND.name)?,
        metric(on, metric::udp::DATAGRAMS_PER_SECOND.name)?,
    );
    let cpu = |p| metric(p, CPU).map_or("n/a".into(), |c: f64| format!("{c:.0} ns"));
    Some(format!(
        "{}, 1 flow: {}/s without GSO, {}/s with it ({}); CPU per datagram {} and {}. {}",
        size_label(size),
        say::count(a),
        say::count(b),
        shape::ratio(b, a).map_or("n/a".into(), say::times),
        cpu(off),
        cpu(on),
        gso_path(s)
    ))
}

/// Whether the GSO datagrams were packets: on loopback no device cuts GSO's super-packets (nor
/// on a veth pair), so the receiver's datagrams never crossed as packets; across the lab's
/// emulator (`--lab`) each one was a frame on the link.
fn gso_path(s: &Series) -> &'static str {
    match s.args.iter().any(|a| a == "--lab") {
        true => "Across the lab's emulator, each GSO datagram was a frame on the link (its counters show them).",
        false => "On loopback no device cuts GSO's super-packets: the datagrams with GSO are segments the receiver's GRO handed over, never packets, so that rate is no packet rate a NIC would carry; run with --lab (e.g. --lab delay=0ms) for the GSO arm to cross the lab's emulator, where each is a frame.",
    }
}

/// What limits one flow of the smallest datagrams without GSO: the receiver when it lost a
/// share of what was sent, else the sender's path through the kernel, one datagram at a time.
fn limit(s: &Series, size: &str) -> Option<String> {
    let p = at(s, size, "1", "off")?;
    let (got, sent) = (
        metric(p, metric::udp::DATAGRAMS_PER_SECOND.name)?,
        metric(p, SENT)?,
    );
    let lost = metric(p, LOST).unwrap_or(0.0);
    let gso =
        at(s, size, "1", "on").and_then(|q| metric(q, metric::udp::DATAGRAMS_PER_SECOND.name));
    Some(if lost >= RECEIVER_BOUND {
        format!(
            "The receiver limits {}: it lost {} of the {}/s sent, dropped where it could not keep up (its socket buffer).",
            size_label(size),
            say::percent(lost),
            say::count(sent)
        )
    } else {
        let lift = gso
            .and_then(|g| shape::ratio(g, got))
            .map_or(String::new(), |r| {
                format!(
                    "; GSO, which takes a batch through the kernel as one, lifts it {}{}",
                    say::times(r),
                    match s.args.iter().any(|a| a == "--lab") {
                        true => "",
                        false => " (on loopback, in segments that never were packets)",
                    }
                )
            });
        let all = match say::percent(lost).as_str() {
            "0%" => "all".to_string(),
            l => format!("all but {l}"),
        };
        format!(
            "The sender limits {}: the receiver read {all} of its {}/s, so each datagram's own trip through the sender's kernel sets the rate{lift}.",
            size_label(size),
            say::count(sent)
        )
    })
}
