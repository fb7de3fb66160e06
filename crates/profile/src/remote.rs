//! A group's `remote`: a lab host name or an agent's HOST[:PORT], checked for syntax only
//! (names are resolved when the profile runs).

use std::net::{Ipv4Addr, Ipv6Addr};

/// Longest remote, bytes (a DNS name and a port).
const MAX_REMOTE: usize = 260;

/// Checks `text` is NAME, HOST, HOST:PORT, `[IPv6]` or `[IPv6]:PORT`.
pub(crate) fn check(text: &str) -> Result<(), String> {
    const TRY: &str = "write a lab host name (h2), HOST[:PORT] (10.0.0.2:5301) or [IPv6]:PORT";
    if text.is_empty() || text.len() > MAX_REMOTE {
        return Err(format!("must be 1..={MAX_REMOTE} bytes; {TRY}"));
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (addr, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("'{text}' has no closing ']'; {TRY}"))?;
        addr.parse::<Ipv6Addr>()
            .map_err(|_| format!("'{addr}' is not an IPv6 address; {TRY}"))?;
        return match after {
            "" => Ok(()),
            _ => match after.strip_prefix(':') {
                Some(p) => port(p),
                None => Err(format!("'{text}': expected :PORT after ']'; {TRY}")),
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
        return Err(format!(
            "'{text}': an IPv6 address with a port goes in brackets; {TRY}"
        ));
    }
    if host.parse::<Ipv4Addr>().is_err() && !is_host_name(host) {
        return Err(format!("'{host}' is not a host name or address; {TRY}"));
    }
    p.map_or(Ok(()), port)
}

/// Letters, digits, `-`, `_` and `.`, starting with a letter or digit.
fn is_host_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn port(p: &str) -> Result<(), String> {
    match p.parse::<u16>() {
        Ok(n) if n > 0 => Ok(()),
        _ => Err(format!("port '{p}' is not in 1..=65535")),
    }
}
