//! A profile's socket buffers: each flow's connections open and close mid-test, so each end
//! reads its data socket's SO_SNDBUF and SO_RCVBUF as granted at the first connection and at
//! the last one's close, and the report gives those, never a 0 that was not read.

mod profile_common;

use fathom_proto::profile::{Group, Op, Protocol, Repeat, Size, Transaction};
use profile_common::{group, op};
use socket2::{Domain, Socket, Type};

/// What getsockopt returns on a fresh socket of `ty` after both buffers were set to `window`
/// (Linux doubles the request): (SO_SNDBUF, SO_RCVBUF).
fn granted(ty: Type, window: u32) -> (u32, u32) {
    let s = Socket::new(Domain::IPV4, ty, None).expect("a socket");
    s.set_send_buffer_size(window as usize).expect("SO_SNDBUF");
    s.set_recv_buffer_size(window as usize).expect("SO_RCVBUF");
    (
        s.send_buffer_size().expect("SO_SNDBUF") as u32,
        s.recv_buffer_size().expect("SO_RCVBUF") as u32,
    )
}

/// Three iterations, each a connection of its own carrying a 1 KB request and its answer.
fn churn(window: Option<u32>, protocol: Protocol) -> Group {
    let (write, read) = match protocol {
        Protocol::Udp => (Op::SendTo(Size::Fixed(1024)), Op::Recv(Size::Fixed(1024))),
        _ => (Op::Write(Size::Fixed(1024)), Op::Read(Size::Fixed(1024))),
    };
    let mut g = group(
        "churn",
        2,
        vec![Transaction {
            repeat: Repeat::Iterations(3),
            rate: None,
            barrier: false,
            ops: vec![
                op(Op::Connect, 1),
                op(write, 1),
                op(read, 1),
                op(Op::Disconnect, 1),
            ],
        }],
    );
    g.window = window;
    g.protocol = protocol;
    g
}

/// Every flow's buffers and the summary's: `want` granted and at the end, at both ends (the
/// connecting end's SO_SNDBUF, the agent's SO_RCVBUF).
fn assert_buffers(g: Group, want: (u32, u32)) {
    let runs = profile_common::run(vec![g], None);
    let r = &runs[0].report;
    assert_eq!(r.flows.len(), 2);
    for f in &r.flows {
        assert_eq!((f.sndbuf, f.rcvbuf), want, "granted: {f:?}");
        assert_eq!((f.sndbuf_end, f.rcvbuf_end), want, "at the close: {f:?}");
    }
    let b = &r.summary.buffers;
    assert_eq!(
        (b.effective_send, b.effective_recv),
        (want.0 as u64, want.1 as u64)
    );
    assert_eq!((b.final_send, b.final_recv), (want.0 as u64, want.1 as u64));
    let table = String::from_utf8(fathom_report::table::render(r)).expect("utf-8");
    assert!(table.contains("send buffer"), "{table}");
}

#[test]
fn a_tcp_profiles_window_is_reported_as_the_kernel_granted_it_at_both_ends() {
    assert_buffers(
        churn(Some(32 << 10), Protocol::Tcp),
        granted(Type::STREAM, 32 << 10),
    );
}

#[test]
fn a_udp_profiles_window_is_its_udp_sockets_buffers() {
    assert_buffers(
        churn(Some(48 << 10), Protocol::Udp),
        granted(Type::DGRAM, 48 << 10),
    );
}

#[test]
fn autotuned_buffers_are_reported_as_read_not_as_zero() {
    let runs = profile_common::run(vec![churn(None, Protocol::Tcp)], None);
    for f in &runs[0].report.flows {
        assert!(f.sndbuf > 0 && f.rcvbuf > 0, "{f:?}");
        assert!(f.sndbuf_end > 0 && f.rcvbuf_end > 0, "{f:?}");
    }
}
