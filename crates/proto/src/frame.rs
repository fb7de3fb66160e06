//! Framing: the fixed preamble and length-prefixed postcard messages with a size cap.

use serde::{de::DeserializeOwned, Serialize};
use std::io::{self, Read, Write};

/// The four bytes every fathom connection starts with.
pub const MAGIC: [u8; 4] = *b"FTHM";
/// Bumped whenever any message, plan or sample changes shape.
pub const PROTOCOL_VERSION: u16 = 12;
/// No control message may be larger than this (bytes after the length prefix).
pub const MAX_FRAME: usize = 16 << 20;
/// Before authentication the agent reads only small handshake messages: at most this large, so
/// that a stranger cannot make it allocate [`MAX_FRAME`] bytes per connection.
pub const PRE_AUTH_FRAME: usize = 1024;

/// What a connection is for, announced in its preamble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreambleKind {
    /// The control conversation of one test.
    Control,
    /// One data flow of a test; followed by the test's cookie and the flow id.
    Data,
    /// A process of `fathom launch` registering with its rank 0.
    Rendezvous,
}

/// The fixed 8-byte start of every connection: magic, version, kind, one reserved byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preamble {
    /// Protocol version of the sender.
    pub version: u16,
    /// What the connection is for.
    pub kind: PreambleKind,
}

/// A peer's first four bytes as text when they are printable, always in hex, and what kind of
/// server sends them first when they are well known: `"HTTP" (hex 48 54 54 50), which looks
/// like an HTTP server`.
fn first_bytes(m: &[u8; 4]) -> String {
    let hex: Vec<String> = m.iter().map(|b| format!("{b:02x}")).collect();
    let hex = format!("hex {}", hex.join(" "));
    let shown = if m.iter().all(|b| (0x20..0x7f).contains(b)) {
        format!("\"{}\" ({hex})", String::from_utf8_lossy(m))
    } else {
        hex
    };
    let like = match m {
        b"HTTP" => Some("an HTTP server"),
        b"SSH-" => Some("an SSH server"),
        [0x16, 0x03, ..] | [0x15, 0x03, ..] => Some("a TLS server"),
        b"220 " | b"220-" => Some("an FTP or SMTP server"),
        b"+OK " => Some("a POP3 server"),
        b"* OK" => Some("an IMAP server"),
        b"-ERR" => Some("a Redis server"),
        b"RFB " => Some("a VNC server"),
        _ => None,
    };
    match like {
        Some(what) => format!("{shown}, which looks like {what}"),
        None => shown,
    }
}

/// Errors of the wire layer.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The socket failed or timed out.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The peer is not speaking fathom.
    #[error("the peer is not a fathom agent or controller: it sent {}", first_bytes(.0))]
    BadMagic([u8; 4]),
    /// Both speak fathom, but different protocol versions.
    #[error("protocol version mismatch: peer speaks v{peer}, this fathom speaks v{ours}; run the same fathom release on both ends")]
    Version {
        /// The peer's version.
        peer: u16,
        /// Ours.
        ours: u16,
    },
    /// A frame announced a length above the reader's cap.
    #[error("message of {len} bytes exceeds the {cap}-byte limit")]
    TooLarge {
        /// The announced length.
        len: usize,
        /// The cap it exceeds.
        cap: usize,
    },
    /// The payload did not decode as the expected message.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// The preamble's kind byte is unknown.
    #[error("unknown connection kind {0}")]
    BadKind(u8),
}

impl Preamble {
    /// Our own preamble for a connection of `kind`.
    pub fn ours(kind: PreambleKind) -> Self {
        Preamble {
            version: PROTOCOL_VERSION,
            kind,
        }
    }

