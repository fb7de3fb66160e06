//! `fathom mesh`: read a mesh file ([`load`]), show its schedule (`check`), run it from this
//! host (`run`), show its status (`status`) and write its HTML page (`report`). `fathom serve --mesh` runs an agent's share
//! with the same loop ([`serve`]).

mod ends;
mod execute;
pub mod flags;
mod key;
mod members;
mod record;
mod report;
mod runner;
mod serve;
pub mod status;

pub use serve::{start as serve, Share};

use crate::cli::mesh::{CheckArgs, MeshArgs, MeshCommand, ReportArgs, RunArgs, StatusArgs};
use crate::Failure;
use fathom_engine::small_file::read_small;
use fathom_mesh::file::MAX_FILE;
use fathom_mesh::schedule::Scheduler;
use fathom_mesh::sink::{NoSink, Sink};
use fathom_mesh::spec::{Members, Mesh};
use fathom_store::Store;
use key::key;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most malloc arenas an agent running a mesh keeps.
#[cfg(target_env = "gnu")]
const ARENAS: libc::c_int = 2;

/// Caps glibc's malloc arenas in an agent that runs a mesh all the time, before its threads
/// start. Each mesh test runs on a thread of its own, and glibc gives a thread that meets
/// contention an arena of its own, up to 8 per CPU, each keeping its freed memory: an agent
/// probing 10 peers every 30 s grew from 17 to 28 MB of RSS over six minutes before it levelled
/// off; with two arenas it stayed within 19-21 MB at ten times that rate, at no more CPU
/// (bench/RESULTS.md, "What a mesh agent costs"). The data path allocates its buffers once, so
/// the arenas' contention does not reach it.
pub fn cap_arenas() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt takes two integers and changes only the allocator's tuning.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}

/// `fathom mesh`.
pub fn run(a: &MeshArgs, argv: &[String]) -> Result<(), Failure> {
    match &a.command {
        MeshCommand::Check(c) => check(c),
        MeshCommand::Run(r) => run_mesh(r, argv),
        MeshCommand::Status(s) => show_status(s),
        MeshCommand::Report(r) => write_report(r),
    }
}

/// Reads and checks the mesh file at `path`: bad usage (exit 2) at FILE:LINE:COLUMN.
pub fn load(path: &Path) -> Result<Mesh, Failure> {
    let name = path.display().to_string();
    let bytes = read_small(path, MAX_FILE as u64 + 1)
        .map_err(|e| Failure::Usage(format!("{name}: {e}")))?;
    let text =
        String::from_utf8(bytes).map_err(|_| Failure::Usage(format!("{name}: not UTF-8 text")))?;
    fathom_mesh::file::parse(&name, &text, &flags::CliCommands)
        .map_err(|e| Failure::Usage(e.to_string()))
}

/// `fathom mesh check`: the members, the tests and the load the schedule makes.
fn check(a: &CheckArgs) -> Result<(), Failure> {
    let mesh = load(&a.file)?;
    let names: Vec<String> = match &mesh.members {
        Members::Listed(l) => l.iter().map(|m| m.name.clone()).collect(),
        Members::Found { refresh_ns, .. } => {
            println!(
                "mesh {}: members found by discovery, looked at again every {} s; found now:",
                mesh.name,
                refresh_ns / 1_000_000_000
            );
            // Checking a file away from its source (a cluster's API, say) checks the file.
            members::Roster::of(&mesh).map_or_else(
                |e| {
                    println!("  (cannot look here: {})", runner::say(&e));
                    Vec::new()
                },
                |r| r.names(),
            )
        }
    };
    let sched = Scheduler::new(mesh.seed, mesh.peers, mesh.tests.clone(), &names, None, 0);
    println!(
        "mesh {}: {} members, {} latency peers each, {} jobs",
        mesh.name,
        names.len(),
        mesh.peers.min(names.len().saturating_sub(1)),
        sched.jobs()
    );
    for t in &mesh.tests {
        println!(
            "  {}: `fathom {}` every {} s, {}, {} targets, slot {} s (jitter {} s, slip {} s), judged by {}",
            t.name,
            t.args.join(" "),
            t.every_ns as f64 / 1e9,
            t.class,
            t.targets.name(),
            t.hold_ns as f64 / 1e9,
            t.jitter_ns as f64 / 1e9,
            t.slip_ns as f64 / 1e9,
            t.figure.metric
        );
    }
    let a = &mesh.alert;
    println!(
        "  alerts: raised after {} runs outside the {:.0}% band (at least ±{:.0}%), cleared after {} inside; baseline of {} runs (judged from {})",
        a.after,
        a.level * 100.0,
        a.tolerance * 100.0,
        a.clear,
        a.baseline,
        a.min_baseline
    );
    Ok(())
}

