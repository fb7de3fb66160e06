//! Checking advice by measurement (`fathom doctor --run N --verify`): which change a finding
//! names ([`step`]: a fathom option to re-run the test with, or a system command that is only
//! printed), the stored command with that option in place ([`with_option`]), and the ratio of
//! the figure after to before with its confidence interval ([`ratio_ci`]).

use fathom_report::model::Advice;
use fathom_report::stats::{describe, t_quantile};

/// The fathom options a finding's change may start with that take a value.
const VALUED: &[&str] = &["--buffer", "--cipher", "--io", "--parallel", "-P", "--cc"];
/// The fathom options a finding's change may start with that are flags.
const FLAGS: &[&str] = &["--nodelay", "--quickack", "--ktls"];

/// What verifying a finding takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Re-run the test with this fathom option (and its value, if it takes one).
    Option {
        /// The option, as typed (`--buffer`).
        flag: String,
        /// Its value (`2048K`), if it takes one.
        value: Option<String>,
    },
    /// A change to the system (a sysctl, an ethtool setting): printed, never applied outside
    /// a lab namespace.
    System(String),
    /// Nothing that one re-run can check (find a lossy hop, a faster disk).
    Nothing,
}

/// The change finding `a` names, read from the start of its `change` (the advisor writes a
/// fathom option first when the change is one, and a command first when it is a system change).
pub fn step(a: &Advice) -> Step {
    let mut words = a.change.split_whitespace();
    let Some(first) = words.next() else {
        return Step::Nothing;
    };
    if FLAGS.contains(&first) {
        return Step::Option {
            flag: first.to_string(),
            value: None,
        };
    }
    if VALUED.contains(&first) {
        return match words.next() {
            Some(v) if !v.starts_with('-') => Step::Option {
                flag: first.to_string(),
                value: Some(v.trim_end_matches([',', ';']).to_string()),
            },
            _ => Step::Nothing,
        };
    }
    if matches!(
        first,
        "sysctl" | "ethtool" | "echo" | "ip" | "cpupower" | "ulimit"
    ) {
        let command = a.change.split("   (").next().unwrap_or(&a.change);
        let command = command.split(" (").next().unwrap_or(command);
        return Step::System(command.trim().to_string());
    }
    Step::Nothing
}

/// `args` (a command as typed after `fathom`) with `flag` set to `value` (or present, for a
/// flag): every earlier `flag VALUE`, `flag=VALUE` (and `-P N` or `--parallel N` for either)
/// taken out, the new one added at the end.
pub fn with_option(args: &[String], flag: &str, value: Option<&str>) -> Vec<String> {
    let names: &[&str] = match flag {
        "-P" | "--parallel" => &["-P", "--parallel"],
        f => std::slice::from_ref(match VALUED.iter().chain(FLAGS).find(|k| **k == f) {
            Some(k) => k,
            None => return args.to_vec(),
        }),
    };
    let mut out = Vec::with_capacity(args.len() + 2);
    let mut skip_value = false;
    for a in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        if names.contains(&a.as_str()) {
            skip_value = value.is_some();
            continue;
        }
        if names.iter().any(|n| a.starts_with(&format!("{n}="))) {
            continue;
        }
        out.push(a.clone());
    }
    out.push(flag.to_string());
    out.extend(value.map(str::to_string));
    out
}

/// The ratio after / before of the means, with its confidence interval at `level`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioCi {
    /// Mean after / mean before.
    pub ratio: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// Its level, 0..1.
    pub level: f64,
}

