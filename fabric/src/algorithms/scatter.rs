//! Single-node scatter and gather (Bertsekas et al. §3).
//!
//! `scatter`: the root sends a distinct packet to every node along the tree of
//! [`ScatterTree`] (shortest paths; every subtree below the root at most ⌈(2^d − 1)/d⌉
//! nodes), continuously, farthest destinations first (the priority key). All-port: each
//! subtree gets a packet per slot, ⌈(2^d − 1)/d⌉ slots. One-port: one packet per slot,
//! 2^d − 1 slots. Both d·2^(d−1) transmissions.
//!
//! `gather`: the dual — the scatter's schedule reversed in time. Node x starts its packet
//! towards the root at slot T + 2 − j − |x| (j: its place in the scatter's order, |x| its
//! distance), and intermediate nodes pass it on in the next slot.

use super::Bounds;
use super::entry::{Algorithm, Ports};
use super::hypercube::ScatterTree;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

/// Table 1 and 2 for scatter and gather.
pub fn bounds(d: u32, one_port: bool) -> Bounds {
    let n = 1u64 << d;
    let t = if one_port { n - 1 } else { (n - 1).div_ceil(d as u64) };
    Bounds { lower: Some(t as f64), paper: Some(t as f64), transmissions: Some(d as u64 * (n / 2)) }
}

/// The scatter's sending order: for each destination x != 0 (relative to the root), the
/// slot j in which the root sends it, farthest first, per subtree (all-port) or overall
/// (one-port); and the total time.
fn scatter_order(tree: &ScatterTree, one_port: bool) -> (Vec<u32>, u32) {
    let n = 1u32 << tree.d;
    let mut dests: Vec<u32> = (1..n).collect();
    dests.sort_by_key(|&x| (std::cmp::Reverse(x.count_ones()), x));
    let mut j = vec![0u32; n as usize];
    let mut next_slot = vec![1u32; n as usize];
    let mut total = 0;
    for x in dests {
        let lane = if one_port { 0 } else { tree.top[x as usize] as usize };
        j[x as usize] = next_slot[lane];
        next_slot[lane] += 1;
        total = total.max(j[x as usize] + x.count_ones() - 1);
    }
    (j, total)
}

pub struct Scatter {
    tree: ScatterTree,
    root: u32,
    flits: u16,
    first_msg: u32,
}

impl Scatter {
    pub fn new(d: u32, root: NodeId, flits: u16) -> Scatter {
        Scatter { tree: ScatterTree::new(d), root: root.0, flits, first_msg: 0 }
    }
}

impl Program for Scatter {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        for x in 1..topo.nodes() as u32 {
            let id = sb.declare(DestSet::One(NodeId(self.root ^ x)), topo);
            if x == 1 {
                self.first_msg = id;
            }
        }
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        if cx.node.0 != self.root {
            return;
        }
        let d = self.tree.d;
        for x in 1..1u32 << d {
            cx.send(Send {
                dest: Dest::Node(NodeId(self.root ^ self.tree.top[x as usize])),
                msg: self.first_msg + x - 1,
                aux: x.into(),
                key: d - x.count_ones(),
                flits: self.flits,
            });
        }
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let y = cx.node.0 ^ self.root;
        if m.aux == y as u64 {
            cx.accept(m.msg);
        } else {
            let next = self.tree.next_hop(y, m.aux as u32);
            cx.send(Send { dest: Dest::Node(NodeId(self.root ^ next)), msg: m.msg, aux: m.aux, key: m.key, flits: self.flits });
        }
    }
    /// A node acts only on what it receives (the tree is read-only).
    fn splits(&self) -> bool {
        true
    }
}

pub struct Gather {
    tree: ScatterTree,
    root: u32,
    flits: u16,
    first_msg: u32,
    /// Slot in which node x (relative) starts its packet.
    start: Vec<u32>,
}

impl Gather {
    pub fn new(d: u32, root: NodeId, one_port: bool, flits: u16) -> Gather {
        let tree = ScatterTree::new(d);
        let (j, total) = scatter_order(&tree, one_port);
        let start = (0..1u32 << d).map(|x| if x == 0 { 0 } else { total + 2 - j[x as usize] - x.count_ones() }).collect();
        Gather { tree, root: root.0, flits, first_msg: 0, start }
    }
    fn send_up(&self, cx: &mut NodeCtx<'_>, x_from: u32, msg: u32, key: u32) {
        let next = self.tree.parent[x_from as usize];
        cx.send(Send { dest: Dest::Node(NodeId(self.root ^ next)), msg, aux: 0, key, flits: self.flits });
    }
}

impl Program for Gather {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        for x in 1..topo.nodes() as u32 {
            let id = sb.declare(DestSet::One(NodeId(self.root)), topo);
            if x == 1 {
                self.first_msg = id;
            }
        }
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        let x = cx.node.0 ^ self.root;
        if x == 0 {
            return;
        }
        // Slot s (one packet over one link: `flits` cycles) starts in cycle (s − 1)·flits.
        let s = self.start[x as usize];
        if s == 1 {
            self.send_up(cx, x, self.first_msg + x - 1, s);
        } else {
            cx.wake_at((s as u64 - 1) * self.flits as u64);
        }
    }
    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        let x = cx.node.0 ^ self.root;
        let s = self.start[x as usize];
        self.send_up(cx, x, self.first_msg + x - 1, s);
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let y = cx.node.0 ^ self.root;
        if y == 0 {
            cx.accept(m.msg);
        } else {
            self.send_up(cx, y, m.msg, m.key + 1);
        }
    }
    /// A node acts only on its timers and what it receives (the tree is read-only).
    fn splits(&self) -> bool {
        true
    }
}

pub const SCATTER: Algorithm = Algorithm {
    ports: Ports::AllOrOne,
    rooted: true,
    splits: true,
    ..Algorithm::new(
        "scatter",
        &[TopologyKind::Hypercube],
        "Bertsekas et al. 1991, sec. 3 (spanning tree from compatible classes, farthest-first; SLA: one packet per slot)",
        "single-node scatter from --root; ceil((2^d-1)/d) slots all-port, 2^d-1 one-port, d*2^(d-1) transmissions",
        |i| (Box::new(Scatter::new(i.d(), i.root, i.spec.packet_flits)), bounds(i.d(), i.one_port())),
    )
};

pub const GATHER: Algorithm = Algorithm {
    name: "gather",
    reference: "Bertsekas et al. 1991, sec. 3 (the scatter's schedule reversed in time)",
    summary: "single-node gather at --root; same times and transmissions as scatter",
    build: |i| (Box::new(Gather::new(i.d(), i.root, i.one_port(), i.spec.packet_flits)), bounds(i.d(), i.one_port())),
    ..SCATTER
};
