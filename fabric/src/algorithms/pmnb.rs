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
use super::hypercube::MnbTree;
use super::prefix;
use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::topology::Topology;
use router::{NONE, NodeId};

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

/// The synchronized parallel prefix of §IV-A phase 1 for up to d classes at once. Class c
/// runs on A_0's prefix tree renamed for A_c (node w → rotl(w, c), dimension l → l + c mod
/// d); in step k < d (up-sweep) virtual node v with lowest one bit k reports its block sum
/// across dimension k, in step d + k (down-sweep) every block start whose level exceeds
/// j = d − 1 − k tells v | 2^j how many active nodes precede it, and the total. So in
/// every step each class uses one dimension and the classes use distinct ones. After 2d
/// steps every node knows its rank (active nodes before it in A_c's order) and the total.
pub struct Scan {
    d: u32,
    n: usize,
    classes: u32,
    /// Packet kinds of the up- and down-sweep.
    kinds: (u64, u64),
    a: Vec<u8>,
    /// Per (class, node): reports of its children, by virtual dimension.
    child: Vec<u32>,
    before: Vec<u32>,
    total: Vec<u32>,
}

impl Scan {
    pub fn new(d: u32, classes: u32, kinds: (u64, u64)) -> Scan {
        let n = 1usize << d;
        let k = classes as usize * n;
        Scan { d, n, classes, kinds, a: vec![0; k], child: vec![0; k * d as usize], before: vec![0; k], total: vec![0; k] }
    }

    fn at(&self, c: u32, u: u32) -> usize {
        c as usize * self.n + u as usize
    }

    /// Node u's input for class c (its own state; set before step 0).
    pub fn set_input(&mut self, c: u32, u: u32, x: bool) {
        let i = self.at(c, u);
        self.a[i] = x as u8;
        self.child[i * self.d as usize..(i + 1) * self.d as usize].fill(0);
    }

    pub fn rank(&self, c: u32, u: u32) -> u32 {
        self.before[self.at(c, u)]
    }
    pub fn total(&self, c: u32, u: u32) -> u32 {
        self.total[self.at(c, u)]
    }

    /// Sum of node u's block below virtual dimension `j` (its own input and its children's
    /// reports across dimensions < j).
    fn block(&self, i: usize, j: u32) -> u32 {
        self.a[i] as u32 + self.child[i * self.d as usize..i * self.d as usize + j as usize].iter().sum::<u32>()
    }

    /// Step `k` (0..2d) at node u: send what this step asks of it, packets `flits` long.
    pub fn step(&mut self, cx: &mut NodeCtx<'_>, k: u32, flits: u16) {
        let (d, u) = (self.d, cx.node.0);
        for c in 0..self.classes {
            let v = rotr(u, c, d);
            let i = self.at(c, u);
            let level = if v == 0 { d } else { v.trailing_zeros() };
            if k < d {
                if v != 0 && level == k {
                    let to = u ^ (1 << ((k + c) % d));
                    cx.send(Send {
                        dest: Dest::Node(NodeId(to)),
                        msg: CONTROL,
                        aux: aux(self.kinds.0, c, self.block(i, k), 0),
                        key: 0,
                        flits,
                    });
                }
            } else {
                let j = 2 * d - 1 - k;
                if v == 0 && j == d - 1 {
                    self.before[i] = 0;
                    self.total[i] = self.block(i, d);
                }
                if j < level {
                    let value = self.before[i] + self.block(i, j);
                    let to = u ^ (1 << ((j + c) % d));
                    let a = aux(self.kinds.1, c, value, self.total[i]);
                    cx.send(Send { dest: Dest::Node(NodeId(to)), msg: CONTROL, aux: a, key: 0, flits });
                }
            }
        }
    }

    /// A scan packet arrived at node u.
    pub fn receive(&mut self, u: u32, src: u32, a: u64) {
        let c = aux_class(a);
        let i = self.at(c, u);
        let j = ((src ^ u).trailing_zeros() + self.d - c) % self.d;
        if aux_kind(a) == self.kinds.0 {
            self.child[i * self.d as usize + j as usize] = aux_value(a);
        } else {
            self.before[i] = aux_value(a);
            self.total[i] = aux_high(a);
        }
    }

