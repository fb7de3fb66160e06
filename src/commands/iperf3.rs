//! `fathom serve --iperf3`: where the iperf3 port listens, and its thread.

use crate::cli::ServeArgs;
use crate::Failure;
use fathom_iperf3::{Auth, Server, DEFAULT_SKEW_S};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Binds the iperf3 port and answers iperf3 clients on a thread of its own. Without a key or
/// `--iperf3-open` it listens on loopback only, since iperf3's protocol has no key.
pub fn start(a: &ServeArgs, port: u16) -> Result<(), Failure> {
    let ip = listen_ip(a.listen.ip(), a.key_file.is_some() || a.iperf3_open);
    let addr = SocketAddr::new(ip, port);
    let auth = match (&a.rsa_private_key_path, &a.authorized_users_path) {
        (Some(key), Some(users)) => {
            let skew = a.time_skew_threshold.unwrap_or(DEFAULT_SKEW_S);
            let shift_s = a
                .test_clock_shift
                .map_or(0, |ns| (ns / 1_000_000_000) as i64);
            Some(Auth::load(key, users, skew, shift_s).map_err(|e| Failure::Usage(e.to_string()))?)
        }
        _ => None,
    };
    let mut server = Server::bind(addr, a.max_duration)
        .map_err(|e| Failure::Runtime(format!("--iperf3: cannot listen on {addr}: {e}")))?;
    if let Some(path) = &a.iperf3_store {
        fathom_store::Store::open(path).map_err(|e| Failure::Runtime(format!("--store: {e}")))?;
        server = server.with_store(path.clone(), crate::method::env::collect);
    }
    let authenticated = auth.is_some();
    if let Some(auth) = auth {
        server = server.with_auth(auth);
    }
    let bound = server
        .local_addr()
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let note = if ip != a.listen.ip() {
        " (loopback only: iperf3 has no key; --iperf3-open listens on --listen's address)"
    } else {
        ""
    };
    let rsa = if authenticated {
        " (RSA authentication required)"
    } else {
        ""
    };
    eprintln!("fathom serve: iperf3 clients on {bound}{note}{rsa}");
    std::thread::Builder::new()
        .name("iperf3".into())
        .spawn(move || server.serve())
        .map_err(|e| Failure::Runtime(format!("--iperf3: {e}")))?;
    Ok(())
}

/// The address the iperf3 port takes: --listen's when it is loopback or opening is allowed.
fn listen_ip(listen: IpAddr, open: bool) -> IpAddr {
    match listen {
        ip if open || ip.is_loopback() => ip,
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unkeyed_iperf3_port_stays_on_loopback() {
        let any: IpAddr = "0.0.0.0".parse().unwrap();
        assert_eq!(listen_ip(any, false), IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(listen_ip(any, true), any);
        assert_eq!(
            listen_ip("::".parse().unwrap(), false),
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        );
        let lo: IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(listen_ip(lo, false), lo);
    }
}
