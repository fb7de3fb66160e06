//! What one direction of an emulated link does to the frames crossing it: [`LinkParams`], and its
//! text form `"delay=50ms,jitter=2ms,loss=0.1%,rate=1G,queue=1000p"` (commas or spaces between the
//! `key=value` pairs).
//!
//! | key | value | default |
//! | --- | --- | --- |
//! | `delay` | one-way delay (`50ms`); applies to this direction only | `0` |
//! | `jitter` | each frame's delay varies uniformly within ± this (`2ms`) | `0` |
//! | `loss` | random loss (`0.1%`) or Gilbert–Elliott bursts `ge:P:R[:1-H[:1-K]]` as netem's `gemodel` | none |
//! | `rate` | bits per second on the wire, Ethernet header included (`100M`, `1G`; 1000-based) | unlimited |
//! | `burst` | token bucket depth in bytes (`64K`; 1024-based); `0` = a plain link of that rate | `0` |
//! | `queue` | the bottleneck buffer: packets (`1000p`, or a bare number) or bytes (`256KB`) | `1000p` |
//! | `reorder` | let jitter reorder frames (`reorder`, `reorder=on`) | off |
//! | `seed` | seed of the random choices, so runs repeat | `1` |
//!
//! The queue limit applies to the frames waiting for the rate limiter, as a router's buffer does;
//! frames in flight through the delay are not counted against it (netem's `limit` counts them, which
//! silently caps window / RTT). Without a `rate` nothing waits, so the limit never drops.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use fathom_units::duration::{self, Bare};
use fathom_units::{percent, rate, size, Refusal};

/// How frames are lost at random.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum LossModel {
    /// No random loss.
    #[default]
    None,
    /// Each frame is lost independently with this probability (0 to 1).
    Random(f64),
    /// Gilbert–Elliott two-state model, as netem's `loss gemodel p r 1-h 1-k`. Each frame first
    /// moves between the states, then is lost with the loss probability of the state it is in.
    GilbertElliott {
        /// Probability of moving from the good to the bad state.
        p: f64,
        /// Probability of moving from the bad to the good state.
        r: f64,
        /// Loss probability in the bad state (1 − h).
        loss_bad: f64,
        /// Loss probability in the good state (1 − k).
        loss_good: f64,
    },
}

/// The bottleneck buffer's size; a frame that would exceed it is dropped (tail drop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many frames wait.
    Packets(u64),
    /// At most this many bytes (whole frames, Ethernet header included) wait.
    Bytes(u64),
}

/// Everything one direction of the emulated link does. See the module docs for the text form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct LinkParams {
    /// One-way delay added to every frame.
    pub delay: Duration,
    /// Each frame's delay is drawn uniformly from `delay ± jitter` (never below zero).
    pub jitter: Duration,
    /// Random loss.
    pub loss: LossModel,
    /// Bits per second on the wire, Ethernet header included; `None` = unlimited.
    pub rate_bps: Option<u64>,
    /// Token bucket depth in bytes; `0` makes each frame leave when its last bit would have been
    /// sent on a link of `rate_bps`.
    pub burst_bytes: u64,
    /// The bottleneck buffer in front of the rate limiter.
    pub queue_limit: QueueLimit,
    /// Whether jitter may reorder frames; without it a frame never leaves before the one that
    /// arrived before it.
    pub reorder: bool,
    /// Seed of the loss and jitter draws.
    pub seed: u64,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            loss: LossModel::None,
            rate_bps: None,
            burst_bytes: 0,
            queue_limit: QueueLimit::Packets(1000),
            reorder: false,
            seed: 1,
        }
    }
}

/// A parameter string that could not be read; names the key and the value at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    /// A key this emulator does not know.
    #[error(
        "unknown key '{0}'; valid keys: delay, jitter, loss, rate, burst, queue, reorder, seed"
    )]
    UnknownKey(String),
    /// The same key twice.
    #[error("'{0}' is given twice")]
    Duplicate(String),
    /// A `key` without `=value` (only `reorder` may stand alone).
    #[error("'{0}' needs a value, as in {0}=...")]
    MissingValue(String),
    /// A value that does not parse or is out of range.
    #[error("{key}: '{value}' {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// The value as written.
        value: String,
        /// What is wrong with it and what to write instead.
        reason: Reason,
    },
}

