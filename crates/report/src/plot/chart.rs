//! A chart as plain data: lines of points (with optional error bars) over a shared x axis,
//! their strokes and marks, shaded spans; and the image formats a chart is drawn in.

use super::error::PlotError;
use std::path::Path;

/// An image file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// Scalable vector graphics (text stays text).
    Svg,
    /// A PNG bitmap.
    Png,
}

impl ImageFormat {
    /// The format a file name asks for, by its extension (`.svg`, `.png`, any case).
    pub fn from_path(path: &Path) -> Result<ImageFormat, PlotError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            _ => Err(PlotError::UnknownFormat(path.to_path_buf())),
        }
    }
}

/// A chart: lines of points over a shared x axis.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// Lines of small text under the title saying what ran (the run, its command, its WAN
    /// links), so that the image describes itself.
    pub notes: Vec<String>,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis, naming the unit.
    pub y_label: String,
    /// Logarithmic x axis (every x must then be positive; others are left out).
    pub log_x: bool,
    /// Logarithmic y axis, for lines orders of magnitude apart (every y must then be positive;
    /// others are left out, and an error bar's low end at or below zero is not drawn).
    pub log_y: bool,
    /// Tick marks of the x axis as (x, label); empty for evenly spaced numbers.
    pub x_ticks: Vec<(f64, String)>,
    /// Spans of x shaded and named in the legend (the warm-up of a run, a mesh pair's alerts);
    /// spans of one name share one legend entry.
    pub shaded: Vec<Shade>,
    /// The lines, drawn in order, each in its own color.
    pub lines: Vec<Line>,
}

/// One line of a chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Line {
    /// Its name in the legend.
    pub label: String,
    /// Its points, joined in order.
    pub points: Vec<PlotPoint>,
    /// Its color's place in the palette (`None`: its place among the lines).
    pub color: Option<usize>,
    /// How it is drawn, so that lines differ by more than color.
    pub stroke: Stroke,
    /// The mark at each of its points.
    pub mark: Mark,
}

/// How a line is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stroke {
    /// Unbroken.
    #[default]
    Solid,
    /// Long dashes.
    Dashed,
    /// Short dashes.
    Dotted,
}

/// The mark at each point of a line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mark {
    /// A dot.
    #[default]
    Circle,
    /// A triangle.
    Triangle,
    /// A square.
    Square,
}

/// One point of a line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlotPoint {
    /// Position on the x axis.
    pub x: f64,
    /// Value.
    pub y: f64,
    /// An error bar from the first value to the second (a confidence interval).
    pub error: Option<(f64, f64)>,
}

/// A shaded span of the x axis.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shade {
    /// Where it starts.
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// Its name in the legend.
    pub label: String,
}
