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
            let stored = store
                .load_run(id)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
            let mut chart = run_chart(&stored.report, a.metric.as_deref())?;
            chart.notes = fathom_report::about::run_lines(
                Some(id),
                &stored.args,
                &stored.command,
                &stored.report,
            );
            chart
        }
        Ref::Series(id) => {
            let s = store
                .load_series(id)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
            let mut chart = series_chart(&s, a.x.as_deref(), a.metric.as_deref(), a.latency)?;
            chart.notes = fathom_report::about::series_lines(&s);
            chart
        }
    };
    let bytes = plot::render(&chart, format, a.width, a.height)
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    std::fs::write(&a.output, bytes)
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", a.output.display())))?;
    eprintln!("fathom: wrote {}", a.output.display());
    Ok(())
}

/// A run's interval chart of `metric` (default: its main figure).
pub fn run_chart(report: &Report, metric: Option<&str>) -> Result<Chart, Failure> {
    let default = fathom_report::series::primary_metric(&report.test.kind);
    plot::interval_chart(report, metric.unwrap_or(default))
        .map_err(|e| Failure::Usage(e.to_string()))
}

/// A series' chart: `metric` (default: its main figure) or latency percentiles against `x`
/// (default: its first swept option); a series that sweeps nothing, run by run with the
/// confidence interval of the mean so far.
pub fn series_chart(
    s: &Series,
    x: Option<&str>,
    metric: Option<&str>,
    latency: bool,
) -> Result<Chart, Failure> {
    let x = match (x, s.axes.first()) {
        (Some(x), _) => x.to_string(),
        (None, Some(a)) => a.name.clone(),
        (None, None) if !latency && metric.is_none() => {
            return plot::iteration_chart(s).map_err(|e| Failure::Usage(e.to_string()))
        }
        (None, None) => {
            return Err(Failure::Usage(format!(
                "series {} repeats one test and sweeps nothing: it plots its main figure run by \
                 run (no --metric, no --latency), or plot one of its runs",
                s.id.as_deref().unwrap_or("?"),
            )))
        }
    };
    if latency {
        plot::latency_chart(s, &x).map_err(|e| Failure::Usage(e.to_string()))
    } else {
        plot::sweep_chart(s, &x, metric.unwrap_or(&s.primary_metric))
            .map_err(|e| Failure::Usage(e.to_string()))
    }
}
