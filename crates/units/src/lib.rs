//! fathom's units, read and written in one place: sizes in bytes ([`size`], K/M/G/T 1024-based),
//! rates in bits per second ([`rate`], K/M/G/T 1000-based, as tc writes them), durations
//! ([`duration`]) and percentages ([`percent`]). The command line, the lab, the WAN emulator,
//! the plots and the studies all read values with these functions, so `64K` or `10ms` means the
//! same everywhere. Measured rates and sizes are written for people here too
//! ([`rate::human`], [`size::human`]): the report's tables, the studies' findings and the
//! advisor's advice print them alike.
//!
//! A value is a number (digits and a decimal point) followed by a unit. A value that cannot be
//! read gives a [`Refusal`]: it names the value and says what a good one looks like.
#![forbid(unsafe_code)]

pub mod duration;
pub mod percent;
pub mod rate;
pub mod size;

use std::fmt;

/// Why a value was not accepted: the value as given and a phrase that follows it ("is not a
/// size; try 64K, 1M or 100M (1024-based)"). Shown whole, it reads "'1x' is not a size; ...".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    value: String,
    reason: String,
}

impl Refusal {
    fn new(value: &str, reason: impl Into<String>) -> Refusal {
        Refusal {
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    /// The phrase without the value, for callers that name the value themselves.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' {}", self.value, self.reason)
    }
}

impl std::error::Error for Refusal {}

impl From<Refusal> for String {
    fn from(r: Refusal) -> String {
        r.to_string()
    }
}

/// Refuses a number written with a minus sign: `what` (rates, sizes, durations) are positive,
/// as `example` shows.
fn refuse_negative(text: &str, what: &str, example: &str) -> Result<(), Refusal> {
    let digits = text.trim_start().strip_prefix('-');
    if digits.is_some_and(|d| d.starts_with(|c: char| c.is_ascii_digit() || c == '.')) {
        return Err(Refusal::new(
            text,
            format!("is negative; {what} are positive, e.g. {example}"),
        ));
    }
    Ok(())
}

/// Splits `"12.5ms"` into `("12.5", "ms")`, after trimming the text (a space between the number
/// and its unit stays in the unit, which no unit then matches).
fn split_number(text: &str) -> (&str, &str) {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(end)
}

/// The number of a value, when it is a finite one.
fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `value` with the largest unit of `units` (largest first) that shows it exactly: `0`, `64K`.
fn format_exact(value: u64, units: &[(u64, &str)]) -> String {
    if value == 0 {
        return "0".into();
    }
    let (scale, unit) = units
        .iter()
        .find(|(scale, _)| value.is_multiple_of(*scale))
        .copied()
        .unwrap_or((1, ""));
    format!("{}{unit}", value / scale)
}
