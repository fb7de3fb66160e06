//! Reading a table's keys and values with their spans: unknown keys refused with the nearest
//! valid one, string values expanded ([`crate::vars`]) and then read as the key's type.

use crate::error::{hint, ProfileError, Source};
use crate::size::{self, Unit};
use crate::vars::{Expanded, Vars};
use fathom_proto::profile::Size;
use std::ops::Range;
use toml_edit::{InlineTable, Item, Key, Table, Value};

/// A span in the file.
pub(crate) type Span = Option<Range<usize>>;

/// One key's value: an item of a table, or a value of an inline table.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    Item(&'a Item),
    Value(&'a Value),
}

impl<'a> Val<'a> {
    /// Where it is.
    pub(crate) fn span(self) -> Span {
        match self {
            Val::Item(i) => i.span(),
            Val::Value(v) => v.span(),
        }
    }

    fn value(self) -> Option<&'a Value> {
        match self {
            Val::Item(i) => i.as_value(),
            Val::Value(v) => Some(v),
        }
    }
}

/// The keys of one table, to check and read.
pub(crate) struct Fields<'a> {
    /// What the table is, for messages ("[[group]]").
    pub what: &'static str,
    /// Where it starts.
    pub span: Span,
    entries: Vec<(&'a str, Span, Val<'a>)>,
}

impl<'a> Fields<'a> {
    pub(crate) fn of_table(t: &'a Table, what: &'static str) -> Fields<'a> {
        let entries = t.iter().map(|(k, v)| (k, t.key(k), Val::Item(v)));
        Fields::of(what, t.span(), entries)
    }

    pub(crate) fn of_inline(t: &'a InlineTable, what: &'static str) -> Fields<'a> {
        let entries = t.iter().map(|(k, v)| (k, t.key(k), Val::Value(v)));
        Fields::of(what, t.span(), entries)
    }

    /// The table `what` at `span` of `entries`: each key, as written, and its value.
    fn of(
        what: &'static str,
        span: Span,
        entries: impl Iterator<Item = (&'a str, Option<&'a Key>, Val<'a>)>,
    ) -> Fields<'a> {
        Fields {
            what,
            span,
            entries: entries
                .map(|(k, key, v)| (k, key.and_then(Key::span), v))
                .collect(),
        }
    }

    /// Refuses the first key not in `allowed`, suggesting the nearest.
    pub(crate) fn only(&self, src: &Source, allowed: &[&str]) -> Result<(), ProfileError> {
        match self.entries.iter().find(|(k, _, _)| !allowed.contains(k)) {
            None => Ok(()),
            Some((k, span, _)) => Err(src.error(
                span.clone(),
                format!("unknown key '{k}' in {}{}", self.what, hint(k, allowed)),
            )),
        }
    }

    /// The same keys, named `what` in messages.
    pub(crate) fn named(self, what: &'static str) -> Fields<'a> {
        Fields { what, ..self }
    }

    /// The value of `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<Val<'a>> {
        self.entries.iter().find(|(k, _, _)| *k == key).map(|e| e.2)
    }
}

/// A scalar once its variables are set.
enum Scalar {
    Int(i64),
    Bool(bool),
    Text(Expanded),
    Other(&'static str),
}

/// Reads values in a file with its variables.
pub(crate) struct Reader<'a> {
    pub src: &'a Source<'a>,
    pub vars: &'a Vars,
}

