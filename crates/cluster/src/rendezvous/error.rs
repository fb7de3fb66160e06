//! Why a rendezvous failed: [`JoinError`] on a rank's side (with [`NotRank0`], what answered in
//! rank 0's place), [`GatherError`] on rank 0's, and [`Refusal`], what rank 0 tells a rank whose
//! registration it does not take.

use fathom_proto::FrameError;
use std::net::SocketAddr;

/// What answered at an address of rank 0 instead of rank 0's challenge.
#[derive(Debug, thiserror::Error)]
pub enum NotRank0 {
    /// Not fathom's rendezvous, or another version of it.
    #[error("{0}")]
    Frame(#[from] FrameError),
    /// A rendezvous message other than the challenge.
    #[error("expected a challenge, got {0}")]
    Unexpected(String),
}

/// Why a rank could not join rank 0, or lost it while waiting for the exit code; each names
/// rank 0's address as given.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// Rank 0 did not answer before the timeout.
    #[error(
        "rank 0 did not answer at {root} within {secs} s (last: {last}); is rank 0 there? \
         name it with --controller HOST[:PORT]"
    )]
    NoAnswer {
        /// Rank 0's address as given.
        root: String,
        /// The timeout, in seconds.
        secs: f64,
        /// Why the last attempt failed.
        last: String,
    },
    /// Something answered at an address of rank 0 that is not rank 0 (or not of this version).
    #[error("rank 0 at {root} ({addr}): {reason}")]
    NotRank0 {
        /// Rank 0's address as given.
        root: String,
        /// The address tried.
        addr: SocketAddr,
        /// What answered wrong.
        reason: NotRank0,
    },
    /// This rank's own end of the connection has no address.
    #[error("{0}")]
    Local(std::io::Error),
    /// One side has `--key-file`, the other not.
    #[error("rank 0 at {root} {}: give all ranks the same", key_text(*.rank0_has_key))]
    KeyMismatch {
        /// Rank 0's address as given.
        root: String,
        /// Whether rank 0 is the side with the key.
        rank0_has_key: bool,
    },
    /// The agent did not start.
    #[error("{0}")]
    Agent(Box<dyn std::error::Error + Send + Sync>),
    /// The connection failed while registering.
    #[error("rank 0 at {root}: {source}")]
    Lost {
        /// Rank 0's address as given.
        root: String,
        /// What failed.
        source: FrameError,
    },
    /// Rank 0's answer to this rank's nonce is wrong.
    #[error("rank 0 at {0} did not prove it holds the key (--key-file)")]
    NoProof(String),
    /// Rank 0 refused the registration (its message).
    #[error("{0}")]
    Refused(String),
    /// Rank 0 sent a message out of turn.
    #[error("rank 0 at {root}: unexpected {message}")]
    Unexpected {
        /// Rank 0's address as given.
        root: String,
        /// The message, as debug text.
        message: String,
    },
    /// Rank 0 closed the connection before the exit code.
    #[error("lost rank 0 at {0}: it closed the connection without an exit code")]
    Closed(String),
    /// Rank 0 fell silent while the test ran.
    #[error("lost rank 0 at {root}: nothing from it for {secs} s")]
    Silent {
        /// Rank 0's address as given.
        root: String,
        /// How long it was silent.
        secs: u64,
    },
    /// The connection failed while waiting for the exit code.
    #[error("lost rank 0 at {root}: {source}")]
    Gone {
        /// Rank 0's address as given.
        root: String,
        /// What failed.
        source: FrameError,
    },
}

fn key_text(rank0_has_key: bool) -> &'static str {
    if rank0_has_key {
        "requires --key-file"
    } else {
        "runs without --key-file, this rank has one"
    }
}

/// Ranks that did not register within rank 0's timeout.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} of {expected} ranks did not register within {secs} s: {} (see --rendezvous-timeout){}",
    .absent.len(),
    ranges(.absent),
    refused_text(.refused)
)]
pub struct GatherError {
    /// The ranks missing.
    pub absent: Vec<u32>,
    /// How many ranks besides rank 0 were expected.
    pub expected: usize,
    /// The timeout, in seconds.
    pub secs: f64,
    /// How many registrations were refused, and the last refusal.
    pub refused: Option<(usize, String)>,
}

fn refused_text(refused: &Option<(usize, String)>) -> String {
    refused.as_ref().map_or(String::new(), |(n, last)| {
        format!("; {n} registration(s) refused, the last: {last}")
    })
}

/// Ranks as ranges: `1-3, 7`.
fn ranges(ranks: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            ranks[i].to_string()
        } else {
            format!("{}-{}", ranks[i], ranks[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// Why rank 0 does not take a registration.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The challenge or the registration did not cross.
    #[error(transparent)]
    Wire(#[from] FrameError),
    /// The rank's end of the connection failed while being accepted.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The key proof is wrong or missing.
    #[error("wrong or missing key (--key-file)")]
    WrongKey,
    /// Without a pre-shared key, the rank sent no usable agent key.
    #[error("no agent key of 16 to 64 bytes, and rank 0 has no --key-file")]
    NoAgentKey,
    /// The rank's launch has another size.
    #[error("its launch has {theirs} processes, rank 0's has {ours}")]
    Size {
        /// The rank's size.
        theirs: u32,
        /// Rank 0's size.
        ours: u32,
    },
    /// The rank belongs to another launch.
    #[error("it belongs to launch '{theirs}', rank 0 to '{ours}'")]
    Launch {
        /// The rank's launch id, cleaned.
        theirs: String,
        /// Rank 0's launch id.
        ours: String,
    },
    /// The rank is 0 or not below the size.
    #[error("rank {rank} is not from 1 to {max}")]
    Rank {
        /// The rank given.
        rank: u32,
        /// The highest rank allowed.
        max: u32,
    },
    /// The rank's agent port is 0.
    #[error("its agent's port is 0")]
    PortZero,
    /// The rank registered before.
    #[error("rank {rank} registered twice: from {first} and from {again}")]
    Twice {
        /// The rank.
        rank: u32,
        /// Where its first registration came from.
        first: std::net::IpAddr,
        /// Where this one came from.
        again: std::net::IpAddr,
    },
}

#[cfg(test)]
mod tests {
    use super::ranges;

    #[test]
    fn missing_ranks_read_as_ranges() {
        assert_eq!(ranges(&[1, 2, 3, 7, 9, 10]), "1-3, 7, 9-10");
        assert_eq!(ranges(&[5]), "5");
        assert_eq!(ranges(&[]), "");
    }
}
