//! The control channel of a WAN link's forwarder: a Unix socket in the lab's state directory
//! (`wan/<link>.sock`; a path, so it reaches the forwarder in its router namespace from any
//! namespace).
//!
//! ```text
//!  client                                   forwarder
//!    │── connect ───────────────────────────>│
//!    │── one Request as JSON, then EOF ─────>│   {"op":"get"} or
//!    │                                       │   {"op":"set","a_to_b":"delay=100ms","b_to_a":null,"reset":false}
//!    │<── one Response as JSON, then EOF ────│   {"Ok":{"a_to_b":"delay=…","b_to_a":"…","counters":{…}}}
//!                                                or {"Err":"delay: '1' needs a unit: ns, us, ms or s"}
//! ```
//! One request per connection; each side reads at most [`MAX_MESSAGE`] bytes.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use fathom_wan::Counters;
use serde::{Deserialize, Serialize};

/// Longest request or response, in bytes.
pub const MAX_MESSAGE: u64 = 64 * 1024;

/// What a client asks a forwarder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The current parameters and counters.
    Get,
    /// Change parameters: the keys in each given text change, the others keep their values
    /// (or take their defaults with `reset`); a direction without text is left alone.
    Set {
        /// Keys to change for frames from A to B.
        a_to_b: Option<String>,
        /// Keys to change for frames from B to A.
        b_to_a: Option<String>,
        /// Start from the defaults instead of the current parameters.
        reset: bool,
    },
}

/// What a forwarder reports: its parameters (full text form) and counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// Parameters for frames from A to B.
    pub a_to_b: String,
    /// Parameters for frames from B to A.
    pub b_to_a: String,
    /// What it forwarded, delayed and dropped since it started.
    pub counters: Counters,
}

/// A forwarder's answer: the reply, or why the request was refused (one line).
pub type Response = Result<Reply, String>;

/// Sends `request` to the forwarder listening on `socket` and returns its answer; an `Err`
/// inside the `Ok` is the forwarder refusing the request. Waits at most `timeout` per step.
pub fn ask(socket: &Path, request: &Request, timeout: Duration) -> io::Result<Response> {
    let mut stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    send(&mut stream, request)?;
    stream.shutdown(std::net::Shutdown::Write)?;
    receive(&mut stream)
}

/// Writes `message` as one JSON document.
pub fn send(stream: &mut UnixStream, message: &impl Serialize) -> io::Result<()> {
    let json = serde_json::to_vec(message).map_err(io::Error::other)?;
    stream.write_all(&json)
}

/// Reads one JSON document up to EOF, at most [`MAX_MESSAGE`] bytes.
pub fn receive<T: for<'de> Deserialize<'de>>(stream: &mut UnixStream) -> io::Result<T> {
    let mut bytes = Vec::new();
    stream.take(MAX_MESSAGE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_MESSAGE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("control message longer than {MAX_MESSAGE} bytes"),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_have_the_documented_shape() {
        let set = Request::Set {
            a_to_b: Some("delay=100ms".into()),
            b_to_a: None,
            reset: false,
        };
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            r#"{"op":"set","a_to_b":"delay=100ms","b_to_a":null,"reset":false}"#
        );
        assert_eq!(
            serde_json::from_str::<Request>(r#"{"op":"get"}"#).unwrap(),
            Request::Get
        );
        let refused: Response = Err("delay: bad".into());
        assert_eq!(
            serde_json::to_string(&refused).unwrap(),
            r#"{"Err":"delay: bad"}"#
        );
    }

    #[test]
    fn a_request_and_its_answer_cross_a_socket_pair() {
        let (mut client, mut server) = UnixStream::pair().unwrap();
        send(&mut client, &Request::Get).unwrap();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(receive::<Request>(&mut server).unwrap(), Request::Get);
        let reply: Response = Ok(Reply {
            a_to_b: "delay=1ms".into(),
            b_to_a: String::new(),
            counters: Counters::default(),
        });
        send(&mut server, &reply).unwrap();
        drop(server);
        assert_eq!(receive::<Response>(&mut client).unwrap(), reply);
    }
}
