//! CSV output for spreadsheets: a header line, then one row per interval for all flows together
//! (flow `sum`, direction `all`) followed by one row per flow when the interval carries per-flow
//! records. Numbers are plain decimals, never NaN; a figure that has no per-flow meaning (host
//! CPU) is left empty on flow rows. A kind's section may add columns: a UDP stream's rows carry
//! six more ([`UDP_COLUMNS`]), from its intervals' datagram accounting (empty on flow rows).

use crate::export::Exporter;
use crate::floor::text::num;
use crate::model::{FlowInterval, Interval, Report};
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

pub use crate::sections::udp::UDP_COLUMNS;

/// The report's intervals as CSV, with its kind's section's columns after the common ones.
pub fn render(r: &Report) -> Vec<u8> {
    let section = crate::sections::of_test(r);
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let header = COLUMNS
        .iter()
        .chain(section.csv_heads())
        .map(|c| c.to_string())
        .collect::<Vec<_>>();
    let rows = std::iter::once(header).chain(r.intervals.iter().flat_map(|iv| {
        let sum = sum_row(iv).into_iter().chain(section.csv_cells(Some(iv)));
        std::iter::once(sum.collect()).chain(iv.flows.iter().map(move |f| {
            flow_row(r, iv, f)
                .into_iter()
                .chain(section.csv_cells(None))
                .collect()
        }))
    }));
    for row in rows {
        w.write_record(&row)
            .expect("writing CSV to memory cannot fail");
    }
    w.into_inner().expect("flushing CSV to memory cannot fail")
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
