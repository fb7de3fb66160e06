//! What a mesh does with each finished test: judge its figure against the pair's band (the
//! alert's hysteresis), keep it in the store (a run of the pair's series, and its judgement),
//! hand it to the metrics sink, and say on stderr when an alert is raised or cleared or a
//! member goes down or comes back. A pair's alert state is rebuilt from the store the first
//! time the pair is seen, so a restarted mesh keeps its baselines.

use super::execute::Finished;
use crate::method::env;
use crate::Failure;
use fathom_mesh::alert::{Change, Judged, PairAlert};
use fathom_mesh::sink::{Outcome, Sink};
use fathom_mesh::spec::{Mesh, TestSpec};
use fathom_mesh::status::matrix::figure;
use fathom_report::series::{metrics, Series, SERIES_SCHEMA_VERSION};
use fathom_report::Report;
use fathom_store::{MeshMember, MeshRun, NewRun, Store};
use std::collections::HashMap;
use std::sync::Arc;

/// Runs of a pair read back to rebuild its alert state.
const HISTORY: usize = 1000;

/// A pair of one test: (test index, source, target).
type Pair = (usize, String, String);

/// The mesh's results: store, alert states, sink.
pub struct Ledger {
    mesh: Mesh,
    store: Store,
    env: serde_json::Value,
    command: Vec<String>,
    series: HashMap<Pair, i64>,
    alerts: HashMap<Pair, PairAlert>,
    sink: Arc<dyn Sink>,
}

impl Ledger {
    /// The ledger of `mesh`, keeping results in `store`, each with `command`, the command
    /// line as typed.
    pub fn new(mesh: &Mesh, store: Store, command: &[String], sink: Arc<dyn Sink>) -> Ledger {
        Ledger {
            mesh: mesh.clone(),
            store,
            env: env::collect(),
            command: command.to_vec(),
            series: HashMap::new(),
            alerts: HashMap::new(),
            sink,
        }
    }

    /// Judges, stores and reports one finished test; one whose setup ran past its slot was
    /// not run, and counts as skipped.
    pub fn record(&mut self, f: Finished) -> Result<(), Failure> {
        let due = &f.started.due;
        if f.late {
            let test = &self.mesh.tests[due.test].name;
            self.sink.outcome(&due.source, test, Outcome::Skipped);
            return Ok(());
        }
        let spec = self.mesh.tests[due.test].clone();
        let pair: Pair = (due.test, due.source.clone(), due.target.clone());
        let value = f.report.as_ref().and_then(|r| value_of(r, &spec));
        let error = f
            .error
            .clone()
            .or_else(|| f.report.as_ref().and_then(|r| r.error.clone()))
            .or_else(|| {
                value
                    .is_none()
                    .then(|| format!("no {} measured", spec.figure.metric))
            });
        let rule = self.mesh.alert.clone();
        let judged = self.alert(&pair).observe(value, &spec.figure, &rule);
        self.tell(&spec, &pair, value, &judged);
        let row = MeshRun {
            mesh: self.mesh.name.clone(),
            test: spec.name.clone(),
            source: pair.1.clone(),
            target: pair.2.clone(),
            class: spec.class.name().to_string(),
            started_unix_s: f.began_unix_s,
            ended_unix_s: f.ended_unix_s,
            figure: spec.figure.metric.clone(),
            value,
            baseline: judged.band.map(|b| b.mean),
            band_low: judged.band.map(|b| b.low),
            band_high: judged.band.map(|b| b.high),
            alert: judged.raised,
            change: judged.change.map(|c| match c {
                Change::Raised => "raised".to_string(),
                Change::Cleared => "cleared".to_string(),
            }),
            error: error.filter(|_| value.is_none()),
        };
        self.sinks(&spec, &pair, &f, value.is_some());
        self.save(&pair, &row, &f)
    }

    /// `member` went down (with why) or came back up, at `at_unix_s`.
    pub fn member(&mut self, member: &str, down: Option<&str>, at_unix_s: f64) {
        match down {
            Some(why) => {
                eprintln!("fathom mesh: {member} is down ({why}); probing it with back-off")
            }
            None => eprintln!("fathom mesh: {member} answers again"),
        }
        let m = MeshMember {
            name: member.to_string(),
            down: down.is_some(),
            since_unix_s: Some(at_unix_s),
            reason: down.map(String::from),
        };
        if let Err(e) = self.store.set_mesh_member(&self.mesh.name, &m) {
            eprintln!("fathom: warning: the member's state was not stored: {e}");
        }
    }

