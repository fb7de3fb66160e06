//! Time for the forwarder: CLOCK_MONOTONIC in nanoseconds, the kernel's receive stamps
//! (CLOCK_REALTIME) brought onto it, and a thread's timer slack.

/// Nanoseconds on CLOCK_MONOTONIC.
pub fn now_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// Maps CLOCK_REALTIME stamps onto CLOCK_MONOTONIC, as the two clocks stand when it is made.
#[derive(Clone, Copy, Debug)]
pub struct RealtimeMap {
    monotonic: u64,
    realtime: u64,
}

/// Stamps further than this from the present are not trusted (the wall clock was stepped).
const TRUST_NS: u64 = 1_000_000_000;

impl RealtimeMap {
    /// Reads both clocks now.
    pub fn now() -> Self {
        RealtimeMap {
            monotonic: now_ns(),
            realtime: read(libc::CLOCK_REALTIME),
        }
    }

    /// The monotonic time when the map was made.
    pub fn monotonic(self) -> u64 {
        self.monotonic
    }

    /// The monotonic time of a realtime stamp taken before this map was made (`None` if it was
    /// taken after); the map's own time if the stamp is implausibly old.
    pub fn to_monotonic(self, realtime_ns: u64) -> Option<u64> {
        let age = self.realtime.checked_sub(realtime_ns)?;
        Some(if age < TRUST_NS {
            self.monotonic.saturating_sub(age)
        } else {
            self.monotonic
        })
    }
}

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks used here always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Makes the calling thread's timed waits wake as close to their deadline as the kernel can
/// (the default slack lets them wake up to 50 µs late).
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches only the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realtime_stamps_map_back_by_their_age() {
        let map = RealtimeMap {
            monotonic: 5_000_000_000,
            realtime: 1_700_000_000_000_000_000,
        };
        let forty_us_ago = map.to_monotonic(map.realtime - 40_000);
        assert_eq!(forty_us_ago, Some(map.monotonic - 40_000));
        assert_eq!(map.to_monotonic(map.realtime + 1), None);
        assert_eq!(map.to_monotonic(0), Some(map.monotonic));
    }
}
