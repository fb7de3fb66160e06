//! Drawing a [`Chart`] with plotters: the same code draws on the SVG backend and on an RGB
//! bitmap that is then encoded as PNG. The legend sits right of the plot so it never hides data.

use super::ticks::{log_y_axis, x_axis, y_axis, Axis, Ticked};
use super::{Chart, ImageFormat, Line, Mark, PlotError, PlotPoint, Stroke};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::OnceLock;

/// Smallest and largest image side accepted, pixels.
const SIDE: std::ops::RangeInclusive<u32> = 200..=8000;
/// The lines' colors, in order (Tableau 10).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// The font family every text uses; the embedded font is registered under this name.
const FONT: &str = "sans-serif";
/// Height of one line of notes under the chart, pixels.
const NOTE_LINE: u32 = 16;
/// The notes' font size, pixels.
const NOTE_SIZE: u32 = 12;
/// The notes' margin, left and right, pixels.
const NOTE_X: u32 = 12;
/// Legend labels are cut to this many characters.
const LEGEND_CHARS: usize = 36;

/// `c` drawn as an image of `width` × `height` pixels.
pub fn render(c: &Chart, f: ImageFormat, width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    if !SIDE.contains(&width) || !SIDE.contains(&height) {
        return Err(PlotError::Size {
            width,
            height,
            min: *SIDE.start(),
            max: *SIDE.end(),
        });
    }
    fonts()?;
    match f {
        ImageFormat::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
                draw(&root, c)?;
                root.present().map_err(draw_error)?;
            }
            Ok(svg.into_bytes())
        }
        ImageFormat::Png => {
            let mut rgb = vec![255u8; width as usize * height as usize * 3];
            {
                let root =
                    BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
                draw(&root, c)?;
                root.present().map_err(draw_error)?;
            }
            encode_png(&rgb, width, height)
        }
    }
}

/// Registers the embedded DejaVu Sans once per process.
fn fonts() -> Result<(), PlotError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = DONE.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if *ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(draw_error)?;
    w.write_image_data(rgb).map_err(draw_error)?;
    w.finish().map_err(draw_error)?;
    Ok(out)
}

/// The lines' drawable points: finite, and positive x (y) on a log x (y) axis; on a log y axis
/// their y and error bars become log10 positions.
fn usable(c: &Chart) -> Vec<Vec<PlotPoint>> {
    c.lines
        .iter()
        .map(|l| {
            l.points
                .iter()
                .filter(|p| p.x.is_finite() && p.y.is_finite() && (!c.log_x || p.x > 0.0))
                .filter(|p| !c.log_y || p.y > 0.0)
                .map(|&p| match c.log_y {
                    true => PlotPoint {
                        y: p.y.log10(),
                        error: p.error.map(|(lo, hi)| {
                            let lo = if lo > 0.0 { lo } else { p.y };
                            (lo.log10(), hi.max(p.y).log10())
                        }),
                        ..p
                    },
                    false => p,
                })
                .collect()
        })
        .collect()
}

/// The x and y axes that hold every point, error bar and shaded span.
fn axes(c: &Chart, lines: &[Vec<PlotPoint>]) -> (Axis, Axis) {
    let points = || lines.iter().flatten();
    let mut xs: Vec<f64> = points().map(|p| p.x).collect();
    for s in &c.shaded {
        xs.extend([s.from, s.to].into_iter().filter(|x| !c.log_x || *x > 0.0));
    }
    let ys = points().flat_map(|p| {
        let (lo, hi) = p.error.unwrap_or((p.y, p.y));
        [p.y, lo, hi].into_iter().filter(|v| v.is_finite())
    });
    let (ymin, ymax) = ys.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (xmin, xmax) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let x = if xs.is_empty() {
        x_axis(1.0, 10.0, c.log_x, &[])
    } else {
        x_axis(xmin, xmax, c.log_x, &c.x_ticks)
    };
    let y = match c.log_y {
        true => log_y_axis(lines.iter().flatten().flat_map(|p| {
            let (lo, hi) = p.error.unwrap_or((p.y, p.y));
            [p.y, lo, hi]
        })),
        false => y_axis(ymin, ymax),
    };
    (x, y)
}

type Area<DB> = DrawingArea<DB, Shift>;