    /// t_p = 0: every node's rank and the total at once (ranks known in advance).
    pub fn oracle(&mut self) {
        for c in 0..self.classes {
            let mut acc = 0;
            for v in 0..self.n as u32 {
                let i = self.at(c, rotl(v, c, self.d));
                self.before[i] = acc;
                acc += self.a[i] as u32;
            }
            for v in 0..self.n as u32 {
                let i = self.at(c, v);
                self.total[i] = acc;
            }
        }
    }
}

/// `msg` of packets that carry no broadcast.
const CONTROL: u32 = u32::MAX;

/// The timing of one PMNB period, identical at every node.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub d: u32,
    pub variant: Variant,
    /// Cycles per prefix step (0: no prefix).
    pub tp: u64,
    /// Cycles per (mini-)packet transmission.
    pub ms: u64,
    /// Cycles per slot (a whole packet).
    pub slot: u64,
    /// Cycles a one-hop transfer takes beyond its length in flits on this router (0 on
    /// the ideal router: the papers' slot model). Every step is stretched by it, so the
    /// synchronous schedule also runs on a pipelined router.
    pub extra: u64,
    /// Cycles between back-to-back pieces over one link at the router's sustained rate
    /// (`ms` when the buffers cover the credit round trip, as on the ideal router).
    pub gap: u64,
    /// The same two for a prefix packet (a step's worth of flits, at most a slot).
    pub prefix_extra: u64,
    pub prefix_gap: u64,
    /// Cycles after a prefix packet before a piece can follow it over the same link (the
    /// link's time for the prefix packet, or, when the downstream buffer holds just one
    /// piece, until the prefix packet has left it). The packing phase starts no sooner
    /// after the last prefix step. 0: no longer than a prefix step.
    pub handover: u64,
}

impl Timing {
    /// Cycles of a prefix step on this router: `tp`, stretched by a prefix packet's extra
    /// hop latency, and at least the interval at which a link takes prefix packets.
    pub fn prefix_step(&self) -> u64 {
        (self.tp + self.prefix_extra).max(self.prefix_gap)
    }
    /// Prefix steps per period (0 without a prefix).
    pub fn scan_steps(&self) -> u32 {
        if self.tp == 0 { 0 } else { self.variant.scans() * 2 * self.d }
    }
    /// Packets per class the broadcast subphases are sized for.
    fn per_class(&self, m: u64) -> u64 {
        if self.variant == Variant::Three { m.div_ceil(self.d as u64) } else { m }
    }
    /// Cycle of event `e` of the period starting at `p` with M = `m` (known from event
    /// scan_steps on), or None past the last.
    pub fn event(&self, p: u64, e: u32, m: u64) -> Option<u64> {
        let s = self.scan_steps();
        let d = self.d;
        // A step lasts until its packet has crossed its hop and, as the next step may send
        // over the same link, until the link takes the next packet: on the ideal router
        // with buffers that cover the credit round trip, the papers' t_p, one piece and one
        // slot.
        let tp = self.prefix_step();
        let (ms, slot) = ((self.ms + self.extra).max(self.gap), (self.slot + self.extra).max(self.gap));
        if e < s {
            return Some(p + e as u64 * tp);
        }
        // The packing's first pieces may take the links of the last prefix step.
        let r = if s == 0 { p } else { p + (s as u64 - 1) * tp + tp.max(self.handover) };
        let e = e - s;
        if e < d {
            return Some(r + e as u64 * ms);
        }
        let k = r + d as u64 * ms;
        let e = e - d;
        match self.variant {
            Variant::One => {
                let mm = ceil_log2(m);
                (e <= d - mm).then(|| k + e as u64 * slot)
            }
            _ => {
                // A subphase of T pieces: one sent every `gap` cycles, the last one a hop
                // later, and the link free for the next subphase's first (same link, next
                // class).
                let pc = self.per_class(m);
                let step = |l: u32| match subphase_steps(pc, d, l) {
                    0 => 0,
                    t => (t - 1) * self.gap + ms,
                };
                (e <= d).then(|| k + (1..=e).map(step).sum::<u64>())
            }
        }
    }
    /// The cycle the period starting at `p` ends (II and III: its last subphase's end).
    pub fn end(&self, p: u64, m: u64) -> u64 {
        self.event(p, self.scan_steps() + 2 * self.d, m).expect("II and III end after their last subphase")
    }
}

