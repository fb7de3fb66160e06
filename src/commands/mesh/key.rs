//! The key a mesh's runs use with agents that have none of their own.

use crate::cli::read_key;
use crate::Failure;
use fathom_mesh::spec::Mesh;
use std::path::{Path, PathBuf};

/// The key for agents without their own: `--key-file`, else the file's `key_file` (relative
/// to the file's directory).
pub fn key(flag: Option<&PathBuf>, mesh: &Mesh, file: &Path) -> Result<Option<Vec<u8>>, Failure> {
    let from_file = mesh.key_file.as_ref().map(|k| {
        let k = Path::new(k);
        match file.parent() {
            Some(dir) if k.is_relative() => dir.join(k),
            _ => k.to_path_buf(),
        }
    });
    Ok(flag
        .cloned()
        .or(from_file)
        .as_deref()
        .map(read_key)
        .transpose()?)
}
