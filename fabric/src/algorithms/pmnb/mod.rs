//! Partial multinode broadcast on the d-cube (Varvarigos & Bertsekas §IV), all-port, one
//! packet per slot; M arbitrary active nodes each broadcast one packet.
//!
//! Every phase is synchronous, as in the paper: all nodes know the period's start and, once
//! the prefix has run, M, so each step starts at a cycle every node computes alike.
//!
//! - `pmnb-1` (§IV-A): rank by parallel prefix (2d steps of t_p), pack packet of rank r to
//!   node r (d steps, dimension i in step i when bit i of s XOR r is one), single-node
//!   broadcast from node r into the subcube *^(d−m) r (d − m steps), then the optimal
//!   multinode broadcast of Bertsekas et al. inside each subcube w*^m (⌈(2^m − 1)/m⌉
//!   slots), m = ⌈log2 M⌉.
//! - `pmnb-2` (§IV-B, Theorem 3): each packet split into d mini-packets; mini-packet class
//!   c follows A_c, the algorithm A_0 (prefix, packing, broadcast subphases l = 1..d across
//!   dimension d − l, each lasting ⌈M/2^(d−l+1)⌉ mini-slots, Lemma 1) with node w renamed
//!   rotl(w, c) and dimension l renamed l + c mod d, so the d classes never share a link.
//! - `pmnb-3` (§IV-C): no splitting; a first prefix ranks the packets, packet of rank r is
//!   in class r mod d, and class c runs A_c over its own packets (a second prefix ranks them
//!   in A_c's order). All classes follow the schedule of the largest, ⌈M/d⌉ packets. With M
//!   = N and known ranks it is the paper's new multinode broadcast.
//!
//! t_p = 0 models ranks known in advance (or a free scan network): the prefix is skipped
//! and every node reads its rank and M at the period's start. So does a static PMNB with
//! every node active (M = N, the multinode broadcast): the ranks are the node ids.
//!
//! A prefix step lasts t_p slots; its packets are short ([`prefix::packet_flits`]: at most a
//! data packet), so a step of more than one slot is a transmission and then waiting. A
//! prefix packet that arrives after its step has ended (the schedule read a stale count) is
//! an algorithm failure, never a silent loss.

use super::Bounds;
use super::entry::{self, Algorithm, Input, Need, Ports, Settings};
use super::hypercube::MnbTree;
use super::prefix;
use super::timing::{handover_timing, hop_timing};
use crate::SpecError;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use router::{NONE, NodeId};

mod engine;
mod scan;
pub use engine::{Engine, Timing};
pub use scan::Scan;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    #[serde(rename = "pmnb-1")]
    One,
    #[serde(rename = "pmnb-2")]
    Two,
    #[serde(rename = "pmnb-3")]
    Three,
}

impl Variant {
    pub fn parse(s: &str) -> Option<Variant> {
        match s {
            "pmnb-1" => Some(Variant::One),
            "pmnb-2" => Some(Variant::Two),
            "pmnb-3" => Some(Variant::Three),
            _ => None,
        }
    }
    /// Mini-packets per packet.
    pub fn pieces(self, d: u32) -> u32 {
        if self == Variant::Two { d } else { 1 }
    }
    /// Routing classes (each running its own A_c).
    fn classes(self, d: u32) -> u32 {
        if self == Variant::One { 1 } else { d }
    }
    /// Parallel prefix operations per period.
    fn scans(self) -> u32 {
        if self == Variant::Three { 2 } else { 1 }
    }
}

/// ⌈log2 m⌉ for m ≥ 1.
fn ceil_log2(m: u64) -> u32 {
    64 - (m.max(1) - 1).leading_zeros()
}

/// Broadcast subphase l (1-based) of A_0 lasts ⌈M/2^(d−l+1)⌉ steps (Lemma 1: the most
/// packets any node holds before it); 0 when M = 0.
pub fn subphase_steps(m: u64, d: u32, l: u32) -> u64 {
    m.div_ceil(1u64 << (d - l + 1))
}

/// The paper's closed forms (§IV) in slots, t_p in slots: PMNB I (M rounded up to 2^m),
/// II (eq. 14) and III.
pub fn formula(variant: Variant, d: u32, m: u64, tp: f64) -> f64 {
    let (df, n) = (d as f64, (1u64 << d) as f64);
    match variant {
        Variant::One => {
            let mm = ceil_log2(m) as f64;
            let p4 = if mm == 0.0 { 0.0 } else { ((2f64.powf(mm) - 1.0) / mm).ceil() };
            p4 + 2.0 * df + 2.0 * df * tp - mm
        }
        Variant::Two => (n - 1.0) / n * m as f64 / df + 2.0 * df * tp + 2.0,
        Variant::Three => m.div_ceil(d as u64) as f64 + 2.0 * df + 4.0 * df * tp - 1.0,
    }
}

