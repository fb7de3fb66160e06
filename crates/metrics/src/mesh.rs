//! [`MeshMetrics`]: what the mesh's scheduler hands over, turned into the families of
//! `families.rs`, with pair series kept to each source's sampled peers.
//!
//! One index says, per source, which peers are sampled, which tests it ran and which alerts
//! are raised; every update holds it, so a departing peer's series, once removed, cannot be
//! made again by a result that was on its way (a scrape only takes the families' own locks).

use crate::agent::{AgentCollector, AgentCounts};
use crate::families::{Families, Outcome, Pair, Source, SourceTest, Tests};
use prometheus_client::encoding::{prometheus_text, text};
use prometheus_client::registry::Registry;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The longest label value kept, in bytes (a DNS name's longest); longer names are cut there.
pub const MAX_LABEL: usize = 253;

/// The mesh's metrics registry; `Send + Sync`, shared as `Arc<MeshMetrics>`.
#[derive(Debug)]
pub struct MeshMetrics {
    k: usize,
    registry: Registry,
    families: Families,
    index: Mutex<HashMap<String, Known>>,
    agent: Arc<OnceLock<AgentCounts>>,
}

/// What the registry holds for one source.
#[derive(Debug, Default)]
struct Known {
    sampled: BTreeSet<String>,
    tests: BTreeSet<String>,
    /// Raised alerts, (peer, test).
    alerts: BTreeSet<(String, String)>,
}

/// A label value within [`MAX_LABEL`] bytes, cut at a character boundary.
fn label(s: &str) -> String {
    let mut end = s.len().min(MAX_LABEL);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

impl MeshMetrics {
    /// An empty registry; `k` is how many peers per source get pair series.
    pub fn new(k: usize) -> MeshMetrics {
        let mut registry = Registry::default();
        let families = Families::register(&mut registry);
        let agent = Arc::new(OnceLock::new());
        registry.register_collector(Box::new(AgentCollector(agent.clone())));
        MeshMetrics {
            k,
            registry,
            families,
            index: Mutex::default(),
            agent,
        }
    }

    /// How many peers per source get pair series.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Exports the agent's own counts (`fathom_agent_*`) from now on; only the first call
    /// counts. Without it those families are absent (a `fathom mesh run` is no agent).
    pub fn watch_agent(&self, counts: AgentCounts) {
        let _ = self.agent.set(counts);
    }

    fn index(&self) -> MutexGuard<'_, HashMap<String, Known>> {
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `source`'s peers that get pair series (at most k; the latency peers from the hash ring;
    /// past k the rest are ignored, and so is the source itself). Every figure for a peer not listed goes into the source's
    /// aggregate series only; the series of a peer that was listed and no longer is (a
    /// departed member) are removed, but for a raised alert, which stays until cleared.
    pub fn set_peers(&self, source: &str, sampled: &[String]) {
        let source = label(source);
        let mut index = self.index();
        let known = index.entry(source.clone()).or_default();
        let now: BTreeSet<String> = sampled
            .iter()
            .map(|p| label(p))
            .filter(|p| *p != source)
            .take(self.k)
            .collect();
        for gone in known.sampled.difference(&now) {
            for test in &known.tests {
                let pair = Pair {
                    source: source.clone(),
                    peer: gone.clone(),
                    test: test.clone(),
                };
                self.families.remove_pair(&pair);
                if !known
                    .alerts
                    .contains(&(pair.peer.clone(), pair.test.clone()))
                {
                    self.families.alert.remove(&pair);
                }
            }
        }
        self.families
            .sampled
            .get_or_create(&Source {
                source: source.clone(),
            })
            .set(now.len() as i64);
        known.sampled = now;
    }

    /// Removes every series of `source` (a member that left the mesh, whose results this
    /// registry held).
    pub fn remove_source(&self, source: &str) {
        let source = label(source);
        let Some(known) = self.index().remove(&source) else {
            return;
        };
        let peers = known
            .sampled
            .iter()
            .chain(known.alerts.iter().map(|a| &a.0));
        for peer in peers.collect::<BTreeSet<_>>() {
            for test in &known.tests {
                let pair = Pair {
                    source: source.clone(),
                    peer: peer.clone(),
                    test: test.clone(),
                };
                self.families.remove_pair(&pair);
                self.families.alert.remove(&pair);
            }
        }
        for test in &known.tests {
            self.families.remove_source_test(&SourceTest {
                source: source.clone(),
                test: test.clone(),
            });
        }
        self.families.remove_source(&Source { source });
    }

    /// Removes every series naming `member` (a member that left the mesh): its own as a
    /// source ([`Self::remove_source`]), and every other source's pair series and alerts with
    /// it as the peer, raised or not; it leaves their samples, so their `sampled_peers` drop.
    pub fn remove_member(&self, member: &str) {
        self.remove_source(member);
        let peer = label(member);
        let mut index = self.index();
        for (source, known) in index.iter_mut() {
            known.alerts.retain(|(p, _)| *p != peer);
            for test in &known.tests {
                let pair = Pair {
                    source: source.clone(),
                    peer: peer.clone(),
                    test: test.clone(),
                };
                self.families.remove_pair(&pair);
                self.families.alert.remove(&pair);
            }
            if known.sampled.remove(&peer) {
                self.families
                    .sampled
                    .get_or_create(&Source {
                        source: source.clone(),
                    })
                    .set(known.sampled.len() as i64);
            }
        }
    }

    /// Runs `f` with the index held, the labels of (source, peer, test) bounded, and whether
    /// the peer is sampled; the test is recorded as one the source runs.
    fn with_pair<T>(
        &self,
        source: &str,
        peer: &str,
        test: &str,
        f: impl FnOnce(&Pair, bool, &mut Known) -> T,
    ) -> T {
        let pair = Pair {
            source: label(source),
            peer: label(peer),
            test: label(test),
        };
        let mut index = self.index();
        let known = index.entry(pair.source.clone()).or_default();
        if !known.tests.contains(&pair.test) {
            known.tests.insert(pair.test.clone());
        }
        let sampled = known.sampled.contains(&pair.peer);
        f(&pair, sampled, known)
    }

    /// One rr test's round trips: (seconds, count) pairs, e.g. an HDR histogram's recorded values.
    pub fn rr(&self, source: &str, peer: &str, test: &str, round_trips: &[(f64, u64)]) {
        self.with_pair(source, peer, test, |pair, sampled, _| {
            let each = self.families.source_rr.get_or_create(&aggregate(pair));
            let own = sampled.then(|| self.families.rr.get_or_create(pair));
            for &(seconds, count) in round_trips {
                each.observe(seconds, count);
                if let Some(h) = &own {
                    h.observe(seconds, count);
                }
            }
        });
    }

    /// One UDP test's datagrams sent and received (loss is their difference, in PromQL).
    pub fn datagrams(&self, source: &str, peer: &str, test: &str, sent: u64, received: u64) {
        let f = &self.families;
        self.with_pair(source, peer, test, |pair, sampled, _| {
            let each = aggregate(pair);
            f.source_sent.get_or_create(&each).inc_by(sent);
            f.source_received.get_or_create(&each).inc_by(received);
            if sampled {
                f.sent.get_or_create(pair).inc_by(sent);
                f.received.get_or_create(pair).inc_by(received);
            }
        });
    }

    /// One stream test's rate, with the unix time it was taken at (exported as a gauge and its
    /// `_timestamp_seconds`; in bytes per second, Prometheus's base unit, which promtool's lint
    /// asks for). A rate or a time that is negative, NaN or infinite is dropped.
    pub fn throughput(
        &self,
        source: &str,
        peer: &str,
        test: &str,
        bits_per_second: f64,
        at_unix: f64,
    ) {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if !(ok(bits_per_second) && ok(at_unix)) {
            return;
        }
        let f = &self.families;
        self.with_pair(source, peer, test, |pair, sampled, _| {
            let each = aggregate(pair);
            f.source_throughput
                .get_or_create(&each)
                .set(bits_per_second / 8.0);
            f.source_throughput_at.get_or_create(&each).set(at_unix);
            if sampled {
                f.throughput.get_or_create(pair).set(bits_per_second / 8.0);
                f.throughput_at.get_or_create(pair).set(at_unix);
            }
        });
    }

    /// A mesh alert on (source, peer, test) raised (true) or cleared (false). A raised alert
    /// is exported for any peer; once cleared, a sampled peer's series reads 0 and an
    /// unsampled peer's is removed.
    pub fn alert(&self, source: &str, peer: &str, test: &str, raised: bool) {
        self.with_pair(source, peer, test, |pair, sampled, known| {
            let key = (pair.peer.clone(), pair.test.clone());
            if raised {
                known.alerts.insert(key);
                self.families.alert.get_or_create(pair).set(1);
            } else {
                known.alerts.remove(&key);
                if sampled {
                    self.families.alert.get_or_create(pair).set(0);
                } else {
                    self.families.alert.remove(pair);
                }
            }
        });
    }

    /// A test that ran, was skipped for want of a slot, or failed.
    pub fn outcome(&self, source: &str, test: &str, outcome: Outcome) {
        let (source, test) = (label(source), label(test));
        let mut index = self.index();
        let known = index.entry(source.clone()).or_default();
        known.tests.insert(test.clone());
        for o in Outcome::ALL {
            let counter = self.families.tests.get_or_create(&Tests {
                source: source.clone(),
                test: test.clone(),
                outcome: o,
            });
            if o == outcome {
                counter.inc();
            }
        }
    }

    /// The health labels of `source`, recorded in the index so that [`Self::remove_source`]
    /// finds them, with the index held.
    fn health(&self, source: &str) -> (MutexGuard<'_, HashMap<String, Known>>, Source) {
        let source = label(source);
        let mut index = self.index();
        index.entry(source.clone()).or_default();
        (index, Source { source })
    }

    /// How late the scheduler started a test against its due time (a negative or non-finite
    /// lag is dropped).
    pub fn scheduler_lag(&self, source: &str, seconds: f64) {
        let (_index, source) = self.health(source);
        self.families.lag.get_or_create(&source).observe(seconds, 1);
    }

    /// The unix time of the last result stored (a negative or non-finite time is dropped).
    pub fn stored(&self, source: &str, at_unix: f64) {
        if !(at_unix.is_finite() && at_unix >= 0.0) {
            return;
        }
        let (_index, source) = self.health(source);
        self.families.stored.get_or_create(&source).set(at_unix);
    }

    /// The OpenMetrics text exposition of everything above (ends in `# EOF`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail, and every family here encodes.
        let _ = text::encode(&mut out, &self.registry);
        out
    }

    /// The same in the Prometheus text format 0.0.4, for clients that do not ask for
    /// OpenMetrics (promtool, curl).
    pub fn encode_prometheus(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

/// The aggregate series a pair's figures also go to.
fn aggregate(pair: &Pair) -> SourceTest {
    SourceTest {
        source: pair.source.clone(),
        test: pair.test.clone(),
    }
}