    /// The 8 bytes on the wire.
    pub fn encode(&self) -> [u8; 8] {
        let v = self.version.to_be_bytes();
        let k = match self.kind {
            PreambleKind::Control => 0,
            PreambleKind::Data => 1,
            PreambleKind::Rendezvous => 2,
        };
        [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], v[0], v[1], k, 0]
    }

    /// Parses 8 bytes; checks the magic but not the version (the caller reports mismatches, so
    /// that both ends can say which versions met).
    pub fn decode(b: [u8; 8]) -> Result<Self, FrameError> {
        let magic = [b[0], b[1], b[2], b[3]];
        if magic != MAGIC {
            return Err(FrameError::BadMagic(magic));
        }
        let kind = match b[6] {
            0 => PreambleKind::Control,
            1 => PreambleKind::Data,
            2 => PreambleKind::Rendezvous,
            k => return Err(FrameError::BadKind(k)),
        };
        Ok(Preamble {
            version: u16::from_be_bytes([b[4], b[5]]),
            kind,
        })
    }

    /// Reads a preamble from `r`.
    pub fn read_from(r: &mut impl Read) -> Result<Self, FrameError> {
        let mut b = [0u8; 8];
        r.read_exact(&mut b)?;
        Self::decode(b)
    }

    /// Fails with [`FrameError::Version`] unless the peer speaks our version.
    pub fn check_version(&self) -> Result<(), FrameError> {
        if self.version == PROTOCOL_VERSION {
            Ok(())
        } else {
            Err(FrameError::Version {
                peer: self.version,
                ours: PROTOCOL_VERSION,
            })
        }
    }
}

/// What a data connection sends after its preamble: the test's cookie and its flow id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHello {
    /// The secret the agent handed out in `Ready`.
    pub cookie: [u8; 16],
    /// Which flow of the test this connection is.
    pub flow: u32,
}

impl DataHello {
    /// Bytes on the wire, preamble included.
    pub const LEN: usize = 8 + 16 + 4;

    /// The full opening of a data connection.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..8].copy_from_slice(&Preamble::ours(PreambleKind::Data).encode());
        b[8..24].copy_from_slice(&self.cookie);
        b[24..].copy_from_slice(&self.flow.to_be_bytes());
        b
    }

    /// Reads and checks a data connection's opening (magic, version and kind).
    pub fn read_from(r: &mut impl Read) -> Result<Self, FrameError> {
        let mut b = [0u8; Self::LEN];
        r.read_exact(&mut b)?;
        let p = Preamble::decode(b[..8].try_into().expect("8 bytes"))?;
        p.check_version()?;
        if p.kind != PreambleKind::Data {
            return Err(FrameError::BadKind(0));
        }
        Ok(DataHello {
            cookie: b[8..24].try_into().expect("16 bytes"),
            flow: u32::from_be_bytes(b[24..].try_into().expect("4 bytes")),
        })
    }
}

/// A framed message stream over any byte stream (a `TcpStream` in practice).
pub struct Connection<S> {
    stream: S,
    buf: Vec<u8>,
}

impl<S: Read + Write> Connection<S> {
    /// Wraps a stream whose preamble has already been exchanged.
    pub fn new(stream: S) -> Self {
        Connection {
            stream,
            buf: Vec::with_capacity(4096),
        }
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &S {
        &self.stream
    }

    /// Sends one message.
    pub fn send<M: Serialize>(&mut self, msg: &M) -> Result<(), FrameError> {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 4]);
        let mut body = postcard::to_extend(msg, std::mem::take(&mut self.buf))
            .map_err(|e| FrameError::Malformed(e.to_string()))?;
        let len = body.len() - 4;
        if len > MAX_FRAME {
            self.buf = body;
            return Err(FrameError::TooLarge {
                len,
                cap: MAX_FRAME,
            });
        }
        body[..4].copy_from_slice(&(len as u32).to_be_bytes());
        let r = self
            .stream
            .write_all(&body)
            .and_then(|_| self.stream.flush());
        self.buf = body;
        Ok(r?)
    }

    /// Reads one message of at most `cap` bytes ([`MAX_FRAME`], or [`PRE_AUTH_FRAME`] before
    /// authentication): `Ok(None)` on a clean end of stream before a frame starts, a typed
    /// error on anything malformed. A frame above `cap` is refused before anything is allocated.
    pub fn recv<M: DeserializeOwned>(&mut self, cap: usize) -> Result<Option<M>, FrameError> {
        let mut len = [0u8; 4];
        if !read_exact_or_eof(&mut self.stream, &mut len)? {
            return Ok(None);
        }
        let len = u32::from_be_bytes(len) as usize;
        if len > cap.min(MAX_FRAME) {
            return Err(FrameError::TooLarge { len, cap });
        }
        self.buf.resize(len, 0);
        self.stream.read_exact(&mut self.buf)?;
        postcard::from_bytes(&self.buf)
            .map(Some)
            .map_err(|e| FrameError::Malformed(e.to_string()))
    }

    /// Like [`recv`](Self::recv) but a clean end of stream is an error too.
    pub fn expect<M: DeserializeOwned>(&mut self, cap: usize) -> Result<M, FrameError> {
        self.recv(cap)?.ok_or_else(|| {
            FrameError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "peer closed the connection",
            ))
        })
    }
}

