//! `fathom mesh status`: the matrix of a mesh's pairs (source × target, per test) with each
//! pair's latest figure, its change against the pair's baseline and its alert, the members
//! down, and the likely culprit. The document (`--json`) is pinned by
//! `docs/schema/mesh-status.schema.json`; [`matrix`] renders it for the terminal.

mod culprit;
pub mod matrix;
mod pair;

pub use culprit::culprits;
pub use pair::{Culprit, PairStatus};

use serde::{Deserialize, Serialize};

/// Version of the status JSON shape; bumped on any incompatible change.
pub const STATUS_SCHEMA_VERSION: u32 = 1;

/// A mesh's state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// [`STATUS_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Always `"mesh_status"`.
    pub document: String,
    /// The mesh's name.
    pub mesh: String,
    /// When this document was made, Unix seconds.
    pub generated_unix_s: f64,
    /// The members, by name.
    pub members: Vec<MemberStatus>,
    /// The tests, in the file's order.
    pub tests: Vec<TestStatus>,
    /// Every pair with a stored run, by test, source and target.
    pub pairs: Vec<PairStatus>,
    /// Members that many of their partners have alerts with, most first.
    pub culprits: Vec<Culprit>,
    /// Pairs whose alert is raised.
    pub alerts: usize,
}

/// One member.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberStatus {
    /// Its name.
    pub name: String,
    /// True while it is marked down.
    pub down: bool,
    /// Since when, Unix seconds.
    pub down_since_unix_s: Option<f64>,
    /// Why the last attempt to reach it failed.
    pub reason: Option<String>,
}

/// One test of the mesh.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TestStatus {
    /// Its name.
    pub name: String,
    /// Its kind (stream, rr, ...).
    pub kind: String,
    /// Its class (exclusive, normal, background).
    pub class: String,
    /// The metric its pairs are judged by.
    pub figure: String,
    /// True when a larger figure is worse.
    pub higher_is_worse: bool,
    /// Its period, seconds.
    pub every_s: f64,
    /// Runs that started, were skipped for want of a slot, or were not tried (member down),
    /// as counted by the process that ran them since it started; none when unknown.
    pub counts: Option<Counts>,
}

/// A test's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Started.
    pub started: u64,
    /// Skipped: no slot within the slip.
    pub skipped: u64,
    /// Not tried: a member was down.
    pub down: u64,
}

impl Status {
    /// An empty document for mesh `mesh`, made at `now_unix_s`.
    pub fn new(mesh: &str, now_unix_s: f64) -> Status {
        Status {
            schema_version: STATUS_SCHEMA_VERSION,
            document: "mesh_status".into(),
            mesh: mesh.into(),
            generated_unix_s: now_unix_s,
            ..Status::default()
        }
    }

    /// Counts the alerts and finds the culprits with `min` partners at least (the mesh's
    /// `[alert] culprit`).
    pub fn finish(&mut self, min: usize) {
        self.pairs
            .sort_by(|a, b| (&a.test, &a.source, &a.target).cmp(&(&b.test, &b.source, &b.target)));
        self.alerts = self.pairs.iter().filter(|p| p.alert).count();
        self.culprits = culprits(&self.pairs, min);
    }
}
