//! What the controller collected from a run: every end's snapshots and facts, and a view that
//! finds, for each flow, the end and position where it was sent and where it was received.

use fathom_proto::plan::{Direction, TestPlan};
use fathom_proto::sample::{EndpointInfo, FlowInfo, FlowSnapshot, Mark, Snapshot};

/// An end's part in the test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    /// The accepting end (the agent named as the server).
    #[default]
    Server,
    /// A connecting end (the controller's own, or a client agent).
    Client,
}

/// One end's measurements.
#[derive(Clone, Debug, Default)]
pub struct EndData {
    /// How the user named it ("h2", "10.0.0.2:5301", "local").
    pub name: String,
    /// Server or client.
    pub role: Role,
    /// True for the controller's own in-process end.
    pub in_process: bool,
    /// Facts reported at the end.
    pub info: EndpointInfo,
    /// Snapshots in the order taken.
    pub snaps: Vec<Snapshot>,
    /// The plan's flow ids this end took part in, in its snapshots' order.
    pub ids: Vec<u32>,
    /// Its clock minus the controller's, ns.
    pub clock_offset_ns: i64,
    /// Round trip of the best clock probe, ns.
    pub control_rtt_ns: u64,
    /// Its group in per-group results (a hostfile's `group=`, a Kubernetes zone), if any.
    pub group: Option<String>,
}

/// Everything known about one run.
#[derive(Clone, Debug)]
pub struct RunData {
    /// The plan that ran.
    pub plan: TestPlan,
    /// The server first, then the clients.
    pub ends: Vec<EndData>,
    /// Whether the server agent ran inside the controller's process.
    pub embedded: bool,
    /// Wall-clock start, Unix seconds.
    pub started_unix_s: f64,
    /// The WAN emulator links of the lab the test ran in.
    pub wan: Vec<crate::model::WanLinkResult>,
    /// IPsec on the lab links the test crossed.
    pub ipsec: Option<crate::model::IpsecResult>,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

impl RunData {
    /// The server's end.
    pub fn server(&self) -> &EndData {
        &self.ends[0]
    }

    /// The first client's end (the controller's own in a single-agent test).
    pub fn first_client(&self) -> &EndData {
        self.ends.get(1).unwrap_or(&self.ends[0])
    }

    /// True when several client hosts took part.
    pub fn multi_host(&self) -> bool {
        self.ends.len() > 2
    }
}

/// The measured window of one end: the snapshots at its start and end, and the last one.
#[derive(Clone, Copy)]
pub struct Window<'a> {
    /// Where the window starts.
    pub start: &'a Snapshot,
    /// Where it ends.
    pub end: &'a Snapshot,
    /// The last snapshot (totals).
    pub last: &'a Snapshot,
    /// Positions of start and end in the end's snapshot list.
    pub span: (usize, usize),
}

impl<'a> Window<'a> {
    /// The window of an end's snapshots, if it began.
    pub fn of(snaps: &'a [Snapshot]) -> Option<Self> {
        let a = snaps.iter().position(|s| s.mark == Mark::WindowStart)?;
        let last = snaps.len().checked_sub(1)?;
        let b = snaps
            .iter()
            .position(|s| s.mark == Mark::WindowEnd)
            .unwrap_or(last);
        Some(Window {
            start: &snaps[a],
            end: &snaps[b],
            last: &snaps[last],
            span: (a, b),
        })
    }

    /// Its length in seconds.
    pub fn seconds(&self) -> f64 {
        (self.end.t_ns - self.start.t_ns).max(0) as f64 / 1e9
    }

    /// The flow at `pos` at the window's start and end.
    pub fn flow(&self, pos: usize) -> (FlowSnapshot, FlowSnapshot) {
        let get = |s: &Snapshot| s.flows.get(pos).cloned().unwrap_or_default();
        (get(self.start), get(self.end))
    }
}

/// Where one flow lives: (end index, position in that end's lists) for each side.
#[derive(Clone, Copy, Debug)]
pub struct Located {
    /// The end that sends (or asks).
    pub sender: (usize, usize),
    /// The end that receives (or answers).
    pub receiver: (usize, usize),
}

/// A run with its windows and flow locations worked out once.
pub struct View<'a> {
    /// The run.
    pub run: &'a RunData,
    /// Each end's window, if it began.
    pub windows: Vec<Option<Window<'a>>>,
    /// Per plan flow, in plan order.
    pub located: Vec<Option<Located>>,
}

impl<'a> View<'a> {
    /// Works out windows and locations.
    pub fn new(run: &'a RunData) -> Self {
        let located = Self::locate(run);
        Self::with_located(run, located)
    }

    /// Works out the windows, with the flows' locations found before by [`View::locate`]
    /// (they stay while a run goes on).
    pub fn with_located(run: &'a RunData, located: Vec<Option<Located>>) -> Self {
        let windows = run.ends.iter().map(|e| Window::of(&e.snaps)).collect();
        View {
            run,
            windows,
            located,
        }
    }

    /// Where each of the plan's flows is sent and received.
    pub fn locate(run: &RunData) -> Vec<Option<Located>> {
        let find = |id: u32, role: Role| {
            run.ends
                .iter()
                .enumerate()
                .filter(|(_, e)| e.role == role)
                .find_map(|(i, e)| e.ids.iter().position(|&x| x == id).map(|p| (i, p)))
        };
        run.plan
            .flows
            .iter()
            .map(|f| {
                let (client, server) = (find(f.id, Role::Client)?, find(f.id, Role::Server)?);
                Some(match f.dir {
                    Direction::Forward => Located {
                        sender: client,
                        receiver: server,
                    },
                    Direction::Reverse => Located {
                        sender: server,
                        receiver: client,
                    },
                })
            })
            .collect()
    }

    /// The window of end `i`.
    pub fn window(&self, i: usize) -> Option<Window<'a>> {
        self.windows.get(i).copied().flatten()
    }

    /// Facts about flow `pos` of end `i`.
    pub fn info(&self, (i, pos): (usize, usize)) -> FlowInfo {
        self.run.ends[i]
            .info
            .flows
            .get(pos)
            .cloned()
            .unwrap_or_default()
    }

    /// Indices of the ends that send (or ask) flows going `d`.
    pub fn senders(&self, d: Direction) -> Vec<usize> {
        self.ends_where(d, |l| l.sender.0)
    }

    /// Indices of the ends that receive (or answer) flows going `d`.
    pub fn receivers(&self, d: Direction) -> Vec<usize> {
        self.ends_where(d, |l| l.receiver.0)
    }

    fn ends_where(&self, d: Direction, pick: fn(&Located) -> usize) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .run
            .plan
            .flows
            .iter()
            .zip(&self.located)
            .filter(|(f, _)| f.dir == d)
            .filter_map(|(_, l)| l.as_ref().map(pick))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The longest window among `ends`, seconds.
    pub fn longest(&self, ends: &[usize]) -> f64 {
        ends.iter()
            .filter_map(|&i| self.window(i))
            .map(|w| w.seconds())
            .fold(0.0, f64::max)
    }
}
