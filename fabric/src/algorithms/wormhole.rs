//! The wormhole one-to-all broadcasts of the lecture notes ("Wormhole switching one-to-all
//! broadcast"), node-forwarded in rounds: every node, once informed, sends unicast worms
//! through the modelled routers to nodes any distance away, each labelled with its round.
//!
//! - `rd`, one-port recursive doubling on n-dimensional meshes and tori of any sides, from
//!   any source: dimension by dimension (lowest first), each line split recursively into
//!   halves, the informed node sending to the node at the same place in the other half
//!   (its last node when the half is shorter). Σ⌈log₂ z_i⌉ rounds. A torus is the mesh with
//!   the source in the corner, in coordinates relative to the source (the notes' T(z)).
//! - `dta`, the double tree algorithm on the all-port hypercube: in round 1 the source sends
//!   to its complement s' and to its neighbours off the e-cube path to s'; then s grows a
//!   binomial tree over the nodes at distance ≤ ⌈n/2⌉ from it, s' one over the rest, a level
//!   a round; the neighbour on the path's first link gets its worm in round 2.
//!   max(⌈n/2⌉, 2) rounds for n ≥ 2 (Q₂ needs 2: its 4 nodes cannot be reached in one round
//!   of the source's 2 worms, against the notes' ⌈n/2⌉ = 1).
//! - `ho-kao`: the source sends n worms along a dimension-simple path u₀ … u_n, Q_n is
//!   partitioned into n + 1 subcubes S_i ∋ u_i of sizes within a factor 2 (halving the path
//!   recursively at one of its dimensions), and each S_i is broadcast recursively, by DTA
//!   where that is no slower. The notes' routing checks the bits left to right with an
//!   ascending path; flitwave's e-cube corrects the lowest dimension first, so the path here
//!   descends (the mirror image): the worms u₀ → u_j leave on distinct links and are
//!   node-disjoint.
//!
//! Each node's program is a rule of its own identity and the source's (the plan below is
//! that rule evaluated for every node once, as the hypercube constructions of
//! [`super::hypercube`] are). The run measures the rounds from the worms sent, and fails
//! ([`Program::failures`]) if a node would send in a round before the one it was informed
//! in or more worms in a round than it has channels.

use super::Bounds;
use super::entry::{Algorithm, Input, Ports};
use super::rounds::Plan;
use crate::FabricSpec;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

/// The wormhole broadcasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Rd,
    Dta,
    HoKao,
}

impl Scheme {
    pub fn parse(s: &str) -> Option<Scheme> {
        match s {
            "rd" => Some(Scheme::Rd),
            "dta" => Some(Scheme::Dta),
            "ho-kao" => Some(Scheme::HoKao),
            _ => None,
        }
    }

    /// The rounds the construction takes (what the run must measure).
    pub fn rounds(self, topo: &Topology) -> u32 {
        match self {
            Scheme::Rd => rd_rounds(&topo.sizes),
            Scheme::Dta => dta_rounds(topo.ndims() as u32),
            Scheme::HoKao => ho_kao_rounds(topo.ndims() as u32),
        }
    }
}

/// Every node's worms (sorted by round, in the order the construction gives them within a
/// round) for a broadcast from `root`.
pub fn plan(scheme: Scheme, topo: &Topology, root: NodeId) -> Plan {
    let mut p = Plan::new(topo.nodes(), root);
    match scheme {
        Scheme::Rd => rd_plan(topo, root, &mut p.sends),
        Scheme::Dta => dta(&(0..topo.ndims()).collect::<Vec<_>>(), root.0, 0, &mut p.sends),
        Scheme::HoKao => ho_kao(&(0..topo.ndims()).collect::<Vec<_>>(), root.0, 0, &mut p.sends),
    }
    for w in &mut p.sends {
        w.sort_by_key(|&(round, _)| round);
    }
    p
}

/// Per node, its worms as (round, destination).
type Worms = [Vec<(u32, NodeId)>];

fn ceil_log2(z: u64) -> u32 {
    z.next_power_of_two().trailing_zeros()
}

/// `rd`: Σ ⌈log₂ z_i⌉.
pub fn rd_rounds(sizes: &[u32]) -> u32 {
    sizes.iter().map(|&z| ceil_log2(z as u64)).sum()
}