/// What happens in a PMNB period at every node: the scans, the packing, the broadcast.
/// Packets are named by their origin; `msg_base[origin] + piece` is the scoreboard message
/// of a piece.
pub struct Engine {
    pub t: Timing,
    n: usize,
    flits: u16,
    /// Length of a prefix packet.
    prefix_flits: u16,
    scan: Scan,
    /// Scan for the class computation of pmnb-3 (one class, natural order).
    class_scan: Option<Scan>,
    pub active: Vec<bool>,
    pub msg_base: Vec<u32>,
    /// Period start and M as each node knows them.
    pub start: Vec<u64>,
    pub m: Vec<u64>,
    /// Next event of each node.
    ev: Vec<u32>,
    /// Per (node, class) during packing: origin + 1 of the packet held, target rank.
    pack: Vec<(u32, u32)>,
    /// Per node: the origins of the pieces held for the broadcast phase, the k-th piece of
    /// class c at `k * classes + c` (`NONE` past a class's count), so that a node's next
    /// piece of every class is in one place; and per (node, class) how many it holds.
    held: Vec<Vec<u32>>,
    held_len: Vec<u32>,
    /// Broadcast subphase under way at each node: the subphase, how many of each class's
    /// pieces it sends (those held when it began; per (node, class)), the next to send, and the cycle of the
    /// next send. The node feeds its NIC one piece per class and (mini-)slot, as the
    /// schedule needs, rather than queueing the whole subphase at once.
    sub: Vec<u32>,
    sub_len: Vec<u32>,
    cursor: Vec<u32>,
    next_send: Vec<u64>,
    /// pmnb-1 phase 4: the subcube's multinode broadcast tree.
    mnb: Option<MnbTree>,
    /// Per node: pieces received this period (checked at the period's end).
    pub got: Vec<u32>,
    /// Packing packets that did not arrive one (mini-)slot after they were sent, or met
    /// another of their class at a node: the paths of §IV-A are disjoint, so always 0.
    pub collisions: u64,
    /// Prefix packets that arrived after their step ended: always 0 when the schedule
    /// holds (the step outlasts a prefix packet's hop).
    pub late_prefix: u64,
}

impl Engine {
    /// `t.tp` is a prefix step in cycles; packets are `flits` long.
    pub fn new(t: Timing, flits: u16) -> Engine {
        let d = t.d;
        let n = 1usize << d;
        let classes = t.variant.classes(d);
        Engine {
            t,
            n,
            flits,
            prefix_flits: prefix::packet_flits(t.tp, flits),
            scan: Scan::new(d, classes, (SCAN_UP, SCAN_DOWN)),
            class_scan: (t.variant == Variant::Three).then(|| Scan::new(d, 1, (CLASS_UP, CLASS_DOWN))),
            active: vec![false; n],
            msg_base: vec![0; n],
            start: vec![0; n],
            m: vec![0; n],
            ev: vec![0; n],
            pack: vec![(0, 0); classes as usize * n],
            held: vec![Vec::new(); n],
            held_len: vec![0; classes as usize * n],
            sub: vec![0; n],
            sub_len: vec![0; classes as usize * n],
            cursor: vec![0; n],
            next_send: vec![u64::MAX; n],
            mnb: None,
            got: vec![0; n],
            collisions: 0,
            late_prefix: 0,
        }
    }

    fn piece_flits(&self) -> u16 {
        (self.flits as u32 / self.t.variant.pieces(self.t.d)) as u16
    }

    /// t_p = 0: the ranks of the period starting now, with active set `active`, are
    /// known everywhere at once.
    pub fn known_ranks(&mut self, active: &[bool]) {
        let d = self.t.d;
        match self.class_scan.as_mut() {
            Some(cs) => {
                for u in 0..self.n as u32 {
                    cs.set_input(0, u, active[u as usize]);
                }
                cs.oracle();
                for u in 0..self.n as u32 {
                    let r = cs.rank(0, u);
                    for c in 0..d {
                        self.scan.set_input(c, u, active[u as usize] && r % d == c);
                    }
                }
            }
            None => {
                for u in 0..self.n as u32 {
                    for c in 0..self.scan.classes {
                        self.scan.set_input(c, u, active[u as usize]);
                    }
                }
            }
        }
        self.scan.oracle();
    }