/// A drawing or encoding library's error, with its own message.
fn draw_error(e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// `c` on `root`: the legend on the right when there is one, the axes, then the data.
fn draw<DB: DrawingBackend>(root: &Area<DB>, c: &Chart) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| draw_error(e);
    root.fill(&WHITE).map_err(err)?;
    let lines = usable(c);
    let (x, y) = axes(c, &lines);
    let entries = legend_entries(c);
    let (w, h) = root.dim_in_pixel();
    let notes = wrap_notes(&c.notes, w.saturating_sub(2 * NOTE_X));
    let root = if notes.is_empty() {
        root.clone()
    } else {
        let (upper, below) =
            root.split_vertically(h.saturating_sub(NOTE_LINE * notes.len() as u32 + 6));
        draw_notes(&below, &notes).map_err(err)?;
        upper
    };
    let plot = if entries.is_empty() {
        root.clone()
    } else {
        let widest = entries
            .iter()
            .map(|(l, _)| root.estimate_text_size(l, &font(13)).map_or(0, |s| s.0))
            .max()
            .unwrap_or(0);
        let legend_w = (widest + 44).min(w * 2 / 5);
        let (plot, legend) = root.split_horizontally(w - legend_w);
        draw_legend(&legend, &entries).map_err(err)?;
        plot
    };
    let mut chart = ChartBuilder::on(&plot)
        .caption(&c.title, bold(17))
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size(62)
        .build_cartesian_2d(Ticked(x.clone()), Ticked(y.clone()))
        .map_err(err)?;
    chart
        .configure_mesh()
        .bold_line_style(RGBColor(226, 226, 226))
        .axis_style(RGBColor(120, 120, 120))
        .label_style(font(13))
        .axis_desc_style(font(14))
        .x_desc(c.x_label.as_str())
        .y_desc(c.y_label.as_str())
        .draw()
        .map_err(err)?;
    data(&mut chart, c, &lines, &x, &y).map_err(err)
}

/// The shaded spans, the lines with their error bars and markers, or "no data".
fn data<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<Ticked, Ticked>>,
    c: &Chart,
    lines: &[Vec<PlotPoint>],
    x: &Axis,
    y: &Axis,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let tx = |v: f64| if c.log_x { v.log10() } else { v };
    for s in &c.shaded {
        let (from, to) = (tx(s.from.max(f64::MIN_POSITIVE)), tx(s.to));
        let span = [(from.max(x.lo), y.lo), (to.min(x.hi), y.hi)];
        chart.draw_series(std::iter::once(Rectangle::new(
            span,
            shade_color().filled(),
        )))?;
    }
    for (i, (points, l)) in lines.iter().zip(&c.lines).enumerate() {
        let color = color_of(l, i);
        let bars = points.iter().filter_map(|p| {
            let (lo, hi) = p
                .error
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi)?;
            Some(ErrorBar::new_vertical(
                tx(p.x),
                lo,
                p.y,
                hi,
                color.stroke_width(1),
                8,
            ))
        });
        chart.draw_series(bars)?;
        let xy: Vec<(f64, f64)> = points.iter().map(|p| (tx(p.x), p.y)).collect();
        let style = color.stroke_width(2);
        match dashes(l.stroke) {
            None => chart.draw_series(LineSeries::new(xy.clone(), style))?,
            Some((on, off)) => {
                chart.draw_series(DashedLineSeries::new(xy.clone(), on, off, style))?
            }
        };
        let style = color.filled();
        let square = |p| EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], style);
        match l.mark {
            Mark::Circle => chart.draw_series(xy.into_iter().map(|p| Circle::new(p, 3, style)))?,
            Mark::Triangle => {
                chart.draw_series(xy.into_iter().map(|p| TriangleMarker::new(p, 5, style)))?
            }
            Mark::Square => chart.draw_series(xy.into_iter().map(square))?,
        };
    }
    if lines.iter().all(|l| l.is_empty()) {
        let mid = ((x.lo + x.hi) / 2.0, (y.lo + y.hi) / 2.0);
        let style = font(14).pos(Pos::new(HPos::Center, VPos::Center));
        chart.draw_series(std::iter::once(Text::new("no data", mid, style)))?;
    }
    Ok(())
}

/// The color of line `l`, the `i`th.
fn color_of(l: &Line, i: usize) -> RGBColor {
    PALETTE[l.color.unwrap_or(i) % PALETTE.len()]
}

/// (dash, gap) lengths in pixels of a broken stroke; `None` for a solid one.
fn dashes(s: Stroke) -> Option<(i32, i32)> {
    match s {
        Stroke::Solid => None,
        Stroke::Dashed => Some((9, 5)),
        Stroke::Dotted => Some((2, 4)),
    }
}

