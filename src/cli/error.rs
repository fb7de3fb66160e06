//! [`ArgsError`]: what is wrong with a test's options, naming the flag or the value (a plan
//! field by the flags [`Sets`] says set it); [`ValueError`]: a value its option does not take;
//! [`KeyFileError`]: a `--key-file` that gives no key.
//! `main` turns them into exit 2 (bad usage) with their one-line message.

use fathom_proto::validate::PlanError;
use std::path::PathBuf;

/// A key file (`--key-file`, or a lab's) that gives no key.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// The file cannot be read (or is not a small regular file).
    #[error("--key-file {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// The file holds nothing but whitespace.
    #[error("--key-file {}: the file is empty", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// A test's options that cannot make a plan; every message names the flag or the value.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// A flag (or a positional argument) with a value that is wrong, or wrong here.
    #[error("{flag}: {reason}")]
    Flag {
        /// The flag as typed, e.g. `-P/--parallel`.
        flag: &'static str,
        /// What is wrong, with the value.
        reason: String,
    },
    /// Two flags that exclude each other.
    #[error("{first} and {second} cannot be used together")]
    Together {
        /// The first flag.
        first: &'static str,
        /// The second flag.
        second: &'static str,
    },
    /// A flag that needs another one.
    #[error("{flag} needs {needs}")]
    Needs {
        /// The flag given.
        flag: &'static str,
        /// The flag it needs, and what that says.
        needs: &'static str,
    },
    /// `--omit` with a counted test, which is measured whole.
    #[error("--omit applies to timed tests (-t); with {count} the whole run is measured")]
    OmitCounted {
        /// The count's flag, e.g. `-n/--bytes`.
        count: &'static str,
    },
    /// `--min-agents` above `--expect`.
    #[error("--min-agents {min} is more than --expect {expect}")]
    MinAboveExpect {
        /// `--min-agents`.
        min: u64,
        /// `--expect`.
        expect: u64,
    },
    /// This end would need more memory than one test may use.
    #[error(
        "--write/--threads/-P: this end would need about {need_mb} MB (threads x (write + \
         read) plus per-flow state: a UDP sender's --size x --batch); one test may use \
         {budget_mb} MB"
    )]
    Memory {
        /// What this end would need, MB.
        need_mb: u64,
        /// What one test may use, MB.
        budget_mb: u64,
    },
    /// A plan field the plan's own checks refuse, before it is named by its flag.
    #[error("{}: {}", .0.field, .0.message)]
    Plan(PlanError),
    /// A plan field the plan's own checks refuse, named by the flag that sets it.
    #[error("{flag}: {message}")]
    Field {
        /// The flags that set the field, e.g. `--sndbuf/--buffer`.
        flag: String,
        /// What the check says.
        message: String,
    },
    /// A local file named on the command line that cannot be used.
    #[error("{path}: {reason}")]
    File {
        /// The path as given.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// This host cannot do what a flag asks (its kernel lacks it); the message names the flag.
    #[error("{0}")]
    Host(String),
}

impl ArgsError {
    /// `flag: reason`.
    pub fn flag(flag: &'static str, reason: impl Into<String>) -> Self {
        ArgsError::Flag {
            flag,
            reason: reason.into(),
        }
    }

    /// `--iperf3` given to `fathom <command>` where the test is not run alone (a sweep's point,
    /// a launch): it drives one iperf3 server, from that command alone.
    pub fn iperf3_alone(command: &str) -> Self {
        ArgsError::flag(
            "--iperf3",
            format!("drives one iperf3 server, as `fathom {command} --iperf3 HOST` alone"),
        )
    }
}

