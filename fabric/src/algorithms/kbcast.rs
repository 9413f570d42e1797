//! K simultaneous broadcasts on the d-cube (Stamoulis & Tsitsiklis 1993), all-port.
//!
//! - `prefix` (§3.2): phase 1, a parallel prefix ([`Prefix`]) ranks the broadcasters and node
//!   0 sends K to the roots e_1..e_d (2d + 1 prefix steps of t_p slots; skipped when t_p = 0
//!   or K = 2^d, the ranks being known: r_x = 2^d − x when every node broadcasts); phase 2,
//!   from the end of phase 1, broadcaster x sends its packet to root e_j,
//!   j = (r_x − 1) mod d + 1, along the reverse of its path in T^(j), one of the d
//!   edge-disjoint spanning binomial trees (T^(j) crosses dimensions in the order j+1, …, d,
//!   1, …, j); phase 3, at slot P + ⌈K/d⌉ + d each root broadcasts its packets along its
//!   tree, one per slot, then a termination packet. At most P + 2⌈K/d⌉ + 2d − 1 slots with
//!   P = (2d + 1)·t_p.
//! - `random`: no prefix; each broadcaster picks its tree at random; roots broadcast each
//!   packet as soon as it arrives, phase-3 packets ahead of phase-2 ones (priority key).
//! - `same-tree` (§3.3.1): every broadcaster uses its own completely unbalanced tree with the
//!   same (increasing) dimension order; at most d + K − 1 slots.
//! - `rank-rotated` (§3.3.2): K ≤ d broadcasters with known ranks; in slot m the copies of
//!   x's packet cross dimension (r_x + m − 2) mod d + 1 only, so no two packets ever meet:
//!   d slots, after the prefix's 2d steps when the ranks must be computed (3d with t_p = 1).

use super::Bounds;
use super::entry::{self, Algorithm, Need, Ports, Settings};
use super::prefix::{self, Learned, Prefix, tag};
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::{Topology, TopologyKind};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use router::NodeId;

/// Packet kinds beyond the prefix's (bits 28..32 of `aux`).
const K_NOTICE: u32 = 3;
const PHASE2: u32 = 4;
const PHASE3: u32 = 5;
const TERM: u32 = 6;
const OWN_TREE: u32 = 7;
/// `msg` of packets that carry no broadcast.
const CONTROL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    Prefix,
    Random,
    SameTree,
    RankRotated,
}

impl Variant {
    pub const NAMES: &'static str = "prefix, random, same-tree, rank-rotated";
    pub fn parse(s: &str) -> Option<Variant> {
        match s {
            "prefix" => Some(Variant::Prefix),
            "random" => Some(Variant::Random),
            "same-tree" => Some(Variant::SameTree),
            "rank-rotated" => Some(Variant::RankRotated),
            _ => None,
        }
    }
    /// Does the variant compute ranks (a prefix phase unless t_p = 0)?
    pub fn ranked(self) -> bool {
        matches!(self, Variant::Prefix | Variant::RankRotated)
    }
    /// Prefix steps before the broadcasts when the ranks are computed: the prefix's 2d, and
    /// for `prefix` one more in which node 0 tells the roots K (§3.2, phase 1).
    pub fn prefix_steps(self, d: u32) -> u32 {
        match self {
            Variant::Prefix => 2 * d + 1,
            Variant::RankRotated => 2 * d,
            _ => 0,
        }
    }
}

/// How to choose the broadcasting nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActiveSet {
    /// K distinct nodes, uniformly at random (seeded).
    Random,
    /// Nodes 0..K−1 (a subcube when K is a power of two).
    Subcube,
    /// §3.1's adversarial set against fixed increasing-order trees: K nodes whose highest
    /// bit is d, whose packets all reach node 0 through the one arc (e_d, 0).
    Adversarial,
}

impl ActiveSet {
    pub const NAMES: &'static str = "random, subcube, adversarial";
    pub fn parse(s: &str) -> Option<ActiveSet> {
        match s {
            "random" => Some(ActiveSet::Random),
            "subcube" => Some(ActiveSet::Subcube),
            "adversarial" => Some(ActiveSet::Adversarial),
            _ => None,
        }
    }
    /// How many nodes the set can hold on the d-cube.
    pub fn capacity(self, d: u32) -> u32 {
        match self {
            ActiveSet::Adversarial => 1 << (d - 1),
            _ => 1 << d,
        }
    }

