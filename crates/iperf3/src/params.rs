//! The client's parameters (its JSON after PARAM_EXCHANGE), bounded and checked before any
//! stream is accepted. Unknown members are ignored, as iperf3's server ignores them.

use super::wire::Refusal;
use serde_json::Value;

/// iperf3's own cap on `-P`.
pub const MAX_PARALLEL: u32 = 128;
/// iperf3's largest TCP block (`-l`).
pub const MAX_TCP_LEN: u64 = 1 << 20;
/// The largest UDP payload.
pub const MAX_UDP_LEN: u64 = 65_507;
/// The smallest UDP datagram: seconds, microseconds and a 64-bit sequence number.
pub const MIN_UDP_LEN: u64 = 16;
/// The largest socket buffer asked for with `-w`.
pub const MAX_WINDOW: u64 = 512 << 20;
/// iperf3's largest MSS.
pub const MAX_MSS: u64 = 9 * 1024;
/// The longest `-O`.
pub const MAX_OMIT: u64 = 600;

/// What one test runs, as the client asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// UDP rather than TCP.
    pub udp: bool,
    /// Streams per direction.
    pub parallel: u32,
    /// The server sends (`-R`).
    pub reverse: bool,
    /// Both ends send (`--bidir`): the first `parallel` streams to the server, then as many back.
    pub bidir: bool,
    /// Seconds to run (`-t`), 0 when a byte or block count ends the test.
    pub time: u64,
    /// Seconds left out of the results at the start (`-O`).
    pub omit: u64,
    /// Bytes to send in all (`-n`, or `-k` blocks times `-l`), 0 for none.
    pub bytes: u64,
    /// Bytes per write or datagram (`-l`).
    pub len: usize,
    /// Bits per second per stream (`-b`), 0 for no limit.
    pub rate: u64,
    /// Socket buffer size (`-w`), 0 to leave the kernel's.
    pub window: u32,
    /// TCP congestion control (`-C`).
    pub congestion: Option<String>,
    /// TCP_MAXSEG (`-M`), 0 to leave it.
    pub mss: u32,
    /// TCP_NODELAY (`-N`).
    pub nodelay: bool,
    /// IP TOS byte (`-S`).
    pub tos: u8,
    /// 64-bit UDP sequence numbers (`--udp-counters-64bit`).
    pub udp64: bool,
}

impl Params {
    /// Streams the client will connect.
    pub fn streams(&self) -> u32 {
        self.parallel * if self.bidir { 2 } else { 1 }
    }

    /// Whether stream `i` (0-based, in connection order) carries data from this server.
    pub fn server_sends(&self, i: u32) -> bool {
        if self.bidir {
            i >= self.parallel
        } else {
            self.reverse
        }
    }
}

/// Reads and bounds the client's parameters; the error is the code iperf3's client prints.
pub fn parse(v: &Value) -> Result<Params, Refusal> {
    let o = v.as_object().ok_or(Refusal::RecvParams)?;
    let flag = |k: &str| {
        o.get(k)
            .is_some_and(|v| v.as_bool().unwrap_or(v.as_u64() == Some(1)))
    };
    let num = |k: &str| -> Result<u64, Refusal> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or(Refusal::RecvParams),
        }
    };
    if flag("sctp") {
        return Err(Refusal::NoSctp);
    }
    let udp = flag("udp");
    let parallel = num("parallel")?.max(1);
    if parallel > u64::from(MAX_PARALLEL) {
        return Err(Refusal::NumStreams);
    }
    let len = match num("len")? {
        0 if udp => 1460,
        0 => 128 * 1024,
        l => l,
    };
    if udp && !(MIN_UDP_LEN..=MAX_UDP_LEN).contains(&len) {
        return Err(Refusal::UdpBlockSize);
    }
    if !udp && len > MAX_TCP_LEN {
        return Err(Refusal::BlockSize);
    }
    let (n, k) = (num("num")?, num("blockcount")?);
    if n > 0 && k > 0 {
        return Err(Refusal::EndConditions);
    }
    let bytes = n.max(k.saturating_mul(len));
    let window = num("window")?;
    if window > MAX_WINDOW {
        return Err(Refusal::BufSize);
    }
    let mss = num("MSS")?;
    if mss > MAX_MSS {
        return Err(Refusal::Mss);
    }
    let omit = num("omit")?;
    if omit > MAX_OMIT {
        return Err(Refusal::Omit);
    }
    let congestion = match o.get("congestion") {
        None => None,
        Some(Value::String(s)) if valid_cc_name(s) => Some(s.clone()),
        Some(_) => return Err(Refusal::SetCongestion),
    };
    let tos = num("TOS")?;
    Ok(Params {
        udp,
        parallel: parallel as u32,
        reverse: flag("reverse"),
        bidir: flag("bidirectional"),
        time: num("time")?,
        omit,
        bytes,
        len: len as usize,
        rate: num("bandwidth")?,
        window: window as u32,
        congestion,
        mss: mss as u32,
        nodelay: flag("nodelay"),
        tos: u8::try_from(tos).map_err(|_| Refusal::Unimplemented)?,
        udp64: flag("udp_counters_64bit"),
    })
}

/// A congestion control name the kernel could know: short, letters, digits, `_` and `-`.
fn valid_cc_name(s: &str) -> bool {
    (1..16).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_3_12_client_sends() {
        let v = json!({"tcp":true,"omit":2,"time":0,"num":10485760,"blockcount":0,"MSS":1000,
            "nodelay":true,"parallel":1,"bidirectional":true,"window":262144,"len":131072,
            "pacing_timer":1000,"client_version":"3.12"});
        let p = parse(&v).unwrap();
        assert!(!p.udp && p.bidir && p.nodelay);
        assert_eq!(
            (p.bytes, p.omit, p.mss, p.window, p.streams()),
            (10_485_760, 2, 1000, 262_144, 2)
        );
        assert!(!p.server_sends(0) && p.server_sends(1));
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        assert_eq!(parse(&json!({"sctp":true})), Err(Refusal::NoSctp));
        assert_eq!(
            parse(&json!({"tcp":true,"parallel":129})),
            Err(Refusal::NumStreams)
        );
        assert_eq!(
            parse(&json!({"udp":true,"len":70000})),
            Err(Refusal::UdpBlockSize)
        );
        assert_eq!(
            parse(&json!({"tcp":true,"len":4_000_000})),
            Err(Refusal::BlockSize)
        );
        assert_eq!(
            parse(&json!({"tcp":true,"num":5,"blockcount":5})),
            Err(Refusal::EndConditions)
        );
        assert_eq!(
            parse(&json!({"tcp":true,"congestion":"../x"})),
            Err(Refusal::SetCongestion)
        );
        assert_eq!(parse(&json!([1])), Err(Refusal::RecvParams));
        assert_eq!(parse(&json!({"time":-1})), Err(Refusal::RecvParams));
    }
}