    /// Node u begins a period at cycle `p` (its `active` flag set). Runs what is due now.
    pub fn begin(&mut self, cx: &mut NodeCtx<'_>, p: u64) {
        let u = cx.node.0 as usize;
        self.start[u] = p;
        self.ev[u] = 0;
        self.got[u] = 0;
        self.clear_held(u);
        self.next_send[u] = u64::MAX;
        if self.t.tp > 0 {
            let act = self.active[u];
            match self.class_scan.as_mut() {
                Some(cs) => cs.set_input(0, u as u32, act),
                None => {
                    for c in 0..self.scan.classes {
                        self.scan.set_input(c, u as u32, act);
                    }
                }
            }
        }
        self.run_due(cx);
    }

    /// Run every event of node u due by now and set a timer for the next; returns true
    /// when the period is over at this node.
    pub fn run_due(&mut self, cx: &mut NodeCtx<'_>) -> bool {
        let u = cx.node.0 as usize;
        loop {
            if self.next_send[u] <= cx.now {
                self.paced_send(cx);
            }
            let e = self.ev[u];
            match self.t.event(self.start[u], e, self.m[u]) {
                None => return true,
                Some(at) if at > cx.now => {
                    cx.wake_at(at.min(self.next_send[u]));
                    return false;
                }
                Some(_) => {
                    self.ev[u] += 1;
                    self.event(cx, e);
                }
            }
        }
    }

    /// Is node u's period over (for II and III: has the end event run)?
    pub fn over(&self, u: u32) -> bool {
        self.t.event(self.start[u as usize], self.ev[u as usize], self.m[u as usize]).is_none()
    }

    fn event(&mut self, cx: &mut NodeCtx<'_>, e: u32) {
        let d = self.t.d;
        let u = cx.node.0;
        let s = self.t.scan_steps();
        if e < s {
            let k = e % (2 * d);
            match self.class_scan.as_mut() {
                Some(cs) if e < 2 * d => cs.step(cx, k, self.prefix_flits),
                Some(cs) if k == 0 => {
                    // pmnb-3: the class computation is done; class c counts only its packets.
                    let r = cs.rank(0, u);
                    let act = self.active[u as usize];
                    for c in 0..d {
                        self.scan.set_input(c, u, act && r % d == c);
                    }
                    self.scan.step(cx, k, self.prefix_flits);
                }
                _ => self.scan.step(cx, k, self.prefix_flits),
            }
            return;
        }
        let e = e - s;
        if e == 0 {
            self.ranks_known(cx);
        }
        if e < d {
            self.pack_step(cx, e);
            return;
        }
        let e = e - d;
        match self.t.variant {
            Variant::One if e < d - ceil_log2(self.m[u as usize]) => self.snb_step(cx, e),
            Variant::One => self.mnb_start(cx),
            _ if e < d => self.spread(cx, e + 1),
            _ => {}
        }
    }

    /// After the scans: M, this node's class and rank, its packet placed for packing.
    fn ranks_known(&mut self, cx: &mut NodeCtx<'_>) {
        let u = cx.node.0;
        let total = match &self.class_scan {
            Some(cs) => cs.total(0, u),
            None => self.scan.total(0, u),
        };
        self.m[u as usize] = total as u64;
        if self.t.variant == Variant::One && total > 1 && self.mnb.as_ref().is_none_or(|t| t.d != ceil_log2(total as u64)) {
            self.mnb = Some(MnbTree::new(ceil_log2(total as u64)));
        }
        if !self.active[u as usize] {
            return;
        }
        for c in 0..self.scan.classes {
            if self.scan.a[self.scan.at(c, u)] == 1 {
                let r = self.scan.rank(c, u);
                let i = self.at(u, c);
                self.pack[i] = (u + 1, r);
            }
        }
    }

