//! Multinode broadcast and its dual, multinode accumulation (Bertsekas et al. §2).
//!
//! `mnb`: every node t broadcasts along the tree of [`MnbTree`] translated to t. All-port
//! (MLA): the link into y is crossed in slot i with y ∈ E_i, so each link carries at most
//! one packet per slot and the broadcast takes q = ⌈(2^d − 1)/d⌉ slots. One-port (SLA): the
//! same links one at a time, the link into y in slot n(y): 2^d − 1 slots. The slot is the
//! packet's priority key, so each node's NIC sends its queued packets in the paper's order.
//!
//! `mnb-ring`: the ring embedded in the cube (reflected Gray code); each node forwards to
//! its clockwise neighbour the packet it received from its counterclockwise one: 2^d − 1.
//!
//! `multi-accumulate`: every node t accumulates one value from every other node along the
//! same tree reversed, combining at each node; link into y reversed in slot q + 1 − i (MLA)
//! or 2^d − n(y) (SLA). A node forwards a root's partial result once all its children in
//! that root's tree have reported; the root checks the combined value.

use super::entry::{self, Algorithm, Input, Need, Ports};
use super::hypercube::MnbTree;
use super::{Bounds, Forwarding};
use crate::SpecError;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

/// Table 1 and Table 2 for the multinode broadcast (and accumulation).
pub fn bounds(d: u32, one_port: bool) -> Bounds {
    let n = 1u64 << d;
    let t = if one_port { n - 1 } else { (n - 1).div_ceil(d as u64) };
    Bounds { lower: Some(t as f64), paper: Some(t as f64), transmissions: Some(n * (n - 1)) }
}

pub struct Mnb {
    tree: MnbTree,
    one_port: bool,
    flits: u16,
    first_msg: u32,
}

impl Mnb {
    pub fn new(d: u32, one_port: bool, flits: u16) -> Mnb {
        Mnb { tree: MnbTree::new(d), one_port, flits, first_msg: 0 }
    }

    fn forward(&self, cx: &mut NodeCtx<'_>, root: u32) {
        let z = cx.node.0;
        let x = z ^ root;
        for &y in &self.tree.children[x as usize] {
            let key = if self.one_port { self.tree.n[y as usize] } else { self.tree.slot[y as usize] };
            cx.send(Send { dest: Dest::Node(NodeId(z ^ x ^ y)), msg: self.first_msg + root, aux: root.into(), key, flits: self.flits });
        }
    }
}

impl Program for Mnb {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        self.first_msg = declare_broadcasts(topo, sb);
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        self.forward(cx, cx.node.0);
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        self.forward(cx, m.aux as u32);
    }
    /// A node acts only on what it receives (the trees are read-only).
    fn splits(&self) -> bool {
        true
    }
}

/// Declare one broadcast per node; returns the message id of node 0's (node t's is that + t).
fn declare_broadcasts(topo: &Topology, sb: &mut Scoreboard) -> u32 {
    let mut first = 0;
    for t in 0..topo.nodes() as u32 {
        let id = sb.declare(DestSet::Broadcast { root: NodeId(t), span: topo.full_span() }, topo);
        if t == 0 {
            first = id;
        }
        debug_assert_eq!(id, first + t);
    }
    first
}

pub struct MnbRing {
    d: u32,
    flits: u16,
    first_msg: u32,
    /// Ring position of each node (inverse reflected Gray code).
    pos: Vec<u32>,
}

impl MnbRing {
    pub fn new(d: u32, flits: u16) -> MnbRing {
        let n = 1u32 << d;
        let mut pos = vec![0; n as usize];
        for p in 0..n {
            pos[(p ^ (p >> 1)) as usize] = p;
        }
        MnbRing { d, flits, first_msg: 0, pos }
    }
    fn next(&self, z: u32) -> u32 {
        let p = (self.pos[z as usize] + 1) % (1 << self.d);
        p ^ (p >> 1)
    }
    /// Time 2^d − 1 (one-port optimal; Table 1's SLA entry), N(N−1) transmissions.
    pub fn bounds(d: u32) -> Bounds {
        let n = 1u64 << d;
        Bounds { lower: Some((n - 1) as f64), paper: Some((n - 1) as f64), transmissions: Some(n * (n - 1)) }
    }
    fn send(&self, cx: &mut NodeCtx<'_>, root: u32) {
        let to = self.next(cx.node.0);
        if to != root {
            cx.send(Send { dest: Dest::Node(NodeId(to)), msg: self.first_msg + root, aux: root.into(), key: 0, flits: self.flits });
        }
    }
}

impl Program for MnbRing {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        self.first_msg = declare_broadcasts(topo, sb);
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        self.send(cx, cx.node.0);
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        self.send(cx, m.aux as u32);
    }
    /// A node acts only on what it receives (the ring is read-only).
    fn splits(&self) -> bool {
        true
    }
}