    /// The K active nodes of the d-cube, ascending; K at most [`ActiveSet::capacity`].
    pub fn choose(self, d: u32, k: u32, seed: u64) -> Vec<u32> {
        let n = 1u32 << d;
        assert!(k <= self.capacity(d), "{self:?} holds at most {} nodes of the {d}-cube", self.capacity(d));
        let mut v: Vec<u32> = match self {
            ActiveSet::Subcube => (0..k).collect(),
            ActiveSet::Adversarial => (0..k).map(|i| (n / 2) | i).collect(),
            ActiveSet::Random => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut all: Vec<u32> = (0..n).collect();
                for i in 0..k as usize {
                    let j = rng.random_range(i..n as usize);
                    all.swap(i, j);
                }
                all.truncate(k as usize);
                all
            }
        };
        v.sort_unstable();
        v
    }
}

/// Are the ranks known without a prefix: t_p = 0 (known in advance), or every node
/// broadcasts (the multinode broadcast, r_x = 2^d − x; §3.2)?
pub fn ranks_known(d: u32, k: u32, tp_slots: f64) -> bool {
    tp_slots == 0.0 || k as u64 == 1u64 << d
}

/// The lower bound of §3.1, max{d, (2^d − 1)K / (d 2^d)}, and each variant's bound.
pub fn bounds(variant: Variant, d: u32, k: u32, tp_slots: f64) -> Bounds {
    let n = 1u64 << d;
    let (d64, k64) = (d as u64, k as u64);
    let lower = d64.max(((n - 1) * k64).div_ceil(d64 * n));
    let steps = if ranks_known(d, k, tp_slots) { 0 } else { variant.prefix_steps(d) };
    let p = (steps as f64 * tp_slots - 1e-9).ceil().max(0.0) as u64;
    let paper = match variant {
        Variant::Prefix => Some(p + 2 * k64.div_ceil(d64) + 2 * d64 - 1),
        Variant::Random => None,
        Variant::SameTree => Some(d64 + k64 - 1),
        Variant::RankRotated => Some(p + d64),
    };
    Bounds { lower: Some(lower as f64), paper: paper.map(|p| p as f64), transmissions: None }
}

pub struct KBcast {
    variant: Variant,
    d: u32,
    flits: u16,
    active: Vec<bool>,
    k: u32,
    /// r_x where known.
    rank: Vec<u32>,
    first_msg: u32,
    prefix: Option<Prefix>,
    seed: u64,
    /// Per tree j (index j − 1), at its root: origins received, forwarded count, N_j once
    /// K is known, whether phase 3 started.
    collected: Vec<Vec<u32>>,
    forwarded: Vec<u32>,
    expect: Vec<Option<u32>>,
    started: Vec<bool>,
    /// Per root (index j − 1): the cycle phase 3 starts, once K is known.
    phase3_at: Vec<Option<u64>>,
    /// Per node: its ranked step (phase 2, or the rotated broadcast) waits for the end of
    /// the prefix phase.
    waiting: Vec<bool>,
}

impl KBcast {
    /// `active`: the broadcasting nodes; `tp_cycles`: a prefix step in cycles (0 = ranks
    /// known; with every node active they are known too); `seed`: for the random variant's
    /// choices.
    pub fn new(variant: Variant, d: u32, active: &[u32], flits: u16, tp_cycles: u64, seed: u64) -> KBcast {
        let n = 1usize << d;
        let mut act = vec![false; n];
        for &x in active {
            act[x as usize] = true;
        }
        let k = active.len() as u32;
        // Known ranks: r_x = Σ_{y ≥ x} a_y.
        let mut rank = vec![0u32; n];
        let mut acc = 0;
        for x in (0..n).rev() {
            acc += act[x] as u32;
            rank[x] = acc;
        }
        let prefix = (variant.ranked() && !ranks_known(d, k, tp_cycles as f64))
            .then(|| Prefix::new(d, act.iter().map(|&a| a as u32).collect(), tp_cycles, prefix::packet_flits(tp_cycles, flits)));
        let known = prefix.is_none();
        KBcast {
            variant,
            d,
            flits,
            active: act,
            k,
            rank,
            first_msg: 0,
            prefix,
            seed,
            collected: vec![Vec::new(); d as usize],
            forwarded: vec![0; d as usize],
            expect: (1..=d).map(|j| known.then(|| Self::n_j(k, d, j))).collect(),
            started: vec![false; d as usize],
            phase3_at: vec![None; d as usize],
            waiting: vec![false; n],
        }
    }

