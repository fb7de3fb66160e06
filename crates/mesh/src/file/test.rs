//! `[[test]]`: one test of the mesh: its command as typed, its period, class, targets, jitter,
//! slip, setup allowance and figure. The command is checked by the caller's [`Commands`]; its
//! error is placed at the word it names.

use super::read::{kind, Fields};
use crate::class::Class;
use crate::error::{hint, MeshError, Source, Span};
use crate::spec::{Figure, Targets, TestSpec, DEFAULT_JITTER, MAX_EVERY_NS, MIN_EVERY_NS};
use toml_edit::{Item, Table, Value};

/// What a test's command is, as the caller's check found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// Its kind (the subcommand: stream, rr, crr, udp, file).
    pub kind: String,
    /// How long it runs: warm-up and measured time, ns.
    pub length_ns: u64,
}

/// Checks a test's command as the command line would.
pub trait Commands {
    /// `words` are the kind and its flags as typed after `fathom` (`["rr", "--size", "64"]`);
    /// the error is one line naming the flag at fault (`--size: ...`).
    fn check(&self, words: &[String]) -> Result<Checked, String>;
}

/// The keys of a `[[test]]`.
const KEYS: &[&str] = &[
    "name", "command", "every", "class", "targets", "jitter", "slip", "setup", "figure",
];
/// Longest command, in words.
const MAX_WORDS: usize = 64;

/// Every `[[test]]` of the file (`item` is the root's `test`), with `setup` the mesh's setup
/// allowance.
pub fn read_all(
    src: &Source,
    item: Option<&Item>,
    setup: u64,
    commands: &dyn Commands,
) -> Result<Vec<TestSpec>, MeshError> {
    let tables: Vec<&Table> = match item {
        None => return Ok(Vec::new()),
        Some(Item::ArrayOfTables(a)) => a.iter().collect(),
        Some(other) => {
            return Err(src.error(span_of(other), "test: write each test as a [[test]] table"))
        }
    };
    let mut out: Vec<TestSpec> = Vec::new();
    for t in tables {
        let spec = one(src, t, setup, commands)?;
        if out.iter().any(|o| o.name == spec.name) {
            let f = Fields::of(src, t, "[[test]]", KEYS)?;
            let m = format!(
                "name: a test named '{}' comes earlier; name each test",
                spec.name
            );
            return Err(src.error(f.at("name"), m));
        }
        out.push(spec);
    }
    Ok(out)
}

/// One `[[test]]`.
fn one(
    src: &Source,
    t: &Table,
    setup: u64,
    commands: &dyn Commands,
) -> Result<TestSpec, MeshError> {
    let f = Fields::of(src, t, "[[test]]", KEYS)?;
    let Some((v, span)) = f.value(src, "command")? else {
        return Err(src.error(
            f.span.clone(),
            "[[test]]: command is required, e.g. command = \"rr --size 64\"",
        ));
    };
    let words = words(src, v, span)?;
    let plain: Vec<String> = words.iter().map(|(w, _)| w.clone()).collect();
    let Checked { kind, length_ns } = commands.check(&plain).map_err(|m| {
        src.error(
            at_word(&words, &m, f.at("command")),
            format!("command: {m}"),
        )
    })?;
    let name = match f.text(src, "name")? {
        Some((n, span)) => super::members::checked_name(src, n, span, "name")?,
        None => kind.clone(),
    };
    let Some((every, every_at)) = f.duration(src, "every", MIN_EVERY_NS, MAX_EVERY_NS)? else {
        return Err(src.error(
            f.span.clone(),
            "[[test]]: every is required, e.g. every = \"30s\"",
        ));
    };
    let setup = f
        .duration(src, "setup", 0, 60_000_000_000)?
        .map_or(setup, |s| s.0);
    let mut spec = TestSpec::defaults(&name, &kind, every, length_ns, setup);
    spec.args = plain;
    placement(src, &f, &mut spec)?;
    timing(src, &f, &mut spec, every_at)?;
    Ok(spec)
}

/// The class, targets and figure the file gives `spec` over its defaults.
fn placement(src: &Source, f: &Fields, spec: &mut TestSpec) -> Result<(), MeshError> {
    if let Some((c, span)) = f.text(src, "class")? {
        let names: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
        spec.class = Class::from_name(&c).ok_or_else(|| {
            src.error(
                span,
                format!("class: '{c}' is not a class{}", hint(&c, &names)),
            )
        })?;
        spec.targets = Targets::of_class(spec.class);
    }
    match f.text(src, "targets")? {
        Some((t, _)) if t == "ring" => spec.targets = Targets::Ring,
        Some((t, _)) if t == "rotate" => spec.targets = Targets::Rotate,
        Some((t, span)) => {
            let m = format!(
                "targets: '{t}' is not ring or rotate{}",
                hint(&t, &["ring", "rotate"])
            );
            return Err(src.error(span, m));
        }
        None => {}
    }
    match f.text(src, "figure")? {
        Some((m, _)) if is_metric(&m) => spec.figure = Figure::named(&m),
        Some((m, span)) => {
            let e = format!("figure: '{m}' is not a metric's name (e.g. latency_p99_us)");
            return Err(src.error(span, e));
        }
        None => {}
    }
    Ok(())
}

