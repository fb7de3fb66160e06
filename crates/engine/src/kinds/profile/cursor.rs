//! Where a flow stands in its program: the transaction, iteration, flow operation and
//! repetition, the flow's size generator and whether its connection is open. Both ends walk the
//! same program with a cursor each (the accepting end through [`Op::mirror`]), drawing the same
//! sizes in the same order, so a `write` of `rand(1,64K)` here is a `read` of exactly as many
//! bytes there.

use fathom_proto::profile::{Op, Program, Repeat, Size};
use std::sync::Arc;

/// What the flow does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    /// Open the flow's connection (the accepting end: take this one).
    Connect,
    /// Close it (both ends read to the other's end of stream first).
    Disconnect,
    /// Write this many bytes.
    Write(u64),
    /// Read exactly this many bytes.
    Read(u64),
    /// Do nothing on the flow for this many ns.
    Think(u64),
}

/// The cursor's answer to "what now?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Do this.
    Do(Action),
    /// The next iteration starts at this instant (a transaction with a rate).
    Until(u64),
    /// Transaction this many ended, and it waits for every flow (its `barrier`) before the
    /// next one starts; call [`Cursor::pass_barrier`] once they all got there.
    Barrier(usize),
    /// The program is over and the connection closed.
    End,
}

/// A flow's place in its program.
pub(super) struct Cursor {
    program: Arc<Program>,
    /// Runs the mirror image (the accepting end).
    mirror: bool,
    rng: u64,
    tx: usize,
    /// Iterations completed in the current transaction.
    done: u64,
    op: usize,
    /// Repetitions of the current operation left (0: not started).
    left: u32,
    /// When the current transaction began.
    tx_start: Option<u64>,
    /// When the next iteration may begin (transactions with a rate).
    next_iter: u64,
    /// When the current iteration began.
    iter_start: u64,
    /// The current connect or disconnect is the cursor's own, not one of the program's.
    implicit: bool,
    connected: bool,
    /// The current transaction's barrier is passed.
    passed: bool,
    iterations: u64,
    /// Each transaction's first operation's place in program order.
    offsets: Vec<usize>,
}

impl Cursor {
    /// The start of `program` for flow `flow`, as written or (`mirror`) mirrored.
    pub(super) fn new(program: Arc<Program>, flow: u32, mirror: bool) -> Cursor {
        let rng = program.seed ^ u64::from(flow).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let offsets = program
            .transactions
            .iter()
            .scan(0, |at, t| {
                let first = *at;
                *at += t.ops.len();
                Some(first)
            })
            .collect();
        Cursor {
            offsets,
            program,
            mirror,
            rng,
            tx: 0,
            done: 0,
            op: 0,
            left: 0,
            tx_start: None,
            next_iter: 0,
            iter_start: 0,
            implicit: false,
            connected: false,
            passed: false,
            iterations: 0,
        }
    }

    /// The place in program order of the operation [`Cursor::next`] gave, none when that was
    /// the cursor's own connect or disconnect.
    pub(super) fn position(&self) -> Option<usize> {
        match self.implicit {
            true => None,
            false => self.offsets.get(self.tx).map(|first| first + self.op),
        }
    }

    /// Iterations completed, over all transactions.
    pub(super) fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The next action at `now`; call again only once it is done (see [`Cursor::done`]).
    pub(super) fn next(&mut self, now: u64) -> Next {
        loop {
            let Some(t) = self.program.transactions.get(self.tx) else {
                return self.close_or(Next::End);
            };
            let (repeat, rate, barrier) = (t.repeat, t.rate, t.barrier);
            if self.op == 0 && self.left == 0 {
                match self.begin_iteration(repeat, rate, now) {
                    Begin::Go => {}
                    Begin::Wait(until) => return Next::Until(until),
                    Begin::Close => return self.close_or(Next::End),
                    // The mirror waits only with its connection open: else the flow's next
                    // connection, opened after the barrier, is its word to go on.
                    Begin::Over if barrier && !self.passed && (!self.mirror || self.connected) => {
                        return Next::Barrier(self.tx)
                    }
                    Begin::Over => {
                        self.next_transaction();
                        continue;
                    }
                }
            }
            let f = &self.program.transactions[self.tx].ops[self.op];
            if self.left == 0 {
                self.left = f.count.max(1);
            }
            let (what, size) = role(&f.op, self.mirror);
            let action = match what {
                What::Connect if !self.connected => Some(Action::Connect),
                What::Disconnect if self.connected => Some(Action::Disconnect),
                What::Connect | What::Disconnect => None,
                What::Write | What::Read if !self.connected => {
                    self.implicit = true;
                    return Next::Do(Action::Connect);
                }
                What::Write => Some(Action::Write(draw(&mut self.rng, size))),
                What::Read => Some(Action::Read(draw(&mut self.rng, size))),
                What::Think => Some(Action::Think(
                    draw(&mut self.rng, size).saturating_mul(1_000),
                )),
                // The mirror of a think draws its size too, so that both ends stay in step.
                What::Skip => {
                    draw(&mut self.rng, size);
                    None
                }
            };
            match action {
                Some(a) => {
                    self.implicit = false;
                    return Next::Do(a);
                }
                None => {
                    self.done();
                }
            }
        }
    }