/// The value node `z` contributes to an accumulation (a fixed pseudo-random word, so that
/// a lost or doubled contribution changes the combined sum).
pub fn contribution(z: u32) -> u32 {
    let mut x = (z as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as u32
}

pub struct MultiAccumulate {
    tree: MnbTree,
    one_port: bool,
    flits: u16,
    first_msg: u32,
    nodes: usize,
    /// Per (node, root): children still to report, and the partial sum.
    waiting: Vec<u8>,
    sum: Vec<u32>,
    total: u32,
}

impl MultiAccumulate {
    pub fn new(d: u32, one_port: bool, flits: u16) -> MultiAccumulate {
        let tree = MnbTree::new(d);
        let nodes = 1usize << d;
        let mut waiting = vec![0u8; nodes * nodes];
        for z in 0..nodes {
            for t in 0..nodes {
                waiting[z * nodes + t] = tree.children[z ^ t].len() as u8;
            }
        }
        let total = (0..nodes as u32).fold(0u32, |s, z| s.wrapping_add(contribution(z)));
        MultiAccumulate { tree, one_port, flits, first_msg: 0, nodes, waiting, sum: vec![0; nodes * nodes], total }
    }

    /// Bytes the per-(node, root) state takes.
    pub fn bytes_needed(d: u32) -> u128 {
        (1u128 << (2 * d)) * 5
    }

    /// Node z's part for root t is complete: send it up the tree (or check it at the root).
    fn finish(&mut self, cx: &mut NodeCtx<'_>, root: u32) {
        let z = cx.node.0;
        let x = z ^ root;
        let acc = self.sum[z as usize * self.nodes + root as usize];
        if x == 0 {
            if acc == self.total.wrapping_sub(contribution(root)) {
                cx.accept(self.first_msg + root);
            }
            return;
        }
        let q = self.tree.q();
        let key = if self.one_port { self.nodes as u32 - self.tree.n[x as usize] } else { q + 1 - self.tree.slot[x as usize] };
        cx.send(Send {
            dest: Dest::Node(NodeId(root ^ self.tree.parent[x as usize])),
            msg: acc.wrapping_add(contribution(z)),
            aux: root.into(),
            key,
            flits: self.flits,
        });
    }
}

impl Program for MultiAccumulate {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        for t in 0..topo.nodes() as u32 {
            let id = sb.declare(DestSet::One(NodeId(t)), topo);
            if t == 0 {
                self.first_msg = id;
            }
        }
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        let z = cx.node.0;
        for root in 0..self.nodes as u32 {
            if root != z && self.waiting[z as usize * self.nodes + root as usize] == 0 {
                self.finish(cx, root);
            }
        }
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let (z, root) = (cx.node.0 as usize, m.aux as usize);
        let i = z * self.nodes + root;
        self.sum[i] = self.sum[i].wrapping_add(m.msg);
        self.waiting[i] -= 1;
        if self.waiting[i] == 0 {
            self.finish(cx, m.aux as u32);
        }
    }
}

pub const MNB: Algorithm = Algorithm {
    ports: Ports::AllOrOne,
    splits: true,
    memory: Some(every_node_broadcasts),
    ..Algorithm::new(
        "mnb",
        &[TopologyKind::Hypercube],
        "Bertsekas et al. 1991, sec. 2 (link sets A_1..A_q from the rotation classes R_kn, numbering n(t), m(t); SLA: the same sets one link at a time)",
        "multinode broadcast; ceil((2^d-1)/d) slots all-port, 2^d-1 one-port, 2^d(2^d-1) transmissions",
        |i| (Box::new(Mnb::new(i.d(), i.one_port(), i.spec.packet_flits)), bounds(i.d(), i.one_port())),
    )
};

pub const MNB_RING: Algorithm = Algorithm {
    name: "mnb-ring",
    reference: "Bertsekas et al. 1991, sec. 2 (ring embedded in the cube, SLA alternative)",
    summary: "multinode broadcast around a Gray-code ring; 2^d-1 slots",
    build: |i| (Box::new(MnbRing::new(i.d(), i.spec.packet_flits)), MnbRing::bounds(i.d())),
    // One packet at a time on its way round the ring: each broadcast's record.
    memory: Some(|a, i, _| {
        let nodes = i.nodes();
        Ok(Need {
            field: "dims",
            value: entry::dims_text(i.spec),
            what: format!("{} on {nodes} nodes tracks {nodes} broadcasts to every node", a.name),
            bytes: nodes * (entry::RECORD_BYTES + entry::bitset_bytes(i.spec)),
        })
    }),
    ..MNB
};

pub const MULTI_ACCUMULATE: Algorithm = Algorithm {
    name: "multi-accumulate",
    reference: "Bertsekas et al. 1991, sec. 1-2 (multinode accumulation, dual of the multinode broadcast)",
    summary: "every node accumulates a value from every other node along the MNB trees reversed; same times as mnb",
    splits: false,
    build: |i| (Box::new(MultiAccumulate::new(i.d(), i.one_port(), i.spec.packet_flits)), bounds(i.d(), i.one_port())),
    // Measured (docs/performance.md): about 42 bytes per pair of nodes at the peak.
    memory: Some(|a, i, _| {
        let nodes = i.nodes();
        Ok(Need {
            field: "dims",
            value: entry::dims_text(i.spec),
            what: format!("{} on {nodes} nodes keeps a partial result per node and root and", a.name),
            bytes: nodes * nodes * 42 + nodes * entry::RECORD_BYTES,
        })
    }),
    ..MNB
};

/// The memory of a multinode broadcast over trees (mnb, mnb-sbt), measured
/// (docs/performance.md): the packets the nodes hold queued for their next hops, about 26
/// bytes per pair of nodes at the peak (3/8 of all pairs queued at once in mnb-sbt, a
/// quarter to a third in mnb, 68 bytes each).
/// Replicated by the routers (mnb-sbt), a broadcast is one packet queued at its root and a
/// copy of its header per branch in the packet table: about 250 bytes per broadcast and
/// dimension, measured.
pub fn every_node_broadcasts(a: &Algorithm, i: &Input, _: u64) -> Result<Need, SpecError> {
    let nodes = i.nodes();
    let queued = if i.forwarding == Forwarding::Router { nodes * 250 * i.d() as u128 } else { nodes * nodes * 26 };
    Ok(Need {
        field: "dims",
        value: entry::dims_text(i.spec),
        what: format!("{} on {nodes} nodes tracks {nodes} broadcasts to every node and", a.name),
        bytes: nodes * (entry::RECORD_BYTES + entry::bitset_bytes(i.spec)) + queued,
    })
}
