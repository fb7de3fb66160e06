//! TLS set-up between two real endpoints on loopback: the connecting side accepts the pinned
//! certificate and refuses any other (a man in the middle) with a clear error; both sides time
//! their handshakes.

use fathom_engine::tls::{Identity, TlsEnd};
use fathom_engine::{Prepared, Side, Sockets};
use fathom_proto::plan::{Direction, FlowPlan, KindPlan, Limit, TestPlan};
use fathom_proto::tls::{TlsOptions, TlsVersion};
use socket2::Socket;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

const FLOW: FlowPlan = FlowPlan {
    id: 0,
    dir: Direction::Forward,
};

fn plan(opts: &TlsOptions) -> Arc<TestPlan> {
    Arc::new(TestPlan {
        kind: KindPlan::Stream,
        flows: vec![FLOW],
        limit: Limit::Bytes(1),
        tls: Some(opts.clone()),
        ..TestPlan::default()
    })
}

/// Sets up one flow with TLS: the server presents `presented`, the client pins `pinned`.
/// Returns (client's result, server's result).
fn set_up(
    presented: &Identity,
    pinned: Vec<u8>,
    opts: &TlsOptions,
) -> (Result<Prepared, String>, Result<Prepared, String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let client_sock: Socket = TcpStream::connect(l.local_addr().unwrap()).unwrap().into();
    let (server_sock, _) = l.accept().unwrap();
    let server_end = TlsEnd::server(presented, opts).unwrap();
    let client_end = TlsEnd::client(pinned, opts).unwrap();
    let (p1, p2) = (plan(opts), plan(opts));
    let server = std::thread::spawn(move || {
        Prepared::new(
            p1,
            (Side::Server, None),
            vec![0],
            Sockets::Tcp(vec![(FLOW, server_sock.into())]),
            Some(server_end),
        )
        .map_err(|e| e.to_string())
    });
    let client = Prepared::new(
        p2,
        (Side::Client, None),
        vec![0],
        Sockets::Tcp(vec![(FLOW, client_sock)]),
        Some(client_end),
    )
    .map_err(|e| e.to_string());
    (client, server.join().unwrap())
}

#[test]
fn the_pinned_certificate_is_accepted_in_both_versions() {
    let id = Identity::generate().unwrap();
    for version in [TlsVersion::V13, TlsVersion::V12] {
        let opts = TlsOptions {
            version,
            ..TlsOptions::default()
        };
        let (client, server) = set_up(&id, id.cert_der(), &opts);
        assert!(client.is_ok(), "{version:?}: {:?}", client.err());
        assert!(server.is_ok(), "{version:?}: {:?}", server.err());
    }
}

#[test]
fn another_certificate_is_refused_with_a_clear_error() {
    let agent = Identity::generate().unwrap();
    let intruder = Identity::generate().unwrap();
    let (client, server) = set_up(&intruder, agent.cert_der(), &TlsOptions::default());
    let e = client
        .err()
        .expect("the client must refuse the intruder's certificate");
    assert!(e.contains("TLS handshake on data connection 0"), "{e}");
    assert!(e.contains("a man in the middle"), "{e}");
    let e = server
        .err()
        .expect("the intruder's handshake must fail too");
    assert!(e.contains("the connecting side refused"), "{e}");
}

/// What a TLS 1.3 server end says when the connecting side sends `send` (raw bytes, or a
/// ClientHello of `hello`'s version when `send` is empty), or nothing at all.
fn server_error(send: &'static [u8], hello: Option<TlsVersion>) -> String {
    let id = Identity::generate().unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let client: Socket = TcpStream::connect(l.local_addr().unwrap()).unwrap().into();
    let (server, _) = l.accept().unwrap();
    let server: Socket = server.into();
    let pinned = id.cert_der();
    let peer = std::thread::spawn(move || {
        use std::io::Write;
        match hello {
            Some(version) => {
                let opts = TlsOptions {
                    version,
                    ..TlsOptions::default()
                };
                let _ = TlsEnd::client(pinned, &opts).unwrap().handshake(&client);
            }
            None => {
                let _ = (&client).write_all(send);
                // Silent: held open past the server's 10 s handshake timeout.
                let mut rest = Vec::new();
                let _ = std::io::Read::read_to_end(&mut &client, &mut rest);
            }
        }
    });
    let end = TlsEnd::server(&id, &TlsOptions::default()).unwrap();
    let Err(e) = end.handshake(&server) else {
        panic!("the handshake was not refused");
    };
    let e = e.to_string();
    drop(server);
    peer.join().unwrap();
    e
}

/// Plaintext, a TLS 1.2 hello and silence were all reported as "the connecting side refused
/// this end's certificate" or "Resource temporarily unavailable (os error 11)".
#[test]
fn a_failed_handshake_says_what_the_other_side_did() {
    let plain = server_error(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", None);
    assert!(
        plain.starts_with("the other side does not speak TLS: what it sent is not a TLS record"),
        "{plain}"
    );
    let old = server_error(b"", Some(TlsVersion::V12));
    assert!(
        old.starts_with(
            "the other side offers no protocol version or cipher suite this test allows \
             (TLS 1.3 only; a TLS 1.2 hello is refused)"
        ),
        "{old}"
    );
    let silent = server_error(b"", None);
    assert_eq!(silent, "the TLS handshake timed out after 10 s");
}