/// The paper's bound rounded up to whole slots (with M = N the ranks are known: t_p = 0),
/// and the lower bound max{d, ⌈(M − 1)/d⌉} (⌈(M − 1)/d⌉ alone with splitting, eq. 13).
pub fn bounds(variant: Variant, d: u32, m: u64, tp: f64) -> Bounds {
    let d64 = d as u64;
    let lower = (m.saturating_sub(1)).div_ceil(d64);
    let lower = if variant == Variant::Two { lower.max(1) } else { lower.max(d64) };
    let tp = if m == 1u64 << d { 0.0 } else { tp };
    let paper = formula(variant, d, m, tp);
    // The formula itself: PMNB II's is fractional ((N − 1)M/(Nd) + 2d t_p + 2), and slots
    // are measured in fractions too (its mini-packets).
    Bounds { lower: Some(lower as f64), paper: Some((paper * 1e12).round() / 1e12), transmissions: None }
}

pub fn rotl(x: u32, c: u32, d: u32) -> u32 {
    let c = c % d;
    if c == 0 { x } else { ((x << c) | (x >> (d - c))) & ((1u32 << d) - 1) }
}

pub fn rotr(x: u32, c: u32, d: u32) -> u32 {
    rotl(x, d - c % d, d)
}

/// Packet kinds, bits 28..32 of `aux`.
const SCAN_UP: u64 = 1;
const SCAN_DOWN: u64 = 2;
const PACK: u64 = 3;
const SPREAD: u64 = 4;
const SUBCUBE_SNB: u64 = 5;
const SUBCUBE_MNB: u64 = 6;
const CLASS_UP: u64 = 7;
const CLASS_DOWN: u64 = 8;

/// `aux` of a PMNB packet: value (21 bits), class (5 bits), kind (4 bits), and a second
/// value (origin node or the scan's total) in the high 32 bits.
fn aux(kind: u64, class: u32, value: u32, high: u32) -> u64 {
    debug_assert!(value < 1 << 21 && class < 32);
    value as u64 | (class as u64) << 21 | kind << 28 | (high as u64) << 32
}
fn aux_kind(a: u64) -> u64 {
    (a >> 28) & 0xf
}
fn aux_class(a: u64) -> u32 {
    ((a >> 21) & 0x1f) as u32
}
fn aux_value(a: u64) -> u32 {
    (a & ((1 << 21) - 1)) as u32
}
fn aux_high(a: u64) -> u32 {
    (a >> 32) as u32
}

/// `msg` of packets that carry no broadcast.
const CONTROL: u32 = u32::MAX;

/// The static PMNB: the given active nodes broadcast once, from cycle 0.
pub struct Pmnb {
    engine: Engine,
    active: Vec<u32>,
}

impl Pmnb {
    /// `flits`: packet length (pmnb-2: a multiple of d, split into d mini-packets);
    /// `tp_cycles`: a prefix step in cycles (0: ranks known; with every node active they
    /// are known too).
    /// `hop`, `prefix_hop`: the router's one-hop latency beyond the packet length and its
    /// sustained interval between packets over one link, for a piece and for a prefix
    /// packet (`(0, length)` on the ideal router).
    pub fn new(variant: Variant, d: u32, active: &[u32], flits: u16, tp_cycles: u64, hop: (u64, u64), prefix_hop: (u64, u64)) -> Pmnb {
        let pieces = variant.pieces(d) as u64;
        let tp = if active.len() as u64 == 1u64 << d { 0 } else { tp_cycles };
        let t = Timing {
            d,
            variant,
            tp,
            ms: flits as u64 / pieces,
            slot: flits as u64,
            extra: hop.0,
            gap: hop.1,
            prefix_extra: prefix_hop.0,
            prefix_gap: prefix_hop.1,
            handover: 0,
        };
        let mut engine = Engine::new(t, flits);
        for &x in active {
            engine.active[x as usize] = true;
        }
        Pmnb { engine, active: active.to_vec() }
    }
}

impl Pmnb {
    /// Start the packing phase at least `cycles` after the last prefix step (see
    /// [`Timing::handover`]).
    pub fn with_handover(mut self, cycles: u64) -> Pmnb {
        self.engine.t.handover = cycles;
        self
    }
}

