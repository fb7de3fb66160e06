//! Where an error is: the file, line and column of a span, and the nearest valid word to a
//! misspelt one.

use std::fmt;
use std::ops::Range;

/// A profile that cannot run: where, and what is wrong. Shown as `FILE:LINE:COLUMN: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError {
    /// The file, as named by the caller.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// The column, in characters from 1.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ProfileError {}

/// A file's name and text, to turn spans into lines and columns.
pub(crate) struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

impl<'a> Source<'a> {
    pub(crate) fn new(file: &'a str, text: &'a str) -> Source<'a> {
        Source { file, text }
    }

    /// An error at the start of `span` (the file's start without one).
    pub(crate) fn error(
        &self,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> ProfileError {
        let at = span.map_or(0, |s| s.start).min(self.text.len());
        let before = self.text.get(..at).unwrap_or(self.text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        ProfileError {
            file: self.file.to_string(),
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            message: message.into(),
        }
    }
}

/// The word of `candidates` nearest to `word`, if one is near enough to be a likely typo: at
/// most a third of its letters changed (one at least: `upd` for `udp`), else alike by
/// Jaro-Winkler.
pub(crate) fn nearest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::osa_distance(word, c),
                strsim::jaro_winkler(word, c),
                c,
            )
        })
        .filter(|(edits, alike, c)| *edits <= (c.len() / 3).max(1) || *alike >= 0.85)
        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)))
        .map(|(_, _, c)| c)
}

/// "; did you mean 'write'?" for the nearest candidate, else "; expected one of: a, b".
pub(crate) fn hint(word: &str, candidates: &[&str]) -> String {
    match nearest(word, candidates.iter().copied()) {
        Some(c) => format!("; did you mean '{c}'?"),
        None => format!("; expected one of: {}", candidates.join(", ")),
    }
}
