//! Modelled faults: links and routers that fail at a given cycle, and what each costs.
//!
//! A failed link is both directions of the cable between two routers; a failed router is
//! all its links. From the failure on:
//!
//! - Route computation knows the fault map (one rule, [`FaultState::route`], which every
//!   kernel reads through the routers' route computation): a head whose next hop is a dead
//!   link is turned to the local NIC of the router in front of it, which discards the packet
//!   as `undeliverable`; a broadcast tree loses the branches behind dead links (their nodes'
//!   copies are `undeliverable`) and keeps the rest.
//! - A NIC refuses a unicast packet whose dimension-order path needs a dead part, when its
//!   program sends it: `undeliverable`, it never enters the network.
//! - A packet that was on a failed part when it failed — a flit on the link, or buffered in
//!   the failed router — or that still crosses a dead link after (the rest of a worm the
//!   failure cut) is `lost_to_faults`. Its flits are poisoned: they drain along the path the
//!   worm already holds, standing for the stomped padding a link-level protocol sends to
//!   close a cut worm, so that every VC and credit the worm holds is released; the NIC they
//!   reach discards them. No part of the network waits for a flit that never comes.
//!
//! Every delivery a packet owes (one for a unicast, one per destination of a broadcast)
//! ends delivered, `lost_to_faults` or `undeliverable`: [`FaultReport`] adds them up and
//! charges each loss to the fault that caused it.

use crate::packet::PacketTable;
use crate::spec::SpecError;
use crate::topology::{Hop, Topology};
use rand::{RngExt, SeedableRng};
use router::{NodeId, PacketId, PortId, PortSet, RouteKind, Routers};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::HashMap;

/// The latest cycle a fault may be set for.
pub const MAX_FAULT_CYCLE: u64 = 1 << 48;

/// What fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPart {
    /// The link on output port `port` of `node` (both directions).
    Link { node: NodeId, port: u8 },
    /// A router, its NIC and all its links.
    Router { node: NodeId },
}

/// One fault: a part and the cycle it fails at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub part: FaultPart,
    pub cycle: u64,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.part {
            FaultPart::Link { node, port } => write!(f, "link {node}.{port} at {}", self.cycle),
            FaultPart::Router { node } => write!(f, "router {node} at {}", self.cycle),
        }
    }
}

impl Fault {
    /// Parse `link NODE.PORT at CYCLE` or `router NODE at CYCLE` (`at CYCLE` may be left out:
    /// cycle 0) against `topo`: the node must exist, the port must have a link.
    pub fn parse(s: &str, topo: &Topology) -> Result<Fault, SpecError> {
        let shape = "`link NODE.PORT at CYCLE` or `router NODE at CYCLE`";
        let words: Vec<&str> = s.split_whitespace().collect();
        let bad = |why: String| SpecError::new("fault", s, why);
        let (what, place, cycle) = match words.as_slice() {
            [what, place] => (*what, *place, 0),
            [what, place, at, cycle] if at.eq_ignore_ascii_case("at") => {
                let c = cycle
                    .replace('_', "")
                    .parse::<u64>()
                    .ok()
                    .filter(|&c| c <= MAX_FAULT_CYCLE)
                    .ok_or_else(|| bad(format!("the cycle must be a whole number from 0 to {MAX_FAULT_CYCLE}; {shape}")))?;
                (*what, *place, c)
            }
            _ => return Err(bad(shape.to_string())),
        };
        let n = topo.nodes();
        let node = |t: &str| -> Result<NodeId, SpecError> {
            t.parse::<u64>()
                .ok()
                .filter(|&v| v < n as u64)
                .map(|v| NodeId(v as u32))
                .ok_or_else(|| bad(format!("node {t:?} does not exist: nodes are 0 to {}; {shape}", n - 1)))
        };
        let part = match what.to_ascii_lowercase().as_str() {
            "link" => {
                let (nd, p) = place.split_once('.').ok_or_else(|| bad(format!("a link is NODE.PORT, like 5.0; {shape}")))?;
                let node = node(nd)?;
                let net = topo.net_ports();
                let names: Vec<String> = (0..net).map(|o| topo.port_name(o)).collect();
                let port = p
                    .parse::<usize>()
                    .ok()
                    .or_else(|| names.iter().position(|x| x == p))
                    .filter(|&o| o < net && topo.neighbor(node, o).is_some())
                    .ok_or_else(|| {
                        let have: Vec<String> =
                            (0..net).filter(|&o| topo.neighbor(node, o).is_some()).map(|o| format!("{o} ({})", names[o])).collect();
                        bad(format!("node {node} has no link on port {p:?}; its ports are {}", have.join(", ")))
                    })?;
                FaultPart::Link { node, port: port as u8 }
            }
            "router" => FaultPart::Router { node: node(place)? },
            _ => return Err(bad(format!("a fault is {shape}"))),
        };
        Ok(Fault { part, cycle })
    }

