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

/// Readings of the two clocks further apart than this are taken again (a few times at most).
const TIGHT_NS: u64 = 2_000;

impl RealtimeMap {
    /// Reads both clocks now. The realtime reading is bracketed by two monotonic ones and paired
    /// with the later: if the thread is preempted between readings (a virtual CPU can lose
    /// hundreds of microseconds), stamps then map late by that much, never early, so a frame is
    /// never sent before its time. The tightest of a few brackets is kept.
    pub fn now() -> Self {
        let bracket = || {
            let before = now_ns();
            let realtime = read(libc::CLOCK_REALTIME);
            let monotonic = now_ns();
            let map = RealtimeMap {
                monotonic,
                realtime,
            };
            (monotonic - before, map)
        };
        let mut best = bracket();
        for _ in 1..4 {
            if best.0 <= TIGHT_NS {
                break;
            }
            let next = bracket();
            if next.0 < best.0 {
                best = next;
            }
        }
        best.1
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
    fn the_map_pairs_realtime_with_a_monotonic_reading_taken_after_it() {
        let before = (now_ns(), read(libc::CLOCK_REALTIME));
        let map = RealtimeMap::now();
        let after = now_ns();
        assert!(map.monotonic >= before.0 && map.monotonic <= after);
        // A stamp taken before the map comes back no later than the map's own time.
        let stamp = map.to_monotonic(before.1).unwrap();
        assert!(stamp <= map.monotonic);
    }

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
