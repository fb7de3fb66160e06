//! The request/response kinds' options (rr, crr, udp_rr: the plan's `KindPlan::Rr` and its
//! siblings) and their bounds.

use crate::bounds::{
    fail, within, within_ns, PlanError, MAX_BURST, MAX_IO, MAX_RATE, MAX_UDP, MAX_UDP_TIMEOUT_NS,
};
use serde::{Deserialize, Serialize};

/// Request/response shape (rr, crr, udp_rr).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RrOptions {
    /// Request size in bytes.
    pub request: u32,
    /// Response size in bytes.
    pub response: u32,
    /// Transactions in flight per connection.
    pub burst: u32,
    /// Open-loop schedule: transactions per second per test, spread over the flows.
    pub rate: Option<f64>,
    /// UDP: a transaction unanswered after this long is counted lost.
    pub udp_timeout_ns: u64,
    /// Test-only fault: the UDP responder ignores every Nth request.
    pub test_drop_every: Option<u32>,
}

impl Default for RrOptions {
    /// `fathom rr`'s defaults: 1-byte requests and responses, one in flight, closed loop.
    fn default() -> Self {
        RrOptions {
            request: 1,
            response: 1,
            burst: 1,
            rate: None,
            udp_timeout_ns: 0,
            test_drop_every: None,
        }
    }
}

impl RrOptions {
    /// Checks the bounds; `datagram` caps requests and responses at one UDP payload.
    pub(crate) fn validate(&self, datagram: bool) -> Result<(), PlanError> {
        let largest = if datagram { MAX_UDP } else { MAX_IO };
        within(
            "rr.request",
            self.request.into(),
            1,
            largest.into(),
            " bytes",
        )?;
        within(
            "rr.response",
            self.response.into(),
            1,
            largest.into(),
            " bytes",
        )?;
        within("rr.burst", self.burst.into(), 1, MAX_BURST.into(), "")?;
        if let Some(r) = self.rate {
            if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) {
                return fail(
                    "rr.rate",
                    format!("{r} is not a rate above 0 and at most {MAX_RATE} per second"),
                );
            }
        }
        within_ns("rr.udp_timeout", self.udp_timeout_ns, 0, MAX_UDP_TIMEOUT_NS)?;
        if let Some(n) = self.test_drop_every {
            within("rr.test_drop_every", n.into(), 1, u32::MAX.into(), "")?;
        }
        Ok(())
    }
}
