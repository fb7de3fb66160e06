//! `fathom serve`: run an agent until killed.

use crate::agent::{Agent, AgentConfig};
use crate::cli::{read_key, ServeArgs};
use crate::Failure;
use fathom_engine::tls::Identity;

/// Runs the agent in the foreground.
pub fn run(a: &ServeArgs) -> Result<(), Failure> {
    if a.mesh.is_some() {
        super::mesh::cap_arenas();
    }
    let key = a.key_file.as_deref().map(read_key).transpose()?;
    if key.is_none() && !a.listen.ip().is_loopback() && !a.insecure {
        return Err(Failure::Usage(format!(
            "refusing to listen on {} without a key: pass --key-file, or --insecure to let any controller run tests",
            a.listen
        )));
    }
    let files_root = a
        .files_root
        .as_deref()
        .map(|d| {
            d.canonicalize()
                .map_err(|e| Failure::Usage(format!("--files-root {}: {e}", d.display())))
        })
        .transpose()?;
    let cfg = AgentConfig {
        files_root: files_root.clone(),
        key,
        max_duration_ns: a.max_duration,
        max_flows: a.max_flows,
        max_tests: a.max_tests,
        max_memory: a.max_memory,
        log: true,
        clock_shift_ns: a.test_clock_shift.map_or(0, |s| s as i64),
        ..AgentConfig::default()
    };
    // Without --cert/--key the certificate is made by the first TLS test (AgentConfig::
    // tls_server): making it here seeded aws-lc's random generator (40–75 ms of CPU) in every
    // agent, clear tests or not (bench/RESULTS.md, "Real paths, fifth session").
    if let (Some(cert), Some(key)) = (&a.cert, &a.key) {
        let identity = Identity::load(cert, key).map_err(|e| Failure::Usage(e.to_string()))?;
        let _ = cfg.identity.set(identity);
    }
    // The mesh file is read before any socket opens: a bad one exits 2 at FILE:LINE:COLUMN.
    let mesh = a.mesh.as_deref().map(super::mesh::load).transpose()?;
    let mesh_share = cfg.mesh.clone();
    let agent = Agent::bind(a.listen, cfg)
        .map_err(|e| Failure::Runtime(format!("cannot listen on {}: {e}", a.listen)))?;
    let addr = agent
        .local_addr()
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    eprintln!(
        "fathom serve: listening on {addr} (protocol v{})",
        fathom_proto::PROTOCOL_VERSION
    );
    let k = mesh.as_ref().map_or(super::metrics::DEFAULT_K, |m| m.peers);
    let metrics = a
        .metrics
        .map(|addr| super::metrics::start_agent(addr, agent.counts(), k))
        .transpose()?;
    if let Some(root) = &files_root {
        remove_stale_parts(root);
    }
    if let Some(port) = a.iperf3 {
        super::iperf3::start(a, port)?;
    }
    if let (Some(file), Some(mesh)) = (&a.mesh, mesh) {
        super::mesh::serve(super::mesh::Share {
            file,
            mesh,
            metrics,
            member: a.mesh_as.as_deref(),
            key_file: a.key_file.as_deref(),
            share: mesh_share,
            store: a
                .iperf3_store
                .clone()
                .unwrap_or_else(fathom_store::default_path),
        })?;
    }
    agent
        .serve()
        .map_err(|e| Failure::Runtime(format!("accept failed: {e}")))
}

/// Removes what copies interrupted by a killed agent left below the files root, saying so (after
/// the listening line, which launchers read first; before the first test is served).
fn remove_stale_parts(root: &std::path::Path) {
    match fathom_engine::remove_stale_file_parts(root) {
        Ok(gone) => {
            for p in gone {
                // Escaped: a file name may hold newlines or terminal controls.
                eprintln!(
                    "fathom: removed the stale partial copy {}",
                    root.join(p).display().to_string().escape_debug()
                );
            }
        }
        Err(e) => eprintln!("fathom: warning: looking for stale partial copies: {e}"),
    }
}
