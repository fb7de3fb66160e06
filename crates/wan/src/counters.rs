//! What the forwarder did, per direction: [`DirCounters`] (plain, serialisable both ways) and the atomic copy
//! the forwarding thread publishes for readers on other threads.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

/// Counts for one direction since the forwarder started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirCounters {
    /// Frames read from the ingress interface (including those later dropped).
    pub received: u64,
    /// Frames written to the egress interface.
    pub forwarded: u64,
    /// Bytes of the forwarded frames, Ethernet header included.
    pub forwarded_bytes: u64,
    /// Frames held before leaving (for delay, jitter or rate) rather than sent as they arrived.
    pub delayed: u64,
    /// Frames the loss model lost.
    pub dropped_loss: u64,
    /// Frames dropped because the bottleneck queue was at its limit.
    pub dropped_queue: u64,
    /// Frames larger than the egress MTU plus the Ethernet header (offloads left on?).
    pub dropped_oversize: u64,
    /// Frames dropped because the emulator's buffers for held frames were all in use.
    pub dropped_overflow: u64,
    /// Frames the kernel dropped because the emulator's receive ring was full (it fell behind).
    pub dropped_ring: u64,
    /// Frames the egress interface refused.
    pub dropped_tx_error: u64,
    /// Most frames ever waiting in the bottleneck queue.
    pub queue_peak_packets: u64,
    /// Most bytes ever waiting in the bottleneck queue.
    pub queue_peak_bytes: u64,
    /// Most frames ever held at once (the bottleneck queue plus the delay line).
    pub held_peak_packets: u64,
}

/// Counts for both directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Frames that entered on interface A and left on B.
    pub a_to_b: DirCounters,
    /// Frames that entered on interface B and left on A.
    pub b_to_a: DirCounters,
}

/// The published copy of a [`DirCounters`].
#[derive(Default)]
pub struct SharedCounters([AtomicU64; 13]);

impl DirCounters {
    fn fields(&self) -> [u64; 13] {
        [
            self.received,
            self.forwarded,
            self.forwarded_bytes,
            self.delayed,
            self.dropped_loss,
            self.dropped_queue,
            self.dropped_oversize,
            self.dropped_overflow,
            self.dropped_ring,
            self.dropped_tx_error,
            self.queue_peak_packets,
            self.queue_peak_bytes,
            self.held_peak_packets,
        ]
    }

    fn from_fields(f: [u64; 13]) -> Self {
        DirCounters {
            received: f[0],
            forwarded: f[1],
            forwarded_bytes: f[2],
            delayed: f[3],
            dropped_loss: f[4],
            dropped_queue: f[5],
            dropped_oversize: f[6],
            dropped_overflow: f[7],
            dropped_ring: f[8],
            dropped_tx_error: f[9],
            queue_peak_packets: f[10],
            queue_peak_bytes: f[11],
            held_peak_packets: f[12],
        }
    }
}

impl SharedCounters {
    /// Publishes the forwarding thread's current counts.
    pub fn publish(&self, counters: &DirCounters) {
        for (slot, value) in self.0.iter().zip(counters.fields()) {
            slot.store(value, Relaxed);
        }
    }

    /// The last published counts (each field exact, the set not a single instant).
    pub fn read(&self) -> DirCounters {
        DirCounters::from_fields(std::array::from_fn(|i| self.0[i].load(Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_then_read_is_identity() {
        let counters = DirCounters::from_fields(std::array::from_fn(|i| i as u64 * 3 + 1));
        let shared = SharedCounters::default();
        shared.publish(&counters);
        assert_eq!(shared.read(), counters);
    }
}
