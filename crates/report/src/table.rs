//! The compact terminal output printed after a test: a header line, the interval table, the
//! per-flow table (for a few flows), the summary, then warnings and the error. Plain text, no
//! colors, columns aligned; the text may change between versions (the JSON is the contract).

use crate::export::Exporter;
use crate::floor::text::human_bytes;
use crate::floor::text::secs;
use crate::model::{Interval, Report};
use crate::section::{Item, Section};
use crate::sections;
use crate::table_hosts;

pub use crate::cells::wan_line;
pub use crate::floor::text::rate;

/// The per-flow table is shown up to this many flows.
pub const FLOW_TABLE_MAX: usize = 16;

/// Width of the summary's labels.
const LABEL: usize = 16;

/// The terminal exporter: reports ([`render`]), series ([`crate::table_series`]), comparisons
/// and store listings, as plain aligned text.
#[derive(Clone, Copy, Debug, Default)]
pub struct Table;

impl Exporter<Report> for Table {
    fn export(&self, r: &Report) -> Vec<u8> {
        render(r)
    }
}

/// The report as the terminal shows it.
pub fn render(r: &Report) -> Vec<u8> {
    let mut lines = vec![header(r)];
    if !r.intervals.is_empty() {
        let cols = Columns::of(r);
        lines.push(String::new());
        lines.push(cols.head());
        lines.extend(r.intervals.iter().map(|iv| cols.line(iv)));
    }
    lines.extend(after_intervals(r));
    let mut text = lines.join("\n");
    text.push('\n');
    text.into_bytes()
}

/// The table after its interval lines (for output whose intervals were printed as they came).
pub fn rest(r: &Report) -> Vec<u8> {
    let mut text = after_intervals(r).join("\n");
    text.push('\n');
    text.into_bytes()
}

/// The lines after the interval table: flows, hosts, WAN links, summary, warnings, error.
fn after_intervals(r: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    if !r.flows.is_empty() && r.flows.len() <= FLOW_TABLE_MAX {
        lines.push(String::new());
        lines.extend(sections::of_summary(r).flows(r));
    }
    if r.hosts.len() > 2 {
        lines.push(String::new());
        lines.extend(table_hosts::hosts(r));
    }
    lines.extend(table_hosts::groups(&r.groups));
    lines.extend(table_hosts::wan(r));
    lines.push(String::new());
    lines.extend(summary(r));
    lines.extend(r.warnings.iter().map(|w| format!("warning: {w}")));
    lines.extend(r.error.iter().map(|e| format!("error: {e}")));
    lines
}

/// The columns of an interval table: its kind's section's.
#[derive(Clone, Copy, Debug)]
pub struct Columns(&'static dyn Section);

impl Columns {
    /// The columns a finished report's intervals show.
    pub fn of(r: &Report) -> Columns {
        Columns(sections::of_summary(r))
    }

    /// The columns a plan's intervals will show.
    pub fn of_plan(plan: &fathom_proto::plan::TestPlan) -> Columns {
        Columns(sections::of_plan(plan))
    }

    /// The column heads.
    pub fn head(self) -> String {
        self.0.head()
    }

    /// One interval's line, under its time span (marked when it was warm-up).
    pub fn line(self, iv: &Interval) -> String {
        marked(self.row(&format!("{:.2}-{:.2}", iv.start, iv.end), iv), iv)
    }

    /// One interval's figures under `label`.
    pub fn row(self, label: &str, iv: &Interval) -> String {
        self.0.row(label, iv)
    }
}

/// "stream to HOST:PORT: 1 flow forward, 3 s window after 1 s warm-up, 1 s intervals".
pub fn header(r: &Report) -> String {
    let t = &r.test;
    let agent = if t.embedded_agent {
        format!("{} (embedded agent)", t.agent)
    } else {
        t.agent.clone()
    };
    let flows = match t.clients.len() {
        0 | 1 => crate::words::plural(t.parallel as u64, "flow"),
        n => format!(
            "{} ({} from each of {n} clients)",
            crate::words::plural(t.parallel as u64 * n as u64, "flow"),
            t.parallel
        ),
    };
    let shape = match t.direction.as_str() {
        "bidir" => format!("{flows} each way (bidir)"),
        dir => format!("{flows} {dir}"),
    };
    let limit = match (t.duration_s, t.bytes) {
        (Some(d), _) => format!("{} window", secs(d)),
        (None, Some(b)) => format!("{},", crate::words::bytes_limit(t, b)),
        (None, None) => "until done,".to_string(),
    };
    let warmup = if t.omit_s > 0.0 {
        format!("after {} warm-up", secs(t.omit_s))
    } else {
        "no warm-up".to_string()
    };
    format!(
        "{} to {agent}: {shape}, {limit} {warmup}, {} intervals",
        t.kind,
        secs(t.interval_s)
    )
}

/// `line`, with "  (omitted)" after it for a warm-up interval.
fn marked(line: String, iv: &Interval) -> String {
    if iv.omitted {
        line + "  (omitted)"
    } else {
        line
    }
}

/// The TLS lines: what was negotiated, then what it cost.
fn tls(t: &crate::model::tls::TlsSummary, item: &mut Item<'_>) {
    let mut what = format!(
        "TLS {} {}, records up to {} bytes",
        t.version, t.suite, t.record_size
    );
    if let Some(h) = &t.handshake_us {
        what += &format!(
            "; handshake {:.0} µs mean, {:.0} µs max over {} connection{}",
            h.mean,
            h.max,
            h.count,
            if h.count == 1 { "" } else { "s" }
        );
    }
    if let Some(hps) = t.handshakes_per_second {
        what += &format!("; {hps:.0} full handshakes/s");
    }
    item("tls", what);
    let mut cost = Vec::new();
    if let Some(c) = &t.cpu_s_per_gb {
        cost.push(format!(
            "CPU {:.3} s/GB local, {:.3} s/GB remote",
            c.local, c.remote
        ));
    }
    if let (Some(a), Some(w), Some(o)) = (t.application_bytes, t.wire_bytes, t.overhead_pct) {
        cost.push(format!(
            "{} on the wire for {} of data (+{o:.2}%)",
            human_bytes(w),
            human_bytes(a)
        ));
    }
    if !cost.is_empty() {
        item("tls cost", cost.join("; "));
    }
}

/// The figures over the measured window: TLS's lines, then the kind's section's.
fn summary(r: &Report) -> Vec<String> {
    let mut lines = vec![format!(
        "summary over the measured window ({})",
        secs(r.summary.seconds)
    )];
    let mut item = |label: &str, text: String| lines.push(format!("  {label:<LABEL$}{text}"));
    if let Some(t) = &r.summary.tls {
        tls(t, &mut item);
    }
    sections::of_summary(r).summary(r, &mut item);
    lines
}
