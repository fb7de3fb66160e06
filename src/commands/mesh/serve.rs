//! `fathom serve --mesh FILE`: the agent runs its own share of the mesh beside serving tests:
//! the tests it is the source of, each booked at both ends (its own slot table here, the
//! target's over the protocol), kept in its store, and served to `fathom mesh status
//! --agents` as its results.

use super::key::key;
use super::record::Ledger;
use super::runner::{say, Runner, Setup};
use super::status;
use crate::agent::MeshShare;
use crate::commands::metrics::MeshSink;
use crate::Failure;
use fathom_mesh::sink::{NoSink, Sink};
use fathom_mesh::Mesh;
use fathom_metrics::MeshMetrics;
use fathom_store::Store;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// What `serve --mesh` runs with.
pub struct Share<'a> {
    /// The mesh file.
    pub file: &'a Path,
    /// What it says.
    pub mesh: Mesh,
    /// The agent's metrics registry (`--metrics`), which the share's figures go to.
    pub metrics: Option<Arc<MeshMetrics>>,
    /// This agent's member name (default: the host's name).
    pub member: Option<&'a str>,
    /// The agent's own key file (`--key-file`), which reaches the other members' agents too;
    /// else the mesh file's `key_file`.
    pub key_file: Option<&'a Path>,
    /// This agent's slot table and results.
    pub share: Arc<MeshShare>,
    /// Where its results go.
    pub store: PathBuf,
}

/// Checks this agent's place in the mesh, then runs its share on a thread of its own
/// and serves its results to `MeshResults`.
pub fn start(s: Share<'_>) -> Result<(), Failure> {
    let mesh = s.mesh;
    let key = key(s.key_file.map(Path::to_path_buf).as_ref(), &mesh, s.file)?;
    let me = match s.member {
        Some(m) => m.to_string(),
        None => fathom_engine::measure::host::host_info().hostname,
    };
    let open = |p: &Path| Store::open(p).map_err(|e| Failure::Runtime(e.to_string()));
    let counts = Arc::new(Mutex::new(Vec::new()));
    // Where the mesh's figures go besides the store: the agent's registry with `--metrics`.
    let sink: Arc<dyn Sink> = match s.metrics {
        Some(m) => Arc::new(MeshSink::new(m)),
        None => Arc::new(NoSink),
    };
    let argv = ["serve", "--mesh", &s.file.display().to_string()].map(String::from);
    let setup = Setup {
        ledger: Ledger::new(&mesh, open(&s.store)?, &argv, sink.clone()),
        mesh: mesh.clone(),
        key,
        local: Some((me.clone(), s.share.clone())),
        sink,
        stop: Arc::new(AtomicBool::new(false)),
        counts: counts.clone(),
    };
    let mut runner = Runner::new(setup)?;
    let path = s.store.clone();
    s.share.serve_results(Box::new(move || {
        let counts = counts.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let now = crate::method::iterate::now_unix_s();
        let doc = Store::open(&path)
            .map_err(|e| Failure::Runtime(e.to_string()))
            .and_then(|st| status::from_store(&mesh, &st, Some(&counts), Some(&me), now));
        match doc {
            Ok(d) => serde_json::to_string(&d).unwrap_or_default(),
            Err(e) => serde_json::json!({ "error": say(&e) }).to_string(),
        }
    }));
    eprintln!(
        "fathom serve: running its share of mesh {}",
        s.file.display()
    );
    std::thread::Builder::new()
        .name("fathom-mesh".into())
        .spawn(move || {
            if let Err(e) = runner.run(None) {
                eprintln!("fathom serve: the mesh stopped: {}", say(&e));
            }
        })
        .map(drop)
        .map_err(|e| Failure::Runtime(format!("cannot start the mesh: {e}")))
}
