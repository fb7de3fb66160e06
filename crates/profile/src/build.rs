//! The profile's tables read into a [`ProfilePlan`], with the span of every value kept beside
//! it ([`Spans`](crate::spans::Spans)) so that the checks after it can name the place at fault.

use crate::error::{hint, ProfileError, Source};
use crate::read::{Fields, Reader, Span, Val};
use crate::size::Unit;
use crate::spans::{GroupSpans, OpSpans, Spans, TxSpans};
use crate::vars::{is_name, Overrides, Vars, MAX_VALUE};
use crate::{grammar, locate, remote};
use fathom_proto::profile::{
    FlowOp, Group, Op, ProfilePlan, Program, Protocol, Repeat, Size, Transaction,
};
use toml_edit::{InlineTable, Item, Table, Value};

/// The seed of a profile's random sizes when it names none: fixed, so runs repeat.
pub const DEFAULT_SEED: u64 = 1;

/// The whole profile: its variables, groups, the order of their flowops and the plan's bounds.
pub(crate) fn profile(
    src: &Source,
    root: &Table,
    stem: &str,
    overrides: &Overrides,
) -> Result<ProfilePlan, ProfileError> {
    let fields = Fields::of_table(root, "the profile");
    fields.only(src, &["name", "seed", "vars", "group"])?;
    let defaults = defaults(src, fields.get("vars"))?;
    let declared: Vec<String> = defaults.iter().map(|(k, _)| k.clone()).collect();
    let vars = Vars::new(defaults, overrides);
    let r = Reader { src, vars: &vars };
    let name_val = fields.get("name");
    let name = match name_val {
        Some(v) => r.text("name", v)?.text,
        None => stem.to_string(),
    };
    let seed = match fields.get("seed") {
        Some(v) => r.uint("seed", v, i64::MAX as u64)?,
        None => DEFAULT_SEED,
    };
    let tables = match root.get("group") {
        Some(Item::ArrayOfTables(a)) => a,
        Some(other) => {
            return Err(src.error(other.span(), "group: write each group as a [[group]] table"))
        }
        None => return Err(src.error(None, "a profile needs at least one [[group]] table")),
    };
    let mut groups = Vec::new();
    let mut spans = Spans {
        name: name_val.and_then(Val::span),
        groups: Vec::new(),
    };
    for (i, t) in tables.iter().enumerate() {
        let (g, s) = group(&r, t, i, seed)?;
        groups.push(g);
        spans.groups.push(s);
    }
    let plan = ProfilePlan { name, groups };
    grammar::check(src, &plan, &spans)?;
    locate::validate(src, &plan, &spans)?;
    match vars.unused_set(overrides, &declared) {
        Some(m) => Err(src.error(None, m)),
        None => Ok(plan),
    }
}

/// The `[vars]` table's defaults, each as text (an array becomes a comma-separated list).
fn defaults(src: &Source, vars: Option<Val>) -> Result<Vec<(String, String)>, ProfileError> {
    let table = match vars {
        None => return Ok(Vec::new()),
        Some(Val::Item(Item::Table(t))) => t,
        Some(v) => {
            return Err(src.error(
                v.span(),
                "vars: write the variables' defaults as a [vars] table",
            ))
        }
    };
    let mut out = Vec::new();
    for (k, item) in table.iter() {
        let span = item.span();
        if !is_name(k) {
            let m = format!(
                "vars: '{k}' is not a variable name (letters, digits and _, not starting with a \
                 digit)"
            );
            return Err(src.error(table.key(k).and_then(|k| k.span()), m));
        }
        let text = match item.as_value() {
            Some(Value::Array(a)) => a
                .iter()
                .map(plain)
                .collect::<Option<Vec<_>>>()
                .map(|v| v.join(",")),
            Some(v) => plain(v),
            None => None,
        };
        let text = text.ok_or_else(|| {
            src.error(
                span.clone(),
                format!("vars.{k}: expected a string, number, boolean or an array of them"),
            )
        })?;
        if text.len() > MAX_VALUE {
            return Err(src.error(span, format!("vars.{k}: over {MAX_VALUE} bytes")));
        }
        out.push((k.to_string(), text));
    }
    Ok(out)
}

/// A scalar's text as a variable holds it.
fn plain(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.value().clone()),
        Value::Integer(i) => Some(i.value().to_string()),
        Value::Boolean(b) => Some(b.value().to_string()),
        _ => None,
    }
}

