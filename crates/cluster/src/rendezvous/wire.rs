//! The rendezvous on the wire: its messages, its limits and its two answer domains, the
//! preamble both sides exchange first, and how a frame and a host name are read.

use fathom_proto::{Connection, FrameError, Preamble, PreambleKind, PRE_AUTH_FRAME};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::io::{Read, Write};
use std::time::Duration;

/// The port rank 0 listens on for registrations unless told otherwise.
pub const DEFAULT_PORT: u16 = 5300;
/// A connection must complete its registration within this.
pub const HANDSHAKE: Duration = Duration::from_secs(10);
/// Rank 0 says it is alive this often.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// A rank that hears nothing from rank 0 for this long takes it as lost.
pub const SILENCE: Duration = Duration::from_secs(10);
/// Most connections rank 0 holds in registration at once; a new one cuts off the oldest.
pub const MAX_PENDING: usize = 256;
/// Longest host name and launch id kept from a registration, in bytes.
pub const MAX_NAME: usize = 64;
/// Agent keys a rank may send: 16 to this many bytes.
pub const MAX_KEY: usize = 64;

/// Domain of the rank's answer to rank 0's challenge.
pub(super) const RANK_DOMAIN: &[u8] = b"fathom-launch-rank-v1";
/// Domain of rank 0's answer to the rank's nonce.
pub(super) const ROOT_DOMAIN: &[u8] = b"fathom-launch-root-v1";

/// What a rank tells rank 0.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Registration {
    /// The rank, 1 to size - 1.
    pub rank: u32,
    /// The number of processes, as this rank's launcher said.
    pub size: u32,
    /// The launch's id from the launcher's environment (empty if none), so that ranks of
    /// another launch that reach this rank 0 are refused.
    pub launch: String,
    /// The rank's host name, for results.
    pub host: String,
    /// The port of the rank's agent.
    pub port: u16,
    /// The agent's own key, when the launch has no pre-shared key.
    pub key: Option<Vec<u8>>,
    /// The answer to rank 0's challenge under the pre-shared key.
    pub mac: Option<[u8; 32]>,
    /// The rank's challenge to rank 0.
    pub nonce: [u8; 32],
}

/// What rank 0 tells a rank.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub enum ToRank {
    /// The first message: prove you hold the key (if one is required).
    Challenge {
        /// Random bytes to answer.
        nonce: [u8; 32],
        /// Whether rank 0 has a pre-shared key.
        key_required: bool,
    },
    /// The registration is taken.
    Accepted {
        /// Rank 0's answer to the rank's nonce, with a pre-shared key.
        mac: Option<[u8; 32]>,
    },
    /// The registration is refused, and why.
    Refused {
        /// What was wrong.
        message: String,
    },
    /// Rank 0 is alive.
    Alive,
    /// The test ended: exit with this code.
    Exit {
        /// The test's exit code.
        code: u8,
    },
}

/// Sends our preamble and reads the peer's, which must be a rendezvous one of our version.
pub(super) fn exchange_preambles(s: &mut (impl Read + Write)) -> Result<(), FrameError> {
    s.write_all(&Preamble::ours(PreambleKind::Rendezvous).encode())?;
    let theirs = Preamble::read_from(s)?;
    theirs.check_version()?;
    if theirs.kind != PreambleKind::Rendezvous {
        return Err(FrameError::Malformed(
            "the peer is a fathom agent or controller, not a process of `fathom launch`".into(),
        ));
    }
    Ok(())
}

/// Reads one small message.
pub(super) fn recv<M: DeserializeOwned, S: Read + Write>(
    c: &mut Connection<S>,
) -> Result<M, FrameError> {
    c.expect(PRE_AUTH_FRAME)
}

/// `s` cut to [`MAX_NAME`] bytes of letters, digits, '.', '-' and '_' (others become '_').
pub(super) fn clean_name(s: &str) -> String {
    s.chars()
        .take(MAX_NAME)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
