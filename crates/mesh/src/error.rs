//! Where a mesh file is wrong: the file, line and column of a span, shown as
//! `FILE:LINE:COLUMN: message`, and the nearest valid word to a misspelt one.

use std::fmt;
use std::ops::Range;

/// A mesh file that cannot run: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct MeshError {
    /// The file, as named by the caller.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// The column, in characters from 1.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// A span in the file: a byte range, or none (then the file's start).
pub type Span = Option<Range<usize>>;

/// A file's name and text, to turn spans into lines and columns.
pub struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

impl<'a> Source<'a> {
    /// The file `file` holding `text`.
    pub fn new(file: &'a str, text: &'a str) -> Source<'a> {
        Source { file, text }
    }

    /// The text of the file.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// An error at the start of `span`.
    pub fn error(&self, span: Span, message: impl fmt::Display) -> MeshError {
        let at = span.map_or(0, |s| s.start).min(self.text.len());
        let before = self.text.get(..at).unwrap_or(self.text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        MeshError {
            file: self.file.to_string(),
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            message: message.to_string(),
        }
    }
}

/// "; did you mean 'every'?" for a near candidate, else "; expected one of: a, b".
pub fn hint(word: &str, candidates: &[&str]) -> String {
    let near = candidates
        .iter()
        .map(|c| (strsim::osa_distance(word, c), *c))
        .filter(|(edits, c)| *edits <= (c.len() / 3).max(1))
        .min();
    match near {
        Some((_, c)) => format!("; did you mean '{c}'?"),
        None => format!("; expected one of: {}", candidates.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_become_lines_and_columns_in_characters() {
        let src = Source::new("m.toml", "a = 1\nbé = \"x\"\n");
        let e = src.error(Some(12..13), "bad");
        assert_eq!(e.to_string(), "m.toml:2:6: bad");
        assert_eq!(src.error(None, "x").line, 1);
        assert_eq!(src.error(Some(999..1000), "x").line, 3);
    }

    #[test]
    fn hints_name_the_nearest_key_or_all_of_them() {
        assert_eq!(hint("evry", &["every", "class"]), "; did you mean 'every'?");
        assert_eq!(
            hint("zzz", &["every", "class"]),
            "; expected one of: every, class"
        );
    }
}
