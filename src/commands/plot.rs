//! `fathom plot RUN`: a stored run's intervals over time, or a series against a swept option,
//! as SVG or PNG.

use super::show::open_existing;
use crate::cli::method::PlotArgs;
use crate::Failure;
use fathom_report::plot::{self, Chart, ImageFormat};
use fathom_report::series::Series;
use fathom_report::Report;
use fathom_store::Ref;

/// Draws the plot `a` asks for into its output file.
pub fn run(a: &PlotArgs) -> Result<(), Failure> {
    let r = Ref::parse(&a.run).map_err(|e| Failure::Usage(e.to_string()))?;
    let format =
        ImageFormat::from_path(&a.output).map_err(|e| Failure::Usage(format!("-o: {e}")))?;
    if !(100..=10_000).contains(&a.width) || !(100..=10_000).contains(&a.height) {
        return Err(Failure::Usage(
            "--width/--height: from 100 to 10000 pixels".into(),
        ));
    }
    let store = open_existing(&a.store)?;
    let chart = match r {
        Ref::Run(id) => {
            if a.latency || a.x.is_some() {
                return Err(Failure::Usage(
                    "--latency and --x plot a series (s7); a run plots its intervals over time"
                        .into(),
                ));
            }
            let report = store
                .load_run(id)
                .map_err(|e| Failure::Runtime(e.to_string()))?
                .report;
            run_chart(&report, a.metric.as_deref())?
        }
        Ref::Series(id) => {
            let s = store
                .load_series(id)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
            series_chart(&s, a.x.as_deref(), a.metric.as_deref(), a.latency)?
        }
    };
    let bytes = plot::render(&chart, format, a.width, a.height).map_err(Failure::Runtime)?;
    std::fs::write(&a.output, bytes)
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", a.output.display())))?;
    eprintln!("fathom: wrote {}", a.output.display());
    Ok(())
}

/// A run's interval chart of `metric` (default: its main figure).
pub fn run_chart(report: &Report, metric: Option<&str>) -> Result<Chart, Failure> {
    let default = fathom_report::series::primary_metric(&report.test.kind);
    plot::interval_chart(report, metric.unwrap_or(default)).map_err(Failure::Usage)
}

/// A series' chart: `metric` (default: its main figure) or latency percentiles against `x`
/// (default: its first swept option).
pub fn series_chart(
    s: &Series,
    x: Option<&str>,
    metric: Option<&str>,
    latency: bool,
) -> Result<Chart, Failure> {
    let x = match x {
        Some(x) => x.to_string(),
        None => s.axes.first().map(|a| a.name.clone()).ok_or_else(|| {
            Failure::Usage(format!(
                "series {} repeats one test and sweeps nothing: plot one of its runs ({})",
                s.id.as_deref().unwrap_or("?"),
                s.points
                    .first()
                    .map(|p| p
                        .runs
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            ))
        })?,
    };
    if latency {
        plot::latency_chart(s, &x).map_err(Failure::Usage)
    } else {
        plot::sweep_chart(s, &x, metric.unwrap_or(&s.primary_metric)).map_err(Failure::Usage)
    }
}