/// One `[[group]]`.
fn group(r: &Reader, t: &Table, i: usize, seed: u64) -> Result<(Group, GroupSpans), ProfileError> {
    let f = Fields::of_table(t, "[[group]]");
    let keys = [
        "name",
        "threads",
        "flows",
        "remote",
        "protocol",
        "nodelay",
        "window",
        "transaction",
    ];
    f.only(r.src, &keys)?;
    let at = |k: &str| f.get(k).and_then(Val::span).or(f.span.clone());
    let name = match f.get("name") {
        Some(v) => r.text("name", v)?.text,
        None => format!("group{}", i + 1),
    };
    let count = |k: &str| {
        f.get(k).map_or(Ok(1), |v| {
            r.uint(k, v, u64::from(u32::MAX)).map(|n| n as u32)
        })
    };
    let remote = match f.get("remote") {
        None => None,
        Some(v) => {
            let text = r.text("remote", v)?.text;
            if text.is_empty() {
                None
            } else {
                remote::check(&text).map_err(|m| r.fail(v.span(), "remote", m))?;
                Some(text)
            }
        }
    };
    let window = match f.get("window") {
        None => None,
        Some(v) => match r.size("window", v, Unit::Bytes)? {
            Size::Fixed(w) => Some(w),
            _ => {
                return Err(r.fail(
                    v.span(),
                    "window",
                    "a window is one size, not rand() or a list",
                ))
            }
        },
    };
    let (transactions, tx_spans) = transactions(r, t, &f)?;
    let g = Group {
        name,
        threads: count("threads")?,
        flows_per_thread: count("flows")?,
        remote,
        protocol: protocol(r, f.get("protocol"))?,
        nodelay: f
            .get("nodelay")
            .map_or(Ok(false), |v| r.boolean("nodelay", v))?,
        window,
        program: Program { transactions, seed },
    };
    let spans = GroupSpans {
        header: f.span.clone(),
        name: at("name"),
        threads: at("threads"),
        flows: at("flows"),
        window: at("window"),
        transactions: tx_spans,
    };
    Ok((g, spans))
}

fn protocol(r: &Reader, v: Option<Val>) -> Result<Protocol, ProfileError> {
    let Some(v) = v else { return Ok(Protocol::Tcp) };
    let e = r.text("protocol", v)?;
    match e.text.as_str() {
        "tcp" => Ok(Protocol::Tcp),
        "udp" => Ok(Protocol::Udp),
        "tls" => Ok(Protocol::Tls),
        "ssl" => Err(r.fail(v.span(), "protocol", "'ssl' is called 'tls' here")),
        other => Err(r.fail(
            v.span(),
            "protocol",
            format!(
                "unknown protocol '{other}'{}",
                hint(other, &["tcp", "udp", "tls"])
            ),
        )),
    }
}

/// A group's `[[group.transaction]]` tables.
fn transactions(
    r: &Reader,
    t: &Table,
    f: &Fields,
) -> Result<(Vec<Transaction>, Vec<TxSpans>), ProfileError> {
    let tables = match t.get("transaction") {
        Some(Item::ArrayOfTables(a)) => a,
        Some(other) => {
            return Err(r.src.error(
                other.span(),
                "transaction: write each as a [[group.transaction]] table",
            ))
        }
        None => {
            return Err(r.src.error(
                f.span.clone(),
                "this [[group]] has no [[group.transaction]]: add one with its flowops",
            ))
        }
    };
    let mut out = Vec::new();
    let mut spans = Vec::new();
    for t in tables.iter() {
        let (tx, s) = transaction(r, t)?;
        out.push(tx);
        spans.push(s);
    }
    Ok((out, spans))
}

/// One `[[group.transaction]]`.
fn transaction(r: &Reader, t: &Table) -> Result<(Transaction, TxSpans), ProfileError> {
    let f = Fields::of_table(t, "[[group.transaction]]");
    f.only(
        r.src,
        &["iterations", "duration", "rate", "barrier", "flowops"],
    )?;
    let at = |k: &str| f.get(k).and_then(Val::span).or(f.span.clone());
    let repeat = match (f.get("iterations"), f.get("duration")) {
        (Some(_), Some(d)) => {
            return Err(r.fail(
                d.span(),
                "duration",
                "a transaction has iterations or duration, not both",
            ))
        }
        (Some(i), None) => Repeat::Iterations(r.uint("iterations", i, u64::MAX)?),
        (None, Some(d)) => Repeat::DurationMs(r.millis("duration", d)?),
        (None, None) => Repeat::Iterations(1),
    };
    let rate = match f.get("rate") {
        Some(v) => Some(r.uint("rate", v, u64::from(u32::MAX))? as u32),
        None => None,
    };
    let list = match f.get("flowops") {
        Some(Val::Item(Item::Value(Value::Array(a)))) => a,
        Some(v) => {
            return Err(r.fail(
                v.span(),
                "flowops",
                "write the flowops inline: flowops = [{ op = \"write\", size = \"64K\" }]",
            ))
        }
        None => return Err(r.src.error(
            f.span.clone(),
            "this transaction has no flowops: add flowops = [{ op = \"write\", size = \"64K\" }]",
        )),
    };
    let mut ops = Vec::new();
    let mut op_spans = Vec::new();
    for item in list.iter() {
        let Value::InlineTable(table) = item else {
            return Err(r.fail(
                item.span(),
                "flowops",
                "each flowop is a table such as { op = \"write\", size = \"64K\" }",
            ));
        };
        let (op, s) = flowop(r, table)?;
        ops.push(op);
        op_spans.push(s);
    }
    let tx = Transaction {
        repeat,
        rate,
        barrier: f
            .get("barrier")
            .map_or(Ok(false), |v| r.boolean("barrier", v))?,
        ops,
    };
    let spans = TxSpans {
        repeat: f
            .get("iterations")
            .or(f.get("duration"))
            .and_then(Val::span)
            .or(f.span.clone()),
        rate: at("rate"),
        flowops: at("flowops"),
        header: f.span.clone(),
        ops: op_spans,
    };
    Ok((tx, spans))
}