    /// At an iteration's start: whether it runs now, later (its rate), or the transaction is
    /// over (its connection to close first when it was timed).
    fn begin_iteration(&mut self, repeat: Repeat, rate: Option<u32>, now: u64) -> Begin {
        let start = *self.tx_start.get_or_insert(now);
        let over = match repeat {
            Repeat::Iterations(n) => self.done >= n,
            // The accepting end learns of the end from the connection (`peer_ended`).
            Repeat::DurationMs(ms) => {
                !self.mirror && now.saturating_sub(start) >= ms.saturating_mul(1_000_000)
            }
        };
        if over {
            return match repeat {
                Repeat::DurationMs(_) if self.connected => Begin::Close,
                _ => Begin::Over,
            };
        }
        if let (Some(rate), false) = (rate, self.mirror) {
            if now < self.next_iter {
                return Begin::Wait(self.next_iter);
            }
            let period = 1_000_000_000 / u64::from(rate.max(1));
            // Open loop: a late iteration is not made up.
            self.next_iter = match self.next_iter.max(start).saturating_add(period) {
                due if due <= now => now,
                due => due,
            };
        }
        self.iter_start = now;
        Begin::Go
    }

    /// The action [`Cursor::next`] gave is done; the iteration it ended, if any, began at the
    /// instant returned.
    pub(super) fn done(&mut self) -> Option<u64> {
        self.left = self.left.saturating_sub(1);
        if self.left > 0 {
            return None;
        }
        self.op += 1;
        let len = self
            .program
            .transactions
            .get(self.tx)
            .map_or(0, |t| t.ops.len());
        if self.op < len {
            return None;
        }
        self.op = 0;
        self.done += 1;
        self.iterations += 1;
        Some(self.iter_start)
    }

    /// The connection asked for is open.
    pub(super) fn connected(&mut self) {
        self.connected = true;
        if !self.implicit {
            self.done();
        }
    }

    /// The connection is closed; the iteration that ended, if the close was the program's
    /// last operation of one.
    pub(super) fn disconnected(&mut self) -> Option<u64> {
        self.connected = false;
        if self.implicit {
            return None;
        }
        self.done()
    }

    /// The other end closed the connection: true when that ends a timed transaction (the
    /// accepting end's way to learn of it), false when the program did not expect it.
    pub(super) fn peer_ended(&mut self) -> bool {
        let timed = self
            .program
            .transactions
            .get(self.tx)
            .is_some_and(|t| matches!(t.repeat, Repeat::DurationMs(_)));
        if timed {
            self.connected = false;
            self.next_transaction();
        }
        timed
    }

    /// True at an iteration's start on the accepting end of a timed transaction whose
    /// iterations read nothing there: only a probe of the connection can tell it is over.
    pub(super) fn must_probe(&self) -> bool {
        let Some(t) = self.program.transactions.get(self.tx) else {
            return false;
        };
        self.mirror
            && self.connected
            && self.op == 0
            && self.left == 0
            && matches!(t.repeat, Repeat::DurationMs(_))
            && !t
                .ops
                .iter()
                .any(|f| matches!(role(&f.op, true).0, What::Read | What::Disconnect))
    }

    /// Closes the connection first if it is open (its own close), else `then`.
    fn close_or(&mut self, then: Next) -> Next {
        if self.connected {
            self.implicit = true;
            Next::Do(Action::Disconnect)
        } else {
            then
        }
    }

    /// Whether the program's operation [`Cursor::next`] gave may fail (`can_fail`); never
    /// the cursor's own connect or disconnect.
    pub(super) fn can_fail(&self) -> bool {
        !self.implicit
            && self
                .program
                .transactions
                .get(self.tx)
                .and_then(|t| t.ops.get(self.op))
                .is_some_and(|f| f.can_fail)
    }

    /// The connection broke under a failed operation: the flow is unconnected.
    pub(super) fn dropped(&mut self) {
        self.connected = false;
    }

    /// The transaction it is in (from 0).
    pub(super) fn transaction(&self) -> usize {
        self.tx
    }

    /// The accepting end, unconnected: the other end's next connection opens in transaction
    /// `tx`. A timed transaction this end is in, whose iterations each connect and disconnect
    /// (so no close told it of the end), ended there: this end moves on towards `tx`, drawing
    /// the sizes of the thinks left of its iteration as the other end did. Transactions with
    /// iterations it walks itself, as ever.
    pub(super) fn follow(&mut self, tx: usize) {
        while self.tx < tx && !self.connected && self.left == 0 {
            let Some(t) = self.program.transactions.get(self.tx) else {
                return;
            };
            // At op 0 its last iteration is complete; else what is left of it.
            let rest = match self.op {
                0 => &[][..],
                op => t.ops.get(op..).unwrap_or_default(),
            };
            let thinks = rest.iter().all(|f| matches!(f.op, Op::Think(_)));
            if !matches!(t.repeat, Repeat::DurationMs(_)) || !thinks {
                return;
            }
            for f in rest {
                if let Op::Think(size) = &f.op {
                    for _ in 0..f.count.max(1) {
                        draw(&mut self.rng, Some(size));
                    }
                }
            }
            self.next_transaction();
        }
    }