    /// Each link of `topo` failed at cycle 0 with probability `rate`, drawn from `seed`
    /// (links in the order of their lower node id, then port).
    pub fn random_links(topo: &Topology, rate: f64, seed: u64) -> Vec<Fault> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x6661_756c_7473);
        let mut out = Vec::new();
        for r in 0..topo.nodes() as u32 {
            for o in 0..topo.net_ports() {
                match topo.neighbor(NodeId(r), o) {
                    Some(m) if m.0 > r || (m.0 == r && o < topo.reverse_port(o)) => {}
                    _ => continue,
                }
                if rng.random::<f64>() < rate {
                    out.push(Fault { part: FaultPart::Link { node: NodeId(r), port: o as u8 }, cycle: 0 });
                }
            }
        }
        out
    }

    /// The output ports (node, port) this fault kills: both ends of a link; every link of a
    /// router, both ways.
    fn dead_ports(&self, topo: &Topology) -> Vec<(NodeId, usize)> {
        let link = |n: NodeId, o: usize| {
            let m = topo.neighbor(n, o).expect("a fault on a link that exists");
            [(n, o), (m, topo.reverse_port(o))]
        };
        match self.part {
            FaultPart::Link { node, port } => link(node, port as usize).to_vec(),
            FaultPart::Router { node } => {
                (0..topo.net_ports()).filter(|&o| topo.neighbor(node, o).is_some()).flat_map(|o| link(node, o)).collect()
            }
        }
    }
}

/// One fault in the report, with what it cost, in deliveries.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct FaultCost {
    pub fault: String,
    pub cycle: u64,
    /// The run reached its cycle.
    pub happened: bool,
    pub lost_to_faults: u64,
    pub undeliverable: u64,
}

/// What the faults cost, in deliveries (a unicast packet owes one, a broadcast one per
/// destination): every delivery owed is delivered, lost or undeliverable once the network is
/// empty (`in_network` counts those still under way when the run stopped).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct FaultReport {
    pub faults: Vec<FaultCost>,
    pub sent: u64,
    pub delivered: u64,
    pub lost_to_faults: u64,
    pub undeliverable: u64,
    pub in_network: u64,
}

impl FaultReport {
    /// Does every delivery owed have its end: delivered, lost or undeliverable?
    pub fn accounted(&self) -> bool {
        self.in_network == 0 && self.delivered + self.lost_to_faults + self.undeliverable == self.sent
    }
}

/// What a NIC does with a packet that reached it.
pub(crate) enum Ejected {
    /// Hand it to the program.
    Deliver,
    /// Drop it (counted): poisoned, or turned out in front of a dead link.
    Discard,
}

/// A run's faults as they happen: which output ports are dead, which packets are poisoned,
/// and the costs.
#[derive(Debug)]
pub struct FaultState {
    faults: Vec<Fault>,
    /// Faults applied so far (`faults` is in cycle order).
    applied: usize,
    net: usize,
    /// Per network output port (`node * net_ports + port`): the fault that killed it, or
    /// `ALIVE`.
    dead: Vec<u16>,
    /// Packets that were on a failed part, and the fault.
    poisoned: HashMap<u32, u16>,
    /// Broadcast branches route computation cut this cycle: packet, router, port, fault,
    /// and whether the router turned the packet to its NIC (no branch left at the root).
    pruned: RefCell<Vec<(PacketId, NodeId, usize, u16)>>,
    sunk: RefCell<Vec<PacketId>>,
    costs: Vec<FaultCost>,
    sent: u64,
    delivered: u64,
}

const ALIVE: u16 = u16::MAX;