/// `fathom mesh run`: the whole mesh from here until `--for` ends or Ctrl-C, then its status.
fn run_mesh(a: &RunArgs, argv: &[String]) -> Result<(), Failure> {
    let mesh = load(&a.file)?;
    let key = key(a.key_file.as_ref(), &mesh, &a.file)?;
    let path = a.store.clone().unwrap_or_else(fathom_store::default_path);
    let store = Store::open(&path).map_err(|e| Failure::Runtime(e.to_string()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed));
    let counts = Arc::new(Mutex::new(Vec::new()));
    // Where the mesh's figures go besides the store: with `--metrics ADDR`, a registry served
    // there for Prometheus.
    let sink: Arc<dyn Sink> = match a.metrics {
        Some(addr) => super::metrics::start_mesh(addr, mesh.peers)?,
        None => Arc::new(NoSink),
    };
    let setup = runner::Setup {
        ledger: record::Ledger::new(&mesh, store, argv, sink.clone()),
        mesh: mesh.clone(),
        key,
        local: None,
        sink,
        stop,
        counts: counts.clone(),
    };
    eprintln!(
        "fathom mesh: running {} ({} tests) from here; results in {}",
        mesh.name,
        mesh.tests.len(),
        path.display()
    );
    let mut r = runner::Runner::new(setup)?;
    let until = a
        .run_for
        .map(|ns| Instant::now() + Duration::from_nanos(ns));
    r.run(until)?;
    let store = Store::open(&path).map_err(|e| Failure::Runtime(e.to_string()))?;
    let counts = counts.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let s = status::from_store(&mesh, &store, Some(&counts), None, now_unix_s())?;
    print(&s, a.json);
    Ok(())
}

/// `fathom mesh status`.
fn show_status(a: &StatusArgs) -> Result<(), Failure> {
    let mesh = load(&a.file)?;
    let s = if a.agents {
        let key = key(a.key_file.as_ref(), &mesh, &a.file)?;
        status::from_agents(&mesh, key.as_deref(), now_unix_s())?
    } else {
        let store = Store::open(a.store.resolved()).map_err(|e| Failure::Runtime(e.to_string()))?;
        status::from_store(&mesh, &store, None, None, now_unix_s())?
    };
    print(&s, a.json);
    Ok(())
}

/// `fathom mesh report`: the file first (a bad one is bad usage), then the store, which must
/// exist.
fn write_report(a: &ReportArgs) -> Result<(), Failure> {
    let mesh = load(&a.file)?;
    let store = super::show::open_existing(&a.store)?;
    report::write(a, &mesh, &store, now_unix_s())
}

/// The status on stdout: the matrix, or one JSON document.
fn print(s: &fathom_mesh::status::Status, json: bool) {
    let text = match json {
        true => serde_json::to_string_pretty(s).unwrap_or_default() + "\n",
        false => fathom_mesh::status::matrix::render(s),
    };
    super::output::write_stdout(text.as_bytes());
}

/// Now, Unix seconds.
fn now_unix_s() -> f64 {
    crate::method::iterate::now_unix_s()
}
