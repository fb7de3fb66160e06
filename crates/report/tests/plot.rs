//! Plots from the deterministic fake run and hand-built series: the charts' data, their SVG
//! byte for byte (snapshots), and PNGs that are real, sized and not blank.

mod common;
mod series_fixture;

use common::report;
use fathom_report::plot::{
    interval_chart, interval_metrics, iteration_chart, latency_chart, render, sweep_chart, Chart,
    ImageFormat, Mark, PlotPoint, Stroke,
};
use series_fixture::{rr_sweep, stream_iterations, stream_sweep};
use std::path::Path;

fn svg(c: &Chart) -> String {
    String::from_utf8(render(c, ImageFormat::Svg, 640, 380).expect("renders")).expect("UTF-8")
}

#[test]
fn sweep_chart_draws_one_line_per_other_option_with_intervals() {
    let c = sweep_chart(&stream_sweep(), "buffer", "bits_per_second").unwrap();
    let labels: Vec<&str> = c.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["parallel=1", "parallel=10"]);
    assert!(c.log_x, "16K..4M spans 256x");
    assert_eq!(c.y_label, "Throughput (Gbit/s)");
    assert_eq!(c.x_ticks[0], (16384.0, "16K".to_string()));
    assert_eq!(c.lines[0].points.len(), 5);
    assert_eq!(c.lines[1].points.len(), 4, "the failed point is left out");
    let p = c.lines[0].points[0];
    assert!((p.y - 4.7).abs() < 1e-9, "{p:?}");
    let (lo, hi) = p.error.expect("three runs give an interval");
    assert!(lo < p.y && p.y < hi);
}

#[test]
fn words_become_categories_in_order() {
    let c = sweep_chart(&rr_sweep(), "quickack", "transactions_per_second").unwrap();
    assert!(!c.log_x);
    let xs: Vec<f64> = c.lines[0].points.iter().map(|p| p.x).collect();
    assert_eq!(xs, [0.0, 1.0]);
    assert_eq!(c.x_ticks[1], (1.0, "off".to_string()));
    assert_eq!(c.lines.len(), 4, "one line per size");
    assert_eq!(c.lines[0].label, "size=4");
}

#[test]
fn latency_chart_draws_three_percentiles_per_combination() {
    let c = latency_chart(&rr_sweep(), "size").unwrap();
    let labels: Vec<&str> = c.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "p50, quickack=on",
            "p90, quickack=on",
            "p99, quickack=on",
            "p50, quickack=off",
            "p90, quickack=off",
            "p99, quickack=off"
        ]
    );
    assert!(c.log_x, "4..1460 spans 365x");
    assert_eq!(c.y_label, "Latency (µs)");
    // Color tells the combinations apart, stroke and mark the percentiles: never color alone.
    let looks: Vec<(Option<usize>, Stroke, Mark)> = c
        .lines
        .iter()
        .map(|l| (l.color, l.stroke, l.mark))
        .collect();
    let percentile = [
        (Stroke::Solid, Mark::Circle),
        (Stroke::Dashed, Mark::Triangle),
        (Stroke::Dotted, Mark::Square),
    ];
    for (i, (color, stroke, mark)) in looks.into_iter().enumerate() {
        assert_eq!(color, Some(i / 3), "{}", c.lines[i].label);
        assert_eq!((stroke, mark), percentile[i % 3], "{}", c.lines[i].label);
    }
}

#[test]
fn iterations_plot_each_run_and_the_interval_of_the_mean_so_far() {
    let c = iteration_chart(&stream_iterations()).unwrap();
    assert_eq!(c.x_label, "iteration");
    assert_eq!(c.lines.len(), 2);
    let runs: Vec<f64> = c.lines[0]
        .points
        .iter()
        .map(|p| (p.y * 10.0).round() / 10.0)
        .collect();
    assert_eq!(runs, [9.0, 9.4, 8.8, 9.2, 9.1], "Gbit/s");
    let means = &c.lines[1].points;
    assert_eq!(means[0].error, None, "one run has no interval");
    assert!((means[1].y - 9.2).abs() < 1e-9);
    let width = |p: &PlotPoint| p.error.map(|(lo, hi)| hi - lo).expect("an interval");
    assert!(
        width(&means[4]) < width(&means[2]),
        "it narrows as runs add up"
    );
    assert!(
        iteration_chart(&stream_sweep()).is_err(),
        "a sweep plots against its options"
    );
    insta::assert_snapshot!("iterations_svg", svg(&c));
}

#[test]
fn notes_under_a_chart_say_what_ran() {
    let mut c = interval_chart(&report(1, false), "bits_per_second").unwrap();
    c.notes = vec![
        "run 7: fathom stream --buffer 1M".into(),
        "wan h1-h2: h1 → h2: delay=25ms; h2 → h1: delay=25ms".into(),
    ];
    let text = svg(&c);
    for n in &c.notes {
        assert!(text.contains(&format!("\n{n}\n</text>")), "{n}");
    }
    insta::assert_snapshot!("interval_notes_svg", text);
}