/// What is wrong with one key's value; [`ParamsError::BadValue`] names the key and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    /// `reorder=` neither on nor off.
    #[error("is not on or off")]
    NotASwitch,
    /// `loss=ge:` with too few or too many parts.
    #[error("is not a Gilbert-Elliott model; write ge:P:R[:1-H[:1-K]], e.g. ge:1%:30%")]
    NotGilbertElliott,
    /// A delay or jitter over an hour.
    #[error("must be between 0 and 1 hour")]
    OverAnHour,
    /// `queue=` with a packet suffix but no number before it.
    #[error("is not a number of packets; try 1000p")]
    NotPackets,
    /// `queue=` as digits too large for a packet count.
    #[error("is too large")]
    TooLarge,
    /// A zero queue limit.
    #[error("must be above zero")]
    NotAboveZero,
    /// `seed=` not a whole number.
    #[error("is not a whole number")]
    NotAWholeNumber,
    /// A size, rate, duration or percentage the units reader refused (its phrase).
    #[error("{0}")]
    Unit(String),
}

impl FromStr for LinkParams {
    type Err = ParamsError;

    fn from_str(text: &str) -> Result<Self, ParamsError> {
        LinkParams::default().updated(text)
    }
}

impl LinkParams {
    /// These parameters with the keys written in `text` changed (same syntax as the full text
    /// form); every key not written keeps its value. `"delay=100ms"` on top of
    /// `"delay=50ms,rate=1G"` gives `"delay=100ms,rate=1G"`.
    pub fn updated(&self, text: &str) -> Result<LinkParams, ParamsError> {
        let mut params = self.clone();
        let mut seen: Vec<&str> = Vec::new();
        for item in text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
        {
            let (key, value) = match item.split_once('=') {
                Some((key, value)) => (key, Some(value)),
                None => (item, None),
            };
            if seen.contains(&key) {
                return Err(ParamsError::Duplicate(key.into()));
            }
            seen.push(key);
            params.set(key, value)?;
        }
        Ok(params)
    }

    /// The text form of only the keys that differ from their defaults (`"delay=50ms,rate=1G"`;
    /// empty for a plain wire); it parses back to the same parameters.
    pub fn summary(&self) -> String {
        let (full, plain) = (self.to_string(), LinkParams::default().to_string());
        let defaults: Vec<&str> = plain.split(',').collect();
        let changed: Vec<&str> = full
            .split(',')
            .filter(|item| !defaults.contains(item))
            .collect();
        changed.join(",")
    }

    /// Sets one key from its text value.
    fn set(&mut self, key: &str, value: Option<&str>) -> Result<(), ParamsError> {
        if key == "reorder" {
            self.reorder = parse_switch(value.unwrap_or("on"))
                .map_err(|reason| bad(key, value.unwrap_or(""), reason))?;
            return Ok(());
        }
        let known = ["delay", "jitter", "loss", "rate", "burst", "queue", "seed"];
        if !known.contains(&key) {
            return Err(ParamsError::UnknownKey(key.into()));
        }
        let value = value.ok_or_else(|| ParamsError::MissingValue(key.into()))?;
        let result = match key {
            "delay" => parse_delay(value).map(|d| self.delay = d),
            "jitter" => parse_delay(value).map(|d| self.jitter = d),
            "loss" => parse_loss(value).map(|loss| self.loss = loss),
            "rate" => parse_rate(value).map(|rate| self.rate_bps = rate),
            "burst" => size::parse(value)
                .map(|b| self.burst_bytes = b)
                .map_err(reason),
            "queue" => parse_queue(value).map(|q| self.queue_limit = q),
            _ => value
                .parse()
                .map(|s| self.seed = s)
                .map_err(|_| Reason::NotAWholeNumber),
        };
        result.map_err(|reason| bad(key, value, reason))
    }
}

fn bad(key: &str, value: &str, reason: Reason) -> ParamsError {
    ParamsError::BadValue {
        key: key.into(),
        value: value.into(),
        reason,
    }
}

fn parse_switch(value: &str) -> Result<bool, Reason> {
    match value {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(Reason::NotASwitch),
    }
}