/// A value that is not what its option takes; clap names the option before the message
/// ("invalid value '1x' for '--buffer <SIZE>': '1x' is not a size; ...").
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A size, duration or rate as `fathom-units` reads them; its message says what one looks
    /// like.
    #[error(transparent)]
    Units(#[from] fathom_units::Refusal),
    /// A size of 0 where a socket call needs at least a byte.
    #[error("must be at least 1 byte")]
    ZeroSize,
    /// A size a socket call cannot take.
    #[error("'{0}' is too large (2G at most)")]
    SizeTooLarge(String),
    /// A negative count.
    #[error("'{0}' is negative; give a count of 1 or more")]
    Negative(String),
    /// A count above what it can hold.
    #[error("'{value}' is too large (at most {max})")]
    CountTooLarge {
        /// The value as given.
        value: String,
        /// The largest count.
        max: u32,
    },
    /// Not a whole number.
    #[error("'{0}' is not a whole number")]
    NotWhole(String),
    /// Not a CPU list.
    #[error("'{0}' is not a CPU list; try 0, 0-3 or 0,2,4-5")]
    NotCpuList(String),
    /// `--iterations`: a count out of range.
    #[error("'{0}' is not a count from 1 to 1000")]
    NotIterations(String),
    /// `--iterations MAX,MIN` with MIN above MAX.
    #[error("MIN {min} is above MAX {max}")]
    MinAboveMax {
        /// MIN.
        min: u32,
        /// MAX.
        max: u32,
    },
    /// `--confidence`: a level or a width that is not a percentage in range.
    #[error("{what} '{value}' is not a percentage between {lo} and {hi}; try 99,5%")]
    NotPercent {
        /// "level" or "width".
        what: &'static str,
        /// The value as given.
        value: String,
        /// The bound below (excluded).
        lo: f64,
        /// The bound above (excluded).
        hi: f64,
    },
    /// A number of datagrams, or of datagrams per second.
    #[error("'{0}' is not a number of datagrams; try 1000, 500k or 1M")]
    NotDatagrams(String),
}

/// Plan fields and the options that set them, so that a field the plan's checks refuse is named
/// by its flag as the args definitions spell it.
#[derive(Debug)]
pub struct Sets {
    /// The plan fields, as [`fathom_proto::validate::PlanError`] names them (`rr.burst`).
    pub fields: &'static [&'static str],
    /// The clap ids (field names) of the options that set them, in the order named.
    pub ids: &'static [&'static str],
    /// What the message adds after the flags, e.g. " (this side's CPUs)".
    pub note: &'static str,
}

impl Sets {
    /// `fields` are set by the options `ids`.
    pub const fn by(fields: &'static [&'static str], ids: &'static [&'static str]) -> Self {
        Sets {
            fields,
            ids,
            note: "",
        }
    }

    /// The flags as `cmd` (the test's subcommand) defines them: `-P/--parallel`,
    /// `--sndbuf/--buffer`, `SRC/DST` for positional arguments, then the note.
    pub fn flags(&self, cmd: &clap::Command) -> String {
        let named = |id: &&str| {
            let arg = cmd.get_arguments().find(|a| a.get_id() == *id)?;
            let value = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map(|v| v.to_string());
            Some(match (arg.get_short(), arg.get_long()) {
                (Some(s), Some(l)) => format!("-{s}/--{l}"),
                (None, Some(l)) => format!("--{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, None) => value.unwrap_or_else(|| id.to_uppercase()),
            })
        };
        let names: Vec<String> = self.ids.iter().filter_map(named).collect();
        format!("{}{}", names.join("/"), self.note)
    }
}

/// clap's rendered error as one line: the message with what it names (the missing arguments,
/// the possible values) and its tips ("a similar argument exists: '--parallel'"), without the
/// usage synopsis and the pointer to --help.
pub fn one_line(rendered: &str) -> String {
    let mut line = String::new();
    for part in rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
    {
        let part = part.trim_start_matches("error: ");
        if !line.is_empty() {
            line.push_str(if part.starts_with("tip:") { "; " } else { " " });
        }
        line.push_str(part);
    }
    if line.is_empty() {
        "bad usage".into()
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_alone_names_the_flag_and_the_command_that_runs_it() {
        assert_eq!(
            ArgsError::iperf3_alone("udp").to_string(),
            "--iperf3: drives one iperf3 server, as `fathom udp --iperf3 HOST` alone"
        );
    }
}
