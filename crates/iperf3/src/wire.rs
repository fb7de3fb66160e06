//! iperf3's control wire: one-byte states, the 37-byte cookie, JSON framed by a 4-byte
//! big-endian length, and the error report a server sends instead of a state. Every read has a
//! deadline and every length a cap, so a stalled or garbage peer is cut off.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A control connection: bytes both ways and a bound on each read. The server serves a
/// `TcpStream`; the fuzz harness (`fuzz`, with the `fuzz` feature) an in-memory stream.
pub trait Control: Read + Write {
    /// Bounds each read, as `TcpStream::set_read_timeout` does.
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
}

impl Control for TcpStream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }
}

/// The cookie: 36 characters from iperf3's alphabet and a NUL.
pub const COOKIE_LEN: usize = 37;
/// The largest control JSON accepted (iperf3's own messages are a few hundred bytes).
pub const MAX_JSON: usize = 64 * 1024;

/// Declares [`State`] and its lookup from a byte from one list of states, so that a state
/// added is one the peer's byte can name.
macro_rules! states {
    ($($(#[$doc:meta])* $name:ident = $byte:literal,)*) => {
        /// The one-byte states both ends send on the control connection.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(i8)]
        pub enum State {
            $($(#[$doc])* $name = $byte,)*
        }

        impl State {
            /// The state a byte from the peer names, if any.
            pub fn from_byte(b: u8) -> Option<State> {
                [$(State::$name),*].into_iter().find(|s| *s as i8 as u8 == b)
            }
        }
    };
}

states! {
    /// The streams are connected; the test is about to run.
    TestStart = 1,
    /// Data may flow.
    TestRunning = 2,
    /// The client has stopped the test.
    TestEnd = 4,
    /// The server asks for the client's parameters.
    ParamExchange = 9,
    /// The server asks the client to connect its streams.
    CreateStreams = 10,
    /// The server is going away.
    ServerTerminate = 11,
    /// The client is going away (interrupted).
    ClientTerminate = 12,
    /// Both ends swap their results.
    ExchangeResults = 13,
    /// The client may print its results.
    DisplayResults = 14,
    /// The client has finished.
    IperfDone = 16,
    /// Another test is running.
    AccessDenied = -1,
    /// An error code follows.
    ServerError = -2,
}

/// iperf3's error codes (`i_errno`) this server reports; the client prints its own text for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// "test duration too long".
    Duration = 5,
    /// "number of parallel streams too large (maximum = 128)".
    NumStreams = 6,
    /// "block size too large".
    BlockSize = 7,
    /// "socket buffer size too large".
    BufSize = 8,
    /// "MSS too large".
    Mss = 10,
    /// "bogus value for --omit".
    Omit = 12,
    /// "an option you are trying to set is not implemented yet".
    Unimplemented = 13,
    /// "only one test end condition (-t, -n, -k) may be specified".
    EndConditions = 16,
    /// "no SCTP support available".
    NoSctp = 18,
    /// "block size invalid".
    UdpBlockSize = 20,
    /// "unable to receive parameters from client".
    RecvParams = 114,
    /// "unable to set TCP_CONGESTION".
    SetCongestion = 134,
    /// "test authorization failed".
    AuthTest = 142,
}

/// Reads exactly `buf.len()` bytes before `deadline`; `UnexpectedEof` if the peer closes first,
/// `TimedOut` if it stalls.
pub fn read_by<C: Control>(s: &mut C, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the peer stalled"));
        }
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether an error is a socket timeout (EAGAIN or ETIMEDOUT from SO_RCVTIMEO/SO_SNDTIMEO).
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reads a cookie: 36 bytes of iperf3's alphabet and a NUL, or `InvalidData`.
pub fn read_cookie<C: Control>(s: &mut C, deadline: Instant) -> io::Result<[u8; COOKIE_LEN]> {
    let mut c = [0u8; COOKIE_LEN];
    read_by(s, &mut c, deadline)?;
    let ok = c[COOKIE_LEN - 1] == 0
        && c[..COOKIE_LEN - 1]
            .iter()
            .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(b));
    if ok {
        Ok(c)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not an iperf3 cookie",
        ))
    }
}

/// Reads one state byte.
pub fn read_state<C: Control>(s: &mut C, deadline: Instant) -> io::Result<u8> {
    let mut b = [0u8; 1];
    read_by(s, &mut b, deadline)?;
    Ok(b[0])
}

/// Sends one state byte.
pub fn send_state<C: Control>(s: &mut C, st: State) -> io::Result<()> {
    s.write_all(&[st as i8 as u8])
}

/// Sends SERVER_ERROR and the error code (and errno 0), as iperf3's server does.
pub fn send_refusal<C: Control>(s: &mut C, r: Refusal) -> io::Result<()> {
    let mut m = vec![State::ServerError as i8 as u8];
    m.extend_from_slice(&(r as i32).to_be_bytes());
    m.extend_from_slice(&0i32.to_be_bytes());
    s.write_all(&m)
}

/// Reads one length-framed JSON message (at most [`MAX_JSON`] bytes, nesting bounded by
/// serde_json's own limit).
pub fn read_json<C: Control>(s: &mut C, deadline: Instant) -> io::Result<serde_json::Value> {
    let mut len = [0u8; 4];
    read_by(s, &mut len, deadline)?;
    let n = u32::from_be_bytes(len) as usize;
    if n == 0 || n > MAX_JSON {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a control message of {n} bytes (at most {MAX_JSON})"),
        ));
    }
    let mut body = vec![0u8; n];
    read_by(s, &mut body, deadline)?;
    serde_json::from_slice(&body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Sends one length-framed JSON message.
pub fn send_json<C: Control>(s: &mut C, v: &serde_json::Value) -> io::Result<()> {
    let body = serde_json::to_vec(v).map_err(io::Error::other)?;
    let mut m = (body.len() as u32).to_be_bytes().to_vec();
    m.extend_from_slice(&body);
    s.write_all(&m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_byte() {
        for b in 0..=255u8 {
            if let Some(s) = State::from_byte(b) {
                assert_eq!(s as i8 as u8, b);
            }
        }
        assert_eq!(State::from_byte(0xff), Some(State::AccessDenied));
        assert_eq!(State::from_byte(16), Some(State::IperfDone));
        assert_eq!(State::from_byte(3), None);
    }
}
