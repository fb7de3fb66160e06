//! `--metrics ADDR`: the OpenMetrics endpoint beside the agent (`fathom serve`), and the seam the
//! mesh's glue calls for `fathom mesh run` and for a mesh run by `fathom serve`.

use crate::Failure;
use fathom_metrics::{AgentCounts, MeshMetrics};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How many peers per source get pair series when no mesh file says otherwise.
pub const DEFAULT_K: usize = 10;

/// Binds `addr` and serves `GET /metrics` from `metrics` on a thread of its own for the rest of
/// the process; says where on stderr (`{who}: metrics on http://ADDR/metrics`) and returns the
/// bound address.
pub fn start(
    addr: SocketAddr,
    metrics: &Arc<MeshMetrics>,
    who: &str,
) -> Result<SocketAddr, Failure> {
    let listener = TcpListener::bind(addr)
        .map_err(|e| Failure::Runtime(format!("--metrics: cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let stop = Arc::new(AtomicBool::new(false));
    fathom_metrics::serve(listener, metrics.clone(), stop)
        .map_err(|e| Failure::Runtime(format!("--metrics: cannot start serving: {e}")))?;
    eprintln!("{who}: metrics on http://{bound}/metrics");
    Ok(bound)
}

/// `fathom serve --metrics ADDR`: a registry of [`DEFAULT_K`] watching the agent's `counts`,
/// served at `addr`; the mesh, when there is one, records into the registry returned.
pub fn start_agent(addr: SocketAddr, counts: AgentCounts) -> Result<Arc<MeshMetrics>, Failure> {
    let metrics = Arc::new(MeshMetrics::new(DEFAULT_K));
    metrics.watch_agent(counts);
    start(addr, &metrics, "fathom serve")?;
    Ok(metrics)
}
