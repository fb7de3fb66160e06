//! The emulator's handle: [`Forwarder::start`] opens the sockets on two interfaces of the calling
//! thread's network namespace and starts one thread per direction; the handle changes parameters
//! while it runs, reads counters, and stops it (also on drop).

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::counters::Counters;
use crate::lane::{Lane, LaneShared};
use crate::params::LinkParams;
use crate::ring::RxRing;
use crate::socket::PacketSocket;
use crate::worker;

/// Most frames one direction holds at once (in its bottleneck queue and delay line together);
/// beyond it frames are dropped and counted as `dropped_overflow`. 65536 full-size frames are
/// 1 Gbit/s for 780 ms. Buffers are allocated up front but touched only when used.
pub const CAPACITY: usize = 65536;

/// Slots in each receive ring: frames that can arrive while a forwarding thread is not running
/// before the kernel drops them (`dropped_ring`). 8192 is 10 ms of 64-byte frames at 800k/s;
/// the ring takes 16 MB of kernel memory per direction at a 1500-byte MTU.
const RING_FRAMES: usize = 8192;

/// One direction of the emulated link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Frames entering on interface A and leaving on B.
    AToB,
    /// Frames entering on interface B and leaving on A.
    BToA,
}

/// A running emulator between two interfaces. Dropping it stops it.
pub struct Forwarder {
    shared: [Arc<LaneShared>; 2],
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<io::Result<()>>>,
}

impl Forwarder {
    /// Starts forwarding between interfaces `a` and `b` of the calling thread's network namespace,
    /// with `a_to_b` applied to frames from A to B and `b_to_a` to the others. The interfaces must
    /// be up, with offloads off on both ends of each link (see [`crate::disable_offloads`]).
    pub fn start(
        a: &str,
        b: &str,
        a_to_b: LinkParams,
        b_to_a: LinkParams,
    ) -> io::Result<Forwarder> {
        if a == b {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("both sides are '{a}'"),
            ));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let shared = [a_to_b, b_to_a].map(|params| Arc::new(LaneShared::new(params)));
        let mut lanes = Vec::with_capacity(2);
        for (from, to, shared) in [(a, b, &shared[0]), (b, a, &shared[1])] {
            let tx = PacketSocket::sender(to)?;
            let max_frame = tx.mtu(to)? + 14;
            let rx = RxRing::open(from, RING_FRAMES, max_frame)?;
            lanes.push(Lane::new(rx, tx, max_frame, CAPACITY, shared.clone()));
        }
        let mut forwarder = Forwarder {
            shared,
            stop,
            threads: Vec::with_capacity(2),
        };
        for (lane, name) in lanes.into_iter().zip(["fwan-a2b", "fwan-b2a"]) {
            let stop = forwarder.stop.clone();
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || worker::run(lane, stop))?;
            forwarder.threads.push(thread);
        }
        Ok(forwarder)
    }

    /// Applies `params` to the frames of `direction` that arrive from now on (within 20 ms);
    /// frames already held keep their departure times.
    pub fn set_params(&self, direction: Direction, params: LinkParams) {
        self.shared[direction as usize].set_params(params);
    }

    /// The parameters last set for `direction`.
    pub fn params(&self, direction: Direction) -> LinkParams {
        self.shared[direction as usize].params()
    }

    /// The counters as last published by the threads (at most about 20 ms old).
    pub fn counters(&self) -> Counters {
        Counters {
            a_to_b: self.shared[0].counters.read(),
            b_to_a: self.shared[1].counters.read(),
        }
    }

    /// Stops both threads and returns the final counters, or the first error a thread met.
    pub fn stop(mut self) -> io::Result<Counters> {
        self.join()?;
        Ok(self.counters())
    }

    fn join(&mut self) -> io::Result<()> {
        self.stop.store(true, Relaxed);
        let mut result = Ok(());
        for thread in self.threads.drain(..) {
            let outcome = thread
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("forwarding thread panicked")));
            result = result.and(outcome);
        }
        result
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        // Errors were the caller's to collect with `stop`; dropping only ends the threads.
        let _ = self.join();
    }
}
