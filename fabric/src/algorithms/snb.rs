//! Single-node broadcast (`snb`).
//!
//! Hypercube: the spanning binomial tree of Bertsekas et al. §2 (Fig. 4), translated to the
//! root by XOR: a node that received the packet across dimension j forwards it across every
//! dimension below j. Under the one-port (SLA) assumption a node sends to its children
//! highest dimension first ("priority to neighbors with larger identity numbers"), one per
//! slot; both port models finish in d slots with 2^d − 1 transmissions.
//!
//! Meshes and tori: the dimension-order tree of the lecture notes ("Meshes"): the root sends
//! in both directions of every dimension; a node reached travelling along dimension i
//! forwards in the same direction and in both directions of every higher dimension. One-port:
//! continue along the arrival direction first, then the higher dimensions in order, in each
//! the direction with the longer path ahead first (farthest-first; ties: downward first).
//!
//! With `Forwarding::Router` the root sends one packet that the routers replicate along the
//! same tree (hardware multicast); nodes only accept it.

use super::entry::Algorithm;
use super::{Bounds, Forwarding, wormhole};
use crate::PortModel;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::{NodeId, PortId, PortSet, Switching};

pub struct Snb {
    pub root: NodeId,
    pub forwarding: Forwarding,
    pub one_port: bool,
    pub flits: u16,
    msg: u32,
    /// The children being sent to (reused).
    order: Vec<(u64, usize)>,
    /// The latest round a packet was sent in: a node informed in round r sends to its
    /// children in round r + 1 (all-port), or r + 1, r + 2, … in send order (one-port).
    rounds: u32,
}

impl Snb {
    pub fn new(root: NodeId, forwarding: Forwarding, one_port: bool, flits: u16) -> Snb {
        Snb { root, forwarding, one_port, flits, msg: 0, order: Vec::new(), rounds: 0 }
    }

    /// Slot bounds: Table 1 (d, both port models) on the hypercube, and all-port on meshes
    /// and tori the root's eccentricity (flooding along the tree is optimal). With `ports`
    /// K (the nodes forwarding, K = 1 one-port) the notes' lower bound for a K-port
    /// store-and-forward network, max(eccentricity, ⌈log_{K+1} N⌉) (the informed nodes
    /// multiply by at most K + 1 a slot; the root's eccentricity rather than the diameter,
    /// for a given root), and the slots the tree takes sending to its children K a slot in
    /// its send order ([`Snb::k_port_slots`]; d on the cube for every K). (The notes bound
    /// the one-port tree by the diameter, which on a torus, the mesh tree with the root in
    /// the middle, can be below the lower bound: 2 on a 3×3 torus, where 9 nodes need 4
    /// one-port slots.)
    pub fn bounds(topo: &Topology, root: NodeId, ports: Option<u32>) -> Bounds {
        let ecc = topo.eccentricity(root) as u64;
        let n = topo.nodes() as u64;
        let (lower, paper) = match ports {
            Some(k) => (ecc.max(super::rounds::log_ceil(k as u64 + 1, n) as u64), Self::k_port_slots(topo, root, k as u64)),
            None => (ecc, ecc),
        };
        Bounds { lower: Some(lower as f64), paper: Some(paper as f64), transmissions: Some(n - 1) }
    }

    /// Lower bound in slots on broadcasting one packet of `flits` flits that the routers
    /// replicate and forward before it has all arrived (cut-through or wormhole): its head
    /// crosses the root's eccentricity D in at least D cycles, and its flits follow one a
    /// cycle (a VC and a gateway move one flit a cycle), so the farthest node has the tail no
    /// sooner than D + L − 1 cycles. The slot model's D slots (D × L cycles) assumes each hop
    /// receives the whole packet first; the ideal router meets this bound.
    pub fn worm_lower_bound(topo: &Topology, root: NodeId, flits: u16) -> f64 {
        let (d, l) = (topo.eccentricity(root) as f64, flits as f64);
        (d + l - 1.0) / l
    }

    /// The ports of `node`'s children in the tree (reached on `in_port`), in the one-port
    /// order: highest dimension first on the hypercube; elsewhere the continuation, then by
    /// dimension, farther first, downward on ties (the notes' farthest-first order).
    fn send_order(topo: &Topology, node: NodeId, in_port: usize, root: NodeId) -> Vec<usize> {
        let mut order = Vec::new();
        tree_sends(topo, node, in_port, root, &mut order);
        order.into_iter().map(|(_, p)| p).collect()
    }

    /// Slots the tree takes in the slot model with `k` ports: a node reached in slot t sends
    /// to its children k per slot, in [`Snb::send_order`] (child i in slot t + ⌊i/k⌋ + 1).
    pub fn k_port_slots(topo: &Topology, root: NodeId, k: u64) -> u64 {
        let mut latest = 0;
        let mut stack = vec![(root, topo.net_ports(), 0u64)];
        while let Some((node, in_port, t)) = stack.pop() {
            latest = latest.max(t);
            for (i, p) in Self::send_order(topo, node, in_port, root).into_iter().enumerate() {
                let to = topo.neighbor(node, p).expect("tree edge over a missing link");
                stack.push((to, topo.reverse_port(p), t + i as u64 / k + 1));
            }
        }
        latest
    }

