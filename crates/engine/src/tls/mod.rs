//! TLS as a transport of the TCP kinds, with rustls.
//!
//! The server end holds an [`Identity`] (the agent's self-signed certificate, made for its first
//! TLS test, or one it was given); the connecting end pins that certificate ([`pin`]). Random
//! numbers, key exchange and signatures come from ring, the record cipher from aws-lc ([`keys`]). Flows set up before
//! the start (stream, rr) shake hands then, blocking, each timed ([`handshake`]); crr shakes hands
//! inside every transaction. On the data path a [`Wire`] is a non-blocking socket with or without
//! a TLS session, read and written the same way by every kind.

mod copies;
mod keys;
mod pin;
mod shake;
mod wire;

pub use copies::prefer_vector_copies;
pub use rustls::Connection as Session;
pub use shake::{shake_hands, Handshake};
pub use wire::Wire;

use crate::small_file::{read_small, MAX_SMALL_FILE};
use fathom_proto::tls::{TlsCipher, TlsInfo, TlsOptions, TlsVersion};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, Connection, ServerConfig, SupportedCipherSuite};
use socket2::Socket;
use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The name the client asks for; the pinned verifier ignores it.
const SERVER_NAME: &str = "fathom";
/// How long one handshake may take in all before the start.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// TLS bytes a session may hold unsent (rustls's default is 64 KB): sixteen full records per
/// write_tls call (counted in `fathom_proto::tls::SESSION_MEMORY`).
const BUFFER_LIMIT: usize = 256 << 10;

/// Free memory glibc keeps at the top of a heap before it hands it back to the kernel.
const TRIM_THRESHOLD: libc::c_int = 64 << 20;

/// Keeps the memory of sent TLS records for the next ones. rustls allocates every record it
/// encrypts (up to [`BUFFER_LIMIT`] per write) and frees it once sent; glibc's default returns
/// freed memory past 128 KB at a heap's top to the kernel, so a TLS sender faulted fresh pages
/// in for every write (a quarter of its worker's CPU on a veth pair: bench/RESULTS.md). Set once
/// per process, to at most [`TRIM_THRESHOLD`] kept.
fn keep_freed_records() {
    #[cfg(target_env = "gnu")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt takes two integers and changes only the allocator's tuning.
        ONCE.call_once(|| unsafe {
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        });
    }
}

/// Why a TLS identity or end could not be made; each names the flag to change.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// No self-signed certificate could be made.
    #[error("cannot make a TLS certificate: {0}")]
    Generate(String),
    /// A certificate or key file could not be read or parsed.
    #[error("{flag} {}: {message}", .path.display())]
    File {
        /// `--cert` or `--key`.
        flag: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The certificate file holds no certificate.
    #[error("--cert {}: no certificate in it", .0.display())]
    NoCertificate(std::path::PathBuf),
    /// No suite of this build matches the version and cipher asked for.
    #[error("--cipher: no TLS {version} suite with {cipher} in this build")]
    NoSuite {
        /// The version asked for ("1.3").
        version: &'static str,
        /// The cipher asked for, or "any cipher".
        cipher: &'static str,
    },
    /// The library refused the version.
    #[error("TLS {version}: {message}")]
    Version {
        /// The version asked for ("1.3").
        version: &'static str,
        /// The library's reason.
        message: String,
    },
    /// The certificate and key do not make a server identity (a mismatched pair).
    #[error("--cert/--key: {0}")]
    CertKey(String),
}

/// A certificate chain and its private key, as the server end presents them.
pub struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl std::fmt::Debug for Identity {
    /// The certificate's size only: the key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Identity({} certificate bytes)", self.chain[0].len())
    }
}

impl Identity {
    /// A new self-signed certificate (ECDSA P-256) and key, from the kernel's random numbers
    /// ([`keys`]).
    pub fn generate() -> Result<Identity, TlsError> {
        let (cert, key) = keys::self_signed()?;
        Ok(Identity {
            chain: vec![cert],
            key,
        })
    }

    /// The chain in PEM file `cert` (the end entity first) and the key in PEM file `key`.
    pub fn load(cert: &Path, key: &Path) -> Result<Identity, TlsError> {
        let read = |flag, path: &Path| {
            read_small(path, MAX_SMALL_FILE).map_err(|e| file_error(flag, path, e))
        };
        let chain = CertificateDer::pem_slice_iter(&read("--cert", cert)?)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| file_error("--cert", cert, e))?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate(cert.to_path_buf()));
        }
        let key = PrivateKeyDer::from_pem_slice(&read("--key", key)?)
            .map_err(|e| file_error("--key", key, e))?;
        let id = Identity { chain, key };
        // A mismatched pair fails here, not at the first test.
        TlsEnd::server(&id, &TlsOptions::default()).map(|_| id)
    }

    /// The end-entity certificate's DER, for the connecting side to pin.
    pub fn cert_der(&self) -> Vec<u8> {
        self.chain[0].to_vec()
    }
}

