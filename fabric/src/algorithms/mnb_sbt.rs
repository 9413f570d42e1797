//! Multinode broadcast by superposed spanning binomial trees (`mnb-sbt`): every node t
//! broadcasts its packet on the binomial tree of Bertsekas et al. §2 translated to t
//! (the sets A_i(t) of Fig. 5), all at once, node-forwarded. Links of the same type in one
//! A_i collide, so this takes longer than the optimal ⌈(2^d − 1)/d⌉ slots; it is the
//! baseline the paper's construction improves on, and benchmark (a).
//!
//! With `Forwarding::Router` each node sends one packet that the routers replicate along its
//! tree (hardware multicast): the same trees and transmissions, the forwarding done by the
//! crossbars instead of the nodes.

use super::{Bounds, Forwarding};
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::Topology;
use router::NodeId;

pub struct MnbSbt {
    pub flits: u16,
    pub forwarding: Forwarding,
    /// Message id of node t's broadcast is `first_msg + t`.
    first_msg: u32,
}

impl MnbSbt {
    pub fn new(flits: u16, forwarding: Forwarding) -> MnbSbt {
        MnbSbt { flits, forwarding, first_msg: 0 }
    }

    /// Table 1's multinode broadcast times are the lower bounds: ⌈(2^d−1)/d⌉ all-port, 2^d − 1 one-port.
    pub fn bounds(topo: &Topology, one_port: bool) -> Bounds {
        let n = topo.nodes() as u64;
        let d = topo.ndims() as u64;
        Bounds { lower: Some(if one_port { n - 1 } else { (n - 1).div_ceil(d) } as f64), paper: None, transmissions: Some(n * (n - 1)) }
    }

    fn forward(&self, cx: &mut NodeCtx<'_>, root: NodeId, below: usize) {
        let d = cx.topo.ndims();
        for j in (0..below).rev() {
            cx.send(Send {
                dest: Dest::Node(NodeId(cx.node.0 ^ (1 << j))),
                msg: self.first_msg + root.0,
                aux: root.0.into(),
                key: (d - 1 - j) as u32,
                flits: self.flits,
            });
        }
    }
}

impl Program for MnbSbt {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        for t in 0..topo.nodes() as u32 {
            let id = sb.declare(DestSet::Broadcast { root: NodeId(t), span: topo.full_span() }, topo);
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
            Forwarding::Node => {
                let d = cx.topo.ndims();
                self.forward(cx, cx.node, d);
            }
        }
    }

    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        if self.forwarding == Forwarding::Node {
            let dim = (m.src.0 ^ cx.node.0).trailing_zeros() as usize;
            self.forward(cx, NodeId(m.aux as u32), dim);
        }
    }

    /// A node's calls depend only on what it receives (router-forwarded, each part of a
    /// split fabric keeps its own copy of a broadcast that crosses into it).
    fn splits(&self) -> bool {
        true
    }
    fn router_multicast(&self) -> bool {
        self.forwarding == Forwarding::Router
    }
}
