//! The rendezvous of `fathom launch`: every rank but 0 starts an agent and registers it with
//! rank 0, which then runs the test on them and tells every rank its exit code.
//!
//! ```text
//!  rank N                                         rank 0 (listens on port 5300)
//!  ── connect (retried until the timeout) ────────▶
//!  ── Preamble "FTHM" v, Rendezvous ──────────────▶
//!  ◀────────────────────────────── Preamble "FTHM" v
//!  ◀─────────────────── Challenge{nonce, key_required}
//!     (starts its agent on the address it reached rank 0 from)
//!  ── Registration{rank, size, launch, host, port, ▶  checked: size and launch id as rank 0's,
//!       agent key or mac, nonce}                        rank new, mac right; else Refused
//!  ◀──────────────────────────────── Accepted{mac}     mac: rank 0's answer to the rank's nonce
//!  ◀──────────────────────────────── Alive            every second until the test ends
//!  ◀──────────────────────────────── Exit{code}       the test's exit code
//! ```
//! With a pre-shared key both sides prove they hold it (HMAC-SHA256 of the other's nonce, each
//! direction in its own domain, neither the control channel's); the rank's agent then takes that
//! key. Without one, each rank's agent takes a random key of its own, sent to rank 0 in the
//! registration (in clear: anyone who can read the traffic could then drive that agent for as
//! long as the launch runs; use `--key-file` where that matters). The agent's address is the
//! registration's source address as rank 0 sees it.
//!
//! Every frame either side reads is at most [`PRE_AUTH_FRAME`](fathom_proto::PRE_AUTH_FRAME) bytes; rank 0 gives a
//! connection [`HANDSHAKE`] in all to register (it is cut off then), and holds at most
//! [`MAX_PENDING`] connections in registration at once (a new one cuts off the oldest, so idle
//! strangers cannot keep a rank out). A rank's every read from rank 0 ends
//! within [`HANDSHAKE`] while it registers, and within [`SILENCE`] after: a rank that hears
//! nothing from rank 0 that long gives up.

mod error;
mod member;
mod root;
mod wire;

pub use error::{GatherError, JoinError, NotRank0, Refusal};
pub use member::{join, Joined, Joining};
pub use root::{Registered, Root};
pub use wire::{
    Registration, ToRank, DEFAULT_PORT, HANDSHAKE, HEARTBEAT, MAX_KEY, MAX_NAME, MAX_PENDING,
    SILENCE,
};

#[cfg(test)]
mod tests;
