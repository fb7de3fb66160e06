//! `fathom key new FILE`: a random pre-shared key in a new file only its owner may read.

use crate::cli::{KeyArgs, KeyCommand};
use crate::Failure;

/// Runs `fathom key`.
pub fn run(a: &KeyArgs) -> Result<(), Failure> {
    match &a.command {
        KeyCommand::New { file } => {
            fathom_lab::write_key(file).map_err(|e| {
                let what = format!("key new {}", file.display());
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Failure::Usage(format!(
                        "{what}: the file exists; fathom never overwrites a key (remove it first)"
                    ))
                } else {
                    Failure::Runtime(format!("{what}: {e}"))
                }
            })?;
            eprintln!(
                "wrote a new key to {} (mode 0600): pass it as --key-file to `fathom serve` and to the controllers",
                file.display()
            );
            Ok(())
        }
    }
}