/// What ran, one line each, left-aligned under the chart.
fn draw_notes<DB: DrawingBackend>(
    area: &Area<DB>,
    lines: &[String],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = font(NOTE_SIZE).pos(Pos::new(HPos::Left, VPos::Top));
    for (i, n) in lines.iter().enumerate() {
        let y = 2 + (NOTE_LINE * i as u32) as i32;
        area.draw(&Text::new(n.as_str(), (NOTE_X as i32, y), style.clone()))?;
    }
    Ok(())
}

/// The notes as lines at most `width` pixels wide in the notes' font: a note too long for one
/// line breaks at its last space that fits, else after its last comma (a WAN link's
/// `delay=25ms,rate=1G,...`), else anywhere; its further lines are indented.
fn wrap_notes(notes: &[String], width: u32) -> Vec<String> {
    let style = font(NOTE_SIZE);
    let wide = |t: &str| style.font.box_size(t).map_or(0, |b| b.0);
    let mut out = Vec::new();
    for note in notes {
        let mut rest = note.as_str();
        let mut indent = "";
        loop {
            let fits = |n: usize| wide(&format!("{indent}{}", &rest[..n])) <= width;
            let ends: Vec<usize> = rest.char_indices().map(|(i, c)| i + c.len_utf8()).collect();
            let Some(&first) = ends.first() else { break };
            let fit = ends.iter().copied().take_while(|&n| fits(n)).last();
            let fit = fit.unwrap_or(first);
            if fit == rest.len() {
                out.push(format!("{indent}{rest}"));
                break;
            }
            let head = &rest[..fit];
            let cut = [' ', ',']
                .iter()
                .find_map(|sep| head.rfind(*sep).map(|i| i + 1).filter(|&i| i > 1))
                .unwrap_or(fit);
            out.push(format!("{indent}{}", rest[..cut].trim_end()));
            rest = rest[cut..].trim_start();
            indent = "    ";
            if rest.is_empty() {
                break;
            }
        }
    }
    out
}

fn font(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&RGBColor(40, 40, 40))
}

fn bold(size: u32) -> TextStyle<'static> {
    (FONT, size, FontStyle::Bold)
        .into_font()
        .color(&RGBColor(30, 30, 30))
}

fn shade_color() -> RGBAColor {
    RGBColor(120, 120, 120).mix(0.15)
}

/// How a line looks in the legend.
#[derive(Clone, Copy)]
struct Look {
    color: RGBColor,
    stroke: Stroke,
    mark: Mark,
}

/// The legend's entries: (label, look; `None` for a shaded span, one per name).
fn legend_entries(c: &Chart) -> Vec<(String, Option<Look>)> {
    if c.lines.len() < 2 && c.shaded.is_empty() {
        return Vec::new();
    }
    let cut = |s: &str| match s.char_indices().nth(LEGEND_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    };
    let mut out: Vec<(String, Option<Look>)> = c
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let look = Look {
                color: color_of(l, i),
                stroke: l.stroke,
                mark: l.mark,
            };
            (cut(&l.label), Some(look))
        })
        .collect();
    for s in &c.shaded {
        let label = cut(&s.label);
        if !out.iter().any(|(l, look)| look.is_none() && *l == label) {
            out.push((label, None));
        }
    }
    out
}

/// The legend's entries, top down: a line sample (or a shaded swatch) and the label.
fn draw_legend<DB: DrawingBackend>(
    area: &Area<DB>,
    entries: &[(String, Option<Look>)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let label = font(13).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (text, look)) in entries.iter().enumerate() {
        let y = 52 + 22 * i as i32;
        match look {
            Some(l) => sample(area, *l, y)?,
            None => area.draw(&Rectangle::new(
                [(4, y - 7), (26, y + 7)],
                shade_color().filled(),
            ))?,
        }
        area.draw(&Text::new(text.as_str(), (32, y), label.clone()))?;
    }
    Ok(())
}

/// A legend sample of a line at height `y`: its stroke from x 4 to 26 and its mark at 15.
fn sample<DB: DrawingBackend>(
    area: &Area<DB>,
    l: Look,
    y: i32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (on, off) = dashes(l.stroke).unwrap_or((22, 0));
    let mut x = 4;
    while x < 26 {
        let to = (x + on).min(26);
        area.draw(&PathElement::new(
            vec![(x, y), (to, y)],
            l.color.stroke_width(2),
        ))?;
        x = to + off;
    }
    let style = l.color.filled();
    match l.mark {
        Mark::Circle => area.draw(&Circle::new((15, y), 3, style)),
        Mark::Triangle => area.draw(&TriangleMarker::new((15, y), 5, style)),
        Mark::Square => area.draw(&Rectangle::new([(12, y - 3), (18, y + 3)], style)),
    }
}