    /// Send the message from `node` to its children in the tree, in the one-port order.
    /// Send the message from `node`, informed in round `informed`, to its children.
    fn forward(&mut self, cx: &mut NodeCtx<'_>, in_port: usize, informed: u32) {
        let topo = cx.topo;
        let node = cx.node;
        tree_sends(topo, node, in_port, self.root, &mut self.order);
        for (i, &(_, p)) in self.order.iter().enumerate() {
            let to = topo.neighbor(node, p).expect("tree edge over a missing link");
            let round = informed + if self.one_port { i as u32 + 1 } else { 1 };
            self.rounds = self.rounds.max(round);
            cx.send(Send {
                dest: Dest::Relay(to),
                msg: self.msg,
                aux: p as u64 | (round as u64) << 32,
                key: if self.one_port { i as u32 } else { 0 },
                flits: self.flits,
            });
        }
    }
}

impl Program for Snb {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        self.msg = sb.declare_timed(DestSet::Broadcast { root: self.root, span: topo.full_span() }, topo, 0);
    }

    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        if cx.node != self.root {
            return;
        }
        match self.forwarding {
            Forwarding::Router => {
                self.rounds = 1;
                cx.send(Send { dest: Dest::Broadcast { span: cx.topo.full_span() }, msg: self.msg, aux: 0, key: 0, flits: self.flits })
            }
            Forwarding::Node => self.forward(cx, cx.topo.net_ports(), 0),
        }
    }

    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        if self.forwarding == Forwarding::Node {
            // The sender's output port tells which of our input ports it arrived on.
            let in_port = cx.topo.reverse_port(m.aux as u32 as usize);
            self.forward(cx, in_port, (m.aux >> 32) as u32);
        }
    }
    fn report(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({ "rounds": self.rounds }))
    }
    fn join(&mut self, other: Box<dyn Program>) {
        let o = (other as Box<dyn std::any::Any>).downcast::<Snb>().expect("the same program in every part");
        self.rounds = self.rounds.max(o.rounds);
    }
    /// A node acts only on what it receives (router-forwarded, each part of a split fabric
    /// keeps its own copy of the broadcast that crosses into it).
    fn splits(&self) -> bool {
        true
    }
}

/// Ports of a node's children in the broadcast tree (used by tests and the one-port reference).
pub fn children(topo: &Topology, node: NodeId, in_port: usize, root: NodeId) -> PortSet {
    topo.route_broadcast(node, PortId(in_port as u8), root, topo.full_span()).ports.network()
}

/// The one rule of a broadcast the nodes forward along the topology's tree from `root`
/// ([`Topology::route_broadcast`]): the ports of `node`'s children, `node` having received
/// the message on input port `in_port` (`net_ports()` at the root), written into `out`
/// (cleared) as (rank, port) in the one-port send order: highest dimension first on the
/// hypercube; elsewhere the continuation, then by dimension, farther first, downward on
/// ties (the notes' farthest-first order). `out` is the caller's, reused: no allocation
/// once it has grown to the node's degree.
pub fn tree_sends(topo: &Topology, node: NodeId, in_port: usize, root: NodeId, out: &mut Vec<(u64, usize)>) {
    out.clear();
    let children = topo.route_broadcast(node, PortId(in_port as u8), root, topo.full_span()).ports.network();
    out.extend(children.net_ports().map(|p| {
        let rank = match topo.kind {
            TopologyKind::Hypercube => (topo.ndims() - 1 - p) as u64,
            _ => {
                let dim = p / 2;
                let continuing = in_port < topo.net_ports() && dim == in_port / 2;
                let reach = topo.branch_reach(node, root, p) as u64;
                let d = if continuing { 0 } else { dim as u64 + 1 };
                (d << 40) | ((u32::MAX as u64 - reach) << 1) | (p % 2) as u64
            }
        };
        (rank, p)
    }));
    out.sort_unstable();
}

pub const SNB: Algorithm = Algorithm {
    rooted: true,
    router_forwarding: true,
    rounds: true,
    splits: true,
    ..Algorithm::new(
        "snb",
        &[TopologyKind::Hypercube, TopologyKind::Linear, TopologyKind::Mesh, TopologyKind::Torus],
        "Bertsekas et al. 1991, sec. 2 (hypercube spanning binomial tree, Fig. 4); one-to-all broadcast lecture notes, 'Meshes' (dimension-order tree, one-port farthest-first)",
        "single-node broadcast from --root; d slots on the d-cube (all-port and one-port), the root's eccentricity on all-port meshes",
        |i| {
            let topo = i.spec.topology();
            let l = i.spec.packet_flits;
            let k_ports = match i.spec.ports {
                PortModel::K(k) if i.forwarding == Forwarding::Node => Some(k as u32),
                _ => None,
            };
            let mut bounds = Snb::bounds(&topo, i.root, k_ports);
            if i.spec.switching != Switching::StoreAndForward {
                bounds.lower = Some(match i.forwarding {
                    Forwarding::Router => Snb::worm_lower_bound(&topo, i.root, l),
                    Forwarding::Node => wormhole::lower_bound_rounds(&topo, i.root, i.spec.ports.limit()) as f64,
                });
            }
            (Box::new(Snb::new(i.root, i.forwarding, i.one_port(), l)), bounds)
        },
    )
};
