//! What can keep a chart from being made: the document lacks what the chart asks for (the
//! wrong chart, metric or option for it), or the image could not be drawn or encoded.

use std::path::PathBuf;
use thiserror::Error;

/// Why a chart or its image could not be made; each names the option, figure or size at fault.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PlotError {
    /// The output file's extension names no image format.
    #[error("'{}': cannot tell the image format; name the file .svg or .png", .0.display())]
    UnknownFormat(PathBuf),
    /// An interval metric fathom does not chart.
    #[error("no interval metric '{metric}'; choose one of: {choices}")]
    NoIntervalMetric {
        /// The metric asked for.
        metric: String,
        /// The interval metrics, comma-separated.
        choices: String,
    },
    /// A report without intervals.
    #[error("the report has no intervals")]
    NoIntervals,
    /// Intervals that do not carry the metric asked for.
    #[error(
        "the report's intervals have no {0} (request/response tests have transactions and latency)"
    )]
    IntervalsLack(String),
    /// Intervals without per-flow segment counts, for the packets chart.
    #[error(
        "the report's intervals have no per-flow segment counts (kept for TCP tests of up to 64 flows)"
    )]
    NoSegmentCounts,
    /// A series without the metric asked for.
    #[error("no metric '{metric}' in this series; it has: {has}")]
    NoSeriesMetric {
        /// The metric asked for.
        metric: String,
        /// The series' metrics, comma-separated.
        has: String,
    },
    /// A latency chart of a series without latency percentiles.
    #[error(
        "this series has no latency percentiles (a request/response test has them); it has: {0}"
    )]
    NoLatency(String),
    /// An iterations chart of a series that sweeps options.
    #[error("this series sweeps options: plot it against one of them (--x)")]
    SweepsOptions,
    /// An x axis asked of a series that sweeps nothing.
    #[error("no swept option '{0}': this series sweeps nothing (iterations only)")]
    NothingSwept(String),
    /// An x axis the series does not sweep.
    #[error("no swept option '{axis}'; the series sweeps: {swept}")]
    NoSuchAxis {
        /// The option asked for.
        axis: String,
        /// The swept options, comma-separated.
        swept: String,
    },
    /// An image side outside the accepted range.
    #[error("image size {width}x{height}: each side must be {min} to {max} pixels")]
    Size {
        /// Width asked for, pixels.
        width: u32,
        /// Height asked for, pixels.
        height: u32,
        /// The smallest side accepted.
        min: u32,
        /// The largest side accepted.
        max: u32,
    },
    /// The embedded font could not be registered.
    #[error("the embedded font could not be loaded")]
    Font,
    /// The drawing backend or the PNG encoder failed; its own message.
    #[error("{0}")]
    Draw(String),
}
