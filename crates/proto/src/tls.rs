//! TLS as a transport of the TCP kinds (`TestPlan::tls`): the options both ends agree on, their
//! bounds, and what an end records about the sessions it ran.
//!
//! The server end presents a certificate (the agent's own, self-signed at its start, or one it
//! was given); the connecting end accepts exactly that certificate, whose DER the agent sends
//! in `Ready` over the authenticated control connection (certificate pinning: no name or
//! authority is checked, and no other certificate is accepted).

use crate::bounds::{fail, PlanError};
use crate::kind::{KindId, Transport};
use serde::{Deserialize, Serialize};

/// The largest TLS record payload (RFC 8446 §5.1).
pub const MAX_RECORD: u32 = 16_384;
/// The smallest record payload rustls accepts as a fragment size.
pub const MIN_RECORD: u32 = 64;

/// Memory one TLS connection may hold on an end, for the plan's memory estimate: the engine's
/// ciphertext read buffer (four records), rustls's send queue (256 KB) and its receive buffers.
pub const SESSION_MEMORY: u64 = 384 << 10;

/// The TLS protocol version.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsVersion {
    /// TLS 1.2 (RFC 5246), ECDHE key exchange with AEAD suites only.
    V12,
    /// TLS 1.3 (RFC 8446).
    V13,
}

impl TlsVersion {
    /// As written on the command line and in reports: "1.2", "1.3".
    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::V12 => "1.2",
            TlsVersion::V13 => "1.3",
        }
    }
}

/// The bulk cipher of the suite (the key exchange and signature follow the version and the
/// certificate).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsCipher {
    /// AES-128 in GCM mode.
    Aes128Gcm,
    /// AES-256 in GCM mode.
    Aes256Gcm,
    /// ChaCha20 with Poly1305.
    Chacha20Poly1305,
}

impl TlsCipher {
    /// Every cipher, in the order they are listed to the user.
    pub const ALL: [TlsCipher; 3] = [
        TlsCipher::Aes128Gcm,
        TlsCipher::Aes256Gcm,
        TlsCipher::Chacha20Poly1305,
    ];

    /// As written on the command line: "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305".
    pub fn name(self) -> &'static str {
        match self {
            TlsCipher::Aes128Gcm => "aes-128-gcm",
            TlsCipher::Aes256Gcm => "aes-256-gcm",
            TlsCipher::Chacha20Poly1305 => "chacha20-poly1305",
        }
    }

    /// The cipher called `name` (as [`TlsCipher::name`] writes it).
    pub fn parse(name: &str) -> Option<TlsCipher> {
        TlsCipher::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// How the data connections of a test are encrypted.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct TlsOptions {
    /// The protocol version both ends offer (only that one).
    pub version: TlsVersion,
    /// The only suite offered, or `None` for the library's preference order.
    pub cipher: Option<TlsCipher>,
    /// Largest plaintext per record, bytes ([`MIN_RECORD`]..=[`MAX_RECORD`]).
    pub record: u32,
}

impl Default for TlsOptions {
    /// TLS 1.3, the library's preferred suite, full-size records.
    fn default() -> Self {
        TlsOptions {
            version: TlsVersion::V13,
            cipher: None,
            record: MAX_RECORD,
        }
    }
}

/// What one end records about its TLS sessions (`EndpointInfo::tls`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TlsInfo {
    /// Negotiated protocol version ("1.2", "1.3"); empty when no handshake completed.
    pub version: String,
    /// Negotiated suite, as the IANA registry names it.
    pub suite: String,
    /// Largest plaintext per record, bytes.
    pub record: u32,
    /// Per flow set up before the start (stream, rr), in flow order: handshake time, ns, from
    /// the first handshake byte to the session's keys in place on this end.
    pub handshake_ns: Vec<u64>,
}

impl TlsOptions {
    /// Checks the options for a test of `kind`: only TCP kinds, no sendfile (`zerocopy`),
    /// records within bounds.
    pub(crate) fn validate(&self, kind: KindId, zerocopy: bool) -> Result<(), PlanError> {
        let t = self;
        if kind.descriptor().transport != Transport::Tcp {
            return fail(
                "tls",
                format!("{} does not run over TCP; TLS needs TCP", kind.name()),
            );
        }
        if zerocopy {
            return fail(
                "zerocopy",
                "sendfile bypasses TLS in user space; drop --zerocopy or --tls".into(),
            );
        }
        if !(MIN_RECORD..=MAX_RECORD).contains(&t.record) {
            return fail(
                "tls.record",
                format!(
                    "{} is not a record size from {MIN_RECORD} to {MAX_RECORD} bytes",
                    t.record
                ),
            );
        }
        Ok(())
    }
}
