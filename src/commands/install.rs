//! `fathom completions SHELL` and `fathom man`: shell completions and manual pages generated
//! from the command line's own definitions, so they never disagree with `--help`.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::Failure;
use clap::CommandFactory;
use std::path::Path;

/// Prints the completion script for the shell `a` names on stdout.
pub fn completions(a: &CompletionsArgs) -> Result<(), Failure> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "fathom", &mut out);
    super::output::write_stdout(&out);
    Ok(())
}

/// Prints fathom(1) on stdout, or with `--out DIR` writes it and a page per subcommand
/// (fathom-stream(1), fathom-lab-up(1), ...) there.
pub fn man(a: &ManArgs) -> Result<(), Failure> {
    let cmd = Cli::command();
    match &a.out {
        None => {
            super::output::write_stdout(&page(cmd)?);
            Ok(())
        }
        Some(dir) => write_pages(cmd, dir),
    }
}

/// One command's page, in roff.
fn page(cmd: clap::Command) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| Failure::Runtime(format!("man: {e}")))?;
    Ok(out)
}

/// Writes fathom.1 and a page for every visible subcommand, nested ones too
/// (fathom-stream.1, fathom-lab-up.1, ...), into `dir`.
fn write_pages(cmd: clap::Command, dir: &Path) -> Result<(), Failure> {
    let failed = |e: std::io::Error| Failure::Runtime(format!("man --out {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(failed)?;
    clap_mangen::generate_to(cmd, dir).map_err(failed)?;
    eprintln!(
        "wrote the manual pages to {} (try: man fathom)",
        dir.display()
    );
    Ok(())
}