fn parse_loss(value: &str) -> Result<LossModel, Reason> {
    if value == "none" {
        return Ok(LossModel::None);
    }
    let Some(ge) = value.strip_prefix("ge:") else {
        let p = percent::parse(value).map_err(reason)?;
        return Ok(if p == 0.0 {
            LossModel::None
        } else {
            LossModel::Random(p)
        });
    };
    let parts: Vec<&str> = ge.split(':').collect();
    if !(2..=4).contains(&parts.len()) {
        return Err(Reason::NotGilbertElliott);
    }
    let probability = |i: usize, default: f64| {
        parts
            .get(i)
            .map_or(Ok(default), |p| percent::parse(p).map_err(reason))
    };
    Ok(LossModel::GilbertElliott {
        p: probability(0, 0.0)?,
        r: probability(1, 0.0)?,
        loss_bad: probability(2, 1.0)?,
        loss_good: probability(3, 0.0)?,
    })
}

fn parse_rate(value: &str) -> Result<Option<u64>, Reason> {
    match value {
        "none" | "off" | "0" => Ok(None),
        _ => rate::parse_in(value, 1..=MAX_RATE_BPS)
            .map(Some)
            .map_err(reason),
    }
}

/// The fastest link the emulator is asked to model: 1000G.
const MAX_RATE_BPS: u64 = 1_000_000_000_000;

/// A delay or jitter: a unit is required (tc would read a bare number as microseconds), and an
/// hour at most.
fn parse_delay(value: &str) -> Result<Duration, Reason> {
    let d = duration::parse_duration(value, Bare::Refused).map_err(reason)?;
    if d > Duration::from_secs(3600) {
        return Err(Reason::OverAnHour);
    }
    Ok(d)
}

/// What is wrong with a value; [`bad`] names the key and the value.
fn reason(r: Refusal) -> Reason {
    Reason::Unit(r.reason().to_string())
}

fn parse_queue(value: &str) -> Result<QueueLimit, Reason> {
    let packets = value
        .strip_suffix("pkt")
        .or_else(|| value.strip_suffix('p'));
    let limit = match packets {
        Some(n) => QueueLimit::Packets(n.parse().map_err(|_| Reason::NotPackets)?),
        None if value.bytes().all(|b| b.is_ascii_digit()) => {
            QueueLimit::Packets(value.parse().map_err(|_| Reason::TooLarge)?)
        }
        None => QueueLimit::Bytes(size::parse(value).map_err(reason)?),
    };
    match limit {
        QueueLimit::Packets(0) | QueueLimit::Bytes(0) => Err(Reason::NotAboveZero),
        limit => Ok(limit),
    }
}

impl fmt::Display for LinkParams {
    /// The canonical text form, which parses back to the same parameters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "delay={},jitter={}",
            duration::format(self.delay),
            duration::format(self.jitter)
        )?;
        match self.loss {
            LossModel::None => write!(f, ",loss=none")?,
            LossModel::Random(p) => write!(f, ",loss={}", percent::format(p))?,
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let pct = percent::format;
                write!(
                    f,
                    ",loss=ge:{}:{}:{}:{}",
                    pct(p),
                    pct(r),
                    pct(loss_bad),
                    pct(loss_good)
                )?
            }
        }
        match self.rate_bps {
            Some(bps) => write!(f, ",rate={}", rate::format(bps))?,
            None => write!(f, ",rate=none")?,
        }
        write!(f, ",burst={}", size::format(self.burst_bytes))?;
        match self.queue_limit {
            QueueLimit::Packets(n) => write!(f, ",queue={n}p")?,
            QueueLimit::Bytes(n) => write!(f, ",queue={}B", size::format(n))?,
        }
        write!(
            f,
            ",reorder={},seed={}",
            if self.reorder { "on" } else { "off" },
            self.seed
        )
    }
}

impl From<LinkParams> for String {
    fn from(params: LinkParams) -> String {
        params.to_string()
    }
}

impl TryFrom<String> for LinkParams {
    type Error = ParamsError;

    fn try_from(text: String) -> Result<Self, ParamsError> {
        text.parse()
    }
}

#[cfg(test)]
mod tests;