/// `rd` on a line of `z` with the source in the corner: the hops of each round's worms,
/// ⌈z/2^i⌉ for i = 1 … ⌈log₂ z⌉ (the notes' T(z)).
pub fn rd_round_hops(z: u32) -> Vec<u32> {
    (1..=ceil_log2(z as u64)).map(|i| z.div_ceil(1 << i)).collect()
}

/// DTA on Q_n: ⌈n/2⌉, but 2 on Q₂ (and 0, 1 on Q₀, Q₁).
pub fn dta_rounds(n: u32) -> u32 {
    if n <= 1 { n } else { n.div_ceil(2).max(2) }
}

/// Ho–Kao on Q_n: one round to the n + 1 subcubes, the largest of dimension
/// n − ⌊log₂(n + 1)⌋, then that subcube's broadcast; DTA where it is no slower.
pub fn ho_kao_rounds(n: u32) -> u32 {
    if n <= 2 {
        return dta_rounds(n);
    }
    dta_rounds(n).min(1 + ho_kao_rounds(n - (n + 1).ilog2()))
}

/// Recursive doubling on one line of `z` nodes with the informed node at `src`: for each
/// position, the round (within the line) it is informed in and its worms (round, position).
fn line_schedule(z: u32, src: u32) -> Vec<(u32, Vec<(u32, u32)>)> {
    fn split(lo: u32, hi: u32, p: u32, r: u32, out: &mut Vec<(u32, Vec<(u32, u32)>)>) {
        if lo == hi {
            return;
        }
        let h = (hi - lo + 1).div_ceil(2);
        let mid = lo + h; // the upper half starts here
        let q = if p < mid { (p + h).min(hi) } else { p - h };
        out[p as usize].1.push((r + 1, q));
        out[q as usize].0 = r + 1;
        let (lp, up) = if p < mid { (p, q) } else { (q, p) };
        split(lo, mid - 1, lp, r + 1, out);
        split(mid, hi, up, r + 1, out);
    }
    let mut out = vec![(0, Vec::new()); z as usize];
    split(0, z - 1, src, 0, &mut out);
    out
}

fn rd_plan(topo: &Topology, root: NodeId, plan: &mut Worms) {
    let torus = topo.kind == TopologyKind::Torus;
    let a = topo.coords(root);
    let sizes = &topo.sizes;
    // Lines in coordinates relative to the source on a torus (the source in the corner).
    let lines: Vec<_> = (0..sizes.len()).map(|i| line_schedule(sizes[i], if torus { 0 } else { a[i] })).collect();
    let offset: Vec<u32> = (0..sizes.len()).map(|i| rd_rounds(&sizes[..i])).collect();
    let pos = |i: usize, c: u32| if torus { (c + sizes[i] - a[i]) % sizes[i] } else { c };
    let coord = |i: usize, p: u32| if torus { (p + a[i]) % sizes[i] } else { p };
    for (x, worms) in plan.iter_mut().enumerate() {
        let c = topo.coords(NodeId(x as u32));
        // The phase (dimension) it is informed in: its highest coordinate off the source's.
        let first = (0..c.len()).rev().find(|&i| c[i] != a[i]);
        let dims = match first {
            Some(h) => h..c.len(),
            None => 0..c.len(),
        };
        for i in dims {
            for &(r, q) in &lines[i][pos(i, c[i]) as usize].1 {
                let mut t = c.clone();
                t[i] = coord(i, q);
                worms.push((offset[i] + r, topo.node_at(&t)));
            }
        }
    }
}

/// The node of subcube `free` (dimensions, ascending) at relative address `x` from `s`.
fn at(free: &[usize], s: u32, x: u32) -> u32 {
    free.iter().enumerate().filter(|&(j, _)| x >> j & 1 == 1).fold(s, |n, (_, &f)| n ^ 1 << f)
}

/// DTA from `s` within the subcube of dimensions `free`, its rounds after `r0`.
fn dta(free: &[usize], s: u32, r0: u32, plan: &mut Worms) {
    let t = free.len() as u32;
    let mut send = |from: u32, r: u32, to: u32| plan[at(free, s, from) as usize].push((r0 + r, NodeId(at(free, s, to))));
    if t == 0 {
        return;
    }
    if t == 1 {
        send(0, 1, 1);
        return;
    }
    let full = (1u32 << t) - 1;
    let half = t.div_ceil(2);
    send(0, 1, full);
    for j in 1..t {
        send(0, 1, 1 << j);
    }
    send(0, 2, 1);
    for x in 1..full {
        let w = x.count_ones();
        if w == 1 {
            continue; // the source's
        }
        if w <= half {
            // s's tree: the parent clears the lowest one.
            send(x & (x - 1), w, x);
        } else {
            let y = x ^ full; // relative to s'
            send((y & (y - 1)) ^ full, 1 + y.count_ones(), x);
        }
    }
}

