//! Units of the plots: swept values read as numbers ("16K", "10ms"), metrics named (by the
//! metric registry) and scaled for the y axis (bits/s as Gbit/s or Mbit/s, µs as ms when large).

/// A swept value as a number: plain numbers are themselves, sizes are bytes (K = 1024, as the
/// CLI takes them), durations are seconds. `None` for words ("on", "cubic").
pub fn axis_value(s: &str) -> Option<f64> {
    use fathom_units::duration::{self, Bare};
    let plain = s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    plain
        .or_else(|| fathom_units::size::parse(s).ok().map(|b| b as f64))
        .or_else(|| {
            duration::parse(s, Bare::Refused)
                .ok()
                .map(|ns| ns as f64 / 1e9)
        })
}

/// How a metric's values are shown on an axis: multiplied by `factor`, in `unit`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    /// What the metric is, for titles ("Throughput").
    pub title: String,
    /// Multiplier from the stored value to the shown one.
    pub factor: f64,
    /// The shown unit ("Gbit/s"); empty for plain counts.
    pub unit: &'static str,
}

impl Scale {
    /// The scale of values in `unit` whose largest is `max`, titled `title`: bit/s as kbit/s
    /// to Gbit/s, µs as ms from 10 ms.
    pub fn of(title: &str, unit: &'static str, max: f64) -> Scale {
        let (factor, unit) = match unit {
            "bit/s" => bits_scale(max),
            "µs" if max >= 10_000.0 => (1e-3, "ms"),
            u => (1.0, u),
        };
        Scale {
            title: title.to_string(),
            factor,
            unit,
        }
    }

    /// The axis label: "Throughput (Gbit/s)".
    pub fn label(&self) -> String {
        if self.unit.is_empty() {
            self.title.clone()
        } else {
            format!("{} ({})", self.title, self.unit)
        }
    }

    /// A line's name in the legend: `label`, or the metric's title for a line with none (the
    /// one line of an unsplit chart).
    pub fn line_name(&self, label: String) -> String {
        if label.is_empty() {
            self.title.clone()
        } else {
            label
        }
    }
}

/// The scale for `metric` whose largest value is `max` (in the metric's own unit): its label
/// and unit from the metric registry; a name it does not know is its own title, unitless.
pub fn scale(metric: &str, max: f64) -> Scale {
    match crate::metric::find(metric) {
        Some(m) => Scale::of(m.label, m.unit, max),
        None => Scale::of(metric, "", max),
    }
}

fn bits_scale(max: f64) -> (f64, &'static str) {
    match max {
        m if m >= 1e9 => (1e-9, "Gbit/s"),
        m if m >= 1e6 => (1e-6, "Mbit/s"),
        m if m >= 1e3 => (1e-3, "kbit/s"),
        _ => (1.0, "bit/s"),
    }
}

/// `v` as a tick label on an axis whose ticks are `step` apart: as many decimals as the step
/// needs, and k/M/G for large values ("250k", "1.5M").
pub fn tick_label(v: f64, step: f64, largest: f64) -> String {
    let (div, suffix) = match largest.abs() {
        _ if v == 0.0 => (1.0, ""),
        m if m >= 1e9 => (1e9, "G"),
        m if m >= 1e6 => (1e6, "M"),
        m if m >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let step = step / div;
    let decimals = if step > 0.0 && step < 1.0 {
        (-step.log10()).ceil().min(9.0) as usize
    } else {
        0
    };
    let v = v / div;
    let text = format!("{v:.decimals$}");
    let text = if text.starts_with('-') && text.trim_start_matches(['-', '0', '.']).is_empty() {
        text[1..].to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swept_values_read_as_bytes_seconds_or_numbers() {
        assert_eq!(axis_value("16K"), Some(16384.0));
        assert_eq!(axis_value("2M"), Some(2.0 * 1024.0 * 1024.0));
        assert_eq!(axis_value("10ms"), Some(0.01));
        assert_eq!(axis_value("1460"), Some(1460.0));
        assert_eq!(axis_value("on"), None);
        assert_eq!(axis_value(""), None);
    }

    #[test]
    fn bits_and_latencies_scale_to_readable_units() {
        assert_eq!(
            scale("bits_per_second", 9.4e9).label(),
            "Throughput (Gbit/s)"
        );
        assert_eq!(scale("bits_per_second", 9.4e8).factor, 1e-6);
        assert_eq!(scale("latency_p99_us", 25_000.0).unit, "ms");
        assert_eq!(scale("latency_p99_us", 250.0).unit, "µs");
        assert_eq!(scale("made_up", 1.0).label(), "made_up");
    }

    #[test]
    fn tick_labels_use_the_step_s_precision() {
        assert_eq!(tick_label(0.5, 0.5, 2.0), "0.5");
        assert_eq!(tick_label(2.0, 1.0, 2.0), "2");
        assert_eq!(tick_label(250_000.0, 50_000.0, 300_000.0), "250k");
        assert_eq!(tick_label(1.5e6, 5e5, 2e7), "1.5M");
        assert_eq!(tick_label(0.0, 1e6, 5e6), "0");
        assert_eq!(tick_label(-0.0, 0.1, 1.0), "0.0");
    }
}