/// The ratio of `after`'s mean to `before`'s with its interval by the delta method: the
/// ratio's relative variance is the sum of the two means' relative variances, with Student's
/// t at the Welch-Satterthwaite degrees of freedom; a ratio is never negative, so the low end
/// is cut at 0 (a wide interval then says the runs were too noisy to tell). `None` with fewer
/// than two values on a side or a mean of 0 before.
pub fn ratio_ci(before: &[f64], after: &[f64], level: f64) -> Option<RatioCi> {
    if before.len() < 2 || after.len() < 2 {
        return None;
    }
    let (b, a) = (describe(before, level), describe(after, level));
    if b.mean <= 0.0 || !b.mean.is_finite() || !a.mean.is_finite() {
        return None;
    }
    let ratio = a.mean / b.mean;
    let rel = |s: &fathom_report::stats::Stat, n: usize| {
        let m = s.mean.abs().max(f64::MIN_POSITIVE);
        (s.stddev / m).powi(2) / n as f64
    };
    let (vb, va) = (rel(&b, before.len()), rel(&a, after.len()));
    let var = va + vb;
    let df = match var > 0.0 {
        true => {
            var.powi(2)
                / (vb.powi(2) / (before.len() - 1) as f64 + va.powi(2) / (after.len() - 1) as f64)
        }
        false => (before.len() + after.len() - 2) as f64,
    };
    let half = t_quantile(level, df) * ratio * var.sqrt();
    Some(RatioCi {
        ratio,
        low: (ratio - half).max(0.0),
        high: ratio + half,
        level,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn advice(change: &str) -> Advice {
        Advice {
            change: change.into(),
            ..Advice::default()
        }
    }

    #[test]
    fn the_change_names_an_option_a_command_or_nothing() {
        let buf = advice("--buffer 2048K (at least the BDP; raise net.core.rmem_max)");
        assert_eq!(
            step(&buf),
            Step::Option {
                flag: "--buffer".into(),
                value: Some("2048K".into())
            }
        );
        assert_eq!(
            step(&advice("--nodelay (TCP_NODELAY; or --quickack)")),
            Step::Option {
                flag: "--nodelay".into(),
                value: None
            }
        );
        assert_eq!(
            step(&advice(
                "--cipher aes-128-gcm (cheapest with AES instructions)"
            )),
            Step::Option {
                flag: "--cipher".into(),
                value: Some("aes-128-gcm".into())
            }
        );
        assert_eq!(
            step(&advice(
                "sysctl -w net.ipv4.tcp_rmem='4096 131072 67108864' (or set --buffer)"
            )),
            Step::System("sysctl -w net.ipv4.tcp_rmem='4096 131072 67108864'".into())
        );
        assert_eq!(step(&advice("find and fix the lossy hop")), Step::Nothing);
    }

    #[test]
    fn the_option_replaces_every_earlier_one() {
        let args: Vec<String> = ["stream", "--buffer", "48K", "-t", "3", "--buffer=1M"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            with_option(&args, "--buffer", Some("2048K")),
            ["stream", "-t", "3", "--buffer", "2048K"]
        );
        let args: Vec<String> = ["rr", "--nodelay", "-P", "2"].map(String::from).to_vec();
        assert_eq!(
            with_option(&args, "--nodelay", None),
            ["rr", "-P", "2", "--nodelay"]
        );
        assert_eq!(
            with_option(&args, "--parallel", Some("4")),
            ["rr", "--nodelay", "--parallel", "4"]
        );
    }

    #[test]
    fn the_ratio_and_its_interval() {
        let r = ratio_ci(&[100.0, 100.0, 100.0], &[200.0, 200.0, 200.0], 0.95).unwrap();
        assert_eq!((r.ratio, r.low, r.high), (2.0, 2.0, 2.0));
        let r = ratio_ci(&[90.0, 100.0, 110.0], &[180.0, 200.0, 220.0], 0.95).unwrap();
        assert!((r.ratio - 2.0).abs() < 1e-12);
        assert!(r.low < 2.0 && r.high > 2.0 && r.low > 1.0, "{r:?}");
        assert!(ratio_ci(&[1.0], &[2.0, 2.0], 0.95).is_none());
        let noisy = ratio_ci(&[0.0, 356.0, 656.0], &[1894.0, 840.0, 468.0], 0.95).unwrap();
        assert_eq!(noisy.low, 0.0, "never below 0: {noisy:?}");
        assert!(ratio_ci(&[0.0, 0.0], &[2.0, 2.0], 0.95).is_none());
    }
}