impl FaultState {
    /// The faults of a run, none applied yet.
    pub fn new(topo: &Topology, faults: &[Fault]) -> FaultState {
        let mut faults = faults.to_vec();
        faults.sort_by_key(|f| f.cycle);
        let costs = faults.iter().map(|f| FaultCost { fault: f.to_string(), cycle: f.cycle, ..Default::default() }).collect();
        let net = topo.net_ports();
        FaultState {
            faults,
            applied: 0,
            net,
            dead: vec![ALIVE; topo.nodes() * net],
            poisoned: HashMap::new(),
            pruned: RefCell::new(Vec::new()),
            sunk: RefCell::new(Vec::new()),
            costs,
            sent: 0,
            delivered: 0,
        }
    }

    /// The cycle the next fault happens at.
    pub fn next_due(&self) -> Option<u64> {
        self.faults.get(self.applied).map(|f| f.cycle)
    }

    /// Is output `port` of `at` dead: the fault that killed it.
    #[inline]
    fn dead(&self, at: NodeId, port: usize) -> Option<u16> {
        if port >= self.net {
            return None;
        }
        let f = self.dead[at.idx() * self.net + port];
        (f != ALIVE).then_some(f)
    }

    /// Is `output` (a link out of a router, global port index with `ports` per router) dead?
    pub fn output_dead(&self, output: usize, ports: usize) -> bool {
        self.dead(NodeId((output / ports) as u32), output % ports).is_some()
    }

    /// The rule for route computation at router `at` while faults are known: a unicast
    /// head whose next hop is dead goes to the local NIC (which discards it); a broadcast
    /// loses its branches over dead links (a root left with none turns it to its NIC).
    #[inline]
    pub(crate) fn route(&self, at: NodeId, packet: PacketId, kind: RouteKind, hop: Hop) -> Hop {
        if self.applied == 0 {
            return hop;
        }
        let mut ports = hop.ports;
        for o in hop.ports.net_ports() {
            if let Some(f) = self.dead(at, o) {
                ports.remove(PortSet::port(o));
                if kind == RouteKind::Broadcast {
                    self.pruned.borrow_mut().push((packet, at, o, f));
                }
            }
        }
        if ports.is_empty() {
            if kind == RouteKind::Broadcast {
                self.sunk.borrow_mut().push(packet);
            }
            ports = PortSet::LOCAL;
        }
        Hop { ports, class: hop.class, high: hop.high & ports }
    }

    /// The first dead link on the dimension-order path from `src` to `dest`: its fault.
    pub fn path_blocked(&self, topo: &Topology, src: NodeId, dest: NodeId) -> Option<u16> {
        if self.applied == 0 {
            return None;
        }
        let mut at = src;
        while at != dest {
            let o = topo.route_unicast(at, src, dest).ports.net_ports().next().expect("a unicast hop");
            if let Some(f) = self.dead(at, o) {
                return Some(f);
            }
            at = topo.neighbor(at, o).expect("a route over a missing link");
        }
        None
    }

    /// A program sent a packet owing `copies` deliveries.
    pub(crate) fn sent(&mut self, copies: u64) {
        self.sent += copies;
    }

    /// A unicast packet the NIC refused: its path needs the part fault `f` killed.
    pub(crate) fn refused(&mut self, f: u16) {
        self.costs[f as usize].undeliverable += 1;
    }

    /// Apply the faults due by cycle `t`: kill their ports and poison the packets on the
    /// failed parts (`down`: the input port each output port feeds, global).
    pub(crate) fn apply_due(&mut self, t: u64, topo: &Topology, routers: &Routers, down: &[u32], packets: &PacketTable) {
        let (p, v) = (routers.ports(), routers.vcs());
        while let Some(&fault) = self.faults.get(self.applied).filter(|f| f.cycle <= t) {
            let f = self.applied as u16;
            self.applied += 1;
            let mut hit = Vec::new();
            for (n, o) in fault.dead_ports(topo) {
                if self.dead[n.idx() * self.net + o] == ALIVE {
                    self.dead[n.idx() * self.net + o] = f;
                }
                let ip = down[n.idx() * p + o] as usize;
                for vc in 0..v {
                    hit.extend(routers.arriving(ip * v + vc));
                }
            }
            if let FaultPart::Router { node } = fault.part {
                for iv in node.idx() * p * v..(node.idx() + 1) * p * v {
                    if routers.occupancy_of(iv) > 0 {
                        hit.extend(routers.vc_flits(iv, |id| packets.get(id).flits()));
                    }
                }
            }
            for flit in hit {
                self.poisoned.entry(flit.packet.0).or_insert(f);
            }
        }
    }

