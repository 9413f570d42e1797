//! Algorithms as per-node programs. A program reacts to the start of the run, to the
//! packets its node receives and to timers it set, and acts only by sending packets through
//! its node's NIC: contention, queueing and backpressure come from the modelled routers.
//!
//! One [`Program`] object serves every node (its per-node state in flat vectors), but each
//! call is made for one node and may touch only that node's state, as a distributed
//! algorithm would.

use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::Topology;
use router::{NodeId, RouteKind};

/// Where a sent packet goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    /// One node, by the topology's unicast routing.
    Node(NodeId),
    /// One node, by the topology's unicast routing, as a hop of a broadcast the nodes
    /// forward: routed as [`Dest::Node`], but its latency is part of the broadcast's (the
    /// scoreboard's, from the broadcast's creation to its last delivery), not a unicast sample.
    Relay(NodeId),
    /// Every node of the topology's broadcast tree rooted at the sender, within the
    /// dimensions `span`, replicated by the routers (hardware multicast).
    Broadcast { span: u32 },
}

/// A packet handed to the NIC.
#[derive(Clone, Copy, Debug)]
pub struct Send {
    pub dest: Dest,
    /// The scoreboard message the packet carries.
    pub msg: u32,
    /// Free algorithm data carried in the payload.
    pub aux: u64,
    /// Priority key: the NIC sends its queued packets smallest key first (then in order
    /// of submission), and key-honouring arbiters prefer smaller keys.
    pub key: u32,
    /// Length in flits (each copied into the send buffer at the NIC's copy cost before the
    /// packet starts).
    pub flits: u16,
}

/// What a program sees of a delivered packet.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    pub src: NodeId,
    pub kind: RouteKind,
    pub msg: u32,
    pub aux: u64,
    pub key: u32,
    pub flits: u16,
    /// Cycle the packet was handed to its source NIC.
    pub birth: u64,
}

/// What a node's program asked for during one call.
#[derive(Clone, Debug, Default)]
pub struct NodeOut {
    pub sends: Vec<Send>,
    pub wakes: Vec<u64>,
}

impl NodeOut {
    /// Did the call ask for nothing?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty() && self.wakes.is_empty()
    }
}

/// A node's view of the world during one program call.
pub struct NodeCtx<'a> {
    pub node: NodeId,
    /// The current cycle.
    pub now: u64,
    pub topo: &'a Topology,
    /// Packets waiting in this node's memory for its NIC (before this call's sends).
    pub queued: u32,
    pub(crate) out: &'a mut NodeOut,
    pub(crate) scoreboard: &'a mut Scoreboard,
}

impl NodeCtx<'_> {
    /// Queue a packet at this node's NIC.
    pub fn send(&mut self, s: Send) {
        self.out.sends.push(s);
    }
    /// Call `timer` for this node at cycle `t` (at least the next cycle).
    pub fn wake_at(&mut self, t: u64) {
        self.out.wakes.push(t.max(self.now + 1));
    }
    /// This node has received message `msg` (the scoreboard checks it was meant for it, once).
    pub fn accept(&mut self, msg: u32) {
        self.scoreboard.accept(msg, self.node, self.now, self.topo);
    }
    /// Declare a new message and who must receive it.
    pub fn declare(&mut self, dest: DestSet) -> u32 {
        self.scoreboard.declare(dest, self.topo)
    }
    /// Declare a new broadcast created now, timed to its last delivery (its latency).
    pub fn declare_timed(&mut self, dest: DestSet) -> u32 {
        self.scoreboard.declare_timed(dest, self.topo, self.now)
    }
}

/// A distributed algorithm: the program every node runs.
pub trait Program: std::any::Any + std::marker::Send {
    /// Called once when the fabric is built: declare the messages the scoreboard must see delivered.
    fn setup(&mut self, _topo: &Topology, _scoreboard: &mut Scoreboard) {}
    /// Called for every node in cycle 0.
    fn start(&mut self, cx: &mut NodeCtx<'_>);
    /// A packet for this node has been received (its tail ejected).
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received);
    /// A timer set with [`NodeCtx::wake_at`] fired.
    fn timer(&mut self, _cx: &mut NodeCtx<'_>) {}
    /// Node `node`'s timer fires soon in this cycle: a hint to start loading the state its
    /// [`Program::timer`] reads (large fabrics, [`router::prefetch`]). Never changes a result.
    fn prefetch_timer(&self, _node: NodeId) {}
    /// Results beyond the kernel's counters, for the JSON report (after the run).
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
    /// May a run of this program be split between threads ([`crate::kernel::split`])? Only
    /// if every call touches only its node's state (random numbers from a stream per node);
    /// results the program keeps are folded together by [`Program::join`] after the run.
    fn splits(&self) -> bool {
        false
    }
    /// Fold in `other`, this same program having run another part of a split fabric (its
    /// nodes' share of the results). Programs that keep no results need nothing here.
    fn join(&mut self, _other: Box<dyn Program>) {}
    /// Ways the algorithm found itself broken (a schedule overrun, a collision the paper
    /// rules out); any fails the run.
    fn failures(&self) -> Vec<String> {
        Vec::new()
    }
}
