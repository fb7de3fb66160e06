//! Writing results: the chosen exporter to stdout; a closed pipe is not an error.

pub use crate::stdout::write_stdout;
use fathom_report::csv::Csv;
use fathom_report::json::Json;
use fathom_report::table::Table;
use fathom_report::Exporter;

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