    /// N_j: how many of the ranks 1..K map to tree j.
    fn n_j(k: u32, d: u32, j: u32) -> u32 {
        (1..=k).filter(|r| (r - 1) % d + 1 == j).count() as u32
    }

    /// Position of dimension `b` (0-based) in T^(j)'s crossing order j+1, …, d, 1, …, j.
    fn pos(&self, j: u32, b: u32) -> u32 {
        (b + self.d - (j % self.d)) % self.d
    }

    fn root(j: u32) -> u32 {
        1 << (j - 1)
    }

    fn tree_of(&self, node: u32) -> Option<u32> {
        (node.is_power_of_two() && node.trailing_zeros() < self.d).then(|| node.trailing_zeros() + 1)
    }

    fn send(&self, cx: &mut NodeCtx<'_>, to: u32, msg: u32, aux: u64, key: u32, flits: u16) {
        cx.send(Send { dest: Dest::Node(NodeId(to)), msg, aux, key, flits });
    }

    /// The cycle the prefix phase ends (0 without one).
    fn prefix_end(&self) -> u64 {
        self.prefix.as_ref().map_or(0, |p| self.variant.prefix_steps(self.d) as u64 * p.step_cycles())
    }

    /// Cycles from the start to the beginning of slot `slots + 1` after the prefix phase.
    fn cycle_after(&self, slots: u32) -> u64 {
        self.prefix_end() + slots as u64 * self.flits as u64
    }

    /// Phase 2: send x's packet one hop towards root e_j along the reverse of T^(j).
    fn phase2_hop(&self, cx: &mut NodeCtx<'_>, origin: u32, j: u32) {
        let z = cx.node.0;
        let diff = z ^ Self::root(j);
        let b = (0..self.d).filter(|&b| diff & (1 << b) != 0).max_by_key(|&b| self.pos(j, b)).expect("not at the root");
        self.send(cx, z ^ (1 << b), self.first_msg + origin, tag(PHASE2, j), 1, self.flits);
    }

    /// Phase 3: forward a tree-j packet (data or termination) to this node's children in
    /// T^(j); `after` is the position of the dimension it arrived on (None at the root).
    fn phase3_forward(&self, cx: &mut NodeCtx<'_>, j: u32, after: Option<u32>, msg: u32, kind: u32) {
        let z = cx.node.0;
        for b in 0..self.d {
            if after.is_none_or(|p| self.pos(j, b) > p) {
                self.send(cx, z ^ (1 << b), msg, tag(kind, j), 0, self.flits);
            }
        }
    }

    /// The root of tree j forwards what it has (phase 3 under way) and, after the N_j-th
    /// packet, the termination packet.
    fn root_progress(&mut self, cx: &mut NodeCtx<'_>, j: u32) {
        let i = j as usize - 1;
        if !self.started[i] {
            return;
        }
        while (self.forwarded[i] as usize) < self.collected[i].len() {
            let origin = self.collected[i][self.forwarded[i] as usize];
            self.phase3_forward(cx, j, None, self.first_msg + origin, PHASE3);
            self.forwarded[i] += 1;
        }
        if self.variant == Variant::Prefix && self.expect[i] == Some(self.forwarded[i]) {
            self.phase3_forward(cx, j, None, CONTROL, TERM);
            self.expect[i] = None;
        }
    }

    /// Node x knows its rank: an active node of a ranked variant takes its next step when
    /// the prefix phase is over (phase 2, or the rotated broadcast).
    fn ranked(&mut self, cx: &mut NodeCtx<'_>, r: u32) {
        let x = cx.node.0;
        self.rank[x as usize] = r;
        if self.active[x as usize] {
            self.waiting[x as usize] = true;
            self.due(cx);
        }
    }

    /// Everything due at node x by now: prefix packets whose step began, the ranked step
    /// after the prefix phase, phase 3 at a root.
    fn due(&mut self, cx: &mut NodeCtx<'_>) {
        let x = cx.node.0;
        if let Some(p) = self.prefix.as_mut() {
            p.flush(cx);
        }
        if self.waiting[x as usize] {
            let at = self.cycle_after(0);
            if at > cx.now {
                cx.wake_at(at);
            } else {
                self.waiting[x as usize] = false;
                let r = self.rank[x as usize];
                match self.variant {
                    Variant::Prefix => {
                        let j = (r - 1) % self.d + 1;
                        if x == Self::root(j) {
                            self.collected[j as usize - 1].push(x);
                            self.root_progress(cx, j);
                        } else {
                            self.phase2_hop(cx, x, j);
                        }
                    }
                    Variant::RankRotated => self.rotated_from(cx, x, r, 0),
                    _ => unreachable!("only ranked variants wait for their rank"),
                }
            }
        }
        if let Some(j) = self.tree_of(x)
            && let Some(at) = self.phase3_at[j as usize - 1]
            && !self.started[j as usize - 1]
        {
            if at > cx.now {
                cx.wake_at(at);
            } else {
                self.started[j as usize - 1] = true;
                self.root_progress(cx, j);
            }
        }
    }