impl Program for Pmnb {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        let pieces = self.engine.t.variant.pieces(self.engine.t.d);
        for &x in &self.active {
            let root = NodeId(x);
            self.engine.msg_base[x as usize] = sb.declare(DestSet::Broadcast { root, span: topo.full_span() }, topo);
            for _ in 1..pieces {
                sb.declare(DestSet::Broadcast { root, span: topo.full_span() }, topo);
            }
        }
        if self.engine.t.tp == 0 {
            let active = self.engine.active.clone();
            self.engine.known_ranks(&active);
        }
    }
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        self.engine.begin(cx, 0);
    }
    fn prefetch_timer(&self, node: NodeId) {
        self.engine.prefetch_timer(node.0 as usize);
    }
    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        self.engine.run_due(cx);
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        self.engine.receive(cx, m);
    }
    fn report(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "packing_delays": self.engine.collisions,
            "late_prefix_packets": self.engine.late_prefix,
            "prefix_steps": self.engine.t.scan_steps(),
            "prefix_packet_flits": if self.engine.t.scan_steps() > 0 { self.engine.prefix_flits } else { 0 },
        }))
    }
    fn failures(&self) -> Vec<String> {
        self.engine.failures()
    }
    /// Each call touches only its node's entries; the ranks known in advance are computed
    /// at setup, in every part alike.
    fn splits(&self) -> bool {
        true
    }
    fn join(&mut self, other: Box<dyn Program>) {
        let other = (other as Box<dyn std::any::Any>).downcast::<Pmnb>().expect("the same program in every part");
        self.engine.collisions += other.engine.collisions;
        self.engine.late_prefix += other.engine.late_prefix;
    }
}

/// The settings of `pmnb-1`, `pmnb-2`, `pmnb-3`.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct PmnbConfig {
    pub variant: Variant,
    /// The active nodes, ascending.
    pub active: Vec<u32>,
    pub active_set: String,
    /// A parallel-prefix step, in slots (0: ranks known, no prefix phase).
    pub tp: f64,
    /// Cycles of a step (t_p × packet-flits, at most 1000 × 65535).
    pub tp_cycles: u32,
}

pub const PMNB_1: Algorithm = Algorithm {
    ports: Ports::All(entry::SIMULTANEOUS),
    settings: Settings::Pmnb(Variant::One),
    splits: true,
    memory: Some(memory),
    ..Algorithm::new(
        "pmnb-1",
        &[TopologyKind::Hypercube],
        "Varvarigos & Bertsekas, sec. IV-A (rank by parallel prefix, packing on disjoint paths, subcube single-node broadcast, subcube multinode broadcast)",
        "partial multinode broadcast from --active / --active-count; <= ceil((2^m-1)/m) + 2d + 2d tp - m slots, m = ceil(log2 M)",
        build,
    )
};

pub const PMNB_2: Algorithm = Algorithm {
    name: "pmnb-2",
    reference: "Varvarigos & Bertsekas, sec. IV-B, Theorem 3 (d mini-packets routed by the shifted algorithms A_c)",
    summary: "partial multinode broadcast, packets split into d mini-packets (--packet-flits a multiple of d); <= (N-1)/N M/d + 2d tp + 2 slots",
    settings: Settings::Pmnb(Variant::Two),
    ..PMNB_1
};

pub const PMNB_3: Algorithm = Algorithm {
    name: "pmnb-3",
    reference: "Varvarigos & Bertsekas, sec. IV-C (classes r mod d routed by A_c, no splitting); with --active all --tp 0 the paper's new MNB",
    summary: "partial multinode broadcast without splitting; <= ceil(M/d) + 2d + 4d tp - 1 slots (MNB: ceil(N/d) + 2d - 1)",
    settings: Settings::Pmnb(Variant::Three),
    ..PMNB_1
};

/// A PMNB's program, its pieces and prefix packets timed on the configured router.
fn build(i: &Input) -> (Box<dyn Program>, Bounds) {
    let p = i.pmnb.expect("pmnb settings resolved");
    let (d, l) = (i.d(), i.spec.packet_flits);
    let ms = l / p.variant.pieces(d) as u16;
    let pf = prefix::packet_flits(p.tp_cycles as u64, l);
    let prog = Pmnb::new(p.variant, d, &p.active, l, p.tp_cycles as u64, hop_timing(i.spec, ms), hop_timing(i.spec, pf))
        .with_handover(handover_timing(i.spec, pf, ms));
    (Box::new(prog), bounds(p.variant, d, p.active.len() as u64, p.tp))
}

