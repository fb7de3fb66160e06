//! A group's `remote`: a lab host name or an agent's HOST[:PORT], checked for syntax only
//! (names are resolved when the profile runs).

use std::net::{Ipv4Addr, Ipv6Addr};

/// Longest remote, bytes (a DNS name and a port).
const MAX_REMOTE: usize = 260;

/// What every refusal but the port's suggests.
const TRY: &str = "write a lab host name (h2), HOST[:PORT] (10.0.0.2:5301) or [IPv6]:PORT";

/// Why a group's `remote` is refused (each message but the port's ends with [`TRY`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RemoteError {
    /// Empty, or longer than [`MAX_REMOTE`].
    #[error("must be 1..={MAX_REMOTE} bytes; {TRY}")]
    Length,
    /// `[` without its `]`.
    #[error("'{0}' has no closing ']'; {TRY}")]
    NoClosingBracket(String),
    /// Between the brackets, not an IPv6 address.
    #[error("'{0}' is not an IPv6 address; {TRY}")]
    NotIpv6(String),
    /// After the `]`, something other than `:PORT`.
    #[error("'{0}': expected :PORT after ']'; {TRY}")]
    AfterBracket(String),
    /// An IPv6 address and a port without brackets.
    #[error("'{0}': an IPv6 address with a port goes in brackets; {TRY}")]
    Unbracketed(String),
    /// Neither a host name nor an IPv4 address.
    #[error("'{0}' is not a host name or address; {TRY}")]
    NotHost(String),
    /// A port outside 1..=65535.
    #[error("port '{0}' is not in 1..=65535")]
    Port(String),
}

/// Checks `text` is NAME, HOST, HOST:PORT, `[IPv6]` or `[IPv6]:PORT`.
pub(crate) fn check(text: &str) -> Result<(), RemoteError> {
    if text.is_empty() || text.len() > MAX_REMOTE {
        return Err(RemoteError::Length);
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (addr, after) = rest
            .split_once(']')
            .ok_or_else(|| RemoteError::NoClosingBracket(text.into()))?;
        addr.parse::<Ipv6Addr>()
            .map_err(|_| RemoteError::NotIpv6(addr.into()))?;
        return match after {
            "" => Ok(()),
            _ => match after.strip_prefix(':') {
                Some(p) => port(p),
                None => Err(RemoteError::AfterBracket(text.into())),
            },
        };
    }
    if text.parse::<Ipv6Addr>().is_ok() {
        return Ok(());
    }
    let (host, p) = match text.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (text, None),
    };
    if host.contains(':') {
        return Err(RemoteError::Unbracketed(text.into()));
    }
    if host.parse::<Ipv4Addr>().is_err() && !is_host_name(host) {
        return Err(RemoteError::NotHost(host.into()));
    }
    p.map_or(Ok(()), port)
}

/// Letters, digits, `-`, `_` and `.`, starting with a letter or digit.
fn is_host_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn port(p: &str) -> Result<(), RemoteError> {
    match p.parse::<u16>() {
        Ok(n) if n > 0 => Ok(()),
        _ => Err(RemoteError::Port(p.into())),
    }
}