/// The jitter and slip the file gives `spec` over its defaults, once its slot is known to fit
/// its period (`every_at`: where the period is written).
fn timing(src: &Source, f: &Fields, spec: &mut TestSpec, every_at: Span) -> Result<(), MeshError> {
    let every = spec.every_ns;
    if spec.hold_ns > every {
        let m = format!(
            "every: the test runs {} with its setup allowance; it cannot start every {}",
            show(spec.hold_ns),
            show(every)
        );
        return Err(src.error(every_at, m));
    }
    spec.jitter_ns = match f.text(src, "jitter")? {
        Some((j, _)) if j.trim_end().ends_with('%') => {
            let share = f.share(src, "jitter", 0.5)?.unwrap_or(DEFAULT_JITTER);
            (every as f64 * share) as u64
        }
        Some(_) => f.duration(src, "jitter", 0, every / 2)?.map_or(0, |j| j.0),
        None => spec.jitter_ns,
    };
    spec.slip_ns = match f.duration(src, "slip", 0, every)? {
        Some((s, span)) if s + spec.jitter_ns > every => {
            let m = format!(
                "slip: with the jitter ({}) it reaches the next start",
                show(spec.jitter_ns)
            );
            return Err(src.error(span, m));
        }
        Some((s, _)) => s,
        None => (every / 2).min(every - spec.jitter_ns),
    };
    Ok(())
}

/// The command's words, each with its span: an array of strings, or one string split as a
/// shell would (each word found in the string's text; a quoted one at the string's start).
fn words(src: &Source, v: &Value, span: Span) -> Result<Vec<(String, Span)>, MeshError> {
    let out: Vec<(String, Span)> = match v {
        Value::String(s) => {
            let split = shlex::split(s.value())
                .ok_or_else(|| src.error(span.clone(), "command: an unclosed quote"))?;
            let raw = span
                .clone()
                .and_then(|r| src.text().get(r.clone()).map(|t| (r.start, t)));
            let mut from = 0;
            split
                .into_iter()
                .map(|w| {
                    let found = raw.and_then(|(start, t)| {
                        let at = from + t.get(from..)?.find(w.as_str())?;
                        from = at + w.len();
                        Some(start + at..start + at + w.len())
                    });
                    let at = found.or(span.clone());
                    (w, at)
                })
                .collect()
        }
        Value::Array(a) => a
            .iter()
            .map(|w| match w.as_str() {
                Some(s) => Ok((s.to_string(), w.span())),
                None => Err(src.error(
                    w.span(),
                    format!("command: expected a word, found {}", kind(w)),
                )),
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(src.error(
                span,
                format!(
                    "command: expected a string or an array, found {}",
                    kind(other)
                ),
            ))
        }
    };
    if out.is_empty() {
        return Err(src.error(span, "command: empty; name the test, e.g. \"rr --size 64\""));
    }
    if out.len() > MAX_WORDS {
        return Err(src.error(span, format!("command: over {MAX_WORDS} words")));
    }
    Ok(out)
}

/// Where `message` points: the first flag word it names (`--size` in "--size: ..." or
/// "invalid value 'x' for '--size <SIZE>'"), else `fallback`.
fn at_word(words: &[(String, Span)], message: &str, fallback: Span) -> Span {
    let named = |w: &str| {
        let flag = w.split('=').next().unwrap_or(w);
        flag.starts_with('-')
            && (message.starts_with(&format!("{flag}:"))
                || message.contains(&format!("'{flag}"))
                || message.contains(&format!("{flag}/"))
                || message.contains(&format!("/{flag}")))
    };
    words
        .iter()
        .find(|(w, _)| named(w))
        .and_then(|(_, s)| s.clone())
        .or(fallback)
}

/// True when `m` can name a metric: lower-case letters, digits and '_'.
fn is_metric(m: &str) -> bool {
    !m.is_empty()
        && m.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A duration as written in messages.
fn show(ns: u64) -> String {
    fathom_units::duration::format(std::time::Duration::from_nanos(ns))
}

/// An item's span, for tables and arrays of tables alike.
fn span_of(item: &Item) -> crate::error::Span {
    match item {
        Item::ArrayOfTables(a) => a.iter().next().and_then(toml_edit::Table::span),
        other => other.span(),
    }
}
