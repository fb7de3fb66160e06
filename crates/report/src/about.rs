//! What a run or a series was, in a few lines for the pages and plots made from it (as `fathom
//! show` tells it): its id, the command line as the user typed it (every option, e.g.
//! `--buffer 1M`; a sweep's or a study's for the runs they made) and the WAN links it crossed
//! with their parameters.

use crate::model::Report;
use crate::series::Series;

/// Run `id`'s lines: "run 42: fathom stream --server h2 --clients h1 --buffer 1M", then, for a
/// run made by a sweep or a study, "this point: fathom stream ... --buffer=64K" (its own
/// arguments), then one line per WAN link. `args` are the run's own arguments and `command` the
/// command line as typed (both without the program name); without either the test's echo
/// stands in.
pub fn run_lines(id: Option<i64>, args: &[String], command: &[String], r: &Report) -> Vec<String> {
    let name = id.map_or("run".to_string(), |i| format!("run {i}"));
    let typed = if command.is_empty() { args } else { command };
    let mut lines = vec![if typed.is_empty() {
        format!("{name}: {} to {}", r.test.kind, r.test.agent)
    } else {
        format!("{name}: {}", quoted(typed))
    }];
    if !command.is_empty() && !args.is_empty() && args != command {
        lines.push(format!("this point: {}", quoted(args)));
    }
    lines.extend(r.wan.iter().map(crate::table::wan_line));
    lines
}

/// A series' line: "series s7: fathom sweep stream --vary 'buffer=64K,1M' -t 5s". A series stored
/// before the command line was kept gets its command rebuilt from its kind, options and axes.
pub fn series_lines(s: &Series) -> Vec<String> {
    let name = s.id.as_deref().unwrap_or("series");
    let command = if !s.command.is_empty() {
        quoted(&s.command)
    } else if s.axes.is_empty() && !s.args.is_empty() {
        quoted(&s.args)
    } else {
        let mut typed = vec!["sweep".to_string(), s.kind.clone()];
        typed.extend(s.args.iter().cloned());
        for a in &s.axes {
            typed.push("--vary".into());
            typed.push(a.to_string());
        }
        quoted(&typed)
    };
    vec![format!("series {name}: {command}")]
}

/// `fathom ARGS`, each argument quoted as a shell would need it.
fn quoted(args: &[String]) -> String {
    let quoted =
        shlex::try_join(args.iter().map(String::as_str)).unwrap_or_else(|_| args.join(" "));
    format!("fathom {quoted}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Axis;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_sweeps_run_names_the_sweep_as_typed_then_its_point() {
        let r = crate::build(&crate::fake::run_data(1, false));
        let lines = run_lines(
            Some(42),
            &strings(&["rr", "-t", "1s", "--size=4"]),
            &strings(&[
                "sweep",
                "rr",
                "--vary",
                "size=4,64",
                "-t",
                "1s",
                "--omit",
                "1 s",
            ]),
            &r,
        );
        assert_eq!(
            lines,
            [
                "run 42: fathom sweep rr --vary 'size=4,64' -t 1s --omit '1 s'",
                "this point: fathom rr -t 1s '--size=4'",
            ]
        );
        let alone = strings(&["stream", "-P", "2"]);
        assert_eq!(
            run_lines(Some(1), &alone, &alone, &r),
            ["run 1: fathom stream -P 2"]
        );
    }

    #[test]
    fn a_series_footer_is_the_whole_command_with_its_kind() {
        let mut s = Series {
            id: Some("s3".into()),
            kind: "stream".into(),
            args: strings(&["-t", "5s"]),
            axes: vec![Axis {
                name: "buffer".into(),
                values: strings(&["64K", "1M"]),
            }],
            ..Series::default()
        };
        assert_eq!(
            series_lines(&s),
            ["series s3: fathom sweep stream -t 5s --vary 'buffer=64K,1M'"],
            "stored before the command line was kept: rebuilt, with its kind"
        );
        s.command = strings(&["study", "streams-to-line-rate", "--quick"]);
        assert_eq!(
            series_lines(&s),
            ["series s3: fathom study streams-to-line-rate --quick"]
        );
    }
}
