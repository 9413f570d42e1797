//! The scoreboard: every message an algorithm sends must reach each intended node exactly
//! once. Lost, duplicated and misrouted deliveries are counted and the first few described.
//!
//! Messages are kept from the oldest one not yet complete on (a unicast is complete once
//! delivered), so a traffic run of any length holds only the messages in flight; their ids
//! wrap around within the id space, which the messages outstanding may fill only halfway
//! (the half behind the oldest tells a late repeat of a completed message).

use crate::topology::Topology;
use router::NodeId;
use serde::Serialize;
use std::collections::VecDeque;

/// Who must receive a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DestSet {
    /// One node.
    One(NodeId),
    /// Every node of the broadcast from `root` over the dimensions `span`, root excluded.
    Broadcast { root: NodeId, span: u32 },
    /// Nobody: an id kept free (a node that does not broadcast); any delivery is misrouted.
    Nobody,
}

#[derive(Clone, Copy, Debug)]
struct MsgRec {
    dest: DestSet,
    /// A timed broadcast's entry in `timings` ([`NO_TIMING`]: none).
    timing: u32,
    /// Broadcast: offset of its bitset in `bits`; unicast: delivered count.
    slot: u64,
}

/// [`MsgRec::timing`] of a message whose latency is not measured.
const NO_TIMING: u32 = u32::MAX;

/// A timed broadcast: created in cycle `birth`, `got` of its `need` deliveries seen, the
/// last in cycle `last`. Its latency is `last − birth` once `got == need`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    pub birth: u64,
    pub last: u64,
    pub got: u32,
    pub need: u32,
}

impl Timing {
    /// Creation to last delivery, once every destination has the message.
    pub fn latency(&self) -> Option<u64> {
        (self.got == self.need).then(|| self.last - self.birth)
    }
    fn record(&mut self, t: u64) {
        self.got += 1;
        self.last = self.last.max(t);
    }
}

/// Counts of what reached where.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct ScoreCounts {
    pub expected: u64,
    pub deliveries: u64,
    pub missing: u64,
    pub duplicates: u64,
    pub misrouted: u64,
}

/// Messages from every node to every other node (a total exchange), kept as a dense bitset:
/// message `PAIR_BASE + origin * nodes + destination`.
#[derive(Clone, Debug, Default)]
struct Pairs {
    nodes: u64,
    bits: Vec<u64>,
}

/// First message id of the all-pairs block.
pub const PAIR_BASE: u32 = 1 << 31;