/// Ho–Kao from `u` within the subcube of dimensions `free` (ascending), its rounds after `r0`.
fn ho_kao(free: &[usize], u: u32, r0: u32, plan: &mut Worms) {
    let t = free.len() as u32;
    if t <= 2 || dta_rounds(t) <= 1 + ho_kao_rounds(t - (t + 1).ilog2()) {
        return dta(free, u, r0, plan);
    }
    // The descending dimension-simple path: u_k flips the k highest free dimensions.
    let dims: Vec<usize> = free.iter().rev().copied().collect();
    let path: Vec<u32> = (0..=t as usize).map(|k| dims[..k].iter().fold(u, |n, &f| n ^ 1 << f)).collect();
    for &v in &path[1..] {
        plan[u as usize].push((r0 + 1, NodeId(v)));
    }
    // Halve the path at one of its dimensions until each node has its subcube.
    fn segment(a: usize, b: usize, free: Vec<usize>, dims: &[usize], path: &[u32], r: u32, plan: &mut Worms) {
        if a == b {
            return ho_kao(&free, path[a], r, plan);
        }
        let c = a + (b - a + 1).div_ceil(2);
        let rest: Vec<usize> = free.iter().copied().filter(|&f| f != dims[c - 1]).collect();
        segment(a, c - 1, rest.clone(), dims, path, r, plan);
        segment(c, b, rest, dims, path, r, plan);
    }
    segment(0, t as usize, free.to_vec(), &dims, &path, r0 + 1, plan);
}

/// The fewest rounds in which `n` nodes can be informed when the source reaches `first`
/// nodes (itself included) in round 1 and the informed multiply by at most `growth` a round.
fn rounds_to_reach(n: u64, first: u64, growth: u64) -> u64 {
    let (mut informed, mut r) = (1u64, 0u64);
    while informed < n {
        informed = if r == 0 { first } else { informed.saturating_mul(growth) };
        r += 1;
    }
    r
}

/// The wormhole lower bound on the rounds of a one-to-all broadcast from `root`, with
/// `channels` NIC channels per node (None: all-port): a node sends at most min(channels,
/// its links) worms a round, so the informed grow at most (1 + max of that) times a round,
/// and (1 + the source's) in the first. The notes' bounds (⌈log₂ N⌉ one-port,
/// ⌈n/log₂(n+1)⌉ on the all-port Q_n, ⌈log_{2n+1} N⌉ on all-port n-dimensional meshes and
/// tori, [`notes_lower_bound_rounds`]) are this with every node of full degree; on a mesh
/// the source's smaller degree makes it one more on some sizes (M(2,2): 2 rounds, not 1).
pub fn lower_bound_rounds(topo: &Topology, root: NodeId, channels: Option<usize>) -> u64 {
    let sends = |v: NodeId| {
        let links = (0..topo.net_ports()).filter(|&p| topo.neighbor(v, p).is_some()).count();
        channels.map_or(links, |c| c.min(links)) as u64
    };
    let most = (0..topo.nodes() as u32).map(|v| sends(NodeId(v))).max().unwrap_or(0);
    rounds_to_reach(topo.nodes() as u64, 1 + sends(root), 1 + most)
}

/// The notes' wormhole bounds: ⌈log₂ N⌉ one-port; all-port ⌈log_{n+1} N⌉ = ⌈n/log₂(n+1)⌉
/// on Q_n and ⌈log_{2n+1} N⌉ on n-dimensional meshes and tori (with `channels` K between,
/// ⌈log_{K+1} N⌉).
pub fn notes_lower_bound_rounds(topo: &Topology, channels: Option<usize>) -> u64 {
    let degree = match topo.kind {
        TopologyKind::Hypercube => topo.ndims(),
        _ => 2 * topo.ndims(),
    } as u64;
    let c = channels.map_or(degree, |c| (c as u64).min(degree));
    rounds_to_reach(topo.nodes() as u64, 1 + c, 1 + c)
}

