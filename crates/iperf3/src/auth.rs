//! iperf3's RSA authentication, as its server does it (3.12): the client sends `authtoken` in
//! its parameters, the base64 of `user: U\npwd:  P\nts:   T` encrypted with the server's public
//! key (PKCS#1 v1.5 padding, which 3.12 uses); the server decrypts it with its private key,
//! checks that `T` (Unix seconds) is within the skew threshold of its own clock, and that the
//! users file holds `U,sha256("{U}P")` (lowercase hex). Any failure, or no token at all, is
//! refused with iperf3's "test authorization failed".

use base64::Engine;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};

/// iperf3's default `--time-skew-threshold`, seconds.
pub const DEFAULT_SKEW_S: u64 = 10;
/// The largest key or users file read.
const MAX_FILE: u64 = 1 << 20;
/// The most users a users file may hold.
const MAX_USERS: usize = 10_000;
/// The longest user name or password in a token (iperf3 reads them into fixed buffers).
const MAX_FIELD: usize = 256;

/// Why the key or the users file could not be loaded; each names its flag and its file.
#[derive(Debug, thiserror::Error)]
pub enum AuthFileError {
    /// The file could not be read.
    #[error("{flag} {}: {source}", path.display())]
    Read {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS's error.
        source: io::Error,
    },
    /// The file is larger than `MAX_FILE`.
    #[error("{flag} {}: {len} bytes, more than the {MAX_FILE} read", path.display())]
    TooLarge {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// Its size, bytes.
        len: u64,
    },
    /// `--rsa-private-key-path` holds no RSA private key this server reads.
    #[error("--rsa-private-key-path {}: not an unencrypted RSA private key in PEM ({source})", path.display())]
    NotAKey {
        /// The file.
        path: PathBuf,
        /// Why the PKCS#1 reading failed (the PKCS#8 one was tried first).
        source: rsa::pkcs1::Error,
    },
    /// `--authorized-users-path` is not a users file.
    #[error("--authorized-users-path {}:{source}", path.display())]
    Users {
        /// The file.
        path: PathBuf,
        /// What is wrong with it, from its line number on.
        source: UsersError,
    },
}

/// What is wrong with a users file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsersError {
    /// Line `line` (from 1) is not `USER,SHA256-HEX`.
    #[error("{line}: expected USER,SHA256-HEX (sha256 of \"{{USER}}PASSWORD\")")]
    Malformed {
        /// The line, from 1.
        line: usize,
    },
    /// Line `line` is past `MAX_USERS` users.
    #[error("{line}: more than {MAX_USERS} users")]
    TooMany {
        /// The line, from 1.
        line: usize,
    },
    /// The file names no user.
    #[error(" no users (lines of USER,SHA256-HEX)")]
    Empty,
}

/// The server's key and users, loaded once at start.
pub struct Auth {
    key: RsaPrivateKey,
    users: Vec<(String, [u8; 32])>,
    skew_s: u64,
    clock_shift_s: i64,
}

/// Why a client was not admitted (the agent's log says; the client only hears "failed").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// The parameters held no `authtoken`.
    NoToken,
    /// The token did not decode, decrypt or read as iperf3's credentials.
    BadToken,
    /// The users file has no such user, or the password's hash differs.
    BadCredentials(String),
    /// The token's time is further from this host's clock than the threshold allows.
    Stale(String, i64),
}

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Denied::NoToken => f.write_str("no authentication token"),
            Denied::BadToken => f.write_str("an authentication token that does not decrypt"),
            Denied::BadCredentials(u) => write!(f, "user {u:?}: unknown user or wrong password"),
            Denied::Stale(u, skew) => write!(f, "user {u:?}: the token's time is {skew} s off"),
        }
    }
}

impl Auth {
    /// Reads the private key (PEM, PKCS#1 or PKCS#8, unencrypted) and the users file; the error
    /// names the file and what is wrong with it.
    pub fn load(
        key: &Path,
        users: &Path,
        skew_s: u64,
        clock_shift_s: i64,
    ) -> Result<Auth, AuthFileError> {
        let pem = read(key, "--rsa-private-key-path")?;
        let key = RsaPrivateKey::from_pkcs8_pem(&pem)
            .or_else(|_| RsaPrivateKey::from_pkcs1_pem(&pem))
            .map_err(|source| AuthFileError::NotAKey {
                path: key.to_path_buf(),
                source,
            })?;
        let text = read(users, "--authorized-users-path")?;
        let users = parse_users(&text).map_err(|source| AuthFileError::Users {
            path: users.to_path_buf(),
            source,
        })?;
        Ok(Auth {
            key,
            users,
            skew_s,
            clock_shift_s,
        })
    }