    /// Rank-rotated: a node holding origin x's packet after step `m` sends it across the
    /// dimensions of steps m+1..d, keyed by their slots.
    fn rotated_from(&self, cx: &mut NodeCtx<'_>, origin: u32, r: u32, m: u32) {
        let z = cx.node.0;
        let base = if self.prefix.is_some() { self.variant.prefix_steps(self.d) } else { 0 };
        for step in m + 1..=self.d {
            let b = (r + step - 2) % self.d;
            let key = base + step;
            self.send(cx, z ^ (1 << b), self.first_msg + origin, tag(OWN_TREE, r), key, self.flits);
        }
    }

    /// The root of tree j knows K: phase 3 starts at slot P + ⌈K/d⌉ + d.
    fn schedule_phase3(&mut self, cx: &mut NodeCtx<'_>, j: u32, k: u32) {
        self.phase3_at[j as usize - 1] = Some(self.cycle_after(k.div_ceil(self.d) + self.d - 1));
        self.due(cx);
    }
}

impl Program for KBcast {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        for x in 0..topo.nodes() as u32 {
            let dest =
                if self.active[x as usize] { DestSet::Broadcast { root: NodeId(x), span: topo.full_span() } } else { DestSet::Nobody };
            let id = sb.declare(dest, topo);
            if x == 0 {
                self.first_msg = id;
            }
        }
    }

    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        let x = cx.node.0;
        match self.variant {
            Variant::Prefix | Variant::RankRotated if self.prefix.is_some() => {
                let mut p = self.prefix.take().unwrap();
                let learned = p.start(cx, CONTROL);
                self.prefix = Some(p);
                self.learned(cx, learned);
            }
            Variant::Prefix | Variant::RankRotated => {
                if let Some(j) = self.tree_of(x)
                    && self.variant == Variant::Prefix
                {
                    self.schedule_phase3(cx, j, self.k);
                }
                if self.active[x as usize] {
                    self.ranked(cx, self.rank[x as usize]);
                }
            }
            Variant::Random => {
                if self.active[x as usize] {
                    let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                    rng.set_stream(x as u64);
                    let j = rng.random_range(1..=self.d);
                    if x == Self::root(j) {
                        self.phase3_forward(cx, j, None, self.first_msg + x, PHASE3);
                    } else {
                        self.phase2_hop(cx, x, j);
                    }
                }
            }
            Variant::SameTree => {
                if self.active[x as usize] {
                    for b in 0..self.d {
                        self.send(cx, x ^ (1 << b), self.first_msg + x, tag(OWN_TREE, 0), 0, self.flits);
                    }
                }
            }
        }
    }

    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        self.due(cx);
    }

    fn report(&self) -> Option<serde_json::Value> {
        // The prefix phase as run: no steps when the ranks were known (t_p = 0, or every
        // node broadcasting).
        let steps = if self.prefix.is_some() { self.variant.prefix_steps(self.d) } else { 0 };
        let flits = self.prefix.as_ref().map_or(0, |p| p.packet_flits());
        Some(serde_json::json!({ "prefix_steps": steps, "prefix_end_cycle": self.prefix_end(), "prefix_packet_flits": flits }))
    }

    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let z = cx.node.0;
        let kind = prefix::kind(m.aux);
        let v = prefix::value(m.aux);
        match kind {
            prefix::PREFIX_UP | prefix::PREFIX_DOWN => {
                let mut p = self.prefix.take().expect("prefix packets only with a prefix phase");
                let learned = p.receive(cx, m.src.0, m.aux, CONTROL);
                self.prefix = Some(p);
                self.learned(cx, learned);
            }
            K_NOTICE => {
                let j = self.tree_of(z).expect("K goes to the roots");
                self.expect[j as usize - 1] = Some(Self::n_j(v, self.d, j));
                self.schedule_phase3(cx, j, v);
            }
            PHASE2 => {
                let origin = m.msg - self.first_msg;
                if z == Self::root(v) {
                    cx.accept(m.msg);
                    self.collected[v as usize - 1].push(origin);
                    if self.variant == Variant::Random {
                        self.started[v as usize - 1] = true;
                    }
                    self.root_progress(cx, v);
                } else {
                    self.phase2_hop(cx, origin, v);
                }
            }
            PHASE3 | TERM => {
                let origin = m.msg.wrapping_sub(self.first_msg);
                if kind == PHASE3 && origin != z {
                    cx.accept(m.msg);
                }
                let b = (m.src.0 ^ z).trailing_zeros();
                self.phase3_forward(cx, v, Some(self.pos(v, b)), m.msg, kind);
            }
            OWN_TREE => {
                cx.accept(m.msg);
                let origin = m.msg - self.first_msg;
                let b = (m.src.0 ^ z).trailing_zeros();
                match self.variant {
                    Variant::SameTree => {
                        for b2 in b + 1..self.d {
                            self.send(cx, z ^ (1 << b2), m.msg, m.aux, 0, self.flits);
                        }
                    }
                    Variant::RankRotated => {
                        // Arrived across the dimension of step m: (r + m − 2) mod d = b.
                        let step = (b + 2 * self.d + 2 - v) % self.d;
                        let step = if step == 0 { self.d } else { step };
                        self.rotated_from(cx, origin, v, step);
                    }
                    _ => unreachable!(),
                }
            }
            k => unreachable!("kbcast packet of kind {k}"),
        }
    }
}

