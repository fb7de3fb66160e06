//! Where the store lives when the user does not say.

use std::ffi::OsString;
use std::path::PathBuf;

/// The store file's name inside its data directory.
const FILE: &str = "fathom.db";

/// The store's default path, from this process's environment: see [`default_path_from`].
pub fn default_path() -> PathBuf {
    default_path_from(
        std::env::var_os("FATHOM_STORE"),
        std::env::var_os("XDG_DATA_HOME"),
        std::env::var_os("HOME"),
    )
}

/// The store's default path given the values of `FATHOM_STORE`, `XDG_DATA_HOME` and `HOME`:
/// `$FATHOM_STORE` if set and non-empty, else `$XDG_DATA_HOME/fathom/fathom.db` (when that is an
/// absolute path, as the XDG base directory specification requires), else
/// `$HOME/.local/share/fathom/fathom.db`, else `./fathom.db`.
pub fn default_path_from(
    store: Option<OsString>,
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> PathBuf {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = set(store) {
        return p;
    }
    if let Some(d) = set(xdg_data_home).filter(|d| d.is_absolute()) {
        return d.join("fathom").join(FILE);
    }
    if let Some(h) = set(home) {
        return h.join(".local/share/fathom").join(FILE);
    }
    PathBuf::from(FILE)
}