impl Reader<'_> {
    /// An error about `key` at `span`.
    pub(crate) fn fail(
        &self,
        span: Span,
        key: &str,
        message: impl std::fmt::Display,
    ) -> ProfileError {
        self.src.error(span, format!("{key}: {message}"))
    }

    fn scalar(&self, key: &str, v: Val) -> Result<Scalar, ProfileError> {
        Ok(match v.value() {
            None => Scalar::Other("a table"),
            Some(Value::Integer(i)) => Scalar::Int(*i.value()),
            Some(Value::Boolean(b)) => Scalar::Bool(*b.value()),
            Some(Value::String(s)) => Scalar::Text(
                self.vars
                    .expand(s.value())
                    .map_err(|m| self.fail(v.span(), key, m))?,
            ),
            Some(Value::Float(_)) => Scalar::Other("a decimal number"),
            Some(Value::Datetime(_)) => Scalar::Other("a date"),
            Some(Value::Array(_)) => Scalar::Other("an array"),
            Some(Value::InlineTable(_)) => Scalar::Other("a table"),
        })
    }

    /// A whole number, at most `max` (the plan checks the real bounds).
    pub(crate) fn uint(&self, key: &str, v: Val, max: u64) -> Result<u64, ProfileError> {
        let n = match self.scalar(key, v)? {
            Scalar::Int(i) => u64::try_from(i)
                .map_err(|_| self.fail(v.span(), key, format!("{i} is negative")))?,
            Scalar::Text(e) => e.text.trim().parse::<u64>().map_err(|_| {
                self.fail(
                    v.span(),
                    key,
                    format!("{} is not a whole number", shown(&e)),
                )
            })?,
            Scalar::Bool(_) => {
                return Err(self.fail(v.span(), key, "expected a whole number, found a boolean"))
            }
            Scalar::Other(what) => {
                return Err(self.fail(
                    v.span(),
                    key,
                    format!("expected a whole number, found {what}"),
                ))
            }
        };
        if n > max {
            return Err(self.fail(v.span(), key, format!("{n} is over {max}")));
        }
        Ok(n)
    }

    /// `true` or `false`, or a string of either.
    pub(crate) fn boolean(&self, key: &str, v: Val) -> Result<bool, ProfileError> {
        match self.scalar(key, v)? {
            Scalar::Bool(b) => Ok(b),
            Scalar::Text(e) => match e.text.trim() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(self.fail(v.span(), key, format!("{} is not true or false", shown(&e)))),
            },
            Scalar::Int(i) => Err(self.fail(v.span(), key, format!("{i} is not true or false"))),
            Scalar::Other(what) => Err(self.fail(
                v.span(),
                key,
                format!("expected true or false, found {what}"),
            )),
        }
    }

    /// A string, its variables set.
    pub(crate) fn text(&self, key: &str, v: Val) -> Result<Expanded, ProfileError> {
        match self.scalar(key, v)? {
            Scalar::Text(e) => Ok(e),
            Scalar::Int(_) => Err(self.fail(v.span(), key, "expected a string, found a number")),
            Scalar::Bool(_) => Err(self.fail(v.span(), key, "expected a string, found a boolean")),
            Scalar::Other(what) => {
                Err(self.fail(v.span(), key, format!("expected a string, found {what}")))
            }
        }
    }

    /// A duration in whole milliseconds.
    pub(crate) fn millis(&self, key: &str, v: Val) -> Result<u64, ProfileError> {
        let e = match self.scalar(key, v)? {
            Scalar::Text(e) => e,
            Scalar::Int(i) => {
                return Err(self.fail(
                    v.span(),
                    key,
                    format!("{i} needs a unit; try \"{i}s\" or \"{i}ms\""),
                ))
            }
            Scalar::Bool(_) => {
                return Err(self.fail(
                    v.span(),
                    key,
                    "expected a duration such as \"10s\", found a boolean",
                ))
            }
            Scalar::Other(what) => {
                return Err(self.fail(
                    v.span(),
                    key,
                    format!("expected a duration such as \"10s\", found {what}"),
                ))
            }
        };
        let ns =
            fathom_units::duration::parse(e.text.trim(), fathom_units::duration::Bare::Refused)
                .map_err(|r| self.fail(v.span(), key, format!("{} {}", shown(&e), r.reason())))?;
        if ns % 1_000_000 != 0 {
            return Err(self.fail(
                v.span(),
                key,
                format!("{} is not a whole number of milliseconds", shown(&e)),
            ));
        }
        Ok(ns / 1_000_000)
    }

    /// A size (bytes) or a time size (µs): a number, a string, `rand(a,b)` or a list.
    pub(crate) fn size(&self, key: &str, v: Val, unit: Unit) -> Result<Size, ProfileError> {
        if let Some(Value::Array(a)) = v.value() {
            let mut list = Vec::new();
            for item in a.iter() {
                if list.len() == fathom_proto::profile::MAX_SIZE_LIST {
                    let n = fathom_proto::profile::MAX_SIZE_LIST;
                    return Err(self.fail(
                        v.span(),
                        key,
                        format!("a list holds at most {n} sizes"),
                    ));
                }
                match self.size(key, Val::Value(item), unit)? {
                    Size::Fixed(n) => list.push(n),
                    _ => {
                        return Err(self.fail(
                            item.span(),
                            key,
                            "a list holds single sizes, not rand() or lists",
                        ))
                    }
                }
            }
            return Ok(Size::List(list));
        }
        match self.scalar(key, v)? {
            Scalar::Int(i) => size::number(i, unit).map_err(|m| self.fail(v.span(), key, m)),
            Scalar::Text(e) => size::parse(e.text.trim(), unit).map_err(|m| match &e.note {
                Some(note) => self.fail(v.span(), key, format!("{m} ({note})")),
                None => self.fail(v.span(), key, m),
            }),
            Scalar::Bool(_) => Err(self.fail(
                v.span(),
                key,
                format!("expected {}, found a boolean", unit.example()),
            )),
            Scalar::Other(what) => Err(self.fail(
                v.span(),
                key,
                format!("expected {}, found {what}", unit.example()),
            )),
        }
    }
}

/// An expanded value as a message shows it: `'abc'`, with the variables that made it.
pub(crate) fn shown(e: &Expanded) -> String {
    match &e.note {
        Some(note) => format!("'{}' ({note})", e.text),
        None => format!("'{}'", e.text),
    }
}
