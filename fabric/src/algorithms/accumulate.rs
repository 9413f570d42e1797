//! Single-node accumulation (`accumulate`, Bertsekas et al. §1–2): every node's value is
//! combined on the way to the root along the spanning binomial tree reversed — the dual of
//! the single-node broadcast, in the same d slots. Node x (relative to the root) reports to
//! its parent (x with its lowest one bit cleared) once its lowbit(x) children have; under
//! the one-port assumption that is slot lowbit(x) + 1, one reception per node per slot.

use super::Bounds;
use super::entry::{Algorithm, Ports};
use super::mnb::contribution;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

pub struct Accumulate {
    root: u32,
    flits: u16,
    msg: u32,
    waiting: Vec<u8>,
    sum: Vec<u32>,
    total: u32,
}

impl Accumulate {
    pub fn new(d: u32, root: NodeId, flits: u16) -> Accumulate {
        let n = 1usize << d;
        let waiting = (0..n as u32).map(|x| if x == 0 { d as u8 } else { x.trailing_zeros() as u8 }).collect();
        let total = (0..n as u32).fold(0u32, |s, z| s.wrapping_add(contribution(z)));
        Accumulate { root: root.0, flits, msg: 0, waiting, sum: vec![0; n], total }
    }
    /// Table 1 and 2: d slots, 2^d − 1 transmissions.
    pub fn bounds(d: u32) -> Bounds {
        Bounds { lower: Some(d as f64), paper: Some(d as f64), transmissions: Some((1u64 << d) - 1) }
    }
    fn report(&mut self, cx: &mut NodeCtx<'_>) {
        let z = cx.node.0;
        let x = z ^ self.root;
        if x == 0 {
            if self.sum[0] == self.total.wrapping_sub(contribution(self.root)) {
                cx.accept(self.msg);
            }
            return;
        }
        cx.send(Send {
            dest: Dest::Node(NodeId(self.root ^ (x & (x - 1)))),
            msg: self.sum[x as usize].wrapping_add(contribution(z)),
            aux: 0,
            key: x.trailing_zeros() + 1,
            flits: self.flits,
        });
    }
}

impl Program for Accumulate {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        self.msg = sb.declare(DestSet::One(NodeId(self.root)), topo);
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        if self.waiting[(cx.node.0 ^ self.root) as usize] == 0 {
            self.report(cx);
        }
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let x = (cx.node.0 ^ self.root) as usize;
        self.sum[x] = self.sum[x].wrapping_add(m.msg);
        self.waiting[x] -= 1;
        if self.waiting[x] == 0 {
            self.report(cx);
        }
    }
}

pub const ACCUMULATE: Algorithm = Algorithm {
    ports: Ports::AllOrOne,
    rooted: true,
    ..Algorithm::new(
        "accumulate",
        &[TopologyKind::Hypercube],
        "Bertsekas et al. 1991, sec. 1-2 (single node accumulation, the dual of the broadcast, Fig. 2)",
        "single-node accumulation at --root, combining at each node along the binomial tree reversed; d slots, 2^d-1 transmissions",
        |i| (Box::new(Accumulate::new(i.d(), i.root, i.spec.packet_flits)), Accumulate::bounds(i.d())),
    )
};