impl MsgRec {
    /// Nothing more to see for this message: a unicast delivered, or a timed broadcast
    /// delivered everywhere (its timing says so). (Other broadcasts and ids kept free stay:
    /// their records are what tells a late or wrong delivery; a completed message's is the
    /// half of the id space behind the oldest outstanding.)
    fn complete(&self, timings: &[Timing]) -> bool {
        match self.dest {
            DestSet::One(_) => self.slot > 0,
            DestSet::Broadcast { .. } => self.timing != NO_TIMING && timings[self.timing as usize].latency().is_some(),
            DestSet::Nobody => false,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// Messages declared before a split fabric's parts began (every part holds them), by id.
    shared_msgs: Vec<MsgRec>,
    /// The messages declared since, from the oldest not complete on: `msgs[j]` is message
    /// number `lo + j` of this scoreboard (or part), id `shared + (lo + j) % id_room`.
    msgs: VecDeque<MsgRec>,
    lo: u64,
    /// `lo % id_room` (kept, not divided for at every delivery).
    lo_id: u64,
    /// Ids for `msgs` (wrapping): from `shared` up to the part number's bits or the
    /// all-pairs block.
    id_room: u64,
    pairs: Option<Pairs>,
    bits: Vec<u64>,
    words: usize,
    /// Timed broadcasts ([`Scoreboard::declare_timed`]), in the order declared; those
    /// declared before a split come first (`shared_timings` of them, in every part).
    timings: Vec<Timing>,
    shared_timings: usize,
    expected: u64,
    delivered: u64,
    duplicates: u64,
    misrouted: u64,
    /// The first problems seen, for the report.
    pub problems: Vec<String>,
    /// When the fabric is split between threads: this part's number, carried in the top
    /// bits of the ids it declares (from `part_shift` up), and deliveries of other parts'
    /// messages (message, node, cycle), passed on to them.
    part: Option<u32>,
    /// Where the part number starts in a split fabric's ids.
    part_shift: u32,
    pub(crate) foreign: Vec<(u32, NodeId, u64)>,
    /// The shared messages' delivered-to bits, and their expected deliveries.
    shared_bits: usize,
    shared_expected: u64,
}

const MAX_PROBLEMS: usize = 10;

impl Scoreboard {
    pub fn new(nodes: usize) -> Scoreboard {
        Scoreboard { words: nodes.div_ceil(64), id_room: PAIR_BASE as u64, part_shift: 31, ..Default::default() }
    }

    /// How many messages were declared before the split (ids `0..shared`); the first id of
    /// those declared since.
    fn shared(&self) -> usize {
        self.shared_msgs.len()
    }

    /// The number of message `id` (declared since the split) if it is outstanding: `Ok(j)`
    /// for `msgs[j]`; otherwise whether it is one already complete (`Err(true)`: in the half
    /// of the id space behind the oldest outstanding) or was never declared (`Err(false)`).
    fn find(&self, id: u32) -> Result<usize, bool> {
        let room = self.id_room;
        let Some(rel) = (id as u64).checked_sub(self.shared() as u64).filter(|&r| r < room) else {
            return Err(false);
        };
        // (rel - lo) mod room, with both below room.
        let ahead = rel + room - self.lo_id;
        let ahead = if ahead >= room { ahead - room } else { ahead };
        if ahead < self.msgs.len() as u64 { Ok(ahead as usize) } else { Err(ahead >= room / 2 && self.lo >= room - ahead) }
    }

    /// Declare a message and who must receive it; returns its id.
    pub fn declare(&mut self, dest: DestSet, topo: &Topology) -> u32 {
        self.declare_rec(dest, topo, None)
    }

    /// Declare a broadcast created in cycle `birth` whose latency is measured: from `birth`
    /// to the cycle its last destination receives it ([`Scoreboard::timings`]).
    pub fn declare_timed(&mut self, dest: DestSet, topo: &Topology, birth: u64) -> u32 {
        self.declare_rec(dest, topo, Some(birth))
    }

    /// The timed broadcasts, in the order declared (after a split run's join: the first
    /// part's, then the next's).
    pub fn timings(&self) -> &[Timing] {
        &self.timings
    }

    fn declare_rec(&mut self, dest: DestSet, topo: &Topology, birth: Option<u64>) -> u32 {
        let timing = match (dest, birth) {
            (DestSet::Broadcast { span, .. }, Some(birth)) => {
                self.timings.push(Timing { birth, last: birth, got: 0, need: topo.broadcast_reach(span) as u32 });
                self.timings.len() as u32 - 1
            }
            (_, Some(_)) => panic!("only broadcasts are timed by the scoreboard"),
            _ => NO_TIMING,
        };
        let slot = match dest {
            DestSet::One(_) => {
                self.expected += 1;
                0
            }
            DestSet::Nobody => 0,
            DestSet::Broadcast { span, .. } => {
                self.expected += topo.broadcast_reach(span);
                let off = self.bits.len() as u64;
                self.bits.resize(self.bits.len() + self.words, 0);
                off
            }
        };
        assert!(
            (self.msgs.len() as u64) < self.id_room / 2,
            "more than {} messages outstanding (declared and not yet delivered){}: the nodes offer more than the network \
             accepts; lower the load or the cycles",
            self.id_room / 2,
            if self.part.is_some() { " in one part of a split fabric" } else { "" }
        );
        // (lo + outstanding) mod room, with outstanding below room / 2.
        let at = self.lo_id + self.msgs.len() as u64;
        let id = self.shared() as u64 + if at >= self.id_room { at - self.id_room } else { at };
        self.msgs.push_back(MsgRec { dest, timing, slot });
        match self.part {
            None => id as u32,
            Some(k) => id as u32 | k << self.part_shift,
        }
    }

    /// Make this the scoreboard of part `k` of a split fabric. The messages declared so far
    /// (at setup, the same in every part, an all-pairs block included) stay shared: each
    /// part records its own nodes' deliveries of them, and [`Scoreboard::join`] merges those.
    pub(crate) fn set_part(&mut self, k: u32, parts: u32) {
        assert!(self.lo == 0, "a scoreboard is split before any delivery");
        // The part number in the top bits below the all-pairs block's: as many as the
        // highest part number has.
        self.part_shift = 31 - (u32::BITS - (parts - 1).leading_zeros());
        self.shared_msgs = self.msgs.drain(..).collect();
        assert!(
            self.shared() < 1 << (self.part_shift - 1),
            "too many messages declared at setup to split the scoreboard ({})",
            self.shared()
        );
        self.id_room = (1u64 << self.part_shift) - self.shared() as u64;
        (self.shared_bits, self.shared_expected) = (self.bits.len(), self.expected);
        self.shared_timings = self.timings.len();
        self.part = Some(k);
    }

    /// Where the part number starts in a split fabric's message ids.
    pub(crate) fn part_shift(&self) -> u32 {
        self.part_shift
    }

    /// Declare one message from every node to every other node; message
    /// `PAIR_BASE + origin * nodes + destination` (nodes² < 2^31).
    pub fn declare_all_pairs(&mut self, nodes: u32) {
        let n = nodes as u64;
        assert!(n * n < 1 << 31, "all-pairs block of {nodes} nodes does not fit the message ids");
        self.expected += n * (n - 1);
        self.pairs = Some(Pairs { nodes: n, bits: vec![0; ((n * n) as usize).div_ceil(64)] });
    }

    fn problem(&mut self, s: impl FnOnce() -> String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(s());
        }
    }

    /// Node `node` received message `msg` at cycle `t`.
    #[inline]
    pub fn accept(&mut self, msg: u32, node: NodeId, t: u64, topo: &Topology) {
        // The common case first: a broadcast declared at setup or outstanding in an unsplit
        // run, delivered to a node of its tree for the first time. Anything else takes the
        // general path, which finds the same record and tells what went wrong.
        let (rec, since) = self.common_record(msg);
        if let Some(&MsgRec { dest: DestSet::Broadcast { root, span }, slot, timing }) = rec
            && topo.in_broadcast(node, root, span)
        {
            let at = slot as usize + node.idx() / 64;
            let m = 1u64 << (node.idx() % 64);
            if let Some(w) = self.bits.get_mut(at)
                && *w & m == 0
            {
                *w |= m;
                self.delivered += 1;
                if timing != NO_TIMING {
                    self.time_delivery(timing, t, since);
                }
                return;
            }
        }
        self.accept_general(msg, node, t, topo);
    }

    /// The record of message `msg` if the common path of [`Scoreboard::accept`] finds it
    /// (declared at setup, or outstanding in an unsplit run), and whether it is one declared
    /// since the split.
    #[inline(always)]
    fn common_record(&self, msg: u32) -> (Option<&MsgRec>, bool) {
        if (msg as usize) < self.shared() {
            (Some(&self.shared_msgs[msg as usize]), false)
        } else if self.part.is_none() && msg < PAIR_BASE {
            (self.find(msg).ok().map(|j| &self.msgs[j]), true)
        } else {
            (None, false)
        }
    }

    /// A delivery of broadcast message `msg` to `node` is near: a hint to load the word of
    /// its delivered-to bits [`Scoreboard::accept`] sets.
    #[inline(always)]
    pub fn prefetch(&self, msg: u32, node: NodeId) {
        if let (Some(&MsgRec { dest: DestSet::Broadcast { .. }, slot, .. }), _) = self.common_record(msg)
            && let Some(w) = self.bits.get(slot as usize + node.idx() / 64)
        {
            router::prefetch(w);
        }
    }

    /// A delivery of the timed broadcast `timing` in cycle `t`; once it is complete, the
    /// messages complete at the front are forgotten (`since`: it is one declared since the
    /// split, in `msgs`).
    #[inline]
    fn time_delivery(&mut self, timing: u32, t: u64, since: bool) {
        let tm = &mut self.timings[timing as usize];
        tm.record(t);
        if since && tm.got == tm.need {
            self.forget_complete();
        }
    }

    fn accept_general(&mut self, msg: u32, node: NodeId, t: u64, topo: &Topology) {
        let msg = match self.part {
            Some(k) if msg < PAIR_BASE && msg as usize >= self.shared() => {
                if msg >> self.part_shift != k {
                    self.foreign.push((msg, node, t));
                    return;
                }
                msg & ((1 << self.part_shift) - 1)
            }
            _ => msg,
        };
        if msg >= PAIR_BASE
            && let Some(p) = self.pairs.as_mut()
        {
            let k = (msg - PAIR_BASE) as u64;
            let (o, dst) = (k / p.nodes, k % p.nodes);
            if dst != node.0 as u64 || o == dst || o >= p.nodes {
                self.misrouted += 1;
                self.problem(|| format!("cycle {t}: message from node {o} for node {dst} delivered to node {node}"));
            } else if p.bits[k as usize / 64] & (1 << (k % 64)) != 0 {
                self.duplicates += 1;
                self.problem(|| format!("cycle {t}: message from node {o} delivered to node {node} again"));
            } else {
                p.bits[k as usize / 64] |= 1 << (k % 64);
                self.delivered += 1;
            }
            return;
        }
        let shared = (msg as usize) < self.shared();
        let at = if shared { Ok(msg as usize) } else { self.find(msg) };
        // The record, and where it is among those declared since the split.
        let (rec, since) = match at {
            Ok(j) if shared => (self.shared_msgs[j], None),
            Ok(j) => (self.msgs[j], Some(j)),
            Err(true) => {
                self.duplicates += 1;
                self.problem(|| format!("cycle {t}: message {msg} delivered to node {node} again (it had been delivered)"));
                return;
            }
            Err(false) => {
                self.misrouted += 1;
                self.problem(|| format!("cycle {t}: node {node} received undeclared message {msg}"));
                return;
            }
        };
        match rec.dest {
            DestSet::Nobody => {
                self.misrouted += 1;
                self.problem(|| format!("cycle {t}: node {node} received message {msg}, which nobody sent"));
            }
            DestSet::One(d) => {
                if d != node {
                    self.misrouted += 1;
                    self.problem(|| format!("cycle {t}: message {msg} for node {d} delivered to node {node}"));
                } else if rec.slot > 0 {
                    self.duplicates += 1;
                    self.problem(|| format!("cycle {t}: message {msg} delivered to node {node} again"));
                } else {
                    self.delivered += 1;
                    match since {
                        None => self.shared_msgs[msg as usize].slot = 1,
                        Some(j) => {
                            self.msgs[j].slot = 1;
                            self.forget_complete();
                        }
                    }
                }
            }
            DestSet::Broadcast { root, span } => {
                if !topo.in_broadcast(node, root, span) {
                    self.misrouted += 1;
                    self.problem(|| format!("cycle {t}: broadcast {msg} from node {root} delivered to node {node}, outside its span"));
                    return;
                }
                let w = &mut self.bits[rec.slot as usize + node.idx() / 64];
                let m = 1u64 << (node.idx() % 64);
                if *w & m != 0 {
                    self.duplicates += 1;
                    self.problem(|| format!("cycle {t}: broadcast {msg} from node {root} delivered to node {node} again"));
                } else {
                    *w |= m;
                    self.delivered += 1;
                    if rec.timing != NO_TIMING {
                        self.time_delivery(rec.timing, t, since.is_some());
                    }
                }
            }
        }
    }

    /// The oldest messages complete are forgotten.
    fn forget_complete(&mut self) {
        while self.msgs.front().is_some_and(|m| m.complete(&self.timings)) {
            self.msgs.pop_front();
            self.lo += 1;
            self.lo_id += 1;
            if self.lo_id == self.id_room {
                self.lo_id = 0;
            }
        }
    }

    /// A network-level error found by the kernel (a packet at the wrong node, or twice).
    pub fn packet_error(&mut self, duplicate: bool, what: String) {
        if duplicate {
            self.duplicates += 1;
        } else {
            self.misrouted += 1;
        }
        self.problem(|| what);
    }

    pub fn counts(&self) -> ScoreCounts {
        ScoreCounts {
            expected: self.expected,
            deliveries: self.delivered,
            missing: self.expected - self.delivered,
            duplicates: self.duplicates,
            misrouted: self.misrouted,
        }
    }

    /// Deliveries recorded and expected here; on a part of a split fabric other than the
    /// first, without the shared messages' expected deliveries (so the parts' sums are the
    /// whole fabric's).
    pub(crate) fn part_counts(&self) -> (u64, u64) {
        match self.part {
            Some(k) if k > 0 => (self.delivered, self.expected - self.shared_expected),
            _ => (self.delivered, self.expected),
        }
    }

    /// Describe up to `max` (message, node) pairs never delivered.
    pub fn describe_missing(&self, topo: &Topology, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = &self.pairs {
            for k in 0..p.nodes * p.nodes {
                if out.len() >= max {
                    break;
                }
                let (o, dst) = (k / p.nodes, k % p.nodes);
                if o != dst && p.bits[k as usize / 64] & (1 << (k % 64)) == 0 {
                    out.push(format!("message from node {o} never reached node {dst}"));
                }
            }
        }
        // Unicast messages by destination, in node order (the same however messages were
        // numbered, e.g. on a fabric split between threads).
        let mut lost = vec![0u64; topo.nodes()];
        for rec in self.shared_msgs.iter().chain(&self.msgs) {
            if let DestSet::One(d) = rec.dest
                && rec.slot == 0
            {
                lost[d.idx()] += 1;
            }
        }
        for (d, &k) in lost.iter().enumerate().filter(|&(_, &k)| k > 0) {
            if out.len() >= max {
                break;
            }
            out.push(if k == 1 { format!("1 message never reached node {d}") } else { format!("{k} messages never reached node {d}") });
        }
        // Numbered as declared (on one thread, their ids); the timed ones (numbered
        // differently on a fabric split between threads when created during the run) after
        // them, by creation cycle and root.
        let numbered =
            self.shared_msgs.iter().enumerate().chain(self.msgs.iter().enumerate().map(|(j, m)| (self.shared() + self.lo as usize + j, m)));
        let mut timed: Vec<(u64, u32, MsgRec)> = Vec::new();
        for (i, rec) in numbered {
            if out.len() >= max {
                break;
            }
            match rec.dest {
                DestSet::Broadcast { root, .. } if rec.timing != NO_TIMING => {
                    timed.push((self.timings[rec.timing as usize].birth, root.0, *rec));
                }
                DestSet::Broadcast { root, .. } => {
                    self.describe_broadcast(topo, rec, &format!("broadcast {i} from node {root}"), max, &mut out)
                }
                _ => {}
            }
        }
        timed.sort_unstable_by_key(|&(birth, root, _)| (birth, root));
        for (birth, root, rec) in timed {
            self.describe_broadcast(topo, &rec, &format!("broadcast from node {root} created in cycle {birth}"), max, &mut out);
        }
        out
    }

    /// Add to `out` (up to `max` lines) the destinations broadcast `rec`, called `name`, missed.
    fn describe_broadcast(&self, topo: &Topology, rec: &MsgRec, name: &str, max: usize, out: &mut Vec<String>) {
        let DestSet::Broadcast { root, span } = rec.dest else { return };
        for n in 0..topo.nodes() as u32 {
            let node = NodeId(n);
            if out.len() >= max {
                break;
            }
            let seen = self.bits[rec.slot as usize + node.idx() / 64] & (1u64 << (node.idx() % 64)) != 0;
            if topo.in_broadcast(node, root, span) && !seen {
                out.push(format!("{name} never reached node {node}"));
            }
        }
    }

    /// Fold in `other`, the scoreboard of another part of a split fabric, after the run
    /// (each part's deliveries of this part's messages already handed over). Its messages
    /// are numbered after this one's.
    pub(crate) fn join(&mut self, other: Scoreboard) {
        match (self.pairs.as_mut(), &other.pairs) {
            // Each part's deliveries are to its own nodes: no bit is set in both.
            (Some(mine), Some(theirs)) => mine.bits.iter_mut().zip(&theirs.bits).for_each(|(a, b)| *a |= b),
            (None, None) => {}
            _ => panic!("parts of one fabric with and without an all-pairs block"),
        }
        // The shared messages: the other part's deliveries of them are to its own nodes.
        for (mine, theirs) in self.shared_msgs.iter_mut().zip(&other.shared_msgs) {
            match mine.dest {
                DestSet::Broadcast { .. } => {
                    let (a, b) = (mine.slot as usize, theirs.slot as usize);
                    for w in 0..self.words {
                        self.bits[a + w] |= other.bits[b + w];
                    }
                }
                _ => mine.slot = mine.slot.max(theirs.slot),
            }
        }
        // The shared timed broadcasts: the other part saw its own nodes' deliveries.
        for (mine, theirs) in self.timings.iter_mut().zip(&other.timings[..other.shared_timings]) {
            mine.got += theirs.got;
            mine.last = mine.last.max(theirs.last);
        }
        let off = self.bits.len() as u64 - other.shared_bits as u64;
        let toff = self.timings.len() as u32 - other.shared_timings as u32;
        self.msgs.extend(other.msgs.iter().map(|m| match m.dest {
            DestSet::Broadcast { .. } => {
                MsgRec { slot: m.slot + off, timing: if m.timing == NO_TIMING { NO_TIMING } else { m.timing + toff }, ..*m }
            }
            _ => *m,
        }));
        self.timings.extend_from_slice(&other.timings[other.shared_timings..]);
        self.bits.extend_from_slice(&other.bits[other.shared_bits..]);
        self.expected += other.expected - other.shared_expected;
        self.delivered += other.delivered;
        self.duplicates += other.duplicates;
        self.misrouted += other.misrouted;
        for p in other.problems {
            self.problem(|| p);
        }
        self.part = None;
    }

    pub fn ok(&self) -> bool {
        let c = self.counts();
        c.missing == 0 && c.duplicates == 0 && c.misrouted == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    fn line8() -> Topology {
        Topology::new(TopologyKind::Linear, &[8])
    }

    #[test]
    fn a_long_unicast_stream_keeps_only_what_is_in_flight() {
        let t = line8();
        let mut sb = Scoreboard::new(8);
        let mut in_flight = std::collections::VecDeque::new();
        for i in 0..200_000u32 {
            let d = NodeId(i % 7 + 1);
            in_flight.push_back((sb.declare(DestSet::One(d), &t), d));
            if in_flight.len() > 40 {
                // Delivered out of order within the last few.
                let k = (i as usize * 7) % 5;
                let (m, d) = in_flight.remove(k).unwrap();
                sb.accept(m, d, i as u64, &t);
            }
            assert!(sb.msgs.len() <= 80, "{} messages kept with 41 in flight", sb.msgs.len());
        }
        for (m, d) in in_flight.drain(..) {
            sb.accept(m, d, 0, &t);
        }
        assert_eq!(sb.msgs.len(), 0);
        assert_eq!(sb.counts(), ScoreCounts { expected: 200_000, deliveries: 200_000, missing: 0, duplicates: 0, misrouted: 0 });
    }

    #[test]
    fn ids_wrap_and_a_late_repeat_is_a_duplicate() {
        let t = line8();
        let mut sb = Scoreboard::new(8);
        sb.id_room = 16;
        let mut ids = Vec::new();
        for i in 0..40u32 {
            let m = sb.declare(DestSet::One(NodeId(3)), &t);
            ids.push(m);
            if i % 2 == 1 {
                // Two at a time, the later one first.
                sb.accept(m, NodeId(3), 0, &t);
                sb.accept(ids[i as usize - 1], NodeId(3), 0, &t);
            }
        }
        assert_eq!(ids[..16].to_vec(), (0..16).collect::<Vec<_>>());
        assert_eq!(ids[16], 0, "ids wrap");
        assert_eq!(sb.counts().deliveries, 40);
        // Message 39 (id 7) again; and id 12, which no outstanding message has and none
        // completed recently (the last 8 ids completed are 0..=7).
        let one = sb.declare(DestSet::One(NodeId(5)), &t);
        assert_eq!(one, 8);
        sb.accept(7, NodeId(3), 1, &t);
        sb.accept(12, NodeId(3), 1, &t);
        sb.accept(one, NodeId(4), 1, &t);
        // Outside the ids a message can have.
        sb.accept(16, NodeId(3), 1, &t);
        sb.accept(PAIR_BASE + 8, NodeId(5), 1, &t);
        assert_eq!(sb.counts(), ScoreCounts { expected: 41, deliveries: 40, missing: 1, duplicates: 1, misrouted: 4 });
        assert_eq!(sb.describe_missing(&t, 10), vec!["1 message never reached node 5".to_string()]);
    }

    #[test]
    #[should_panic(expected = "more than 8 messages outstanding")]
    fn more_messages_outstanding_than_half_the_ids_is_refused() {
        let t = line8();
        let mut sb = Scoreboard::new(8);
        sb.id_room = 16;
        for _ in 0..9 {
            sb.declare(DestSet::One(NodeId(1)), &t);
        }
    }

    #[test]
    fn split_ids_carry_the_part_above_the_room_it_needs() {
        let t = line8();
        for (parts, shift) in [(2, 30), (3, 29), (4, 29), (5, 28), (8, 28), (9, 27)] {
            let mut sb = Scoreboard::new(8);
            sb.declare(DestSet::One(NodeId(1)), &t);
            sb.set_part(parts - 1, parts);
            assert_eq!(sb.part_shift(), shift);
            let m = sb.declare(DestSet::One(NodeId(2)), &t);
            assert_eq!(m, 1 | (parts - 1) << shift);
            assert!(m < PAIR_BASE);
            sb.accept(m, NodeId(2), 0, &t);
            assert_eq!(sb.counts().deliveries, 1);
        }
    }

    /// A timed broadcast: its latency is from its creation to its last delivery, whatever
    /// order the deliveries come in; once complete its record goes (the unicasts behind it
    /// with it) and a late repeat is a duplicate; an incomplete one has no latency.
    #[test]
    fn timed_broadcasts_measure_creation_to_last_delivery() {
        let t = line8();
        let mut sb = Scoreboard::new(8);
        let b = sb.declare_timed(DestSet::Broadcast { root: NodeId(2), span: t.full_span() }, &t, 100);
        let u = sb.declare(DestSet::One(NodeId(5)), &t);
        let c = sb.declare_timed(DestSet::Broadcast { root: NodeId(0), span: t.full_span() }, &t, 120);
        sb.accept(u, NodeId(5), 110, &t);
        for (n, at) in [(3, 104), (7, 130), (0, 103), (1, 102), (4, 105), (5, 106)] {
            sb.accept(b, NodeId(n), at, &t);
        }
        assert_eq!(sb.timings()[0].latency(), None, "node 6 has not got it yet");
        assert_eq!(sb.msgs.len(), 3);
        sb.accept(b, NodeId(6), 107, &t);
        assert_eq!(sb.timings()[0], Timing { birth: 100, last: 130, got: 7, need: 7 });
        assert_eq!(sb.timings()[0].latency(), Some(30));
        assert_eq!(sb.msgs.len(), 1, "the broadcast and the unicast behind it are forgotten");
        sb.accept(b, NodeId(6), 140, &t);
        sb.accept(c, NodeId(1), 125, &t);
        assert_eq!(sb.timings()[1].latency(), None);
        assert_eq!(sb.counts(), ScoreCounts { expected: 15, deliveries: 9, missing: 6, duplicates: 1, misrouted: 0 });
        assert_eq!(
            sb.describe_missing(&t, 2),
            [
                "broadcast from node 0 created in cycle 120 never reached node 2",
                "broadcast from node 0 created in cycle 120 never reached node 3"
            ]
        );
    }

    /// A timed broadcast declared before a split: each part counts its own nodes'
    /// deliveries, and the join adds them up, the last delivery the later of the parts'.
    #[test]
    fn a_shared_timed_broadcast_is_joined_across_parts() {
        let t = line8();
        let mut a = Scoreboard::new(8);
        let b = a.declare_timed(DestSet::Broadcast { root: NodeId(0), span: t.full_span() }, &t, 0);
        let mut other = a.clone();
        a.set_part(0, 2);
        other.set_part(1, 2);
        for n in 1..4 {
            a.accept(b, NodeId(n), 10 + n as u64, &t);
        }
        for n in 4..8 {
            other.accept(b, NodeId(n), 5 + n as u64, &t);
        }
        a.join(other);
        assert_eq!(a.timings(), [Timing { birth: 0, last: 13, got: 7, need: 7 }]);
        assert!(a.ok());
    }

    #[test]
    fn counts_missing_duplicate_misrouted() {
        let t = Topology::new(TopologyKind::Hypercube, &[3]);
        let mut sb = Scoreboard::new(8);
        let b = sb.declare(DestSet::Broadcast { root: NodeId(0), span: 0b011 }, &t);
        let u = sb.declare(DestSet::One(NodeId(5)), &t);
        sb.accept(b, NodeId(1), 1, &t);
        sb.accept(b, NodeId(1), 2, &t);
        sb.accept(b, NodeId(4), 2, &t); // outside span 0b011
        sb.accept(u, NodeId(5), 3, &t);
        let c = sb.counts();
        assert_eq!(c, ScoreCounts { expected: 4, deliveries: 2, missing: 2, duplicates: 1, misrouted: 1 });
        assert_eq!(sb.describe_missing(&t, 10).len(), 2);
        assert!(!sb.ok());
    }
}