    /// Packing step i: a packet of class c at virtual node v crosses virtual dimension i
    /// when bit i of v XOR (its rank) is one.
    fn pack_step(&mut self, cx: &mut NodeCtx<'_>, i: u32) {
        let d = self.t.d;
        let u = cx.node.0;
        for c in 0..self.scan.classes {
            let idx = self.at(u, c);
            let (o1, r) = self.pack[idx];
            if o1 == 0 {
                continue;
            }
            let v = rotr(u, c, d);
            if (v ^ r) >> i & 1 == 1 {
                self.pack[idx] = (0, 0);
                let to = u ^ (1 << ((i + c) % d));
                let msg = self.piece_msg(c, o1 - 1);
                let a = aux(PACK, c, r, o1 - 1);
                cx.send(Send { dest: Dest::Node(NodeId(to)), msg, aux: a, key: 0, flits: self.piece_flits() });
            } else if i == d - 1 {
                // Packed where it belongs: hold it for the broadcast.
                self.pack[idx] = (0, 0);
                self.packed(u, c, o1 - 1);
            }
        }
    }

    fn packed(&mut self, u: u32, c: u32, origin: u32) {
        self.hold(u as usize, c, origin);
    }

    /// Index of (node u, class c) in the per-(node, class) vectors.
    #[inline]
    fn at(&self, u: u32, c: u32) -> usize {
        u as usize * self.scan.classes as usize + c as usize
    }

    /// Node u holds one more piece of class c.
    #[inline]
    fn hold(&mut self, u: usize, c: u32, origin: u32) {
        let classes = self.scan.classes as usize;
        let i = u * classes + c as usize;
        let at = self.held_len[i] as usize * classes + c as usize;
        self.held_len[i] += 1;
        let row = &mut self.held[u];
        if at >= row.len() {
            row.resize(at - c as usize + classes, NONE);
        }
        row[at] = origin;
    }

    /// Node u's k-th piece of class c.
    #[inline]
    fn held_at(&self, u: usize, c: u32, k: u32) -> u32 {
        self.held[u][k as usize * self.scan.classes as usize + c as usize]
    }

    fn clear_held(&mut self, u: usize) {
        self.held[u].clear();
        let classes = self.scan.classes as usize;
        self.held_len[u * classes..(u + 1) * classes].fill(0);
    }

    fn piece_msg(&self, c: u32, origin: u32) -> u32 {
        if self.t.variant.pieces(self.t.d) > 1 { self.msg_base[origin as usize] + c } else { self.msg_base[origin as usize] }
    }

    /// Broadcast subphase l (II, III): every node sends everything it holds of class c
    /// across virtual dimension d − l.
    fn spread(&mut self, cx: &mut NodeCtx<'_>, l: u32) {
        let u = cx.node.0 as usize;
        self.sub[u] = l;
        self.cursor[u] = 0;
        let classes = self.scan.classes as usize;
        self.sub_len[u * classes..(u + 1) * classes].copy_from_slice(&self.held_len[u * classes..(u + 1) * classes]);
        self.next_send[u] = cx.now;
        self.paced_send(cx);
    }

    /// The next piece of each class in the subphase under way.
    fn paced_send(&mut self, cx: &mut NodeCtx<'_>) {
        let d = self.t.d;
        let u = cx.node.0 as usize;
        let (l, k) = (self.sub[u], self.cursor[u]);
        let flits = self.piece_flits();
        let mut more = false;
        for c in 0..self.scan.classes {
            let i = self.at(u as u32, c);
            if k < self.sub_len[i] {
                let origin = self.held_at(u, c, k);
                let to = cx.node.0 ^ (1 << ((d - l + c) % d));
                let a = aux(SPREAD, c, l, origin);
                cx.send(Send { dest: Dest::Node(NodeId(to)), msg: self.piece_msg(c, origin), aux: a, key: 0, flits });
                more |= k + 1 < self.sub_len[i];
            }
        }
        self.cursor[u] += 1;
        self.next_send[u] = if more { cx.now + self.t.gap } else { u64::MAX };
        if !more && l == d {
            self.clear_held(u);
            self.held[u] = Vec::new();
        }
    }

