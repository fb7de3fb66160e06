//! Validating a sweep: its axes, every combination of their values, and each point's command
//! line parsed into a plan by the test's own parser.

use super::error::{AxisError, PointError};
use super::plan::{PointPlan, SweepPlan, PSEUDO};
use crate::cli::{common::CommonArgs, Cli, Command};
use crate::method::iterate::Rule;
use crate::Failure;
use clap::parser::ValueSource;
use clap::{ArgAction, CommandFactory, Parser};
use fathom_proto::plan::TestPlan;
use fathom_report::series::{Axis, Param};

/// `name=v1,v2,...` as an axis.
pub fn parse_axis(s: &str) -> Result<Axis, AxisError> {
    let (name, values) = s
        .split_once('=')
        .ok_or_else(|| AxisError::NotAnAxis(s.into()))?;
    let name = name.trim().trim_start_matches('-').to_string();
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if name.is_empty() || values.is_empty() {
        return Err(AxisError::Empty(s.into()));
    }
    Ok(Axis { name, values })
}

/// Every combination of the axes' values, the last axis varying fastest.
pub fn combinations(axes: &[Axis]) -> Vec<Vec<Param>> {
    let mut out = vec![Vec::new()];
    for a in axes {
        out = out
            .into_iter()
            .flat_map(|prefix: Vec<Param>| {
                a.values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push(Param {
                        name: a.name.clone(),
                        value: v.clone(),
                    });
                    p
                })
            })
            .collect();
    }
    out
}

/// Validates a sweep of `kind` with shared options `base`: every axis names an option of the
/// test (or a pseudo-option) not already given in `base`, and every point parses into a plan.
pub fn prepare(
    kind: &str,
    base: &[String],
    axes: Vec<Axis>,
    rule: Option<Rule>,
) -> Result<SweepPlan, Failure> {
    let usage = Failure::Usage;
    let cmd = Cli::command();
    let sub = cmd
        .find_subcommand(kind)
        .ok_or_else(|| usage(format!("'{kind}' is not a test that can be swept")))?;
    let mut seen = Vec::new();
    for a in &axes {
        if seen.contains(&a.name) {
            return Err(usage(format!("--vary {}: given twice", a.name)));
        }
        seen.push(a.name.clone());
        if !PSEUDO.contains(&a.name.as_str()) {
            find_arg(sub, &a.name)?;
        }
    }
    let given = base_matches(kind, base)?;
    for a in axes.iter().filter(|a| !PSEUDO.contains(&a.name.as_str())) {
        let arg = find_arg(sub, &a.name)?;
        if given.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine) {
            return Err(usage(format!(
                "--vary {0}: the option is also given as --{0}; give it in one place",
                a.name
            )));
        }
    }
    let mut points = Vec::new();
    let mut first_common = None;
    for params in combinations(&axes) {
        let mut args = vec![kind.to_string()];
        args.extend(base.iter().cloned());
        for p in params.iter().filter(|p| !PSEUDO.contains(&p.name.as_str())) {
            let arg = find_arg(sub, &p.name)?;
            args.extend(option_args(arg, p)?);
        }
        if let Some(p) = params.iter().find(|p| p.name == "rtt") {
            crate::cli::units::parse_duration(&p.value)
                .map_err(|e| usage(format!("--vary rtt: {e}")))?;
        }
        if let Some(p) = params.iter().find(|p| p.name == "rate") {
            format!("rate={}", p.value)
                .parse::<fathom_wan::LinkParams>()
                .map_err(|e| usage(format!("--vary rate: {e}")))?;
        }
        let (plan, common) = parse_point(&args).map_err(|e| {
            usage(format!(
                "at {}: {e}",
                fathom_report::table_series::params_text(&fathom_report::series::Point {
                    params: params.clone(),
                    ..Default::default()
                })
            ))
        })?;
        first_common.get_or_insert(common);
        points.push(PointPlan { params, args, plan });
    }
    let common = first_common.ok_or_else(|| usage("--vary: nothing to run".into()))?;
    let rule = rule.unwrap_or(match common.iterations {
        Some((max, min)) => Rule {
            max,
            min,
            confidence: common.confidence,
        },
        None => Rule::ONCE,
    });
    Ok(SweepPlan {
        kind: kind.to_string(),
        base: base.to_vec(),
        axes,
        points,
        rule,
        common,
    })
}

/// The option `name` of a test command: its long name, or its one-letter short name.
fn find_arg<'a>(sub: &'a clap::Command, name: &str) -> Result<&'a clap::Arg, Failure> {
    let mut chars = name.chars();
    let short = match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    };
    sub.get_arguments()
        .find(|a| a.get_long() == Some(name) || (short.is_some() && a.get_short() == short))
        .filter(|a| varies_the_plan(a))
        .ok_or_else(|| {
            let mut known: Vec<&str> = sub
                .get_arguments()
                .filter(|a| varies_the_plan(a))
                .filter_map(|a| a.get_long())
                .collect();
            known.extend(PSEUDO);
            Failure::Usage(format!(
                "--vary {name}: 'fathom {}' has no such option; it can vary: {}",
                sub.get_name(),
                known.join(", ")
            ))
        })
}

/// Options that say where a test runs, how it is repeated, printed or stored, rather than what
/// it measures: a sweep cannot vary them.
const NOT_VARIED: &[&str] = &[
    "server",
    "clients",
    "lab",
    "key-file",
    "json",
    "csv",
    "quiet",
    "per-host",
    "iterations",
    "confidence",
    "agents-from",
    "expect",
    "min-agents",
    "discovery-timeout",
    "server-index",
    "store",
    "no-store",
    "help",
];

