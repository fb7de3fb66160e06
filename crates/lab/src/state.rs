//! The lab's state directory, `/run/fathom/lab/<name>/`: `state.json` (the layout and agents,
//! written before anything is created), `key` (the agents' key), `logs/<node>.log`, and per WAN
//! link `wan/<link>.sock` (its forwarder's control socket) and `wan/<link>.json` (its current
//! parameters, written by the forwarder).

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::layout::Layout;

/// Where every lab's state directory lives.
pub const STATE_ROOT: &str = "/run/fathom/lab";

/// Where `lab up --files-root` makes each host's scratch directory for file copies,
/// `<FILES_ROOT>/<lab>/<host>`: on disk (not the memory-backed /run), removed by `down`.
pub const FILES_ROOT: &str = "/var/tmp/fathom-lab";

/// The directory holding lab `name`'s scratch directories for file copies.
pub fn files_dir(name: &str) -> PathBuf {
    Path::new(FILES_ROOT).join(name)
}

/// Version of the state file format.
const STATE_VERSION: u32 = 1;

/// Random bytes in a lab key.
const KEY_BYTES: usize = 32;

/// What `state.json` holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// Format version.
    pub version: u32,
    /// The lab's name.
    pub name: String,
    /// Set once `up` finished; a lab without it is stale (its `up` crashed or still runs).
    pub complete: bool,
    /// Everything the lab created or is about to create.
    pub layout: Layout,
}

impl State {
    /// A fresh state for lab `name` that has not been built yet.
    pub fn new(name: &str, layout: Layout) -> State {
        State {
            version: STATE_VERSION,
            name: name.to_string(),
            complete: false,
            layout,
        }
    }
}

/// The paths of one lab's state directory.
#[derive(Clone, Debug)]
pub struct StateDir {
    path: PathBuf,
}

impl StateDir {
    /// The state directory of lab `name` (which may not exist).
    pub fn of(name: &str) -> StateDir {
        StateDir {
            path: Path::new(STATE_ROOT).join(name),
        }
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file holding the agents' key (hex, no newline).
    pub fn key_file(&self) -> PathBuf {
        self.path.join("key")
    }

    /// The log file of `node`'s agent (host) or forwarder (WAN router).
    pub fn log_file(&self, node: &str) -> PathBuf {
        self.path.join("logs").join(format!("{node}.log"))
    }

    /// The control socket of WAN link `link`'s forwarder.
    pub fn wan_socket(&self, link: &str) -> PathBuf {
        self.path.join("wan").join(format!("{link}.sock"))
    }

    /// The file holding WAN link `link`'s current parameters.
    pub fn wan_params_file(&self, link: &str) -> PathBuf {
        self.path.join("wan").join(format!("{link}.json"))
    }

    fn state_file(&self) -> PathBuf {
        self.path.join("state.json")
    }

    /// Creates the directory with a fresh key; fails with [`Error::Exists`] if it exists.
    pub fn create(&self, name: &str) -> Result<()> {
        fs::create_dir_all(STATE_ROOT).context(|| format!("creating {STATE_ROOT}"))?;
        match fs::create_dir(&self.path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let what = format!("state directory {}", self.path.display());
                return Err(Error::Exists {
                    name: name.to_string(),
                    what,
                });
            }
            other => other.context(|| format!("creating {}", self.path.display()))?,
        }
        for sub in ["logs", "wan"] {
            fs::create_dir(self.path.join(sub))
                .context(|| format!("creating {}/{sub}", self.path.display()))?;
        }
        write_key(&self.key_file()).context(|| format!("writing {}", self.key_file().display()))
    }

    /// Writes `state` atomically (a temporary file renamed over the old one).
    pub fn save(&self, state: &State) -> Result<()> {
        let file = self.state_file();
        let tmp = self.path.join("state.json.tmp");
        let json = serde_json::to_vec_pretty(state).expect("state serializes");
        fs::write(&tmp, json)
            .and_then(|()| fs::rename(&tmp, &file))
            .context(|| format!("writing {}", file.display()))
    }

    /// Reads the state; `None` if the lab has none.
    pub fn load(&self) -> Result<Option<State>> {
        let file = self.state_file();
        let bytes = match fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).context(|| format!("reading {}", file.display())),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::BadState {
                path: file,
                message: e.to_string(),
            })
    }

    /// Removes the whole directory; a missing one is fine.
    pub fn remove(&self) -> Result<()> {
        match fs::remove_dir_all(&self.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(e).context(|| format!("removing {}", self.path.display()))
            }
            _ => Ok(()),
        }
    }

    /// Whether the directory exists.
    pub fn exists(&self) -> bool {
        self.path.exists()
    }
}

/// The names of every lab with a state directory, sorted.
pub fn running_labs() -> Vec<String> {
    let Ok(entries) = fs::read_dir(STATE_ROOT) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Writes `KEY_BYTES` random bytes as hex to a new file readable only by its owner (an
/// existing file is an error, `AlreadyExists`): a key file for `--key-file`.
pub fn write_key(path: &Path) -> io::Result<()> {
    let mut bytes = [0u8; KEY_BYTES];
    let mut filled = 0;
    while filled < KEY_BYTES {
        // SAFETY: the pointer and length describe the unfilled tail of `bytes`.
        let n =
            unsafe { libc::getrandom(bytes[filled..].as_mut_ptr().cast(), KEY_BYTES - filled, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += n as usize;
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?
        .write_all(hex.as_bytes())
}