impl KBcast {
    fn learned(&mut self, cx: &mut NodeCtx<'_>, l: Learned) {
        match l {
            Learned::Nothing => {}
            Learned::Rank(r) => self.ranked(cx, r),
            Learned::Total(k) => {
                // Node 0 tells the roots K in the step after its down-sweep began (step d + 1,
                // when its links to them are free; the paper's one more step), then uses its
                // own rank K.
                if self.variant == Variant::Prefix {
                    let p = self.prefix.as_mut().expect("the total comes from the prefix");
                    for j in 1..=self.d {
                        p.send_at_step(cx, self.d as u64 + 1, Self::root(j), tag(K_NOTICE, k), CONTROL);
                    }
                }
                self.ranked(cx, k);
            }
        }
    }
}

/// The settings of `kbcast`.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct KbcastConfig {
    pub variant: Variant,
    /// The broadcasting nodes, ascending.
    pub active: Vec<u32>,
    /// How they were chosen (explicit list, or a kind of set with --active-count).
    pub active_set: String,
    /// A parallel-prefix step, in slots (0: ranks known, no prefix phase).
    pub tp: f64,
    /// Cycles of a step (t_p × packet-flits, at most 1000 × 65535).
    pub tp_cycles: u32,
}

pub const KBCAST: Algorithm = Algorithm {
    ports: Ports::All(entry::SIMULTANEOUS),
    settings: Settings::Kbcast,
    // Measured (docs/performance.md): the scoreboard's bitset per broadcast, grown by
    // doubling, and the relays queued at the nodes.
    memory: Some(|_, i, _| {
        let k = i.kbcast.expect("kbcast settings resolved");
        let (m, nodes) = (k.active.len() as u128, i.nodes());
        let bytes = m * (4 * entry::bitset_bytes(i.spec) + 64) + nodes * 3072;
        Ok(Need { field: "active-count", value: m.to_string(), what: format!("kbcast: {m} broadcasts on {nodes} nodes"), bytes })
    }),
    ..Algorithm::new(
        "kbcast",
        &[TopologyKind::Hypercube],
        "Stamoulis & Tsitsiklis 1993: sec. 3.2 (prefix ranking, d edge-disjoint binomial trees, termination packets), its randomized variant, sec. 3.3.1 (same-tree), sec. 3.3.2 (rank-rotated)",
        "K simultaneous broadcasts from --active / --active-count; --variant prefix (<= 2ceil(K/d)+2d-1+(2d+1)tp), random, same-tree (<= d+K-1), rank-rotated (d, K <= d); --tp prefix step in slots",
        |i| {
            let k = i.kbcast.expect("kbcast settings resolved");
            let d = i.d();
            let kb = KBcast::new(k.variant, d, &k.active, i.spec.packet_flits, k.tp_cycles as u64, i.seed);
            (Box::new(kb), bounds(k.variant, d, k.active.len() as u32, k.tp))
        },
    )
};
