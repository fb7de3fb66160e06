//! Where the mirror is against the other end. Each connection opens naming the transaction
//! the other end is in ([`Runner::transaction`]), and the mirror moves there when a timed
//! transaction whose iterations each connect and disconnect ended without a close telling it
//! ([`Runner::follow`]).
//!
//! A UDP flow's mirror left behind its program: datagrams lost on the way leave the mirror
//! waiting for ones that never come while the other end goes on, and that end's close of the
//! flow's connection is the mirror's only word of where it went. The mirror then walks its
//! program on, without moving data, to that close: the disconnect it was heading for, a timed
//! transaction's end, or the program's end; each datagram it waited for on the way and never
//! got is counted failed, as the other end counts the replies it never got. Its next
//! connection then finds it where the other end is.

use super::{Doing, Runner};
use crate::clock;
use crate::kinds::profile::cursor::{Action, Next};
use crate::measure::latency::Latency;
use fathom_proto::profile::PROFILE_OPS;
use std::io;

/// Flow operations a mirror may walk past to catch up: beyond them the program cannot be
/// where the other end closed the connection, and the flow fails.
const MAX_SKIPPED: u32 = 1 << 22;

impl Runner {
    /// The transaction the program is in (from 0).
    pub(in crate::kinds::profile) fn transaction(&self) -> usize {
        self.cursor.transaction()
    }

    /// The accepting end: its next connection opens in the other end's transaction `tx`
    /// (see `Cursor::follow`).
    pub(in crate::kinds::profile) fn follow(&mut self, tx: usize) {
        self.cursor.follow(tx);
    }

    /// The other end closed a datagram flow's connection with this mirror behind: walks on to
    /// where that close belongs (see the module's doc). True when the program is over.
    pub(in crate::kinds::profile) fn catch_up(&mut self, latency: &Latency) -> io::Result<bool> {
        let under_way = (self.doing, self.current);
        // A timed transaction ends at the close wherever its iteration was.
        if self.peer_ended() {
            return Ok(false);
        }
        if let (Some(doing), current) = under_way {
            // A recv under way failed; a send under way never went, and is not counted.
            self.current = current.filter(|_| matches!(doing, Doing::Recv(_)));
            self.failed = true;
            self.finish_op(clock::now_ns(), latency);
        }
        let over = self.skip_to_close(latency);
        self.stats.publish(&self.ops);
        over
    }

    /// Walks the program on to its next close, counting the datagrams it would have waited
    /// for as failed; true when the program ended instead.
    fn skip_to_close(&mut self, latency: &Latency) -> io::Result<bool> {
        for _ in 0..MAX_SKIPPED {
            let now = clock::now_ns();
            match self.cursor.next(now) {
                Next::Do(Action::Disconnect) => {
                    self.current = self.place(now);
                    self.disconnected(latency);
                    return Ok(false);
                }
                // The flow's next connection opens it.
                Next::Do(Action::Connect) => return Ok(false),
                // A datagram it would have waited for failed; one it would have sent is
                // not counted.
                Next::Do(action) => {
                    self.current = match action {
                        Action::Read(_) => self.place(now),
                        _ => None,
                    };
                    self.failed = true;
                    self.finish_op(now, latency);
                }
                // The other end passed it: it closed the connection after it.
                Next::Barrier(_) => self.cursor.pass_barrier(),
                Next::End => return Ok(true),
                // A mirror keeps no rate.
                Next::Until(_) => break,
            }
        }
        Err(io::Error::other(
            "a datagram flow's mirror could not find where the other end closed its connection",
        ))
    }

    /// The entry in the counters of the operation the cursor just gave, begun at `now`.
    fn place(&self, now: u64) -> Option<(usize, u64)> {
        self.cursor
            .position()
            .filter(|&i| i < PROFILE_OPS)
            .map(|i| (i, now))
    }
}
