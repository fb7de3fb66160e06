//! `fathom stream --rate`: SO_MAX_PACING_RATE on every connection this end sends on. The option
//! is read back with getsockopt, and a paced stream over loopback moves no more than a loose
//! multiple of what its rate allows (never a speed assertion beyond "not wildly above").

mod common;
use common::*;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

/// SO_MAX_PACING_RATE as the kernel reports it.
fn pacing_rate(s: &TcpStream) -> u64 {
    let mut v: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: v and len are valid; the kernel writes at most len bytes (4 on kernels that
    // report a 32-bit rate, read back below).
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&mut v as *mut u64).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    if len == 4 {
        u64::from(u32::from_ne_bytes(v.to_ne_bytes()[..4].try_into().unwrap()))
    } else {
        v
    }
}

#[test]
fn the_pacing_rate_is_set_on_the_socket() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    fathom_engine::sockopt::set_max_pacing_rate(s.as_raw_fd(), 12_500_000).unwrap();
    assert_eq!(pacing_rate(&s), 12_500_000);
    fathom_engine::sockopt::set_max_pacing_rate(s.as_raw_fd(), 5_000_000_000).unwrap();
    assert_eq!(pacing_rate(&s), 5_000_000_000);
}

#[test]
fn a_paced_stream_moves_no_more_than_a_loose_multiple_of_its_rate() {
    // 100 Mbit/s for 1 s is 12.5 MB; unpaced, loopback moves hundreds of MB in that time.
    let j = run_json(
        &["stream", "--rate", "100M", "-P", "2", "-t", "1s", "--json"],
        60,
    );
    let bytes = u(&j["summary"]["bytes"]);
    assert!(bytes > 0 && bytes < 4 * 12_500_000, "{bytes} bytes");
}

#[test]
fn rate_is_refused_where_other_hosts_send() {
    for args in [
        &["stream", "--rate", "100M", "-R"][..],
        &["stream", "--rate", "100M", "--bidir"],
    ] {
        let err = run_exit(args, 30, 2);
        assert!(err.contains("--rate"), "{err}");
    }
}