/// One end's TLS configuration for a test, and what its sessions negotiated.
#[derive(Clone)]
pub struct TlsEnd {
    config: Config,
    record: u32,
    /// The one version this end offers, as written ("1.3").
    version: &'static str,
    negotiated: Arc<OnceLock<(String, String)>>,
}

#[derive(Clone)]
enum Config {
    Server(Arc<ServerConfig>),
    Client(Arc<ClientConfig>),
}

/// The provider restricted to the plan's version and cipher.
fn restricted(opts: &TlsOptions) -> Result<Arc<CryptoProvider>, TlsError> {
    let mut p = keys::provider();
    p.cipher_suites.retain(|s| {
        version_of(s) == opts.version && opts.cipher.is_none_or(|c| cipher_of(s) == Some(c))
    });
    if p.cipher_suites.is_empty() {
        return Err(TlsError::NoSuite {
            version: opts.version.name(),
            cipher: opts.cipher.map_or("any cipher", TlsCipher::name),
        });
    }
    Ok(Arc::new(p))
}

/// Why `flag`'s file `path` could not be used.
fn file_error(flag: &'static str, path: &Path, e: impl std::fmt::Display) -> TlsError {
    TlsError::File {
        flag,
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The library's refusal of the plan's version.
fn version_refused(opts: &TlsOptions, e: rustls::Error) -> TlsError {
    TlsError::Version {
        version: opts.version.name(),
        message: e.to_string(),
    }
}

fn version_of(s: &SupportedCipherSuite) -> TlsVersion {
    match s {
        SupportedCipherSuite::Tls12(_) => TlsVersion::V12,
        SupportedCipherSuite::Tls13(_) => TlsVersion::V13,
    }
}

fn cipher_of(s: &SupportedCipherSuite) -> Option<TlsCipher> {
    let name = format!("{:?}", s.suite());
    TlsCipher::ALL.into_iter().find(|c| {
        name.contains(match c {
            TlsCipher::Aes128Gcm => "AES_128_GCM",
            TlsCipher::Aes256Gcm => "AES_256_GCM",
            TlsCipher::Chacha20Poly1305 => "CHACHA20_POLY1305",
        })
    })
}

fn rustls_version(v: TlsVersion) -> &'static rustls::SupportedProtocolVersion {
    match v {
        TlsVersion::V12 => &rustls::version::TLS12,
        TlsVersion::V13 => &rustls::version::TLS13,
    }
}

impl TlsEnd {
    /// The accepting end, presenting `id`.
    pub fn server(id: &Identity, opts: &TlsOptions) -> Result<TlsEnd, TlsError> {
        let mut c = ServerConfig::builder_with_provider(restricted(opts)?)
            .with_protocol_versions(&[rustls_version(opts.version)])
            .map_err(|e| version_refused(opts, e))?
            .with_no_client_auth()
            .with_single_cert(id.chain.clone(), id.key.clone_key())
            .map_err(|e| TlsError::CertKey(e.to_string()))?;
        c.max_fragment_size = Some(opts.record as usize + 5);
        // Every handshake is a full one (crr counts them), so no tickets are sent.
        c.send_tls13_tickets = 0;
        c.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        Ok(TlsEnd::of(Config::Server(Arc::new(c)), opts))
    }

    /// The connecting end, accepting only the certificate whose DER is `pinned`.
    pub fn client(pinned: Vec<u8>, opts: &TlsOptions) -> Result<TlsEnd, TlsError> {
        let provider = restricted(opts)?;
        let verifier = Arc::new(pin::Pinned::new(pinned, provider.clone()));
        let mut c = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[rustls_version(opts.version)])
            .map_err(|e| version_refused(opts, e))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        c.max_fragment_size = Some(opts.record as usize + 5);
        c.resumption = rustls::client::Resumption::disabled();
        Ok(TlsEnd::of(Config::Client(Arc::new(c)), opts))
    }

    fn of(config: Config, opts: &TlsOptions) -> TlsEnd {
        TlsEnd {
            config,
            record: opts.record,
            version: opts.version.name(),
            negotiated: Arc::new(OnceLock::new()),
        }
    }

    /// A new session of this end.
    pub fn session(&self) -> io::Result<Connection> {
        let mut c: Connection = match &self.config {
            Config::Server(c) => rustls::ServerConnection::new(c.clone()).map(Into::into),
            Config::Client(c) => ServerName::try_from(SERVER_NAME)
                .map_err(|e| rustls::Error::General(e.to_string()))
                .and_then(|n| rustls::ClientConnection::new(c.clone(), n))
                .map(Into::into),
        }
        .map_err(io::Error::other)?;
        c.set_buffer_limit(Some(BUFFER_LIMIT));
        keep_freed_records();
        Ok(c)
    }

    /// Notes what a completed handshake negotiated (the first one is kept).
    pub fn note(&self, c: &Connection) {
        if self.negotiated.get().is_none() {
            let version = match c.protocol_version() {
                Some(rustls::ProtocolVersion::TLSv1_2) => "1.2",
                Some(rustls::ProtocolVersion::TLSv1_3) => "1.3",
                _ => return,
            };
            let suite = c
                .negotiated_cipher_suite()
                .and_then(|s| s.suite().as_str())
                .unwrap_or_default();
            let _ = self.negotiated.set((version.into(), suite.into()));
        }
    }

    /// What this end's sessions negotiated, with the handshake times of its flows.
    pub fn info(&self, handshake_ns: Vec<u64>) -> TlsInfo {
        let (version, suite) = self.negotiated.get().cloned().unwrap_or_default();
        TlsInfo {
            version,
            suite,
            record: self.record,
            handshake_ns,
        }
    }

    /// Shakes hands on a connected blocking socket within [`HANDSHAKE_TIMEOUT`] in all, however
    /// the peer dribbles; returns the session and how long it took.
    pub fn handshake(&self, sock: &Socket) -> io::Result<(Connection, u64)> {
        let mut c = self.session()?;
        let start = Instant::now();
        let r = drive(&mut c, sock, start + HANDSHAKE_TIMEOUT);
        let took = start.elapsed().as_nanos() as u64;
        sock.set_read_timeout(None)?;
        r.map_err(|e| self.explain(e))?;
        self.note(&c);
        Ok((c, took))
    }
}

