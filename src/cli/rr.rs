//! `fathom rr` and `fathom crr`: request/response options, validated into a [`TestPlan`].

use super::common::CommonArgs;
use super::error::{ArgsError, Sets};
use super::kind::KindArgs;
use super::stream::flows;
use super::tls::TlsArgs;
use super::units::{parse_duration, parse_size};
use fathom_proto::plan::*;

/// `fathom rr [HOST[:PORT]]` and `fathom crr [HOST[:PORT]]`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  fathom rr HOST                          1-byte request, 1-byte response, 10 s
  fathom rr HOST --size 1460              request and response both 1460 bytes
  fathom rr HOST --size 100,8K -P 8       100-byte request, 8 KB response, 8 connections
  fathom rr HOST --quickack --nodelay     delayed ACKs off, Nagle off
  fathom rr HOST --burst 16               16 transactions in flight per connection
  fathom rr HOST --rate 5000              open loop: 5000 tx/s scheduled, latency from the schedule
  fathom rr HOST --busy-poll              spin instead of sleeping (costs a CPU per worker)
  fathom crr HOST                         a new connection per transaction
  fathom rr HOST --udp                    UDP request/response")]
pub struct RrArgs {
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Request and response sizes: REQ[,RESP] (RESP defaults to REQ).
    #[arg(long, default_value = "1", value_name = "REQ[,RESP]")]
    pub size: String,
    /// Perform exactly this many transactions (split over the connections) instead of a time.
    #[arg(short = 'n', long, value_name = "N")]
    pub transactions: Option<u64>,
    /// Transactions in flight per connection.
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub burst: u32,
    /// Open loop: this many transactions per second in all, scheduled; latency counts from the
    /// scheduled instant.
    #[arg(long, value_name = "TX/S", allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Keep TCP_QUICKACK set after every read (delayed ACKs off).
    #[arg(long)]
    pub quickack: bool,
    /// Spin in the event loop instead of sleeping, and set SO_BUSY_POLL.
    #[arg(long)]
    pub busy_poll: bool,
    /// UDP request/response instead of TCP.
    #[arg(long)]
    pub udp: bool,
    /// UDP: a transaction unanswered this long is lost (default: 4 round trips, at least 2 ms).
    #[arg(long, value_parser = parse_duration, value_name = "DUR", allow_hyphen_values = true)]
    pub udp_timeout: Option<u64>,
    /// Reverse: the agent asks, this side answers.
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Test-only fault: the UDP responder ignores every Nth request.
    #[arg(long, hide = true, value_name = "N")]
    pub test_drop_every: Option<u32>,
    /// TLS options.
    #[command(flatten)]
    pub tls: super::tls::TlsArgs,
}

/// Parses `REQ[,RESP]`.
pub fn parse_sizes(s: &str) -> Result<(u32, u32), ArgsError> {
    let size = |reason: String| ArgsError::flag("--size", reason);
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 2 {
        return Err(size(format!(
            "'{s}' has {} sizes; give REQ or REQ,RESP",
            parts.len()
        )));
    }
    let one = |p: &str| -> Result<u32, ArgsError> {
        let v = parse_size(p).map_err(|e| size(e.to_string()))?;
        if v == 0 {
            return Err(size("sizes must be at least 1 byte".into()));
        }
        u32::try_from(v)
            .ok()
            .filter(|v| *v <= 64 << 20)
            .ok_or_else(|| size(format!("'{p}' is above 64M")))
    };
    let req = one(parts[0])?;
    let resp = parts.get(1).map(|p| one(p)).transpose()?.unwrap_or(req);
    Ok((req, resp))
}

impl RrArgs {
    /// Validates the options into a plan of kind `rr` (or `udp_rr` with --udp) or `crr`.
    pub fn plan(&self, crr: bool) -> Result<TestPlan, ArgsError> {
        let c = &self.common;
        c.validate()?;
        let (request, response) = parse_sizes(&self.size)?;
        let kind: fn(RrOptions) -> KindPlan = match (crr, self.udp) {
            (true, true) => return Err(ArgsError::flag("--udp", "crr is TCP only; use rr --udp")),
            (true, false) => KindPlan::Crr,
            (false, true) => KindPlan::UdpRr,
            (false, false) => KindPlan::Rr,
        };
        if crr && self.reverse {
            return Err(ArgsError::flag(
                "-R/--reverse",
                "crr connects from this side only",
            ));
        }
        if !self.udp && (self.udp_timeout.is_some() || self.test_drop_every.is_some()) {
            return Err(ArgsError::flag("--udp-timeout", "applies to --udp only"));
        }
        let limit = c.limit("-n/--transactions", self.transactions, Limit::Transactions)?;
        let mut socket = c.socket();
        socket.quickack = self.quickack;
        socket.busy_poll = self.busy_poll;
        let (client, server) = c.sides();
        let largest = request.max(response);
        let plan = super::common::checked(TestPlan {
            kind: kind(RrOptions {
                request,
                response,
                burst: self.burst,
                rate: self.rate,
                udp_timeout_ns: self.udp_timeout.unwrap_or(0),
                test_drop_every: self.test_drop_every,
            }),
            flows: flows(c.connections(), self.reverse, false),
            limit,
            omit_ns: c.omit,
            interval_ns: c.interval,
            socket,
            write_size: largest,
            read_size: largest.max(64 << 10),
            tls: self.tls.options()?,
            client,
            server,
            ..TestPlan::default()
        })?;
        c.check_spinning(&plan)?;
        Ok(plan)
    }
}

/// The plan fields the request/response options set.
const SETS: &[Sets] = &[
    Sets::by(&["limit.transactions"], &["transactions"]),
    Sets::by(&["rr", "rr.request", "rr.response"], &["size"]),
    Sets::by(&["rr.burst"], &["burst"]),
    Sets::by(&["rr.rate"], &["rate"]),
    Sets::by(&["rr.udp_timeout"], &["udp_timeout"]),
    Sets::by(&["rr.test_drop_every"], &["test_drop_every"]),
];

impl KindArgs for RrArgs {
    fn plan_for(&self, kind: KindId) -> Result<TestPlan, ArgsError> {
        self.plan(kind == KindId::Crr)
    }

    fn sets(&self) -> &'static [Sets] {
        SETS
    }

    fn tls(&self) -> Option<&TlsArgs> {
        Some(&self.tls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_sizes("1").unwrap(), (1, 1));
        assert_eq!(parse_sizes("100,8K").unwrap(), (100, 8192));
        let err = |s| parse_sizes(s).unwrap_err().to_string();
        assert!(err("0").contains("at least 1"));
        assert!(err("1,2,3").contains("3 sizes"));
        assert!(parse_sizes("1x").is_err());
    }
}