    /// This cycle's departures: a flit that left on a dead link poisons its packet.
    pub(crate) fn departed(&mut self, departures: &[router::Departure], ports: usize) {
        for d in departures {
            let op = d.out_port as usize;
            if let Some(f) = self.dead(NodeId((op / ports) as u32), op % ports) {
                self.poisoned.entry(d.flit.packet.0).or_insert(f);
            }
        }
    }

    /// Charge the broadcast branches route computation cut this cycle: the copies of the
    /// nodes behind them (lost if the packet is poisoned, else undeliverable), taken off
    /// what the packet still owes (plus one for a root that turned it to its own NIC).
    pub(crate) fn settle_routes(&mut self, topo: &Topology, packets: &mut PacketTable) {
        // A root's own NIC takes the packet back first: what it owes never drops to zero
        // while a flit of it is still in the network.
        for pid in std::mem::take(&mut *self.sunk.borrow_mut()) {
            packets.forfeit(pid, 0, 1);
        }
        let pruned = std::mem::take(&mut *self.pruned.borrow_mut());
        for (pid, at, o, f) in pruned {
            let p = *packets.get(pid);
            let m = topo.neighbor(at, o).expect("a branch over a missing link");
            let copies = subtree(topo, m, PortId(topo.reverse_port(o) as u8), p.dest(), p.header.span);
            let poison = self.poisoned.get(&pid.0).copied();
            let c = &mut self.costs[poison.unwrap_or(f) as usize];
            if poison.is_some() {
                c.lost_to_faults += copies;
            } else {
                c.undeliverable += copies;
            }
            let freed = packets.forfeit(pid, copies as u32, 0);
            debug_assert!(!freed, "a broadcast's copies were all cut while its flits are in the network");
        }
    }

    /// Packet `pid` reached the NIC of node `r`: hand it to the program, or discard it
    /// (counted) if poisoned or turned out in front of a dead link (a broadcast its root
    /// turned to its own NIC costs nothing more: its copies were counted when cut).
    pub(crate) fn ejected(&mut self, topo: &Topology, packets: &PacketTable, r: NodeId, pid: PacketId) -> Ejected {
        let p = packets.get(pid);
        if let Some(&f) = self.poisoned.get(&pid.0) {
            if !(p.is_broadcast() && p.dest() == r) {
                self.costs[f as usize].lost_to_faults += 1;
            }
            return Ejected::Discard;
        }
        if p.is_broadcast() {
            if p.dest() == r {
                return Ejected::Discard;
            }
        } else if p.dest() != r {
            let o = topo.route_unicast(r, p.src(), p.dest()).ports.net_ports().next();
            if let Some(f) = o.and_then(|o| self.dead(r, o)) {
                self.costs[f as usize].undeliverable += 1;
                return Ejected::Discard;
            }
        }
        self.delivered += 1;
        Ejected::Deliver
    }

    /// Packet `pid`'s slot was freed: forget its poison.
    pub(crate) fn freed(&mut self, pid: PacketId) {
        self.poisoned.remove(&pid.0);
    }

    /// The report: every fault, whether the run reached it, its costs, the totals.
    pub fn report(&self) -> FaultReport {
        let mut faults = self.costs.clone();
        for f in &mut faults[..self.applied] {
            f.happened = true;
        }
        let lost_to_faults = faults.iter().map(|c| c.lost_to_faults).sum();
        let undeliverable = faults.iter().map(|c| c.undeliverable).sum();
        let in_network = self.sent.saturating_sub(self.delivered + lost_to_faults + undeliverable);
        FaultReport { faults, sent: self.sent, delivered: self.delivered, lost_to_faults, undeliverable, in_network }
    }
}

/// Nodes of the broadcast tree from `root` over `span` at and below `at`, entered on
/// `in_port` (each takes a copy).
fn subtree(topo: &Topology, at: NodeId, in_port: PortId, root: NodeId, span: u32) -> u64 {
    let mut count = 0;
    let mut stack = vec![(at, in_port)];
    while let Some((n, ip)) = stack.pop() {
        let hop = topo.route_broadcast(n, ip, root, span);
        count += hop.ports.contains(PortSet::LOCAL) as u64;
        for o in hop.ports.net_ports() {
            let m = topo.neighbor(n, o).expect("a tree branch over a missing link");
            stack.push((m, PortId(topo.reverse_port(o) as u8)));
        }
    }
    count
}
