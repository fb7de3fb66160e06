//! TCP_INFO: Linux's per-socket TCP statistics, read with getsockopt (one socket) or decoded from
//! the bytes a sock_diag dump carries ([`super::sock_diag`], many sockets at once).

use fathom_proto::sample::TcpInfo;
use std::os::fd::RawFd;

/// `struct tcp_info` as in include/uapi/linux/tcp.h (Linux 6.x). Older kernels fill a prefix;
/// the rest stays zero.
#[repr(C)]
#[derive(Default)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
    rcv_wnd: u32,
    rehash: u32,
    total_rto: u16,
    total_rto_recoveries: u16,
    total_rto_time: u32,
}

/// Reads TCP_INFO from a TCP socket; `None` if the descriptor is not one.
pub fn read(fd: RawFd) -> Option<TcpInfo> {
    let (raw, len) = crate::sockopt::get::<RawTcpInfo>(fd, libc::IPPROTO_TCP, libc::TCP_INFO)?;
    (len > 0).then(|| convert(&raw))
}

/// Decodes a `struct tcp_info` as the kernel wrote it (a shorter one from an older kernel leaves
/// the newer fields zero; a longer one from a newer kernel is cut to the fields known here).
pub fn decode(bytes: &[u8]) -> TcpInfo {
    let mut raw = RawTcpInfo::default();
    let n = bytes.len().min(std::mem::size_of::<RawTcpInfo>());
    // SAFETY: RawTcpInfo is plain old data (integers only, any bit pattern valid); at most its
    // size is copied from a slice at least `n` bytes long.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), (&mut raw as *mut RawTcpInfo).cast(), n)
    };
    convert(&raw)
}

fn convert(raw: &RawTcpInfo) -> TcpInfo {
    TcpInfo {
        state: raw.state,
        retransmits: raw.total_retrans,
        rtt_us: raw.rtt,
        rttvar_us: raw.rttvar,
        min_rtt_us: raw.min_rtt,
        snd_cwnd: raw.snd_cwnd,
        snd_mss: raw.snd_mss,
        rcv_mss: raw.rcv_mss,
        segs_out: raw.segs_out,
        segs_in: raw.segs_in,
        data_segs_out: raw.data_segs_out,
        data_segs_in: raw.data_segs_in,
        delivery_rate: raw.delivery_rate,
        pacing_rate: raw.pacing_rate,
        busy_time_us: raw.busy_time,
        rwnd_limited_us: raw.rwnd_limited,
        sndbuf_limited_us: raw.sndbuf_limited,
        bytes_acked: raw.bytes_acked,
        bytes_received: raw.bytes_received,
        bytes_retrans: raw.bytes_retrans,
        snd_wnd: raw.snd_wnd,
        rcv_wnd: raw.rcv_wnd,
        notsent_bytes: raw.notsent_bytes,
        unacked: raw.unacked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn layout_matches_the_kernel_header() {
        assert_eq!(std::mem::size_of::<RawTcpInfo>(), 248);
        assert_eq!(std::mem::offset_of!(RawTcpInfo, total_retrans), 100);
        assert_eq!(std::mem::offset_of!(RawTcpInfo, segs_out), 136);
        assert_eq!(std::mem::offset_of!(RawTcpInfo, delivery_rate), 160);
        assert_eq!(std::mem::offset_of!(RawTcpInfo, snd_wnd), 228);
    }

    #[test]
    fn reads_a_live_connection() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let info = read(c.as_raw_fd()).unwrap();
        assert_eq!(info.state, 1, "established");
        assert!(info.snd_mss > 0);
        assert!(
            read(l.as_raw_fd()).is_some_and(|i| i.state == 10),
            "listen state"
        );
    }
}
