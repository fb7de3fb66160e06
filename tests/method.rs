//! The method commands end to end on the embedded agent: iterations with confidence intervals,
//! sweeps (order, validation, interruption and resume), and the store's readers: runs, show,
//! compare, plot and report. Each test keeps its own store in a temporary directory.

mod common;

use common::{fathom, item, json, run, run_ok, stderr, words};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A private store for one test.
struct Store {
    _dir: tempfile::TempDir,
    path: String,
}

impl Store {
    fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db").display().to_string();
        Store { _dir: dir, path }
    }

    /// `args` followed by `--store PATH`.
    fn run(&self, args: &[&str], secs: u64) -> std::process::Output {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--store", &self.path]);
        run(&all, secs)
    }

    /// [`Store::run`], asserting that fathom succeeded (its stderr in the message).
    fn run_ok(&self, args: &[&str], secs: u64) -> std::process::Output {
        let out = self.run(args, secs);
        assert!(out.status.success(), "{}", stderr(&out));
        out
    }
}

#[test]
fn iterations_report_a_confidence_interval_and_store_every_run() {
    let st = Store::new();
    let doc = json(&st.run_ok(&words("stream -t 0.3s -i 0.1s --iterations 3 --json"), 60));
    assert_eq!(doc["document"], "series");
    assert_eq!(doc["points"].as_array().unwrap().len(), 1);
    let p = &doc["points"][0];
    assert_eq!(p["runs"].as_array().unwrap().len(), 3);
    let bps = item(&p["metrics"], "name", "bits_per_second");
    assert_eq!(bps["n"], 3);
    let (lo, mean, hi) = (
        bps["ci_low"].as_f64().unwrap(),
        bps["mean"].as_f64().unwrap(),
        bps["ci_high"].as_f64().unwrap(),
    );
    assert!(lo <= mean && mean <= hi && mean > 0.0, "{bps}");
    assert!(bps["min"].as_f64().unwrap() <= bps["median"].as_f64().unwrap());

    let runs = json(&st.run(&["runs", "--json"], 10));
    assert_eq!(runs["runs"].as_array().unwrap().len(), 3);
    let id = p["runs"][0].as_i64().unwrap().to_string();
    let shown = json(&st.run(&["show", &id, "--json"], 10));
    assert_eq!(shown["test"]["kind"], "stream");
    assert!(shown["summary"]["bits_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn plots_and_reports_say_what_ran() {
    let st = Store::new();
    let args = words("stream -t 0.3s -i 0.1s --buffer 1M --iterations 2");
    let doc = json(&st.run_ok(&[&args[..], &["--json"]].concat(), 60));
    let series = doc["id"].as_str().unwrap().to_string();
    let run_id = doc["points"][0]["runs"][0].as_i64().unwrap().to_string();
    let typed = format!("fathom {} --json --store {}", args.join(" "), st.path);
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).display().to_string();

    // An iterated series plots run by run, its confidence intervals as error bars.
    st.run_ok(&["plot", &series, "-o", &file("s.svg")], 20);
    let svg = std::fs::read_to_string(file("s.svg")).unwrap();
    assert!(svg.contains("over 2 iterations"), "{svg}");
    assert!(svg.contains(&format!("series {series}: {typed}")), "{svg}");

    st.run_ok(&["plot", &run_id, "-o", &file("r.svg")], 20);
    let svg = std::fs::read_to_string(file("r.svg")).unwrap();
    assert!(svg.contains(&format!("run {run_id}: {typed}")), "{svg}");

    st.run_ok(&["report", &run_id, &series, "-o", &file("r.html")], 20);
    let page = std::fs::read_to_string(file("r.html")).unwrap();
    assert!(
        page.contains(&format!("<code>run {run_id}: {typed}</code>")),
        "the run's command"
    );
    assert!(page.contains("over 2 iterations"), "the series' chart");
}

#[test]
fn confidence_stops_early_once_the_interval_is_narrow() {
    let st = Store::new();
    let doc = json(&st.run_ok(
        &words("rr -t 0.2s -i 0.1s --iterations 10,2 --confidence 51,99% --json"),
        60,
    ));
    let runs = doc["points"][0]["runs"].as_array().unwrap().len();
    assert!((2..10).contains(&runs), "stopped after {runs}");
    assert_eq!(doc["primary_metric"], "transactions_per_second");
    assert_eq!(doc["points"][0]["target_met"], true);
}

#[test]
fn a_missed_confidence_target_is_said_and_one_run_has_no_interval() {
    let st = Store::new();
    let args = ["rr", "-t", "0.2s", "-i", "0.1s", "--iterations", "2"];
    let out = st.run(&[&args[..], &["--confidence", "99,0.0001%"]].concat(), 60);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(out.status.success(), "{err}");
    let first = err
        .lines()
        .find(|l| l.contains("iteration 1/2"))
        .unwrap_or_default();
    assert!(first.contains("no interval from one run"), "{err}");
    assert!(!first.contains('±'), "{err}");
    assert!(
        err.contains("target missed: ±") && err.contains("after 2 iterations"),
        "{err}"
    );
    assert!(text.contains("target missed at the test: ±"), "{text}");
    let runs = json(&st.run(&["runs", "--series", "--json"], 10));
    let id = format!("s{}", runs["series"][0]["id"]);
    let shown = json(&st.run(&["show", &id, "--json"], 10));
    assert_eq!(shown["points"][0]["target_met"], false, "{shown}");
    let plain = json(&st.run(&[&args[..], &["--json"]].concat(), 60));
    assert_eq!(plain["points"][0]["target_met"], serde_json::Value::Null);
}

#[test]
fn a_sweep_runs_every_point_in_order_and_the_readers_show_it() {
    let st = Store::new();
    let typed =
        words("sweep stream -t 0.3s -i 0.1s --vary write=64K,1M --vary parallel=1,2 --json");
    let doc = json(&st.run_ok(&typed, 90));
    let order: Vec<String> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}/{}", p["params"][0]["value"], p["params"][1]["value"]))
        .collect();
    assert_eq!(
        order,
        [
            "\"64K\"/\"1\"",
            "\"64K\"/\"2\"",
            "\"1M\"/\"1\"",
            "\"1M\"/\"2\""
        ]
    );
    assert_eq!(doc["complete"], true);
    let mut command = typed.to_vec();
    command.extend(["--store", &st.path]);
    assert_eq!(doc["command"], serde_json::json!(command), "as typed");
    let id = doc["id"].as_str().unwrap().to_string();

    let table = st.run(&["show", &id], 10);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("write") && text.contains("parallel") && text.contains("bit/s"),
        "{text}"
    );
    let series = json(&st.run(&["runs", "--series", "--json"], 10));
    assert_eq!(series["series"][0]["points"], 4);

    readers_show_the_sweep(&st, &doc, &id);
}

