//! Writing results: the chosen exporter to stdout; a closed pipe is not an error.

pub use crate::stdout::write_stdout;
use crate::Failure;
use fathom_report::csv::Csv;
use fathom_report::json::Json;
use fathom_report::table::Table;
use fathom_report::Exporter;
use fathom_report::Report;

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

/// Exports `doc` (a report or a series) in `f` to stdout.
pub fn print<D>(doc: &D, f: Format)
where
    Table: Exporter<D>,
    Json: Exporter<D>,
    Csv: Exporter<D>,
{
    let bytes = match f {
        Format::Json => Json.export(doc),
        Format::Csv => Csv.export(doc),
        Format::Table => Table.export(doc),
    };
    write_stdout(&bytes);
}

/// Exports `doc` as JSON with `--json`, else as the terminal table, to stdout.
pub fn print_json_or_table<D>(doc: &D, json: bool)
where
    Table: Exporter<D>,
    Json: Exporter<D>,
{
    write_stdout(&if json {
        Json.export(doc)
    } else {
        Table.export(doc)
    });
}

/// The exit status a finished report calls for: a failed test is exit 1 (its error printed as
/// a line for the table, already in the document for JSON and CSV).
pub fn exit_status(report: &Report, format: Format) -> Result<(), Failure> {
    match &report.error {
        Some(e) if format == Format::Table => Err(Failure::Runtime(e.clone())),
        Some(_) => Err(Failure::Reported),
        None => Ok(()),
    }
}
