//! Reading one table's keys and values with their spans: unknown keys refused with the nearest
//! valid one, each value read as its key's type and bounded, every error at the value.

use crate::error::{hint, MeshError, Source, Span};
use fathom_units::duration::{self, Bare};
use toml_edit::{Item, Table, Value};

/// The keys of one table, to check and read.
pub struct Fields<'a> {
    /// Where it starts.
    pub span: Span,
    table: &'a Table,
}

impl<'a> Fields<'a> {
    /// The keys of `table`, called `what` in messages, refusing any not in `allowed`.
    pub fn of(
        src: &Source,
        table: &'a Table,
        what: &'static str,
        allowed: &[&str],
    ) -> Result<Fields<'a>, MeshError> {
        if let Some((k, _)) = table.iter().find(|(k, _)| !allowed.contains(k)) {
            let at = table.key(k).and_then(|k| k.span());
            let m = format!("unknown key '{k}' in {what}{}", hint(k, allowed));
            return Err(src.error(at, m));
        }
        Ok(Fields {
            span: table.span(),
            table,
        })
    }

    /// The value of `key`, with its span; an error if it is a table.
    pub fn value(&self, src: &Source, key: &str) -> Result<Option<(&'a Value, Span)>, MeshError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Item::Value(v)) => Ok(Some((v, v.span()))),
            Some(other) => Err(src.error(
                other.span().or(self.span.clone()),
                format!("{key}: expected a value, found a table"),
            )),
        }
    }

    /// A string value of `key`.
    pub fn text(&self, src: &Source, key: &str) -> Result<Option<(String, Span)>, MeshError> {
        let Some((v, span)) = self.value(src, key)? else {
            return Ok(None);
        };
        match v.as_str() {
            Some(s) => Ok(Some((s.to_string(), span))),
            None => Err(src.error(span, format!("{key}: expected a string, found {}", kind(v)))),
        }
    }

    /// A whole number of `key` in `min..=max`.
    pub fn uint(
        &self,
        src: &Source,
        key: &str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, MeshError> {
        let Some((v, span)) = self.value(src, key)? else {
            return Ok(None);
        };
        let n = match v.as_integer() {
            Some(i) => i,
            None => {
                let m = format!("{key}: expected a whole number, found {}", kind(v));
                return Err(src.error(span, m));
            }
        };
        match u64::try_from(n).ok().filter(|n| (min..=max).contains(n)) {
            Some(n) => Ok(Some(n)),
            None => Err(src.error(span, format!("{key}: {n} is not in {min}..={max}"))),
        }
    }

    /// A duration of `key` ("30s", "15min"), in `min..=max` ns.
    pub fn duration(
        &self,
        src: &Source,
        key: &str,
        min: u64,
        max: u64,
    ) -> Result<Option<(u64, Span)>, MeshError> {
        let Some((text, span)) = self.text(src, key)? else {
            return Ok(None);
        };
        let ns = duration::parse(text.trim(), Bare::Refused)
            .map_err(|r| src.error(span.clone(), format!("{key}: {r}")))?;
        if !(min..=max).contains(&ns) {
            let show = |n: u64| duration::format(std::time::Duration::from_nanos(n));
            let m = format!("{key}: '{text}' is not in {}..={}", show(min), show(max));
            return Err(src.error(span, m));
        }
        Ok(Some((ns, span)))
    }

    /// A share of `key` written as a percentage ("10%"), in `0..=max`.
    pub fn share(&self, src: &Source, key: &str, max: f64) -> Result<Option<f64>, MeshError> {
        let Some((text, span)) = self.text(src, key)? else {
            return Ok(None);
        };
        let p = fathom_units::percent::parse(text.trim())
            .map_err(|r| src.error(span.clone(), format!("{key}: {r}")))?;
        if p > max {
            let m = format!(
                "{key}: '{text}' is over {}",
                fathom_units::percent::format(max)
            );
            return Err(src.error(span, m));
        }
        Ok(Some(p))
    }

    /// The span of `key`'s value, else the table's.
    pub fn at(&self, key: &str) -> Span {
        self.table
            .get(key)
            .and_then(Item::span)
            .or(self.span.clone())
    }
}

/// What a value is, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "a number",
        Value::Float(_) => "a decimal number",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::InlineTable(_) => "a table",
    }
}

/// The table `key` of `root` (absent: none); an error if it is something else.
pub fn table<'a>(src: &Source, root: &'a Table, key: &str) -> Result<Option<&'a Table>, MeshError> {
    match root.get(key) {
        None => Ok(None),
        Some(Item::Table(t)) => Ok(Some(t)),
        Some(other) => Err(src.error(other.span(), format!("{key}: write it as a [{key}] table"))),
    }
}