/// The notes' lines in an SVG: its texts at the left margin.
fn note_lines(svg: &str) -> Vec<String> {
    svg.split("<text ")
        .filter(|t| t.starts_with("x=\"12\" ") && t.contains("text-anchor=\"start\""))
        .filter_map(|t| t.split_once(">\n")?.1.split_once("\n</text>"))
        .map(|(text, _)| text.to_string())
        .collect()
}

#[test]
fn long_notes_wrap_to_fit_the_image_width() {
    use plotters::style::IntoFont;
    let mut c = interval_chart(&report(1, false), "bits_per_second").unwrap();
    c.notes = vec![
        "run 12: fathom sweep stream --server h1 --clients h2 --vary rtt=0ms,50ms,100ms -t 5s"
            .into(),
        "wan h1-h2: h1 → h2: delay=25ms,jitter=2ms,loss=0.1%,queue=1000p,rate=100M,seed=7; \
         h2 → h1: delay=25ms,jitter=2ms,loss=0.1%,queue=1000p,rate=100M,seed=7"
            .into(),
    ];
    for width in [400, 640] {
        let text = String::from_utf8(render(&c, ImageFormat::Svg, width, 380).unwrap()).unwrap();
        let lines = note_lines(&text);
        assert!(lines.len() > c.notes.len(), "{width}: wrapped: {lines:?}");
        for l in &lines {
            let drawn = ("sans-serif", 12).into_font().box_size(l).unwrap().0;
            assert!(drawn + 12 <= width, "{width}: '{l}' is {drawn} px wide");
        }
        let squeeze = |t: &str| t.split_whitespace().collect::<String>();
        assert_eq!(
            squeeze(&lines.concat()),
            squeeze(&c.notes.concat()),
            "nothing is lost"
        );
    }
}

#[test]
fn unknown_names_are_errors_that_list_the_known_ones() {
    let s = stream_sweep();
    let e = sweep_chart(&s, "size", "bits_per_second").unwrap_err();
    assert!(e.to_string().contains("buffer, parallel"), "{e}");
    let e = sweep_chart(&s, "buffer", "tps").unwrap_err();
    assert!(
        e.to_string().contains("bits_per_second, retransmits"),
        "{e}"
    );
    let e = latency_chart(&s, "buffer").unwrap_err();
    assert!(e.to_string().contains("no latency"), "{e}");
    let r = report(1, false);
    let e = interval_chart(&r, "jitter").unwrap_err();
    assert!(
        e.to_string().contains(&interval_metrics().join(", ")),
        "{e}"
    );
    assert!(interval_chart(&r, "transactions_per_second").is_err());
}

#[test]
fn interval_chart_shades_the_warm_up() {
    let r = report(1, false);
    let c = interval_chart(&r, "bits_per_second").unwrap();
    assert_eq!(c.lines.len(), 1);
    assert_eq!(c.lines[0].points.len(), r.intervals.len());
    assert_eq!(c.shaded.len(), 1, "the fake run has a warm-up");
    let shade = &c.shaded[0];
    assert_eq!((shade.from, shade.to), (0.0, 1.0));
    assert_eq!(c.y_label, "Throughput (Mbit/s)");
}

#[test]
fn packets_are_data_segments_and_their_acks() {
    let r = report(4, true);
    let c = interval_chart(&r, "packets").unwrap();
    let labels: Vec<&str> = c.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["data packets", "ACK packets"]);
    for (d, a) in c.lines[0].points.iter().zip(&c.lines[1].points) {
        assert_eq!(d.x, a.x);
        assert!(d.y > 0.0);
        // The fake receivers send 2 ACKs per 5 data segments.
        assert!((d.y / a.y - 2.5).abs() < 1e-6, "{d:?} {a:?}");
    }
}

#[test]
fn svg_of_a_sweep() {
    let c = sweep_chart(&stream_sweep(), "buffer", "bits_per_second").unwrap();
    insta::assert_snapshot!("sweep_throughput_svg", svg(&c));
}

#[test]
fn svg_of_a_categorical_sweep() {
    let c = sweep_chart(&rr_sweep(), "quickack", "transactions_per_second").unwrap();
    insta::assert_snapshot!("sweep_categorical_svg", svg(&c));
}

#[test]
fn svg_of_latency_percentiles() {
    insta::assert_snapshot!(
        "latency_svg",
        svg(&latency_chart(&rr_sweep(), "size").unwrap())
    );
}

#[test]
fn svg_of_interval_throughput() {
    let c = interval_chart(&report(1, false), "bits_per_second").unwrap();
    insta::assert_snapshot!("interval_throughput_svg", svg(&c));
}

#[test]
fn svg_of_interval_packets() {
    let c = interval_chart(&report(4, true), "packets").unwrap();
    insta::assert_snapshot!("interval_packets_svg", svg(&c));
}

#[test]
fn every_interval_metric_of_a_stream_draws_or_says_why() {
    let r = report(2, false);
    for m in interval_metrics() {
        match interval_chart(&r, m) {
            Ok(c) => assert!(svg(&c).contains("<svg"), "{m}"),
            Err(e) => assert!(e.to_string().contains("request/response"), "{m}: {e}"),
        }
    }
}

