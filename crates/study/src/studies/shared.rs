//! What the studies share: their timing and iterations, and the sentence for a curve that
//! levels off.

use crate::curve::Curve;
use crate::say;
use crate::shape;
use crate::spec::args;

/// Share of the best a value must reach to count as the knee.
pub(super) const KNEE: f64 = 0.95;

/// Timing options: `-t 1s` for the quick form, `-t 10s --omit 2s` for the full one.
pub(super) fn timing(quick: bool) -> Vec<String> {
    if quick {
        args(&["-t", "1s"])
    } else {
        args(&["-t", "10s", "--omit", "2s"])
    }
}

/// Iterations: 1 quick, 3 full.
pub(super) fn iterations(quick: bool) -> u32 {
    if quick {
        1
    } else {
        3
    }
}

/// The sentence for a curve that should level off: where it reaches 95% of its best, the best,
/// and what larger x add above the knee. `noun` names one x ("buffer"); `fmt` prints a y; the
/// curve's labels are sizes and print back as sizes.
pub(super) fn knee_sentence(label: &str, c: &Curve, noun: &str, fmt: fn(f64) -> String) -> String {
    let x = |i: usize| size_label(&c.labels[i]);
    if c.is_empty() {
        return format!("{label}: no point succeeded.");
    }
    if c.len() == 1 {
        return format!(
            "{label}: only {} ran ({}); nothing to compare.",
            x(0),
            fmt(c.ys[0])
        );
    }
    let (Some(k), Some(b)) = (shape::knee(&c.ys, KNEE), shape::best(&c.ys)) else {
        return format!("{label}: nothing moved at any {noun}.");
    };
    let best = format!("{}, {}", x(b), fmt(c.ys[b]));
    if k < b {
        let reach = shape::ratio(c.ys[k], c.ys[b]).unwrap_or(0.0);
        let add = shape::gain_above(&c.ys, k).unwrap_or(0.0);
        return format!(
            "{label}: {} reaches {} of the best ({best}); larger {noun}s add at most {}.",
            x(k),
            say::pct(reach),
            say::pct(add)
        );
    }
    let smaller = &c.ys[..b];
    let after = if b + 1 == c.len() {
        format!(", the largest {noun} tried")
    } else {
        String::new()
    };
    match shape::best(smaller) {
        Some(s) => format!(
            "{label}: the best is {} ({}){after}; smaller {noun}s reach at most {} of it.",
            x(b),
            fmt(c.ys[b]),
            say::pct(shape::ratio(smaller[s], c.ys[b]).unwrap_or(0.0))
        ),
        None => format!(
            "{label}: the smallest {noun}, {}, is already the best ({}); larger ones add nothing.",
            x(b),
            fmt(c.ys[b])
        ),
    }
}

/// A size label printed back in the findings' form ("48k" → "48K", "256" → "256 B"); labels that
/// are not sizes print as typed.
pub(super) fn size_label(label: &str) -> String {
    shape::parse_size(label).map_or_else(|| label.to_string(), say::size)
}