impl TlsEnd {
    /// A handshake's failure in words: what the other side sent or refused, or how long it
    /// was waited for.
    fn explain(&self, e: io::Error) -> io::Error {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            return io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the TLS handshake timed out after {} s",
                    HANDSHAKE_TIMEOUT.as_secs()
                ),
            );
        }
        let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
            return e;
        };
        let server = matches!(self.config, Config::Server(_));
        let what = match tls {
            rustls::Error::InvalidCertificate(rustls::CertificateError::Other(_)) if !server => {
                pin::REFUSED.to_string()
            }
            rustls::Error::InvalidMessage(_) => {
                format!(
                    "the other side does not speak TLS: what it sent is not a TLS record ({tls})"
                )
            }
            rustls::Error::PeerIncompatible(_) => format!(
                "the other side offers no protocol version or cipher suite this test allows \
                 (TLS {} only{}) ({tls})",
                self.version,
                if self.version == "1.3" {
                    "; a TLS 1.2 hello is refused"
                } else {
                    ""
                }
            ),
            rustls::Error::AlertReceived(_) if server => {
                format!("the connecting side refused this end's certificate or session ({tls})")
            }
            _ if server => format!("the TLS handshake failed ({tls})"),
            _ => return e,
        };
        io::Error::new(e.kind(), what)
    }
}

/// Runs a handshake to its end on a blocking socket by `until`; a failure sends the peer its
/// alert.
fn drive(c: &mut Connection, mut sock: &Socket, until: Instant) -> io::Result<()> {
    while c.is_handshaking() {
        if c.wants_write() {
            c.write_tls(&mut sock)?;
            continue;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        sock.set_read_timeout(Some(left))?;
        let read = c.read_tls(&mut sock).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => late(),
            _ => e,
        })?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed during the TLS handshake",
            ));
        }
        if let Err(e) = c.process_new_packets() {
            while c.wants_write() && c.write_tls(&mut sock).is_ok() {}
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
    }
    while c.wants_write() {
        c.write_tls(&mut sock)?;
    }
    Ok(())
}

/// The error of a handshake that ran out of time.
pub fn late() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "the TLS handshake did not complete within {} s",
            HANDSHAKE_TIMEOUT.as_secs()
        ),
    )
}
