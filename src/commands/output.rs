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

impl Format {
    /// The format `--json` / `--csv` ask for (the table otherwise).
    pub fn of(json: bool, csv: bool) -> Format {
        if json {
            Format::Json
        } else if csv {
            Format::Csv
        } else {
            Format::Table
        }
    }
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

/// Renders a series (sweep or iterations) in `f` to stdout.
pub fn print_series(s: &fathom_report::series::Series, f: Format) {
    let bytes = match f {
        Format::Json => {
            let mut v = serde_json::to_vec_pretty(s).unwrap_or_default();
            v.push(b'\n');
            v
        }
        Format::Csv => fathom_report::csv::render_series(s),
        Format::Table => fathom_report::table_series::render(s),
    };
    write_stdout(&bytes);
}

/// Writes to stdout, ignoring a reader that went away (`| head`).
pub fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|_| out.flush());
}
