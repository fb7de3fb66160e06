//! Writing results: the chosen renderer to stdout; a closed pipe is not an error.

use fathom_report::Report;
use std::io::Write;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Terminal table.
    Table,
    /// One JSON document.
    Json,
    /// Interval rows.
    Csv,
}

/// Renders `r` in `f` to stdout.
pub fn print(r: &Report, f: Format) {
    let bytes = match f {
        Format::Json => fathom_report::json::render(r),
        Format::Csv => fathom_report::csv::render(r),
        Format::Table => fathom_report::table::render(r),
    };
    write_stdout(&bytes);
}

/// Writes to stdout, ignoring a reader that went away (`| head`).
pub fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|_| out.flush());
}
