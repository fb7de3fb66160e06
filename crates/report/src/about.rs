//! What a run or a series was, in a few lines for the pages and plots made from it (as `fathom
//! show` tells it): its id, the command as it was typed (every option, e.g. `--buffer 1M`) and
//! the WAN links it crossed with their parameters.

use crate::model::Report;
use crate::series::Series;

/// Run `id`'s lines: "run 42: fathom stream --server h2 --clients h1 --buffer 1M", then one
/// line per WAN link. `args` are the arguments as typed (the command's name first); without
/// them the test's echo stands in.
pub fn run_lines(id: Option<i64>, args: &[String], r: &Report) -> Vec<String> {
    let name = id.map_or("run".to_string(), |i| format!("run {i}"));
    let command = if args.is_empty() {
        format!("{} to {}", r.test.kind, r.test.agent)
    } else {
        command(args)
    };
    let mut lines = vec![format!("{name}: {command}")];
    lines.extend(r.wan.iter().map(crate::table::wan_line));
    lines
}

/// A series' line: "series s7: fathom sweep stream --vary buffer=64K,1M -t 5s".
pub fn series_lines(s: &Series) -> Vec<String> {
    let name = s.id.as_deref().unwrap_or("series");
    let command = if s.args.is_empty() {
        s.kind.clone()
    } else {
        command(&s.args)
    };
    vec![format!("series {name}: {command}")]
}

/// `fathom ARGS`, each argument quoted as a shell would need it.
fn command(args: &[String]) -> String {
    let quoted =
        shlex::try_join(args.iter().map(String::as_str)).unwrap_or_else(|_| args.join(" "));
    format!("fathom {quoted}")
}
