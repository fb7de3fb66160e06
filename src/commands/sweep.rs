//! `fathom sweep KIND ...`: validate every point, run them on one testbed, print the series.

use super::output::{self, Format};
use crate::cli::method::SweepArgs;
use crate::method::{sweep, Recorder};
use crate::testbed::Testbed;
use crate::Failure;

/// Runs the sweep `a` describes; `argv` is the whole command line after the program name.
pub fn run(a: &SweepArgs, argv: &[String]) -> Result<(), Failure> {
    let (kind, json, csv, vary, store) = a.test.parts();
    super::doctor::refuse_advise(a.test.test.common(), "sweep")?;
    let axes = vary
        .vary
        .iter()
        .map(|v| sweep::parse_axis(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let base = base_args(argv, kind);
    let sp = sweep::prepare(kind, &base, axes, None)?;
    let rec = Recorder::open_required(store, argv)?;
    let bed = Testbed::for_plan(&sp.common, &sp.points[0].plan)?;
    let series = sweep::execute(&sp, &bed, &rec, vary.resume)?;
    let format = Format::of(json, csv);
    output::print(&series, format);
    let failed = series.points.iter().filter(|p| p.error.is_some()).count();
    if !series.complete {
        return Err(Failure::Reported);
    }
    if failed > 0 {
        eprintln!("fathom: {failed} point(s) failed");
        return Err(Failure::Reported);
    }
    Ok(())
}

/// The test's own arguments: what follows `sweep KIND`, without the sweep's options.
fn base_args(argv: &[String], kind: &str) -> Vec<String> {
    let start = argv.iter().position(|a| a == "sweep").map_or(0, |i| i + 1);
    let rest = &argv[start..];
    let rest = match rest.iter().position(|a| a == kind) {
        Some(i) => &rest[i + 1..],
        None => rest,
    };
    let mut out = Vec::new();
    let mut skip_next = false;
    for a in rest {
        if skip_next {
            skip_next = false;
        } else if a == "--vary" {
            skip_next = true;
        } else if a.starts_with("--vary=") || a == "--resume" {
        } else {
            out.push(a.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_is_the_test_options_without_the_sweeps() {
        let argv: Vec<String> =
            "sweep stream -t 1s --vary buffer=1K,2K --resume -P 2 --vary=write=1K,2K"
                .split(' ')
                .map(String::from)
                .collect();
        assert_eq!(base_args(&argv, "stream"), ["-t", "1s", "-P", "2"]);
    }
}