    /// Admits the client whose parameters carry `token` at `now_unix_s` (this host's clock),
    /// returning its user name.
    pub fn admit(&self, token: Option<&str>, now_unix_s: i64) -> Result<String, Denied> {
        let token = token.ok_or(Denied::NoToken)?;
        let sealed = base64::engine::general_purpose::STANDARD
            .decode(token.trim())
            .map_err(|_| Denied::BadToken)?;
        let plain = self
            .key
            .decrypt(Pkcs1v15Encrypt, &sealed)
            .map_err(|_| Denied::BadToken)?;
        let (user, password, ts) = parse_token(&plain).ok_or(Denied::BadToken)?;
        let skew = now_unix_s
            .saturating_add(self.clock_shift_s)
            .saturating_sub(ts);
        if skew.unsigned_abs() > self.skew_s {
            return Err(Denied::Stale(user, skew));
        }
        let hash = password_hash(&user, &password);
        let known = self
            .users
            .iter()
            .any(|(u, h)| *u == user && constant_eq(h, &hash));
        if known {
            Ok(user)
        } else {
            Err(Denied::BadCredentials(user))
        }
    }
}

/// Reads a small file whole, as text.
fn read(path: &Path, flag: &'static str) -> Result<String, AuthFileError> {
    let failed = |source| AuthFileError::Read {
        flag,
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(failed)?;
    if meta.len() > MAX_FILE {
        return Err(AuthFileError::TooLarge {
            flag,
            path: path.to_path_buf(),
            len: meta.len(),
        });
    }
    std::fs::read_to_string(path).map_err(failed)
}

/// `sha256("{user}password")`, iperf3's stored form of a password.
pub fn password_hash(user: &str, password: &str) -> [u8; 32] {
    Sha256::digest(format!("{{{user}}}{password}").as_bytes()).into()
}

/// The users file: `user,sha256-hex` a line; blank lines and `#` comments skipped. The error
/// starts with the line number.
fn parse_users(text: &str) -> Result<Vec<(String, [u8; 32])>, UsersError> {
    let mut users = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || UsersError::Malformed { line: i + 1 };
        let (user, hex) = line.split_once(',').ok_or_else(bad)?;
        let hash = parse_hex(hex.trim()).ok_or_else(bad)?;
        let user = user.trim();
        if user.is_empty() || user.len() > MAX_FIELD || user.contains(char::is_whitespace) {
            return Err(bad());
        }
        if users.len() == MAX_USERS {
            return Err(UsersError::TooMany { line: i + 1 });
        }
        users.push((user.to_string(), hash));
    }
    if users.is_empty() {
        return Err(UsersError::Empty);
    }
    Ok(users)
}

/// 64 hex digits (either case) as 32 bytes.
fn parse_hex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The decrypted credentials: user, password and Unix time, as iperf3 writes them
/// (`user: %s\npwd:  %s\nts:   %ld`, fields free of white space).
fn parse_token(plain: &[u8]) -> Option<(String, String, i64)> {
    let text = std::str::from_utf8(plain).ok()?.trim_end_matches('\0');
    let mut lines = text.lines();
    let mut field = |name: &str| -> Option<String> {
        let v = lines.next()?.strip_prefix(name)?.trim();
        let ok = !v.is_empty() && v.len() <= MAX_FIELD && !v.contains(char::is_whitespace);
        ok.then(|| v.to_string())
    };
    let user = field("user:")?;
    let password = field("pwd:")?;
    let ts = field("ts:")?.parse().ok()?;
    Some((user, password, ts))
}

/// Equality whose time does not depend on where the hashes differ.
fn constant_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_token_iperf3_3_12_writes() {
        let t = b"user: alice\npwd:  secret\nts:   1795673805";
        assert_eq!(
            parse_token(t),
            Some(("alice".into(), "secret".into(), 1_795_673_805))
        );
        assert_eq!(parse_token(b"user: a\npwd:  b\nts:   x"), None);
        assert_eq!(parse_token(b"user: a\npwd:  \nts:   1"), None);
        assert_eq!(parse_token(b"pwd:  b\nuser: a\nts:   1"), None);
        assert_eq!(parse_token(&[0xff, 0xfe]), None);
    }

    #[test]
    fn hashes_the_password_as_iperf3_does() {
        // printf '%s' '{alice}secret' | sha256sum
        let want = "27b307f21eb6137ab56a3c80a93a5db840e79a697f80f3381c87edaa79a83f6f";
        assert_eq!(Some(password_hash("alice", "secret")), parse_hex(want));
    }

    #[test]
    fn users_file_lines_are_checked() {
        let h = "27b307f21eb6137ab56a3c80a93a5db840e79a697f80f3381c87edaa79a83f6f";
        let users = parse_users(&format!("# comment\n\nalice,{h}\r\nbob , {h}\n")).unwrap();
        assert_eq!(users.len(), 2);
        assert_eq!(users[1].0, "bob");
        assert!(parse_users("alice\n")
            .unwrap_err()
            .to_string()
            .starts_with("1: expected"));
        assert!(parse_users(&format!("# x\nal ice,{h}"))
            .unwrap_err()
            .to_string()
            .starts_with("2: "));
        assert!(parse_users("alice,abc").is_err());
        assert!(parse_users("# only a comment\n").is_err());
    }
}
