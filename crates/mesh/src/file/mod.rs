//! The mesh file (TOML, docs/mesh.md): text in, a checked [`Mesh`] out, any error at the
//! FILE:LINE:COLUMN of the value at fault. A test's command is checked by the caller's
//! [`Commands`] (the command line's own validation), so a bad flag in the file is refused at
//! its line as the command line would refuse it.

mod members;
mod read;
mod test;

use crate::error::{MeshError, Source};
use crate::hash::hash_str;
use crate::spec::{AlertRule, Mesh, DEFAULT_SETUP_NS, MAX_PEERS, MAX_TESTS};
use read::{table, Fields};
use toml_edit::ImDocument;

pub use test::{Checked, Commands};

/// Longest mesh file read, bytes.
pub const MAX_FILE: usize = 1 << 20;

/// Reads the mesh file `text`, found at `file` (named in errors; its stem names a mesh that
/// has no `name`), checking each test's command with `commands`.
pub fn parse(file: &str, text: &str, commands: &dyn Commands) -> Result<Mesh, MeshError> {
    let src = Source::new(file, text);
    if text.len() > MAX_FILE {
        return Err(src.error(None, format!("the file is over {MAX_FILE} bytes")));
    }
    let doc = ImDocument::parse(text)
        .map_err(|e| src.error(e.span(), e.message().trim().replace('\n', "; ")))?;
    let root = doc.as_table();
    let top = Fields::of(
        &src,
        root,
        "the file",
        &["mesh", "members", "test", "alert"],
    )?;
    let head = match table(&src, root, "mesh")? {
        Some(t) => Some(Fields::of(
            &src,
            t,
            "[mesh]",
            &["name", "seed", "peers", "key_file", "setup"],
        )?),
        None => None,
    };
    let stem = std::path::Path::new(file)
        .file_stem()
        .map_or("mesh".into(), |s| s.to_string_lossy().into_owned());
    let name = match head.as_ref().map(|h| h.text(&src, "name")).transpose()? {
        Some(Some((n, span))) => members::checked_name(&src, n, span, "name")?,
        _ => stem,
    };
    let num = |key, min, max| -> Result<Option<u64>, MeshError> {
        head.as_ref()
            .map_or(Ok(None), |h| h.uint(&src, key, min, max))
    };
    let seed = num("seed", 0, i64::MAX as u64)?.unwrap_or_else(|| hash_str(&name));
    let peers = num("peers", 1, MAX_PEERS as u64)?.unwrap_or(10) as usize;
    let key_file = match &head {
        Some(h) => h.text(&src, "key_file")?.map(|(k, _)| k),
        None => None,
    };
    let setup = match &head {
        Some(h) => h.duration(&src, "setup", 0, 60_000_000_000)?.map(|d| d.0),
        None => None,
    };
    let Some(members_table) = table(&src, root, "members")? else {
        return Err(src.error(
            None,
            "no [members]: list hosts = [...] or from = \"SOURCE\"",
        ));
    };
    let (members, lab) = members::read(&src, members_table)?;
    let alert = match table(&src, root, "alert")? {
        Some(t) => alert(&src, t)?,
        None => AlertRule::default(),
    };
    let tests = test::read_all(
        &src,
        root.get("test"),
        setup.unwrap_or(DEFAULT_SETUP_NS),
        commands,
    )?;
    if tests.is_empty() {
        return Err(src.error(top.at("test"), "no [[test]]: a mesh needs one at least"));
    }
    if tests.len() > MAX_TESTS {
        return Err(src.error(top.at("test"), format!("over {MAX_TESTS} tests")));
    }
    Ok(Mesh {
        name,
        seed,
        peers,
        members,
        tests,
        alert,
        key_file,
        lab,
    })
}

/// The `[alert]` table over the defaults.
fn alert(src: &Source, t: &toml_edit::Table) -> Result<AlertRule, MeshError> {
    let keys = [
        "after",
        "clear",
        "baseline",
        "min_baseline",
        "level",
        "tolerance",
        "culprit",
    ];
    let f = Fields::of(src, t, "[alert]", &keys)?;
    let d = AlertRule::default();
    let rule = AlertRule {
        after: f.uint(src, "after", 1, 1000)?.map_or(d.after, |n| n as u32),
        clear: f.uint(src, "clear", 1, 1000)?.map_or(d.clear, |n| n as u32),
        baseline: f
            .uint(src, "baseline", 2, 10_000)?
            .map_or(d.baseline, |n| n as usize),
        min_baseline: f
            .uint(src, "min_baseline", 2, 10_000)?
            .map_or(d.min_baseline, |n| n as usize),
        level: f.share(src, "level", 0.9999)?.unwrap_or(d.level),
        tolerance: f.share(src, "tolerance", 1.0)?.unwrap_or(d.tolerance),
        culprit: f
            .uint(src, "culprit", 2, 100_000)?
            .map_or(d.culprit, |n| n as usize),
    };
    if rule.min_baseline > rule.baseline {
        return Err(src.error(
            f.at("min_baseline"),
            format!(
                "min_baseline: {} is over baseline ({})",
                rule.min_baseline, rule.baseline
            ),
        ));
    }
    if rule.level < 0.5 {
        return Err(src.error(f.at("level"), "level: below 50% the band says nothing"));
    }
    Ok(rule)
}

#[cfg(test)]
mod tests;