/// Fills `buf`; `Ok(false)` if the stream ended before the first byte.
fn read_exact_or_eof(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    enum M {
        A(u32),
        B { s: String },
    }

    struct Pipe(Cursor<Vec<u8>>);
    impl Read for Pipe {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.0.read(b)
        }
    }
    impl Write for Pipe {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.get_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn conn(bytes: Vec<u8>) -> Connection<Pipe> {
        Connection::new(Pipe(Cursor::new(bytes)))
    }

    #[test]
    fn round_trip_and_clean_eof() {
        let mut c = conn(vec![]);
        c.send(&M::A(7)).unwrap();
        c.send(&M::B { s: "x".into() }).unwrap();
        assert_eq!(c.recv::<M>(MAX_FRAME).unwrap(), Some(M::A(7)));
        assert_eq!(
            c.recv::<M>(MAX_FRAME).unwrap(),
            Some(M::B { s: "x".into() })
        );
        assert!(c.recv::<M>(MAX_FRAME).unwrap().is_none());
    }

    #[test]
    fn oversized_and_garbage_are_errors() {
        let mut c = conn(vec![0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            c.recv::<M>(MAX_FRAME),
            Err(FrameError::TooLarge { .. })
        ));
        let mut c = conn(vec![0, 0, 0, 2, 9, 9]);
        assert!(matches!(
            c.recv::<M>(MAX_FRAME),
            Err(FrameError::Malformed(_))
        ));
        let mut c = conn(vec![0, 0, 0, 9, 1]);
        assert!(matches!(c.recv::<M>(MAX_FRAME), Err(FrameError::Io(_))));
    }

    /// D7: before authentication a 16 MiB length prefix is refused without reading on.
    #[test]
    fn the_pre_auth_cap_refuses_a_large_frame_before_reading_it() {
        let mut c = conn(vec![1, 0, 0, 0]);
        let e = c.recv::<M>(PRE_AUTH_FRAME).unwrap_err();
        assert!(
            matches!(
                e,
                FrameError::TooLarge {
                    len: 16_777_216,
                    cap: PRE_AUTH_FRAME
                }
            ),
            "{e}"
        );
        assert!(c.buf.capacity() <= 4096, "nothing allocated for the frame");
    }

    #[test]
    fn data_hello_round_trip() {
        let h = DataHello {
            cookie: [7; 16],
            flow: 42,
        };
        assert_eq!(DataHello::read_from(&mut &h.encode()[..]).unwrap(), h);
        let mut bad = h.encode();
        bad[6] = 0;
        assert!(DataHello::read_from(&mut &bad[..]).is_err());
    }

    #[test]
    fn preamble_checks() {
        let p = Preamble::ours(PreambleKind::Data);
        assert_eq!(Preamble::decode(p.encode()).unwrap(), p);
        let e = Preamble::decode(*b"HTTP/1.1").unwrap_err();
        assert!(matches!(e, FrameError::BadMagic(_)));
        assert_eq!(
            e.to_string(),
            "the peer is not a fathom agent or controller: it sent \"HTTP\" (hex 48 54 54 50), \
             which looks like an HTTP server"
        );
        let e = Preamble::decode([0x16, 0x03, 0x01, 0x00, 0, 0, 0, 0]).unwrap_err();
        assert!(
            e.to_string()
                .ends_with(": it sent hex 16 03 01 00, which looks like a TLS server"),
            "{e}"
        );
        let old = Preamble {
            version: PROTOCOL_VERSION + 1,
            kind: PreambleKind::Control,
        };
        let e = Preamble::decode(old.encode())
            .unwrap()
            .check_version()
            .unwrap_err();
        assert!(e.to_string().contains("mismatch"), "{e}");
    }
}