/// Plots of the sweep and of one run, the HTML report and a comparison of two points' runs,
/// each saying what ran.
fn readers_show_the_sweep(st: &Store, doc: &serde_json::Value, id: &str) {
    let dir = tempfile::tempdir().unwrap();
    for name in ["sweep.svg", "sweep.png"] {
        let path = dir.path().join(name).display().to_string();
        st.run_ok(&["plot", id, "-o", &path], 20);
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
    }
    let run_id = doc["points"][0]["runs"][0].as_i64().unwrap().to_string();
    let svg = dir.path().join("run.svg").display().to_string();
    st.run_ok(&["plot", &run_id, "--metric", "cwnd", "-o", &svg], 20);
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(
        drawn.contains(&format!("run {run_id}: fathom sweep stream -t 0.3s"))
            && drawn.contains("this point: fathom stream -t 0.3s"),
        "a point's footer names the sweep as typed, then the point: {drawn}"
    );
    let series_svg = dir.path().join("sweep.svg");
    let drawn = std::fs::read_to_string(series_svg).unwrap();
    assert!(
        drawn.contains(&format!("series {id}: fathom sweep stream -t 0.3s")),
        "the series' footer has its kind: {drawn}"
    );
    let html = dir.path().join("r.html").display().to_string();
    st.run_ok(&["report", id, &run_id, "-o", &html], 20);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg") && page.contains("the best point is"),
        "findings and plots"
    );
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "self-contained"
    );

    let other = doc["points"][3]["runs"][0].as_i64().unwrap().to_string();
    let cmp = json(&st.run(&["compare", &run_id, &other, "--json"], 10));
    let main = item(&cmp["rows"], "metric", "bits_per_second");
    assert_eq!(main["basis"], "intervals");
    // Three correlated intervals may be worth fewer than two samples: then no verdict, never a
    // verdict without its p.
    assert_eq!(
        main["p"].is_number(),
        main["significant"].is_boolean(),
        "{main}"
    );
}