    /// pmnb-1 phase 3, step i: holders of a packet send it across dimension m + i.
    fn snb_step(&mut self, cx: &mut NodeCtx<'_>, i: u32) {
        let u = cx.node.0 as usize;
        let mm = ceil_log2(self.m[u]);
        for k in 0..self.held_len[u] {
            let origin = self.held_at(u, 0, k);
            let to = cx.node.0 ^ (1 << (mm + i));
            let a = aux(SUBCUBE_SNB, 0, 0, origin);
            cx.send(Send { dest: Dest::Node(NodeId(to)), msg: self.msg_base[origin as usize], aux: a, key: 0, flits: self.flits });
        }
    }

    /// pmnb-1 phase 4: the packet of rank r at node w·2^m + r starts the subcube's
    /// multinode broadcast (Bertsekas et al. §2), keyed by the slot of each link.
    fn mnb_start(&mut self, cx: &mut NodeCtx<'_>) {
        let u = cx.node.0 as usize;
        if self.held_len[u] > 0 {
            let origin = self.held_at(u, 0, 0);
            self.mnb_forward(cx, origin, cx.node.0 & ((1 << ceil_log2(self.m[u])) - 1));
        }
        self.clear_held(u);
    }

    fn mnb_forward(&self, cx: &mut NodeCtx<'_>, origin: u32, root_low: u32) {
        let Some(tree) = self.mnb.as_ref() else { return };
        let z = cx.node.0;
        let mask = (1u32 << tree.d) - 1;
        let x = (z & mask) ^ root_low;
        for &y in &tree.children[x as usize] {
            let to = (z & !mask) | (root_low ^ y);
            let a = aux(SUBCUBE_MNB, 0, root_low, origin);
            cx.send(Send {
                dest: Dest::Node(NodeId(to)),
                msg: self.msg_base[origin as usize],
                aux: a,
                key: tree.slot[y as usize],
                flits: self.flits,
            });
        }
    }

    /// A packet arrived at node z.
    pub fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let z = cx.node.0;
        let a = m.aux;
        match aux_kind(a) {
            SCAN_UP | SCAN_DOWN | CLASS_UP | CLASS_DOWN => {
                // Sent at the start of a step, it must be in before the next one reads it.
                if cx.now - m.birth > self.t.prefix_step() {
                    self.late_prefix += 1;
                }
                match aux_kind(a) {
                    SCAN_UP | SCAN_DOWN => self.scan.receive(z, m.src.0, a),
                    _ => self.class_scan.as_mut().expect("pmnb-3 only").receive(z, m.src.0, a),
                }
            }
            PACK => {
                let c = aux_class(a);
                let origin = aux_high(a);
                let idx = self.at(z, c);
                if self.pack[idx].0 != 0 || cx.now - m.birth != self.t.ms + self.t.extra {
                    self.collisions += 1;
                }
                let r = aux_value(a);
                let v = rotr(z, c, self.t.d);
                if v == r {
                    // Arrived: this node is the packet's intermediate destination.
                    self.accept(cx, origin, m.msg);
                    self.packed(z, c, origin);
                } else {
                    self.pack[idx] = (origin + 1, r);
                }
            }
            SPREAD => {
                let (c, origin) = (aux_class(a), aux_high(a));
                self.accept(cx, origin, m.msg);
                if aux_value(a) < self.t.d {
                    self.hold(z as usize, c, origin);
                }
            }
            SUBCUBE_SNB => {
                let origin = aux_high(a);
                self.accept(cx, origin, m.msg);
                self.hold(z as usize, 0, origin);
            }
            SUBCUBE_MNB => {
                let origin = aux_high(a);
                self.accept(cx, origin, m.msg);
                self.mnb_forward(cx, origin, aux_value(a));
            }
            k => unreachable!("PMNB packet of kind {k}"),
        }
    }

    /// The schedule's broken promises, for [`Program::failures`].
    pub fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        if self.collisions > 0 {
            f.push(format!("{} packing packets were delayed or met another: the packing paths were not disjoint", self.collisions));
        }
        if self.late_prefix > 0 {
            f.push(format!(
                "{} prefix packets arrived after their step of {} cycles had ended: the ranks and M read from them were stale",
                self.late_prefix,
                self.t.prefix_step()
            ));
        }
        f
    }

    fn accept(&mut self, cx: &mut NodeCtx<'_>, origin: u32, msg: u32) {
        if origin != cx.node.0 {
            cx.accept(msg);
            self.got[cx.node.0 as usize] += 1;
        }
    }
}

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
