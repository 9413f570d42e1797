//! Total exchange (Bertsekas et al. §4): every node sends a distinct packet to every other
//! node. All-port: the recursive three-phase construction with phase three overlapping
//! phase two, 2^(d−1) slots with every link busy in both directions every slot. One-port:
//! MTADEA, the phases one after the other, d·2^(d−1) slots. Both send every packet along a
//! shortest path: d·2^(2d−1) transmissions.
//!
//! Each node looks its own packets and every packet it forwards up in node 0's schedule
//! ([`ExchangeSchedule`]) XOR its own identity: which link, and the slot, which is the
//! packet's priority key.

use super::Bounds;
use super::entry::{self, Algorithm, Need, Ports};
use super::hypercube::ExchangeSchedule;
use crate::SpecError;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{PAIR_BASE, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

pub fn bounds(d: u32, one_port: bool) -> Bounds {
    let t = if one_port { (d as u64) << (d - 1) } else { 1u64 << (d - 1) };
    Bounds { lower: Some(t as f64), paper: Some(t as f64), transmissions: Some((d as u64) << (2 * d - 1)) }
}

pub struct TotalExchange {
    sched: ExchangeSchedule,
    nodes: u32,
    flits: u16,
}

impl TotalExchange {
    pub fn new(d: u32, one_port: bool, flits: u16) -> TotalExchange {
        let sched = if one_port { ExchangeSchedule::sla(d) } else { ExchangeSchedule::mla(d) };
        TotalExchange { sched, nodes: 1 << d, flits }
    }

    fn send(&self, cx: &mut NodeCtx<'_>, origin: u32, dest: u32) {
        let z = cx.node.0;
        let (slot, k) = self.sched.at[&(origin ^ z, dest ^ z)];
        cx.send(Send {
            dest: Dest::Node(NodeId(z ^ (1 << (k - 1)))),
            msg: PAIR_BASE + origin * self.nodes + dest,
            aux: 0,
            key: slot,
            flits: self.flits,
        });
    }
}

impl Program for TotalExchange {
    fn setup(&mut self, _topo: &Topology, sb: &mut Scoreboard) {
        sb.declare_all_pairs(self.nodes);
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        let z = cx.node.0;
        for t in (0..self.nodes).filter(|&t| t != z) {
            self.send(cx, z, t);
        }
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let k = m.msg - PAIR_BASE;
        let (o, t) = (k / self.nodes, k % self.nodes);
        if t == cx.node.0 {
            cx.accept(m.msg);
        } else {
            self.send(cx, o, t);
        }
    }
    /// A node's sends depend only on what it receives (the schedule is read-only).
    fn splits(&self) -> bool {
        true
    }
}

pub const TOTAL_EXCHANGE: Algorithm = Algorithm {
    ports: Ports::AllOrOne,
    splits: true,
    memory: Some(|a, i, _| {
        let nodes = i.nodes();
        let dims = entry::dims_text(i.spec);
        if nodes * nodes >= 1 << 31 {
            return Err(SpecError::new("dims", dims, format!("{} tracks {} messages; at most 2^31 (d <= 15)", a.name, nodes * nodes)));
        }
        Ok(Need {
            field: "dims",
            value: dims,
            what: format!("{} on {nodes} nodes tracks {} messages and", a.name, nodes * (nodes - 1)),
            // Measured (docs/performance.md): a message's record, packet and place in a
            // queue, about 84 bytes per pair of nodes at the peak.
            bytes: nodes * nodes * 84 + nodes * 64,
        })
    }),
    ..Algorithm::new(
        "total-exchange",
        &[TopologyKind::Hypercube],
        "Bertsekas et al. 1991, sec. 4 (three-phase recursion, phase three overlapping phase two, and its implementation rules; SLA: MTADEA of [SaS85])",
        "every node sends a distinct packet to every other; 2^(d-1) slots all-port, d*2^(d-1) one-port, d*2^(2d-1) transmissions",
        |i| (Box::new(TotalExchange::new(i.d(), i.one_port(), i.spec.packet_flits)), bounds(i.d(), i.one_port())),
    )
};