/// The flowops' names, for suggestions.
const OPS: [&str; 7] = [
    "connect",
    "disconnect",
    "write",
    "read",
    "sendto",
    "recv",
    "think",
];

/// What a flowop's name makes of it.
enum Kind {
    /// `connect` or `disconnect`: no size.
    Bare(Op),
    /// `think`: a time.
    Think,
    /// A data flowop: a size in bytes.
    Data(fn(Size) -> Op),
}

fn kind(r: &Reader, name: &str, span: Span) -> Result<Kind, ProfileError> {
    Ok(match name {
        "connect" => Kind::Bare(Op::Connect),
        "disconnect" => Kind::Bare(Op::Disconnect),
        "think" => Kind::Think,
        "write" => Kind::Data(Op::Write),
        "read" => Kind::Data(Op::Read),
        "sendto" => Kind::Data(Op::SendTo),
        "recv" => Kind::Data(Op::Recv),
        "accept" => {
            return Err(r.fail(
                span,
                "op",
                "no 'accept' is needed: the agent accepts each connect by itself",
            ))
        }
        "sendfile" | "sendfilev" => {
            return Err(r.fail(
                span,
                "op",
                format!("'{name}' is not supported in profiles; use write"),
            ))
        }
        other => {
            return Err(r.fail(
                span,
                "op",
                format!("unknown flowop '{other}'{}", hint(other, &OPS)),
            ))
        }
    })
}

/// One flowop: `{ op = "write", size = "64K", count = 1, canfail = false }`.
fn flowop(r: &Reader, t: &InlineTable) -> Result<(FlowOp, OpSpans), ProfileError> {
    let f = Fields::of_inline(t, "a flowop");
    let Some(op_val) = f.get("op") else {
        return Err(r.src.error(
            f.span.clone(),
            format!("a flowop needs op = one of {}", OPS.join(", ")),
        ));
    };
    let name = r.text("op", op_val)?.text;
    let kind = kind(r, &name, op_val.span())?;
    let (what, size_key, unit): (&'static str, &str, Unit) = match kind {
        Kind::Bare(_) => ("a connect or disconnect flowop", "", Unit::Bytes),
        Kind::Think => ("a think flowop", "time", Unit::Micros),
        Kind::Data(_) => ("a data flowop", "size", Unit::Bytes),
    };
    let f = f.named(what);
    let keys = ["op", "count", "canfail", size_key];
    f.only(r.src, &keys[..if size_key.is_empty() { 3 } else { 4 }])?;
    let size_val = f.get(size_key);
    let op = match (kind, size_val) {
        (Kind::Bare(op), _) => op,
        (_, None) => {
            let m = format!("{name} needs {size_key} = {}", unit.example());
            return Err(r.src.error(f.span.clone(), m));
        }
        (Kind::Think, Some(v)) => Op::Think(r.size(size_key, v, unit)?),
        (Kind::Data(make), Some(v)) => {
            let s = r.size(size_key, v, unit)?;
            if smallest(&s) == 0 {
                let m = format!("a {name} of 0 bytes moves nothing; sizes start at 1");
                return Err(r.fail(v.span(), size_key, m));
            }
            make(s)
        }
    };
    let spans = OpSpans {
        op: op_val.span(),
        count: f.get("count").and_then(Val::span).or(f.span.clone()),
        size: size_val.and_then(Val::span).or(f.span.clone()),
    };
    let flowop = FlowOp {
        op,
        count: f.get("count").map_or(Ok(1), |v| {
            r.uint("count", v, u64::from(u32::MAX)).map(|n| n as u32)
        })?,
        can_fail: f
            .get("canfail")
            .map_or(Ok(false), |v| r.boolean("canfail", v))?,
    };
    Ok((flowop, spans))
}

/// The smallest value a size can take.
fn smallest(s: &Size) -> u32 {
    match s {
        Size::Fixed(v) => *v,
        Size::Rand { lo, .. } => *lo,
        Size::List(l) => l.iter().copied().min().unwrap_or(0),
    }
}
