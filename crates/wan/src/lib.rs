//! fathom's WAN emulator: a user-space forwarder for a router network namespace that carries
//! Ethernet frames between two interfaces and delays, jitters, loses, rate-limits and queues them,
//! separately per direction, from a seed so runs repeat. It stands in for `netem`, which many
//! kernels (this one included) lack.
//!
//! ```text
//!  host A ──veth── [ IF_A   router namespace   IF_B ] ──veth── host B
//!                      │  Forwarder: a thread per direction   │
//!                      └─ RX ring ─> Link ─> TimeQueue ─> sendmmsg ┘
//! ```
//!
//! - [`LinkParams`] says what one direction does; it parses from
//!   `"delay=50ms,jitter=2ms,loss=0.1%,rate=1G,queue=1000p"` (see [`params`] for every key and
//!   unit). `delay` is one way: 50 ms each way is a 100 ms round trip.
//! - [`Forwarder::start`] runs the emulator between two interfaces of the calling thread's network
//!   namespace; [`netns::enter`] moves a thread into the router's namespace first.
//!   [`Forwarder::set_params`] changes a direction while it runs; [`Forwarder::counters`] reports
//!   what it forwarded, delayed and dropped, and why.
//! - [`disable_offloads`] must be applied to both ends of each veth pair that meets the router
//!   (see [`offload`] for why).
//!
//! How a frame is treated, in order: larger than the egress MTU → dropped (`oversize`); the loss
//! model → `loss`; the bottleneck queue in front of the rate limiter full → `queue` (tail drop);
//! then it leaves when the token bucket allows, plus the delay and jitter. Without `reorder` a
//! frame never leaves before the one that arrived before it.
//!
//! Mechanism (chosen by measurement, see `bench/RESULTS-wan.md`): one thread per direction, each
//! reading a TPACKET_V2 receive ring (`ring`: the kernel copies frames in as they arrive, no
//! system call per batch) and writing with `sendmmsg` batches (`socket`); a frame due at once is
//! sent straight from its ring slot, a frame to hold is copied into a preallocated pool. Arrival
//! times are the kernel's receive stamps, so a thread's wake-up latency does not add to the delay;
//! departures use CLOCK_MONOTONIC, `ppoll` with a 1 ns timer slack, and a 50 µs spin. The threads
//! ask for `SCHED_FIFO` (lowest real-time priority) when the process may have it.
//!
//! Counters ([`Forwarder::counters`]) say what was forwarded, delayed and dropped and why; any
//! `dropped_ring` or `dropped_overflow` means the emulator itself fell short, not the link model.

mod backlog;
mod clock;
mod counters;
mod forwarder;
mod lane;
mod link;
mod loss;
pub mod netns;
pub mod offload;
pub mod params;
mod queue;
mod ring;
mod rng;
mod shaper;
mod socket;
mod worker;

pub use counters::{Counters, DirCounters};
pub use forwarder::{Direction, Forwarder, CAPACITY};
pub use offload::disable_offloads;
pub use params::{LinkParams, LossModel, ParamsError, QueueLimit, Reason};