/// The program's bounds: the wormhole lower bound in rounds (a round takes at least a slot).
pub fn bounds(topo: &Topology, root: NodeId, channels: Option<usize>) -> Bounds {
    Bounds { lower: Some(lower_bound_rounds(topo, root, channels) as f64), paper: None, transmissions: None }
}

/// The per-node program of a wormhole broadcast: a node informed by a worm of round r
/// (carried in `aux`) sends its worms of later rounds, each with its round as priority key
/// (a one-port NIC sends them in round order).
pub struct WormBroadcast {
    pub root: NodeId,
    pub flits: u16,
    plan: Plan,
    msg: u32,
    /// Worms sent in each round (index 0 unused), counted as they are sent.
    sent: Vec<u64>,
    failures: Vec<String>,
}

impl WormBroadcast {
    /// `channels`: the NIC channels per node (None: all-port), to check the plan against.
    pub fn new(scheme: Scheme, topo: &Topology, root: NodeId, channels: Option<usize>, flits: u16) -> WormBroadcast {
        let plan = plan(scheme, topo, root);
        let mut failures = Vec::new();
        for (x, worms) in plan.sends.iter().enumerate() {
            let most = channels.unwrap_or(topo.net_ports());
            for &(round, _) in worms {
                let n = worms.iter().filter(|&&(r, _)| r == round).count();
                if n > most {
                    failures.push(format!("node {x} sends {n} worms in round {round} with {most} channels"));
                    break;
                }
            }
        }
        WormBroadcast { root, flits, plan, msg: 0, sent: Vec::new(), failures }
    }

    fn send_after(&mut self, cx: &mut NodeCtx<'_>, informed: u32) {
        for i in 0..self.plan.sends[cx.node.idx()].len() {
            let (round, to) = self.plan.sends[cx.node.idx()][i];
            if round <= informed {
                self.failures.push(format!("node {} informed in round {informed} was to send in round {round}", cx.node.0));
            }
            if self.sent.len() <= round as usize {
                self.sent.resize(round as usize + 1, 0);
            }
            self.sent[round as usize] += 1;
            cx.send(Send { dest: Dest::Relay(to), msg: self.msg, aux: round as u64, key: round, flits: self.flits });
        }
    }

    /// Rounds with a worm sent, as the run went.
    pub fn rounds(&self) -> u32 {
        self.sent.iter().rposition(|&n| n > 0).unwrap_or(0) as u32
    }
}

impl Program for WormBroadcast {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        self.msg = sb.declare_timed(DestSet::Broadcast { root: self.root, span: topo.full_span() }, topo, 0);
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        if cx.node == self.root {
            self.send_after(cx, 0);
        }
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        self.send_after(cx, m.aux as u32);
    }
    fn report(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "rounds": self.rounds(),
            "worms_per_round": self.sent.get(1..).unwrap_or(&[]),
        }))
    }
    fn failures(&self) -> Vec<String> {
        self.failures.clone()
    }
}

pub const RD: Algorithm = Algorithm {
    rooted: true,
    rounds: true,
    cost_cycles: Some(notes_cost_cycles),
    ..Algorithm::new(
        "rd",
        &[TopologyKind::Linear, TopologyKind::Mesh, TopologyKind::Torus],
        "one-to-all broadcast lecture notes, 'Wormhole switching': one-port meshes (recursive doubling dimension by dimension, any sides and source) and tori (T(z))",
        "one-port wormhole recursive doubling from --root; sum of ceil(log2 z_i) rounds, the notes' T(z) cost beside the measured time",
        |i| worm_broadcast(Scheme::Rd, i),
    )
};

pub const DTA: Algorithm = Algorithm {
    name: "dta",
    topologies: &[TopologyKind::Hypercube],
    reference: "one-to-all broadcast lecture notes, 'Wormhole switching', Hypercube: the double tree algorithm (DTA), e-cube routing",
    summary: "all-port wormhole broadcast from --root through the complement node; ceil(d/2) rounds (2 on Q2), no two worms of a round on one link",
    ports: Ports::All("sends a worm on every link of a node in one round (the notes' all-port hypercube)"),
    build: |i| worm_broadcast(Scheme::Dta, i),
    cost_cycles: None,
    ..RD
};

