//! The status document of a mesh: from this host's store (what `mesh run` kept), or gathered
//! from the members' agents (`serve --mesh`, each answering with the pairs it is the source
//! of), with the tests as the file describes them and the culprit found over all the pairs.

use super::members::Roster;
use crate::controller::mesh;
use crate::Failure;
use fathom_mesh::schedule::Counts;
use fathom_mesh::spec::Mesh;
use fathom_mesh::status::{self, MemberStatus, PairStatus, Status, TestStatus};
use fathom_store::{MeshPair, Store};

/// The status of `mesh` from `store`, with each test's counts if known; only the pairs
/// `source` is the source of when given (an agent's own share).
pub fn from_store(
    mesh: &Mesh,
    store: &Store,
    counts: Option<&[Counts]>,
    source: Option<&str>,
    now_unix_s: f64,
) -> Result<Status, Failure> {
    let bad = |e: fathom_store::StoreError| Failure::Runtime(e.to_string());
    let mut s = Status::new(&mesh.name, now_unix_s);
    s.tests = tests(mesh, counts);
    s.pairs = store
        .mesh_pairs(&mesh.name)
        .map_err(bad)?
        .into_iter()
        .filter(|p| source.is_none_or(|me| p.last.source == me))
        .map(pair)
        .collect();
    let down = store.mesh_members(&mesh.name).map_err(bad)?;
    s.members = members(mesh, &s.pairs);
    for m in s.members.iter_mut() {
        if let Some(d) = down.iter().find(|d| d.name == m.name && d.down) {
            m.down = true;
            m.down_since_unix_s = d.since_unix_s;
            m.reason = d.reason.clone();
        }
    }
    s.finish(mesh.alert.culprit);
    Ok(s)
}

/// The status of `mesh` gathered from its members' agents: each one's own pairs and counts.
/// An agent that does not answer is shown down, with why.
pub fn from_agents(mesh: &Mesh, key: Option<&[u8]>, now_unix_s: f64) -> Result<Status, Failure> {
    let roster = Roster::of(mesh)?;
    let mut s = Status::new(&mesh.name, now_unix_s);
    s.tests = tests(mesh, None);
    let mut down = Vec::new();
    for name in roster.names() {
        let answer = roster
            .target(&name)
            .and_then(|t| mesh::results(t, key).map_err(|e| e.to_string()))
            .and_then(|json| read(&json));
        match answer {
            Ok(theirs) => down.extend(merge(&mut s, theirs, &name)),
            Err(why) => down.push(MemberStatus {
                name,
                down: true,
                reason: Some(why),
                ..MemberStatus::default()
            }),
        }
    }
    s.members = members(mesh, &s.pairs);
    for d in down {
        if let Some(m) = s.members.iter_mut().find(|m| m.name == d.name && !m.down) {
            *m = d;
        }
    }
    s.finish(mesh.alert.culprit);
    Ok(s)
}

/// An agent's document, checked.
fn read(json: &str) -> Result<Status, String> {
    let s: Status = serde_json::from_str(json).map_err(|e| format!("its results: {e}"))?;
    match s.schema_version == status::STATUS_SCHEMA_VERSION {
        true => Ok(s),
        false => Err(format!(
            "its results are status schema {}, this fathom reads {}",
            s.schema_version,
            status::STATUS_SCHEMA_VERSION
        )),
    }
}

/// Adds `member`'s own pairs and counts from its document to `s`; returns the members it
/// marked down.
fn merge(s: &mut Status, theirs: Status, member: &str) -> Vec<MemberStatus> {
    s.pairs
        .extend(theirs.pairs.into_iter().filter(|p| p.source == member));
    for (mine, t) in s.tests.iter_mut().zip(theirs.tests) {
        if let (Some(c), true) = (t.counts, mine.name == t.name) {
            let sum = mine.counts.get_or_insert_with(Default::default);
            sum.started += c.started;
            sum.skipped += c.skipped;
            sum.down += c.down;
        }
    }
    theirs.members.into_iter().filter(|m| m.down).collect()
}

/// The tests as the file describes them.
fn tests(mesh: &Mesh, counts: Option<&[Counts]>) -> Vec<TestStatus> {
    mesh.tests
        .iter()
        .enumerate()
        .map(|(i, t)| TestStatus {
            name: t.name.clone(),
            kind: t.kind.clone(),
            class: t.class.name().into(),
            figure: t.figure.metric.clone(),
            higher_is_worse: t.figure.higher_is_worse,
            every_s: t.every_ns as f64 / 1e9,
            counts: counts.and_then(|c| c.get(i)).map(|c| status::Counts {
                started: c.started,
                skipped: c.skipped,
                down: c.down,
            }),
        })
        .collect()
}

/// The members: those the file lists, else those the pairs name.
fn members(mesh: &Mesh, pairs: &[PairStatus]) -> Vec<MemberStatus> {
    let mut names: Vec<String> = match &mesh.members {
        fathom_mesh::spec::Members::Listed(l) => l.iter().map(|m| m.name.clone()).collect(),
        fathom_mesh::spec::Members::Found { .. } => pairs
            .iter()
            .flat_map(|p| [p.source.clone(), p.target.clone()])
            .collect(),
    };
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| MemberStatus {
            name,
            ..MemberStatus::default()
        })
        .collect()
}

/// A stored pair as the document shows it.
fn pair(p: MeshPair) -> PairStatus {
    let l = p.last;
    PairStatus {
        change_percent: PairStatus::change(l.value, l.baseline),
        test: l.test,
        source: l.source,
        target: l.target,
        runs: p.runs,
        failed: p.failed,
        last_unix_s: Some(l.started_unix_s),
        value: l.value,
        baseline: l.baseline,
        band_low: l.band_low,
        band_high: l.band_high,
        alert: l.alert,
        alert_since_unix_s: p.alert_since_unix_s,
    }
}