/// Declared pieces, the prefix and phase state (16 bytes per node and d^2), and what every
/// node holds of the packets at the peak, measured (docs/performance.md): 26 bytes per node
/// and packet for PMNB I, 20 for PMNB II's mini-packets, 4 for PMNB III.
fn memory(_: &Algorithm, i: &Input, _: u64) -> Result<Need, SpecError> {
    let p = i.pmnb.expect("pmnb settings resolved");
    let nodes = i.nodes();
    let pieces = p.variant.pieces(i.spec.sizes[0]) as u128;
    let m = p.active.len() as u128;
    let d = i.spec.sizes[0] as u128; // the hypercube's dimension
    let per = match p.variant {
        Variant::One => 26,
        Variant::Two => 20,
        Variant::Three => 4,
    };
    let bytes = m * pieces * (entry::RECORD_BYTES + entry::bitset_bytes(i.spec)) + nodes * d * d * 16 + nodes * m * per;
    let what = format!("a partial multinode broadcast of {m} packets on {nodes} nodes");
    Ok(Need { field: "active-count", value: m.to_string(), what, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::kbcast::ActiveSet;
    use crate::{Ending, Fabric, FabricSpec, PortModel, TopologyKind};
    use std::collections::HashSet;
    use std::sync::{Arc, Mutex};

    /// One packing transmission: the step (0..d) and the link.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    struct Hop {
        step: u64,
        from: u32,
        to: u32,
    }

    fn rot_left(x: u32, c: u32, d: u32) -> u32 {
        let mask = (1u32 << d) - 1;
        let c = c % d;
        ((x << c) | (x >> ((d - c) % d))) & mask
    }

    /// The packing phase of §IV-A from the paper's rule alone: in class c (A_0 with node w
    /// renamed rotl(w, c) and dimension i renamed i + c mod d) the packet of node s, whose
    /// routing tag is s XOR r_s (r_s: the class's packets before s in the class's order),
    /// crosses dimension i in step i iff bit i of the tag is one. Returns every hop.
    fn paper_routes(d: u32, classes: &[(u32, Vec<u32>)]) -> Vec<Hop> {
        let mut hops = Vec::new();
        for (c, members) in classes {
            // Virtual ids in class c: v with rotl(v, c) = s.
            let mut virt: Vec<u32> = members.iter().map(|&s| (0..1u32 << d).find(|&v| rot_left(v, *c, d) == s).unwrap()).collect();
            virt.sort_unstable();
            for (r, &v) in virt.iter().enumerate() {
                let tag = v ^ r as u32;
                let mut at = v;
                for i in 0..d {
                    if tag >> i & 1 == 1 {
                        let next = at ^ (1 << i);
                        hops.push(Hop { step: i as u64, from: rot_left(at, *c, d), to: rot_left(next, *c, d) });
                        at = next;
                    }
                }
                assert_eq!(at, r as u32, "the greedy rule ends at the rank");
            }
        }
        hops
    }

    /// The classes and their packets for each variant: PMNB I one class of every active
    /// node; II every active node in each of the d classes (one mini-packet each); III the
    /// packet of natural rank q in class q mod d.
    fn classes(v: Variant, d: u32, active: &[u32]) -> Vec<(u32, Vec<u32>)> {
        match v {
            Variant::One => vec![(0, active.to_vec())],
            Variant::Two => (0..d).map(|c| (c, active.to_vec())).collect(),
            Variant::Three => {
                (0..d).map(|c| (c, active.iter().enumerate().filter(|(q, _)| *q as u32 % d == c).map(|(_, &s)| s).collect())).collect()
            }
        }
    }

    /// The PMNB, logging the packing packets it receives.
    struct Logged {
        inner: Pmnb,
        log: Arc<Mutex<Vec<Hop>>>,
        /// First cycle of the packing phase, and cycles per packing step.
        pack_start: u64,
        ms: u64,
    }

    impl Program for Logged {
        fn setup(&mut self, topo: &crate::Topology, sb: &mut crate::Scoreboard) {
            self.inner.setup(topo, sb);
        }
        fn start(&mut self, cx: &mut NodeCtx<'_>) {
            self.inner.start(cx);
        }
        fn timer(&mut self, cx: &mut NodeCtx<'_>) {
            self.inner.timer(cx);
        }
        fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
            if aux_kind(m.aux) == PACK {
                let since = m.birth - self.pack_start;
                assert_eq!(since % self.ms, 0, "a packing packet sent between steps");
                self.log.lock().unwrap().push(Hop { step: since / self.ms, from: m.src.0, to: cx.node.0 });
            }
            self.inner.receive(cx, m);
        }
        fn failures(&self) -> Vec<String> {
            self.inner.failures()
        }
    }

    /// Runs the PMNB on the ideal all-port cube and returns the packing hops it made.
    fn simulated_routes(v: Variant, d: u32, active: &[u32], tp: u64) -> Vec<Hop> {
        let flits = if v == Variant::Two { d as u16 } else { 1 };
        let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
        spec.ports = PortModel::All;
        spec.packet_flits = flits;
        spec.buffer_flits = 2 * flits;
        let tp_cycles = tp * flits as u64;
        let prefix_hop = (0, crate::algorithms::prefix::packet_flits(tp_cycles, flits) as u64);
        let inner = Pmnb::new(v, d, active, flits, tp_cycles, (0, flits as u64 / v.pieces(d) as u64), prefix_hop);
        // Independently of the engine: the prefix takes 2d steps per scan (two scans in III).
        let scans = if v == Variant::Three { 2 } else { 1 };
        let all = active.len() == 1 << d;
        let pack_start = if all { 0 } else { scans * 2 * d as u64 * tp_cycles };
        let log = Arc::new(Mutex::new(Vec::new()));
        let prog = Logged { inner, log: log.clone(), pack_start, ms: flits as u64 / v.pieces(d) as u64 };
        let mut f = Fabric::new(&spec, Box::new(prog));
        assert_eq!(f.run(), Ending::Quiescent);
        assert!(f.scoreboard.ok(), "{v:?} d={d}: {:?}", f.scoreboard.counts());
        assert!(f.program().failures().is_empty(), "{v:?} d={d}: {:?}", f.program().failures());
        std::mem::take(&mut *log.lock().unwrap())
    }

    /// A split run's parts each count their own broken promises; the join adds them up.
    #[test]
    fn join_sums_the_parts_counters() {
        let make = |c: u64, l: u64| {
            let mut p = Pmnb::new(Variant::One, 3, &[1, 2], 1, 1, (0, 1), (0, 1));
            (p.engine.collisions, p.engine.late_prefix) = (c, l);
            p
        };
        let mut a = make(2, 0);
        a.join(Box::new(make(3, 4)));
        let r = a.report().unwrap();
        assert_eq!((r["packing_delays"].as_u64(), r["late_prefix_packets"].as_u64()), (Some(5), Some(4)));
        assert_eq!(a.failures().len(), 2);
    }

    /// Active sets for the d-cube: random ones of several sizes, a subcube, §3.1's
    /// adversarial set (the upper half), the highest M nodes (every packet travels far),
    /// evenly spread ones, alternate nodes, a single node and all of them.
    fn sets(d: u32) -> Vec<Vec<u32>> {
        let n = 1u32 << d;
        let mut v = Vec::new();
        for (i, k) in [1, 2, d, n / 3, n / 2, n - 1].into_iter().enumerate() {
            v.push(ActiveSet::Random.choose(d, k.max(1), 100 + i as u64));
        }
        v.push(ActiveSet::Subcube.choose(d, n / 4, 0));
        v.push(ActiveSet::Adversarial.choose(d, n / 2, 0));
        v.push(ActiveSet::Adversarial.choose(d, (n / 2 - 1).max(1), 0));
        v.push((n - n / 3..n).collect());
        v.push((0..n).step_by(3).collect());
        v.push((0..n).step_by(n as usize / 4).collect());
        v.push((0..n).filter(|x| x % 2 == 1).collect());
        v.push(vec![n - 1]);
        v.push((0..n).collect());
        v
    }

    /// §IV-A: the packing paths are disjoint — no two packets (of any class) cross the same
    /// link in the same step — and the program sends exactly the paper's hops, on every
    /// set, with ranks known (t_p = 0) and computed by the prefix (t_p = 1).
    #[test]
    fn packing_paths_are_disjoint_and_follow_the_greedy_rule() {
        for d in 3..=8u32 {
            for active in sets(d) {
                for v in [Variant::One, Variant::Two, Variant::Three] {
                    let mut paper = paper_routes(d, &classes(v, d, &active));
                    let mut seen = HashSet::new();
                    for h in &paper {
                        assert!(
                            seen.insert(*h),
                            "{v:?} d={d} M={}: two packets on link {}→{} in step {}",
                            active.len(),
                            h.from,
                            h.to,
                            h.step
                        );
                    }
                    paper.sort_unstable();
                    for tp in [0, 1] {
                        if tp == 1 && d > 6 {
                            continue;
                        }
                        let mut sim = simulated_routes(v, d, &active, tp);
                        sim.sort_unstable();
                        assert_eq!(sim, paper, "{v:?} d={d} M={} tp={tp}: the program's packing hops", active.len());
                    }
                }
            }
        }
    }
}