pub const HO_KAO: Algorithm = Algorithm {
    name: "ho-kao",
    reference: "one-to-all broadcast lecture notes, 'Wormhole switching', Hypercube: Ho-Kao (dimension-simple path, d+1 subcubes, DTA inside)",
    summary: "all-port wormhole broadcast from --root; Q7 in 3 rounds; against the lower bound ceil(d/log2(d+1))",
    build: |i| worm_broadcast(Scheme::HoKao, i),
    ..DTA
};

/// A wormhole broadcast on the configured fabric, with as many worms a round as a node has
/// channels.
fn worm_broadcast(scheme: Scheme, i: &Input) -> (Box<dyn Program>, Bounds) {
    let topo = i.spec.topology();
    let channels = i.spec.ports.limit();
    (Box::new(WormBroadcast::new(scheme, &topo, i.root, channels, i.spec.packet_flits)), bounds(&topo, i.root, channels))
}

/// `rd`: the notes' T(z) = Σ_{i=1}^{⌈log z⌉} (t_s + ⌈z/2^i⌉ t_d + m t_m), summed over the
/// dimensions, a round's worm costing the NIC's start-up and copy cycles plus this router's
/// zero-load latency over ⌈z/2^i⌉ hops (t_d its cycles a hop, m t_m the flits after the
/// head). Exact for a torus or a mesh with the source in the corner; elsewhere the worms
/// are shorter.
pub fn notes_cost_cycles(spec: &FabricSpec) -> u64 {
    let flits = spec.packet_flits as u64;
    let start = spec.startup_cycles + spec.copy_cycles_per_flit * flits;
    let worm = |hops: u64| start + spec.pipeline.zero_load_latency(spec.switching, hops, flits);
    spec.sizes.iter().flat_map(|&z| rd_round_hops(z)).map(|h| worm(h as u64)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan's rounds, once [`Plan::informed_rounds`] has found it informs every node once,
    /// each by a node informed before it sends.
    fn replay(scheme: Scheme, topo: &Topology, root: NodeId) -> u32 {
        let p = plan(scheme, topo, root);
        p.informed_rounds().unwrap_or_else(|e| panic!("{scheme:?} on {:?} from {}: {e}", topo.sizes, root.0));
        p.rounds()
    }

    #[test]
    fn plans_inform_every_node_once_in_the_construction_rounds() {
        for n in 1..=9 {
            let q = Topology::new(TopologyKind::Hypercube, &[n]);
            for root in [0, (1 << n) - 1, 5 % (1 << n)] {
                assert_eq!(replay(Scheme::Dta, &q, NodeId(root)), dta_rounds(n), "dta n={n}");
                assert_eq!(replay(Scheme::HoKao, &q, NodeId(root)), ho_kao_rounds(n), "ho-kao n={n}");
            }
        }
        for (kind, sizes) in [(TopologyKind::Mesh, vec![5, 3]), (TopologyKind::Torus, vec![7, 6]), (TopologyKind::Mesh, vec![3, 2, 5])] {
            let t = Topology::new(kind, &sizes);
            for root in 0..t.nodes() as u32 {
                assert_eq!(replay(Scheme::Rd, &t, NodeId(root)), rd_rounds(&sizes));
            }
        }
    }

    #[test]
    fn the_notes_round_counts() {
        // Q7 in 3 rounds (the notes' figure); DTA ⌈n/2⌉ from Q3 on.
        assert_eq!(ho_kao_rounds(7), 3);
        assert_eq!((3..=9).map(dta_rounds).collect::<Vec<_>>(), [2, 2, 3, 3, 4, 4, 5]);
        // ⌈n / log2(n+1)⌉ from the formula, against the integer version.
        for n in 1..=20u32 {
            let q = Topology::new(TopologyKind::Hypercube, &[n]);
            let f = (n as f64 / ((n + 1) as f64).log2()).ceil() as u64;
            assert_eq!(notes_lower_bound_rounds(&q, None), f, "n={n}");
            assert_eq!(lower_bound_rounds(&q, NodeId(0), None), f);
            assert_eq!(lower_bound_rounds(&q, NodeId(0), Some(1)), n as u64);
        }
        let m = Topology::new(TopologyKind::Mesh, &[2, 2]);
        assert_eq!((notes_lower_bound_rounds(&m, None), lower_bound_rounds(&m, NodeId(0), None)), (1, 2));
        let m = Topology::new(TopologyKind::Mesh, &[16, 16]);
        assert_eq!(lower_bound_rounds(&m, NodeId(0), Some(1)), 8);
    }
}