#[test]
fn an_interrupted_sweep_resumes_without_rerunning_its_points() {
    let st = Store::new();
    let sweep = words("sweep rr -t 0.5s -i 0.1s --vary size=1,100,1000 --iterations 2");
    let args = [&sweep[..], &["--store", &st.path]].concat();
    interrupt_in_point_2(&args);
    let listed = json(&st.run(&["runs", "--series", "--json"], 10));
    assert_eq!(listed["series"][0]["complete"], false);
    let first = json(&st.run(&["show", "s1", "--json"], 10))["points"][0].clone();
    let stored = json(&st.run(&["runs", "--json"], 10));
    let mut kept: Vec<i64> = stored["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["series"]["point"] == 1 && r["error"].is_null())
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    kept.sort_unstable();
    assert!(
        !kept.is_empty(),
        "point 2's first iteration was stored: {stored}"
    );

    let mut resume: Vec<&str> = args.to_vec();
    resume.extend(["--resume", "--json"]);
    let out = run_ok(&resume, 60);
    let log = stderr(&out);
    assert!(
        log.contains("resuming series s1: 1 of 3 points done"),
        "{log}"
    );
    assert!(
        log.contains(&format!("kept {} finished iteration(s)", kept.len())),
        "{log}"
    );
    let doc = json(&out);
    assert_eq!(doc["id"], "s1");
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["points"].as_array().unwrap().len(), 3);
    assert_eq!(
        doc["points"][0], first,
        "the completed point was not re-run"
    );
    let runs: Vec<i64> = doc["points"][1]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_i64().unwrap())
        .collect();
    assert_eq!(runs.len(), 2, "{}", doc["points"][1]);
    assert_eq!(
        runs[..kept.len()],
        kept[..],
        "the finished iteration was kept"
    );
}

/// Runs the sweep `args` and interrupts it (Ctrl-C twice) during point 2's second iteration,
/// after its first has finished; checks that it exits 1.
fn interrupt_in_point_2(args: &[&str]) {
    let mut child = fathom()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = BufReader::new(child.stderr.take().unwrap());
    let started = Instant::now();
    let mut line = String::new();
    let mut seen = Vec::new();
    // Interrupt point 2 during its second iteration, after its first has finished.
    while !seen.iter().any(|l: &String| l.starts_with("[2/3]")) || !line.contains("iteration 1/2") {
        line.clear();
        assert!(
            log.read_line(&mut line).unwrap() > 0,
            "the sweep ended early: {seen:?}"
        );
        seen.push(line.clone());
        assert!(started.elapsed() < Duration::from_secs(60));
    }
    // Ctrl-C twice (the first lets the running test finish, the second aborts it).
    for _ in 0..2 {
        // SAFETY: interrupts the child we spawned, by its PID, as Ctrl-C would.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "an unfinished sweep exits 1");
}

#[test]
fn bad_method_options_are_usage_errors_before_anything_runs() {
    let st = Store::new();
    for (args, says) in [
        (vec!["sweep", "stream", "--vary", "bufer=1K"], "it can vary"),
        (
            vec!["sweep", "stream", "--buffer", "1K", "--vary", "buffer=2K"],
            "one place",
        ),
        (vec!["sweep", "rr", "--vary", "size=0"], "at size=0"),
        (
            vec!["stream", "--confidence", "99,5%"],
            "needs --iterations",
        ),
        (vec!["stream", "--iterations", "0"], "--iterations"),
        (
            vec!["stream", "--cpus", "999"],
            "--cpus: 999 is not between 1 and",
        ),
        (vec!["show", "x7"], "not a run id"),
        (vec!["study", "no-such"], "the studies are"),
        (
            vec!["sweep", "stream", "--vary", "rtt=10ms"],
            "run between lab hosts",
        ),
        (
            vec!["sweep", "stream", "--vary", "rate=100M"],
            "--vary rate sets the lab's WAN links",
        ),
        (
            vec!["sweep", "stream", "--vary", "rate=fast"],
            "--vary rate: ",
        ),
    ] {
        let out = st.run(&args, 10);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    let out = st.run(&["show", "99"], 10);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn a_plain_test_is_stored_where_fathom_store_points() {
    let st = Store::new();
    let out = fathom()
        .env("FATHOM_STORE", &st.path)
        .args(["stream", "-t", "0.2s", "-i", "0.1s"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        stderr(&out).contains(&format!("stored as run 1 in {}", st.path)),
        "{}",
        stderr(&out)
    );
    let list = String::from_utf8_lossy(&st.run(&["runs"], 10).stdout).into_owned();
    assert!(list.lines().nth(1).unwrap().starts_with("1 "), "{list}");
}
