//! Plots of results, as SVG or PNG: a [`Chart`] is plain data (lines of points with optional
//! error bars), made from a sweep ([`sweep_chart`], [`latency_chart`]) or from one run's
//! intervals ([`interval_chart`]), and drawn by [`render`] with plotters. Text is laid out with
//! an embedded font (DejaVu Sans), so the output is the same on every machine and a PNG needs no
//! system fonts.

mod chart;
mod draw;
mod error;
mod intervals;
mod sweep;
mod ticks;
pub(crate) mod units;

pub use chart::{Chart, ImageFormat, Line, Mark, PlotPoint, Shade, Stroke};
pub use draw::render;
pub use error::PlotError;
pub use intervals::{interval_chart, interval_metrics};
pub use sweep::{iteration_chart, latency_chart, sweep_chart};
pub use units::{scale, Scale};
