//! CSV output for spreadsheets: a header line, then one row per interval for all flows together
//! (flow `sum`, direction `all`) followed by one row per flow when the interval carries per-flow
//! records. Numbers are plain decimals, never NaN; a figure that has no per-flow meaning (host
//! CPU) is left empty on flow rows. A UDP stream's rows carry six more columns
//! ([`UDP_COLUMNS`]), from its intervals' datagram accounting (empty on flow rows).

use crate::export::Exporter;
use crate::model::{FlowInterval, Interval, Report, UdpInterval};
use crate::series::Series;

/// The CSV exporter: a report's intervals ([`render`]) or a series' points ([`render_series`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Csv;

impl Exporter<Report> for Csv {
    fn export(&self, r: &Report) -> Vec<u8> {
        render(r)
    }
}

impl Exporter<Series> for Csv {
    fn export(&self, s: &Series) -> Vec<u8> {
        render_series(s)
    }
}

/// The columns, in order.
pub const COLUMNS: [&str; 13] = [
    "start",
    "end",
    "flow",
    "direction",
    "omitted",
    "bits_per_second",
    "sender_bits_per_second",
    "bytes",
    "retransmits",
    "rtt_us",
    "cwnd",
    "cpu_local_pct",
    "cpu_remote_pct",
];

/// The UDP stream's columns after [`COLUMNS`]: datagrams read, their rate, and the receivers'
/// sequence accounting (empty where the datagrams carried no sequence number or send time).
pub const UDP_COLUMNS: [&str; 6] = [
    "datagrams",
    "datagrams_per_second",
    "lost",
    "duplicates",
    "reordered",
    "jitter_us",
];

/// The report's intervals as CSV.
pub fn render(r: &Report) -> Vec<u8> {
    let udp = r.test.udp().is_some();
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let header = COLUMNS
        .iter()
        .chain(udp.then_some(&UDP_COLUMNS).into_iter().flatten())
        .map(|c| c.to_string())
        .collect::<Vec<_>>();
    let rows = std::iter::once(header).chain(r.intervals.iter().flat_map(|iv| {
        let sum = sum_row(iv).into_iter().chain(udp_cells(udp, iv.udp()));
        std::iter::once(sum.collect()).chain(iv.flows.iter().map(move |f| {
            flow_row(r, iv, f)
                .into_iter()
                .chain(udp_cells(udp, None))
                .collect()
        }))
    }));
    for row in rows {
        w.write_record(&row)
            .expect("writing CSV to memory cannot fail");
    }
    w.into_inner().expect("flushing CSV to memory cannot fail")
}

/// The UDP cells of a row: none unless `udp`; empty without the interval's figures `u`.
fn udp_cells(udp: bool, u: Option<&UdpInterval>) -> Vec<String> {
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    match (udp, u) {
        (false, _) => Vec::new(),
        (true, None) => vec![String::new(); UDP_COLUMNS.len()],
        (true, Some(u)) => vec![
            u.datagrams.to_string(),
            num(u.datagrams_per_second),
            opt(u.lost),
            opt(u.duplicates),
            opt(u.reordered),
            u.jitter_us.map_or(String::new(), num),
        ],
    }
}

/// All flows of one interval.
fn sum_row(iv: &Interval) -> [String; 13] {
    [
        num(iv.start),
        num(iv.end),
        "sum".into(),
        "all".into(),
        iv.omitted.to_string(),
        num(iv.bits_per_second),
        num(iv.sender_bits_per_second),
        iv.bytes.to_string(),
        iv.retransmits.to_string(),
        num(iv.rtt_us),
        iv.cwnd.to_string(),
        num(iv.cpu_local),
        num(iv.cpu_remote),
    ]
}

/// One flow of one interval; its direction comes from the report's flow list.
fn flow_row(r: &Report, iv: &Interval, f: &FlowInterval) -> [String; 13] {
    let direction = r
        .flows
        .iter()
        .find(|x| x.id == f.id)
        .map_or("", |x| x.direction.as_str());
    [
        num(iv.start),
        num(iv.end),
        f.id.to_string(),
        direction.into(),
        iv.omitted.to_string(),
        num(f.bits_per_second),
        num(f.sender_bits_per_second),
        f.bytes.to_string(),
        f.retransmits.to_string(),
        f.rtt_us.to_string(),
        f.cwnd.to_string(),
        String::new(),
        String::new(),
    ]
}

/// A plain decimal (Rust's shortest exact form, never an exponent); 0 for a non-finite value.
fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        "0".into()
    }
}

/// A series as CSV: one row per point — its options, then for every metric its n, mean, CI
/// bounds, min, median and max — plus the point's error.
pub fn render_series(s: &Series) -> Vec<u8> {
    let mut metrics: Vec<&str> = Vec::new();
    for p in &s.points {
        for m in &p.metrics {
            if !metrics.contains(&m.name.as_str()) {
                metrics.push(&m.name);
            }
        }
    }
    let mut header: Vec<String> = s.axes.iter().map(|a| a.name.clone()).collect();
    for m in &metrics {
        for part in ["n", "mean", "ci_low", "ci_high", "min", "median", "max"] {
            header.push(format!("{m}_{part}"));
        }
    }
    header.push("error".into());
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(&header)
        .expect("writing CSV to memory cannot fail");
    for p in &s.points {
        let mut row: Vec<String> = s
            .axes
            .iter()
            .map(|a| p.param(&a.name).unwrap_or("").to_string())
            .collect();
        for m in &metrics {
            match p.metric(m) {
                Some(st) => {
                    row.push(st.n.to_string());
                    row.extend(
                        [st.mean, st.ci_low, st.ci_high, st.min, st.median, st.max].map(num),
                    );
                }
                None => row.extend(std::iter::repeat_n(String::new(), 7)),
            }
        }
        row.push(p.error.clone().unwrap_or_default());
        w.write_record(&row)
            .expect("writing CSV to memory cannot fail");
    }
    w.into_inner().expect("flushing CSV to memory cannot fail")
}
