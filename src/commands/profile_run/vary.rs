//! `profile run FILE --vary NAME=V1,V2,...`: the profile run once per value of one of its
//! variables (as `--set NAME=V`), each point's groups stored as any run's (their command
//! naming the point), then a table of each
//! point's totals (and its responsiveness, for a profile with probe groups). Every point is
//! read and validated before the first one runs.

use super::{profile_reports, rrul, totals, Totals};
use crate::cli::profile::ProfileFile;
use crate::cli::profile_run::ProfileRunArgs;
use crate::commands::output::write_stdout;
use crate::commands::profile_file::load;
use crate::Failure;
use serde::Serialize;
use std::process::ExitCode;

/// One point of the sweep, as run.
#[derive(Serialize, Debug)]
pub struct Point {
    /// The variable's value.
    pub value: String,
    /// The profile's totals at this value.
    pub totals: Totals,
    /// Responsiveness under load, round trips per minute (a profile with probe groups).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpm: Option<f64>,
}

/// What `profile run --vary --json` prints.
#[derive(Serialize)]
struct Document<'a> {
    profile: &'a str,
    vary: &'a str,
    points: &'a [Point],
}

/// Runs `file` once per value of `name` and prints each point's totals; exit 1 when a group
/// of any point failed.
pub fn run_vary(
    file: &ProfileFile,
    args: &ProfileRunArgs,
    (name, values): &(String, Vec<String>),
) -> Result<ExitCode, Failure> {
    if args.plot.is_some() {
        return Err(Failure::Usage(
            "--plot draws one run's timeline; it does not go with --vary".into(),
        ));
    }
    let plans = values
        .iter()
        .map(|v| {
            let mut sets: Vec<(String, String)> = file
                .sets
                .iter()
                .filter(|(n, _)| n != name)
                .cloned()
                .collect();
            sets.push((name.clone(), v.clone()));
            load(&ProfileFile {
                file: file.file.clone(),
                sets,
            })
            .map_err(|e| Failure::Usage(format!("--vary {name}={v}: {}", message(e))))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut points = Vec::with_capacity(plans.len());
    for (plan, value) in plans.iter().zip(values) {
        let point = ProfileRunArgs {
            point: Some(format!("{name}={value}")),
            ..args.clone()
        };
        let runs = profile_reports(plan, &point)?;
        points.push(Point {
            value: value.clone(),
            totals: totals(&runs),
            rpm: rrul::rrul(plan, &runs).and_then(|r| r.rpm),
        });
    }
    let profile = plans.first().map_or("", |p| p.name.as_str());
    if args.json {
        let doc = Document {
            profile,
            vary: name,
            points: &points,
        };
        let mut text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::Runtime(format!("cannot write the sweep's JSON: {e}")))?;
        text.push('\n');
        write_stdout(text.as_bytes());
    } else {
        write_stdout(table(profile, name, &points).as_bytes());
    }
    let failed = points.iter().any(|p| p.totals.failed > 0);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A failure's message without its kind.
fn message(e: Failure) -> String {
    match e {
        Failure::Usage(m) | Failure::Runtime(m) => m,
        Failure::Reported => "failed".into(),
    }
}

/// The sweep's table: a row per point.
fn table(profile: &str, name: &str, points: &[Point]) -> String {
    let mut s = format!(
        "profile {profile}, varying {name}\n{name:>12} {:>7} {:>7} {:>12} {:>14} {:>14} {:>10}\n",
        "groups", "failed", "iterations", "client sent", "client recv", "RPM"
    );
    for p in points {
        let t = &p.totals;
        let rpm = p.rpm.map_or("-".to_string(), |r| format!("{r:.0}"));
        s.push_str(&format!(
            "{:>12} {:>7} {:>7} {:>12} {:>14} {:>14} {:>10}\n",
            p.value, t.groups, t.failed, t.iterations, t.client_sent, t.client_received, rpm
        ));
    }
    s
}