    /// The pair's alert state, rebuilt from the store the first time (a raised one told to
    /// the sink).
    fn alert(&mut self, pair: &Pair) -> &mut PairAlert {
        if !self.alerts.contains_key(pair) {
            let spec = &self.mesh.tests[pair.0];
            let mut state = PairAlert::new();
            let history =
                self.store
                    .mesh_history(&self.mesh.name, &spec.name, &pair.1, &pair.2, HISTORY);
            for v in history.unwrap_or_default() {
                state.observe(v, &spec.figure, &self.mesh.alert);
            }
            // An alert still raised when the mesh stopped is raised now, for the metrics too.
            if state.raised() {
                self.sink.alert(&pair.1, &pair.2, &spec.name, true);
            }
            self.alerts.insert(pair.clone(), state);
        }
        self.alerts.entry(pair.clone()).or_default()
    }

    /// Says on stderr that an alert was raised or cleared.
    fn tell(&self, spec: &TestSpec, pair: &Pair, value: Option<f64>, j: &Judged) {
        let Some(change) = j.change else { return };
        let shown = |v: f64| figure(&spec.figure.metric, v);
        let now = value.map_or("failed".to_string(), shown);
        let against = j.band.map_or(String::new(), |b| {
            format!(
                " against {} (band {} to {})",
                shown(b.mean),
                shown(b.low),
                shown(b.high)
            )
        });
        let what = match change {
            Change::Raised => "alert raised",
            Change::Cleared => "alert cleared",
        };
        eprintln!(
            "fathom mesh: {} {} -> {}: {what}: {} {now}{against}",
            spec.name, pair.1, pair.2, spec.figure.metric
        );
        self.sink
            .alert(&pair.1, &pair.2, &spec.name, change == Change::Raised);
    }

    /// Hands a finished test's figures to the metrics sink.
    fn sinks(&self, spec: &TestSpec, pair: &Pair, f: &Finished, ok: bool) {
        let (source, peer, test) = (pair.1.as_str(), pair.2.as_str(), spec.name.as_str());
        let outcome = if ok { Outcome::Run } else { Outcome::Failed };
        self.sink.outcome(source, test, outcome);
        let Some(r) = f.report.as_ref().filter(|_| ok) else {
            return;
        };
        if !f.round_trips.is_empty() {
            self.sink.rr(source, peer, test, &f.round_trips);
        }
        if let Some(u) = r.summary.udp() {
            self.sink
                .datagrams(source, peer, test, u.sender_datagrams, u.datagrams);
        } else if f.round_trips.is_empty() {
            let bps = r.summary.transfer.bits_per_second;
            self.sink
                .throughput(source, peer, test, bps, f.ended_unix_s);
        }
    }

    /// Keeps the run (when one was measured) and its judgement in the pair's series.
    fn save(&mut self, pair: &Pair, row: &MeshRun, f: &Finished) -> Result<(), Failure> {
        let st = &mut self.store;
        let fresh = Series {
            schema_version: SERIES_SCHEMA_VERSION,
            document: "series".into(),
            fathom_version: env!("CARGO_PKG_VERSION").into(),
            kind: self.mesh.tests[pair.0].kind.clone(),
            args: f.args.clone(),
            command: self.command.clone(),
            primary_metric: row.figure.clone(),
            started_unix_s: row.started_unix_s,
            ..Series::default()
        };
        let stored = (|| {
            let id = match self.series.get(pair) {
                Some(id) => *id,
                None => st.mesh_series(row, &fresh)?,
            };
            self.series.insert(pair.clone(), id);
            let run = f.report.as_ref().map(|report| NewRun {
                report,
                args: &f.args,
                command: &self.command,
                env: &self.env,
                series: None,
            });
            st.save_mesh_run(id, run.as_ref(), row)
        })();
        match stored {
            Ok(_) => {
                self.sink.stored(&pair.1, f.ended_unix_s);
                Ok(())
            }
            Err(e) => Err(Failure::Runtime(format!("the mesh's store: {e}"))),
        }
    }
}

/// The figure `spec` is judged by, from `r`; none when the test failed or did not measure it.
fn value_of(r: &Report, spec: &TestSpec) -> Option<f64> {
    if r.error.is_some() {
        return None;
    }
    metrics(r)
        .into_iter()
        .find(|(n, _)| *n == spec.figure.metric)
        .map(|(_, v)| v)
}