#[test]
fn svg_text_is_escaped() {
    let mut s = rr_sweep();
    s.axes[1].values[0] = "<b>&".into();
    for p in s.points.iter_mut().filter(|p| p.params[1].value == "on") {
        p.params[1].value = "<b>&".into();
    }
    let text = svg(&sweep_chart(&s, "size", "transactions_per_second").unwrap());
    assert!(text.contains("&lt;b&gt;&amp;"), "{text}");
    assert!(!text.contains("<b>"));
}

/// Width, height and the RGB pixels of a PNG.
fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(bytes).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("one frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn png_is_a_real_image_with_text_and_lines() {
    let c = sweep_chart(&stream_sweep(), "buffer", "bits_per_second").unwrap();
    let bytes = render(&c, ImageFormat::Png, 800, 450).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let (w, h, rgb) = decode(&bytes);
    assert_eq!((w, h), (800, 450));
    let px: Vec<&[u8]> = rgb.chunks(3).collect();
    let dark = px.iter().filter(|p| p.iter().all(|&c| c < 100)).count();
    let blue = px.iter().filter(|p| p[2] > 150 && p[0] < 80).count();
    assert!(dark > 1_000, "text and axes are drawn: {dark} dark pixels");
    assert!(blue > 500, "the first line is drawn: {blue} blue pixels");
    assert_eq!(
        render(&c, ImageFormat::Png, 800, 450).unwrap(),
        bytes,
        "deterministic"
    );
    save("plot-sweep.png", &bytes);
}

#[test]
fn pngs_of_every_chart_kind_are_saved_for_a_look() {
    let charts = [
        ("plot-latency.png", latency_chart(&rr_sweep(), "size")),
        (
            "plot-categorical.png",
            sweep_chart(&rr_sweep(), "quickack", "transactions_per_second"),
        ),
        (
            "plot-interval-packets.png",
            interval_chart(&report(4, true), "packets"),
        ),
        (
            "plot-interval-rtt.png",
            interval_chart(&report(2, false), "rtt_us").map(|mut c| {
                c.notes = vec!["run 7: fathom stream -P 2 --buffer 1M".into()];
                c
            }),
        ),
        ("plot-iterations.png", iteration_chart(&stream_iterations())),
    ];
    for (name, c) in charts {
        let bytes = render(&c.unwrap(), ImageFormat::Png, 800, 450).unwrap();
        let (w, h, _) = decode(&bytes);
        assert_eq!((w, h), (800, 450));
        save(name, &bytes);
    }
}

/// Keeps `bytes` in target/test-artifacts for a person to look at.
fn save(name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    std::fs::write(dir.join(name), bytes).expect("artifact written");
}

#[test]
fn formats_come_from_extensions_and_sizes_are_checked() {
    assert_eq!(
        ImageFormat::from_path(Path::new("a/b.SVG")),
        Ok(ImageFormat::Svg)
    );
    assert_eq!(
        ImageFormat::from_path(Path::new("b.png")),
        Ok(ImageFormat::Png)
    );
    let e = ImageFormat::from_path(Path::new("b.jpg")).unwrap_err();
    assert!(e.to_string().contains(".svg or .png"), "{e}");
    assert!(render(&Chart::default(), ImageFormat::Svg, 0, 100).is_err());
    let empty = svg(&Chart::default());
    assert!(empty.contains("no data"));
}

#[test]
fn an_interval_from_two_runs_stops_at_zero() {
    let mut s = stream_iterations();
    s.points[0].values = vec![1.0e9, 40.0e9];
    s.points[0].runs = vec![1, 2];
    let c = iteration_chart(&s).unwrap();
    let (lo, hi) = c.lines[1].points[1]
        .error
        .expect("two runs give an interval");
    assert_eq!(
        lo, 0.0,
        "the 95% interval of 1 and 40 Gbit/s reaches far below zero"
    );
    assert!(hi > 40.0);
}

#[test]
fn lines_orders_of_magnitude_apart_get_a_log_y_axis() {
    assert!(
        !sweep_chart(&stream_sweep(), "buffer", "bits_per_second")
            .unwrap()
            .log_y
    );
    let mut s = stream_sweep();
    for p in s
        .points
        .iter_mut()
        .filter(|p| p.param("parallel") == Some("10"))
    {
        for m in p.metrics.iter_mut().filter(|m| m.name == "bits_per_second") {
            m.stat.mean *= 100.0;
            m.stat.ci_low *= 100.0;
            m.stat.ci_high *= 100.0;
        }
    }
    let c = sweep_chart(&s, "buffer", "bits_per_second").unwrap();
    assert!(
        c.log_y,
        "one line 100x the other would lie flat on a linear axis"
    );
    assert!(c.y_label.ends_with("(log scale)"), "{}", c.y_label);
    let text = svg(&c);
    assert!(text.contains("<svg"), "renders");
}
