//! Multinode broadcast by superposed spanning binomial trees (`mnb-sbt`): every node t
//! broadcasts its packet on the binomial tree of Bertsekas et al. §2 translated to t
//! (the sets A_i(t) of Fig. 5), all at once, node-forwarded. Links of the same type in one
//! A_i collide, so this takes longer than the optimal ⌈(2^d − 1)/d⌉ slots; it is the
//! baseline the paper's construction improves on, and benchmark (a).
//!
//! Meshes and tori: every node broadcasts on its dimension-order tree, the one `snb` uses
//! from that root (the lecture notes' "Meshes"; [`super::snb::tree_sends`] is the rule),
//! a node forwarding each broadcast to its children in that tree's one-port order.
//!
//! With `Forwarding::Router` each node sends one packet that the routers replicate along its
//! tree (hardware multicast): the same trees and transmissions, the forwarding done by the
//! crossbars instead of the nodes.
//!
//! Each broadcast is timed by the scoreboard from cycle 0 to its last delivery (the JSON's
//! broadcast latency); the packets nodes re-send are relays, not unicast messages.

use super::entry::Algorithm;
use super::snb::tree_sends;
use super::{Bounds, Forwarding};
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

pub struct MnbSbt {
    pub flits: u16,
    pub forwarding: Forwarding,
    /// Message id of node t's broadcast is `first_msg + t`.
    first_msg: u32,
    /// Meshes and tori: the children of the tree being forwarded (reused).
    order: Vec<(u64, usize)>,
}

impl MnbSbt {
    pub fn new(flits: u16, forwarding: Forwarding) -> MnbSbt {
        MnbSbt { flits, forwarding, first_msg: 0, order: Vec::new() }
    }

    /// Hypercube: Table 1's multinode broadcast times are the lower bounds: ⌈(2^d−1)/d⌉
    /// all-port, 2^d − 1 one-port. Meshes and tori: every node receives N − 1 packets, at
    /// most one a slot per ejection channel it can use (one one-port; all-port one per link
    /// it has), and the broadcast from a node of eccentricity D (the diameter, for the worst
    /// root) takes D slots: max(diameter, max over nodes ⌈(N − 1)/channels⌉).
    pub fn bounds(topo: &Topology, one_port: bool) -> Bounds {
        let n = topo.nodes() as u64;
        let d = topo.ndims() as u64;
        let lower = match topo.kind {
            TopologyKind::Hypercube => {
                if one_port {
                    n - 1
                } else {
                    (n - 1).div_ceil(d)
                }
            }
            _ => {
                let receive = (0..n as u32)
                    .map(|x| {
                        let links = (0..topo.net_ports()).filter(|&p| topo.neighbor(NodeId(x), p).is_some()).count() as u64;
                        (n - 1).div_ceil(if one_port { 1 } else { links.max(1) })
                    })
                    .max()
                    .unwrap_or(0);
                receive.max(topo.diameter() as u64)
            }
        };
        Bounds { lower: Some(lower as f64), paper: None, transmissions: Some(n * (n - 1)) }
    }

    fn forward(&self, cx: &mut NodeCtx<'_>, root: NodeId, below: usize) {
        let d = cx.topo.ndims();
        for j in (0..below).rev() {
            cx.send(Send {
                dest: Dest::Relay(NodeId(cx.node.0 ^ (1 << j))),
                msg: self.first_msg + root.0,
                aux: root.0.into(),
                key: (d - 1 - j) as u32,
                flits: self.flits,
            });
        }
    }

    /// Meshes and tori: send `root`'s broadcast, received on input port `in_port`
    /// (`net_ports()` at the root), to this node's children in its tree, in the one-port
    /// order (the key), saying in `aux` the root and the port it leaves on.
    fn forward_tree(&mut self, cx: &mut NodeCtx<'_>, root: NodeId, in_port: usize) {
        tree_sends(cx.topo, cx.node, in_port, root, &mut self.order);
        for (i, &(_, p)) in self.order.iter().enumerate() {
            let to = cx.topo.neighbor(cx.node, p).expect("tree edge over a missing link");
            cx.send(Send {
                dest: Dest::Relay(to),
                msg: self.first_msg + root.0,
                aux: root.0 as u64 | (p as u64) << 32,
                key: i as u32,
                flits: self.flits,
            });
        }
    }
}

impl Program for MnbSbt {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        for t in 0..topo.nodes() as u32 {
            let id = sb.declare_timed(DestSet::Broadcast { root: NodeId(t), span: topo.full_span() }, topo, 0);
            if t == 0 {
                self.first_msg = id;
            }
        }
    }

    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        match self.forwarding {
            Forwarding::Router => cx.send(Send {
                dest: Dest::Broadcast { span: cx.topo.full_span() },
                msg: self.first_msg + cx.node.0,
                aux: cx.node.0.into(),
                key: 0,
                flits: self.flits,
            }),
            Forwarding::Node if cx.topo.kind == TopologyKind::Hypercube => {
                let d = cx.topo.ndims();
                self.forward(cx, cx.node, d);
            }
            Forwarding::Node => self.forward_tree(cx, cx.node, cx.topo.net_ports()),
        }
    }

    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        if self.forwarding == Forwarding::Node {
            let root = NodeId(m.aux as u32);
            if cx.topo.kind == TopologyKind::Hypercube {
                let dim = (m.src.0 ^ cx.node.0).trailing_zeros() as usize;
                self.forward(cx, root, dim);
            } else {
                // The sender's output port tells which of our input ports it arrived on.
                let in_port = cx.topo.reverse_port((m.aux >> 32) as usize);
                self.forward_tree(cx, root, in_port);
            }
        }
    }

    /// A node's calls depend only on what it receives (router-forwarded, each part of a
    /// split fabric keeps its own copy of a broadcast that crosses into it).
    fn splits(&self) -> bool {
        true
    }
}

pub const MNB_SBT: Algorithm = Algorithm {
    router_forwarding: true,
    splits: true,
    memory: Some(super::mnb::every_node_broadcasts),
    ..Algorithm::new(
        "mnb-sbt",
        &[TopologyKind::Hypercube, TopologyKind::Mesh, TopologyKind::Torus],
        "Bertsekas et al. 1991, sec. 2, Fig. 5 (every node broadcasts on its own translated binomial tree); meshes and tori: one-to-all broadcast lecture notes, 'Meshes' (each node on its dimension-order tree, as snb)",
        "multinode broadcast by superposed spanning trees: binomial on the cube (not optimal: links of one type collide, the baseline the optimal MNB improves on), dimension-order on meshes and tori; --forwarding router: one packet per node, copied by the routers",
        |i| (Box::new(MnbSbt::new(i.spec.packet_flits, i.forwarding)), MnbSbt::bounds(&i.spec.topology(), i.one_port())),
    )
};