    /// Every flow reached the barrier [`Next::Barrier`] named.
    pub(super) fn pass_barrier(&mut self) {
        self.passed = true;
    }

    fn next_transaction(&mut self) {
        self.passed = false;
        self.tx += 1;
        self.done = 0;
        self.op = 0;
        self.left = 0;
        self.tx_start = None;
    }
}

/// Whether an iteration starts (see `Cursor::begin_iteration`).
enum Begin {
    Go,
    Wait(u64),
    Close,
    Over,
}

/// What an operation is on this end: the program's operation, or (`mirror`) its mirror image,
/// as [`Op::mirror`] says, with the size to draw.
enum What {
    Connect,
    Disconnect,
    Write,
    Read,
    Think,
    /// The mirror of a think: nothing to do, but its size is drawn.
    Skip,
}

fn role(op: &Op, mirror: bool) -> (What, Option<&Size>) {
    match (op, mirror) {
        (Op::Connect, _) => (What::Connect, None),
        (Op::Disconnect, _) => (What::Disconnect, None),
        (Op::Write(s) | Op::SendTo(s), false) | (Op::Read(s) | Op::Recv(s), true) => {
            (What::Write, Some(s))
        }
        (Op::Read(s) | Op::Recv(s), false) | (Op::Write(s) | Op::SendTo(s), true) => {
            (What::Read, Some(s))
        }
        (Op::Think(s), false) => (What::Think, Some(s)),
        (Op::Think(s), true) => (What::Skip, Some(s)),
    }
}

/// The next value of `size` from the generator `rng` (none: 0).
fn draw(rng: &mut u64, size: Option<&Size>) -> u64 {
    match size {
        None => 0,
        Some(Size::Fixed(v)) => u64::from(*v),
        Some(Size::Rand { lo, hi }) => {
            let span = u64::from(hi.saturating_sub(*lo)) + 1;
            u64::from(*lo) + random(rng) % span
        }
        Some(Size::List(l)) if l.is_empty() => 0,
        Some(Size::List(l)) => u64::from(l[(random(rng) % l.len() as u64) as usize]),
    }
}

/// splitmix64: small, fast and the same on every host.
fn random(rng: &mut u64) -> u64 {
    *rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *rng;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fathom_proto::profile::{FlowOp, Transaction};

    fn program() -> Arc<Program> {
        let op = |op| FlowOp {
            op,
            count: 2,
            can_fail: false,
        };
        Arc::new(Program {
            transactions: vec![Transaction {
                repeat: Repeat::Iterations(3),
                rate: None,
                barrier: false,
                ops: vec![
                    op(Op::Write(Size::Rand { lo: 1, hi: 1_000 })),
                    op(Op::Think(Size::Rand { lo: 1, hi: 9 })),
                    op(Op::Read(Size::List(vec![5, 50, 500]))),
                ],
            }],
            seed: 42,
        })
    }

    /// Every action of `c` until its end, as it runs with its connections always opening.
    fn actions(mut c: Cursor) -> Vec<Action> {
        let mut all = Vec::new();
        loop {
            match c.next(0) {
                Next::Do(Action::Connect) => c.connected(),
                Next::Do(Action::Disconnect) => {
                    c.disconnected();
                }
                Next::Do(a) => {
                    all.push(a);
                    c.done();
                }
                Next::Until(_) | Next::Barrier(_) => unreachable!("no rate, no barrier"),
                Next::End => return all,
            }
        }
    }

    #[test]
    fn the_mirror_draws_the_same_sizes_and_does_the_opposite() {
        let ours = actions(Cursor::new(program(), 3, false));
        let theirs = actions(Cursor::new(program(), 3, true));
        let opposite: Vec<Action> = ours
            .iter()
            .filter_map(|a| match *a {
                Action::Write(n) => Some(Action::Read(n)),
                Action::Read(n) => Some(Action::Write(n)),
                _ => None,
            })
            .collect();
        assert_eq!(theirs, opposite);
        assert_eq!(ours.len(), 3 * 6);
        let other_flow = actions(Cursor::new(program(), 4, false));
        assert_ne!(ours, other_flow, "each flow draws its own sizes");
    }

    #[test]
    fn roles_follow_op_mirror() {
        let s = Size::Fixed(1);
        for op in [
            Op::Connect,
            Op::Disconnect,
            Op::Write(s.clone()),
            Op::Read(s.clone()),
            Op::SendTo(s.clone()),
            Op::Recv(s.clone()),
        ] {
            let mirrored = op.mirror().expect("a mirror");
            let ours = std::mem::discriminant(&role(&mirrored, false).0);
            assert_eq!(ours, std::mem::discriminant(&role(&op, true).0), "{op:?}");
        }
        assert!(Op::Think(s.clone()).mirror().is_none());
        assert!(matches!(role(&Op::Think(s), true).0, What::Skip));
    }
}