/// True for an option a sweep may vary: one the test's plan takes.
fn varies_the_plan(a: &clap::Arg) -> bool {
    !a.is_positional() && !a.is_hide_set() && !a.get_long().is_some_and(|l| NOT_VARIED.contains(&l))
}

/// The arguments that set `arg` to the point's value: the bare flag for on, nothing for off.
fn option_args(arg: &clap::Arg, p: &Param) -> Result<Vec<String>, Failure> {
    let flag = match arg.get_long() {
        Some(l) => format!("--{l}"),
        None => format!("-{}", arg.get_short().unwrap_or('?')),
    };
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        return match p.value.as_str() {
            "on" | "true" | "yes" | "1" => Ok(vec![flag]),
            "off" | "false" | "no" | "0" => Ok(Vec::new()),
            v => Err(Failure::Usage(format!(
                "--vary {}: '{v}' is not on or off ({flag} is a switch)",
                p.name
            ))),
        };
    }
    Ok(vec![format!("{flag}={}", p.value)])
}

/// The base options parsed alone, to see which the user gave.
fn base_matches(kind: &str, base: &[String]) -> Result<clap::ArgMatches, Failure> {
    let mut argv = vec!["fathom".to_string(), kind.to_string()];
    argv.extend(base.iter().cloned());
    let m = Cli::command()
        .try_get_matches_from(argv)
        .map_err(|e| Failure::Usage(first_line(&e)))?;
    m.subcommand()
        .map(|(_, s)| s.clone())
        .ok_or_else(|| Failure::Usage(format!("'{kind}' is not a test")))
}

/// A point's arguments parsed and validated into a plan.
fn parse_point(args: &[String]) -> Result<(TestPlan, CommonArgs), PointError> {
    let argv = std::iter::once("fathom".to_string()).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| PointError::Usage(first_line(&e)))?;
    match cli.command {
        Command::Test(t) => Ok((t.plan()?, t.run_common()?)),
        _ => Err(PointError::NotATest),
    }
}

fn first_line(e: &clap::Error) -> String {
    e.render()
        .to_string()
        .lines()
        .next()
        .unwrap_or("bad usage")
        .trim_start_matches("error: ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(s: &str) -> Axis {
        parse_axis(s).unwrap()
    }

    #[test]
    fn points_come_in_a_stable_order_with_the_last_axis_fastest() {
        let pts = combinations(&[axis("buffer=16K,64K"), axis("parallel=1,10")]);
        let text: Vec<String> = pts
            .iter()
            .map(|p| p.iter().map(Param::to_string).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            text,
            [
                "buffer=16K parallel=1",
                "buffer=16K parallel=10",
                "buffer=64K parallel=1",
                "buffer=64K parallel=10"
            ]
        );
        assert_eq!(combinations(&[]).len(), 1);
    }

    #[test]
    fn axes_parse_and_bad_ones_say_why() {
        assert_eq!(axis("--size=4, 40").values, ["4", "40"]);
        assert!(parse_axis("buffer")
            .unwrap_err()
            .to_string()
            .contains("OPTION=V1,V2"));
        assert!(parse_axis("buffer=").is_err());
    }

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn usage_of(r: Result<SweepPlan, Failure>) -> String {
        match r {
            Err(Failure::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn every_point_is_a_validated_plan_and_switches_take_on_off() {
        let sp = prepare(
            "rr",
            &args(&["-t", "1s"]),
            vec![axis("size=4,1460"), axis("quickack=on,off")],
            None,
        )
        .unwrap();
        assert_eq!(sp.points.len(), 4);
        assert_eq!(
            sp.points[0].args,
            args(&["rr", "-t", "1s", "--size=4", "--quickack"])
        );
        assert_eq!(sp.points[1].args, args(&["rr", "-t", "1s", "--size=4"]));
        assert!(sp.points[0].plan.socket.quickack);
        assert!(!sp.points[1].plan.socket.quickack);
        let p = prepare("stream", &[], vec![axis("P=1,2")], None).unwrap();
        assert_eq!(p.points[1].args, args(&["stream", "--parallel=2"]));
    }

    #[test]
    fn bad_sweeps_are_refused_before_anything_runs() {
        assert!(
            usage_of(prepare("stream", &[], vec![axis("bufer=1K")], None))
                .contains("it can vary: ")
        );
        assert!(usage_of(prepare(
            "stream",
            &args(&["--buffer", "1K"]),
            vec![axis("buffer=2K")],
            None
        ))
        .contains("give it in one place"));
        assert!(
            usage_of(prepare("stream", &[], vec![axis("buffer=1x")], None))
                .contains("at buffer=1x")
        );
        assert!(
            usage_of(prepare("rr", &[], vec![axis("quickack=maybe")], None)).contains("on or off")
        );
        assert!(
            usage_of(prepare("stream", &[], vec![axis("rtt=abc")], None)).contains("--vary rtt")
        );
        assert!(
            usage_of(prepare("stream", &[], vec![axis("P=1"), axis("P=2")], None))
                .contains("twice")
        );
        for name in ["quiet", "iterations", "per-host", "q", "server", "store"] {
            let m = usage_of(prepare(
                "stream",
                &[],
                vec![axis(&format!("{name}=1,2"))],
                None,
            ));
            assert!(m.contains("has no such option"), "{name}: {m}");
            let offered = m.split("it can vary: ").nth(1).unwrap_or_default();
            for never in ["quiet", "iterations", "per-host", "server", "store", "json"] {
                let listed = offered.split(", ").any(|o| o == never);
                assert!(!listed, "--vary offers {never}: {m}");
            }
        }
    }
}
