//! `fathom mesh report`: the mesh's status and its stored runs, read from the store as `mesh
//! status` reads them, rendered by `fathom_mesh::report` into one HTML page.

use super::status;
use crate::cli::mesh::ReportArgs;
use crate::commands::report::write_page;
use crate::Failure;
use fathom_mesh::report::history::{group, Point};
use fathom_mesh::spec::Mesh;
use fathom_report::listing::when;
use fathom_store::{MeshRun, Store};
use std::path::PathBuf;

/// Writes the page of `mesh` from `store`, made at `now_unix_s`.
pub fn write(a: &ReportArgs, mesh: &Mesh, store: &Store, now_unix_s: f64) -> Result<(), Failure> {
    let s = status::from_store(mesh, store, None, None, now_unix_s)?;
    let since = a.since.map(|ns| now_unix_s - ns as f64 / 1e9);
    let runs = store
        .mesh_runs_since(&mesh.name, since)
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let histories = group(runs.into_iter().map(point));
    let span = match since {
        Some(t) => format!("runs since {} UTC", when(t)),
        None => "every stored run".into(),
    };
    let subtitle = format!(
        "fathom {} · {} · {span} · made {} UTC",
        env!("CARGO_PKG_VERSION"),
        store.path().display(),
        when(now_unix_s)
    );
    let html = fathom_mesh::report::render(&s, &histories, &subtitle);
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| default_output(&mesh.name));
    write_page(&out, html.as_bytes())
}

/// A stored run as a point of its pair's history.
fn point(r: MeshRun) -> ((String, String, String), Point) {
    let p = Point {
        at_unix_s: r.started_unix_s,
        value: r.value,
        band_low: r.band_low,
        band_high: r.band_high,
        alert: r.alert,
    };
    ((r.test, r.source, r.target), p)
}

/// `mesh-NAME.html` in the working directory, NAME's characters other than letters, digits,
/// `-`, `_` and `.` written as `_`.
fn default_output(name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    PathBuf::from(format!("mesh-{safe}.html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_page_is_named_after_the_mesh() {
        assert_eq!(default_output("lab"), PathBuf::from("mesh-lab.html"));
        assert_eq!(default_output("a/b c"), PathBuf::from("mesh-a_b_c.html"));
    }
}
