//! `--metrics ADDR`: the OpenMetrics endpoint beside the agent (`fathom serve`) and beside a
//! mesh run from one controller (`fathom mesh run`), and [`MeshSink`], the adapter through
//! which a mesh's loop records into the registry (fathom-mesh knows only its `Sink` trait,
//! fathom-metrics only its registry; the binary joins them).

use crate::Failure;
use fathom_mesh::sink::{Outcome, Sink};
use fathom_metrics::{AgentCounts, MeshMetrics};
use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

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

/// `fathom serve --metrics ADDR`: a registry of `k` pair series per source (the mesh file's
/// `peers` under `--mesh`, else [`DEFAULT_K`]) watching the agent's `counts`, served at
/// `addr`; the mesh, when there is one, records into the registry returned.
pub fn start_agent(
    addr: SocketAddr,
    counts: AgentCounts,
    k: usize,
) -> Result<Arc<MeshMetrics>, Failure> {
    let metrics = Arc::new(MeshMetrics::new(k));
    metrics.watch_agent(counts);
    start(addr, &metrics, "fathom serve")?;
    Ok(metrics)
}

/// `fathom mesh run --metrics ADDR`: a registry of `k` pair series per source (the mesh
/// file's `peers`) for every member's tests, served at `addr`, as the mesh's sink.
pub fn start_mesh(addr: SocketAddr, k: usize) -> Result<Arc<dyn Sink>, Failure> {
    let metrics = Arc::new(MeshMetrics::new(k));
    start(addr, &metrics, "fathom mesh")?;
    Ok(Arc::new(MeshSink::new(metrics)))
}

/// A mesh's figures into a [`MeshMetrics`]: each `Sink` call is the registry's method of the
/// same name; a member that left has its series removed, and figures still on their way from
/// it, or alerts about it, are dropped rather than making them again.
#[derive(Debug)]
pub struct MeshSink {
    metrics: Arc<MeshMetrics>,
    /// The members now; `None` until the mesh says.
    members: Mutex<Option<BTreeSet<String>>>,
}

impl MeshSink {
    /// The sink recording into `metrics`.
    pub fn new(metrics: Arc<MeshMetrics>) -> MeshSink {
        MeshSink {
            metrics,
            members: Mutex::default(),
        }
    }

    /// Whether every one of `names` is a member now (figures about them are kept).
    fn keeps(&self, names: &[&str]) -> bool {
        let members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members
            .as_ref()
            .is_none_or(|m| names.iter().all(|n| m.contains(*n)))
    }
}

impl Sink for MeshSink {
    fn set_peers(&self, source: &str, sampled: &[String]) {
        self.metrics.set_peers(source, sampled);
    }

    fn members(&self, members: &[String]) {
        let now: BTreeSet<String> = members.iter().cloned().collect();
        let mut held = self.members.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(before) = held.as_ref() {
            for gone in before.difference(&now) {
                self.metrics.remove_member(gone);
            }
        }
        *held = Some(now);
    }

    fn rr(&self, source: &str, peer: &str, test: &str, round_trips: &[(f64, u64)]) {
        if self.keeps(&[source]) {
            self.metrics.rr(source, peer, test, round_trips);
        }
    }

    fn datagrams(&self, source: &str, peer: &str, test: &str, sent: u64, received: u64) {
        if self.keeps(&[source]) {
            self.metrics.datagrams(source, peer, test, sent, received);
        }
    }

    fn throughput(&self, source: &str, peer: &str, test: &str, bits_per_second: f64, at: f64) {
        if self.keeps(&[source]) {
            self.metrics
                .throughput(source, peer, test, bits_per_second, at);
        }
    }

    fn alert(&self, source: &str, peer: &str, test: &str, raised: bool) {
        if self.keeps(&[source, peer]) {
            self.metrics.alert(source, peer, test, raised);
        }
    }

    fn outcome(&self, source: &str, test: &str, outcome: Outcome) {
        let outcome = match outcome {
            Outcome::Run => fathom_metrics::Outcome::Run,
            Outcome::Skipped => fathom_metrics::Outcome::Skipped,
            Outcome::Failed => fathom_metrics::Outcome::Failed,
        };
        if self.keeps(&[source]) {
            self.metrics.outcome(source, test, outcome);
        }
    }

    fn scheduler_lag(&self, source: &str, seconds: f64) {
        if self.keeps(&[source]) {
            self.metrics.scheduler_lag(source, seconds);
        }
    }

    fn stored(&self, source: &str, at_unix: f64) {
        if self.keeps(&[source]) {
            self.metrics.stored(source, at_unix);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    /// The sample lines naming `member` (as a source or a peer).
    fn naming(m: &MeshMetrics, member: &str) -> Vec<String> {
        let quoted = format!("\"{member}\"");
        m.encode()
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains(&quoted))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_member_gone_takes_its_series_and_its_late_figures_are_dropped_until_it_is_back() {
        let metrics = Arc::new(MeshMetrics::new(2));
        let sink = MeshSink::new(metrics.clone());
        sink.members(&names(&["a", "b", "c"]));
        for (source, peers) in [("a", ["b", "c"]), ("c", ["a", "b"])] {
            sink.set_peers(source, &names(&peers));
            sink.rr(source, peers[1], "rr", &[(1e-3, 1)]);
            sink.outcome(source, "rr", Outcome::Run);
        }
        sink.alert("a", "c", "rr", true);
        assert!(!naming(&metrics, "c").is_empty());
        sink.members(&names(&["a", "b"]));
        sink.set_peers("a", &names(&["b"]));
        // Results that were on their way when c left.
        sink.rr("c", "a", "rr", &[(1e-3, 1)]);
        sink.stored("c", 1.0);
        sink.alert("a", "c", "rr", true);
        sink.rr("a", "c", "rr", &[(1e-3, 1)]);
        assert_eq!(naming(&metrics, "c"), Vec::<String>::new());
        assert!(!naming(&metrics, "a").is_empty(), "a keeps its series");
        sink.members(&names(&["a", "b", "c"]));
        sink.stored("c", 2.0);
        assert_eq!(
            naming(&metrics, "c"),
            [r#"fathom_mesh_last_stored_timestamp_seconds{source="c"} 2.0"#]
        );
    }
}
