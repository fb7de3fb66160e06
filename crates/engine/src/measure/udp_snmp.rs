//! The host's UDP counters from /proc/net/snmp: where datagrams the receiver never read went
//! (a full receive buffer, a full send buffer).

use fathom_proto::plan::TestPlan;
use fathom_proto::sample::HostKindCounters;
use fathom_proto::udp::UdpHostCounters;

/// The host's counters `plan`'s kind reads now: UDP's, for the UDP stream.
pub fn for_plan(plan: &TestPlan) -> Option<HostKindCounters> {
    plan.udp().and_then(|_| read()).map(HostKindCounters::Udp)
}

/// The host's UDP counters now, or `None` where /proc/net/snmp cannot be read.
pub fn read() -> Option<UdpHostCounters> {
    parse(&std::fs::read_to_string("/proc/net/snmp").ok()?)
}

/// Reads the `Udp:` header and value lines of /proc/net/snmp.
fn parse(text: &str) -> Option<UdpHostCounters> {
    let mut lines = text.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let field = |name: &str| {
        let i = names.split_whitespace().position(|n| n == name)?;
        values.split_whitespace().nth(i)?.parse::<u64>().ok()
    };
    Some(UdpHostCounters {
        in_errors: field("InErrors")?,
        rcvbuf_errors: field("RcvbufErrors")?,
        sndbuf_errors: field("SndbufErrors")?,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_udp_lines() {
        let text = "Tcp: RtoAlgorithm InErrs\nTcp: 1 9\n\
            Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors\n\
            Udp: 100 2 7 90 5 3 0\nUdpLite: InDatagrams\nUdpLite: 0\n";
        let c = super::parse(text).unwrap();
        assert_eq!((c.in_errors, c.rcvbuf_errors, c.sndbuf_errors), (7, 5, 3));
        assert!(super::parse("Tcp: a\nTcp: 1\n").is_none());
    }
}
