//! The client's UDP streams: each socket is connected to the server's port and sends iperf3's
//! 4-byte hello; the server connects a socket of its own to it and answers with 4 bytes, after
//! which the stream carries datagrams (`udp` sends and counts them, as on the server's side).

use super::error::TestError;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Instant;

/// The hello ("9876" on the wire from a little-endian host: iperf3 writes the integer in host
/// order).
const HELLO: u32 = 0x3637_3839;
/// The receive buffer a stream asks for unless `-w` says otherwise, as `fathom udp` does (see
/// `cli::udp::DEFAULT_RCVBUF`): the kernel's default absorbs too short a burst.
const RCVBUF: usize = 4 << 20;

/// Opens one UDP stream to the iperf3 server at `addr`: hello, then the server's answer before
/// `deadline`. `window` (`-w`, 0 for none) sets both socket buffers.
pub fn connect(addr: SocketAddr, window: u32, deadline: Instant) -> Result<UdpSocket, TestError> {
    let fail = |e: io::Error| TestError::at(format!("opening a UDP stream to {addr}"))(e);
    let s =
        Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP)).map_err(fail)?;
    if window > 0 {
        s.set_send_buffer_size(window as usize).map_err(fail)?;
        s.set_recv_buffer_size(window as usize).map_err(fail)?;
    } else {
        // Clamped to net.core.rmem_max by the kernel; a smaller buffer still works.
        let _ = s.set_recv_buffer_size(RCVBUF);
    }
    s.connect(&addr.into()).map_err(fail)?;
    let s: UdpSocket = s.into();
    s.send(&HELLO.to_ne_bytes()).map_err(fail)?;
    let mut b = [0u8; 64];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(TestError::NoUdpAnswer(addr));
        }
        s.set_read_timeout(Some(left)).map_err(fail)?;
        match s.recv(&mut b) {
            Ok(4) => return Ok(s),
            Ok(_) => {}
            Err(e) if super::wire::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(fail(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_stream_opens_once_the_server_answers_and_times_out_otherwise() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let answer = std::thread::spawn(move || {
            let mut b = [0u8; 8];
            let (n, peer) = server.recv_from(&mut b).unwrap();
            assert_eq!(&b[..n], &HELLO.to_ne_bytes());
            server.send_to(&[0x36, 0x37, 0x38, 0x39], peer).unwrap();
        });
        let deadline = Instant::now() + Duration::from_secs(5);
        assert!(connect(addr, 0, deadline).is_ok());
        answer.join().unwrap();
        let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
        let deadline = Instant::now() + Duration::from_millis(100);
        let err = connect(silent.local_addr().unwrap(), 0, deadline)
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not answer"), "{err}");
    }
}
