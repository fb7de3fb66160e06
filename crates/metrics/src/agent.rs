//! The agent's own counts (`fathom_agent_*`), read from the agent's atomics at each scrape, so
//! `fathom serve --metrics` costs the agent nothing between scrapes and exports them with or
//! without a mesh.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The agent's counters, shared with it (`fathom serve`'s `Agent::active` and `AgentConfig`).
#[derive(Clone, Debug, Default)]
pub struct AgentCounts {
    /// Tests running now.
    pub running: Arc<AtomicUsize>,
    /// Tests admitted since the agent started (controllers that authenticated and got a slot).
    pub served: Arc<AtomicU64>,
    /// Memory the running tests reserved by their plans, bytes.
    pub memory_reserved: Arc<AtomicU64>,
}

/// Encodes [`AgentCounts`] once they are set.
#[derive(Debug)]
pub struct AgentCollector(pub Arc<OnceLock<AgentCounts>>);

impl Collector for AgentCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(counts) = self.0.get() else {
            return Ok(());
        };
        let running = counts.running.load(Ordering::Relaxed) as i64;
        let gauge = ConstGauge::new(running);
        let e = encoder.encode_descriptor(
            "fathom_agent_tests_running",
            "Tests the agent runs now.",
            None,
            gauge.metric_type(),
        )?;
        gauge.encode(e)?;
        let counter = ConstCounter::new(counts.served.load(Ordering::Relaxed));
        let e = encoder.encode_descriptor(
            "fathom_agent_tests_served",
            "Tests the agent admitted since it started.",
            None,
            counter.metric_type(),
        )?;
        counter.encode(e)?;
        let bytes = counts.memory_reserved.load(Ordering::Relaxed);
        let gauge = ConstGauge::new(i64::try_from(bytes).unwrap_or(i64::MAX));
        let e = encoder.encode_descriptor(
            "fathom_agent_memory_reserved",
            "Memory the running tests reserved by their plans (of --max-memory).",
            Some(&Unit::Bytes),
            gauge.metric_type(),
        )?;
        gauge.encode(e)
    }
}
