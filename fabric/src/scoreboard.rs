//! The scoreboard: every message an algorithm sends must reach each intended node exactly
//! once. Lost, duplicated and misrouted deliveries are counted and the first few described.

use crate::topology::Topology;
use router::NodeId;
use serde::Serialize;

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
    /// Broadcast: offset of its bitset in `bits`; unicast: delivered count.
    slot: u64,
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

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    msgs: Vec<MsgRec>,
    pairs: Option<Pairs>,
    bits: Vec<u64>,
    words: usize,
    expected: u64,
    delivered: u64,
    duplicates: u64,
    misrouted: u64,
    /// The first problems seen, for the report.
    pub problems: Vec<String>,
    /// When the fabric is split between threads: this part's number, carried in the top
    /// bits of the ids it declares ([`PART_SHIFT`]), and deliveries of other parts'
    /// messages (message, node, cycle), passed on to them.
    part: Option<u32>,
    pub(crate) foreign: Vec<(u32, NodeId, u64)>,
    /// Messages declared before the split (at setup), which every part holds and accepts
    /// locally; their delivered-to bits, and their expected deliveries.
    shared: usize,
    shared_bits: usize,
    shared_expected: u64,
}

/// Message ids of a part of a split fabric carry the part number from this bit up.
pub const PART_SHIFT: u32 = 26;

const MAX_PROBLEMS: usize = 10;

impl Scoreboard {
    pub fn new(nodes: usize) -> Scoreboard {
        Scoreboard { words: nodes.div_ceil(64), ..Default::default() }
    }

    /// Declare a message and who must receive it; returns its id.
    pub fn declare(&mut self, dest: DestSet, topo: &Topology) -> u32 {
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
        self.msgs.push(MsgRec { dest, slot });
        let id = self.msgs.len() as u32 - 1;
        match self.part {
            None => id,
            Some(k) => {
                assert!(id < 1 << PART_SHIFT, "more than 2^{PART_SHIFT} messages declared by one part of a split fabric");
                id | k << PART_SHIFT
            }
        }
    }

    /// Make this the scoreboard of part `k` of a split fabric. The messages declared so far
    /// (at setup, the same in every part) stay shared: each part records its own nodes'
    /// deliveries of them, and [`Scoreboard::join`] merges those.
    pub(crate) fn set_part(&mut self, k: u32) {
        assert!(self.pairs.is_none(), "all-pairs blocks are not split");
        assert!(self.msgs.len() < 1 << PART_SHIFT, "too many messages declared at setup to split the scoreboard");
        (self.shared, self.shared_bits, self.shared_expected) = (self.msgs.len(), self.bits.len(), self.expected);
        self.part = Some(k);
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
    pub fn accept(&mut self, msg: u32, node: NodeId, t: u64, topo: &Topology) {
        let msg = match self.part {
            Some(k) if msg < PAIR_BASE && msg as usize >= self.shared => {
                if msg >> PART_SHIFT != k {
                    self.foreign.push((msg, node, t));
                    return;
                }
                msg & ((1 << PART_SHIFT) - 1)
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
        let Some(rec) = self.msgs.get(msg as usize).copied() else {
            self.misrouted += 1;
            self.problem(|| format!("cycle {t}: node {node} received undeclared message {msg}"));
            return;
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
                    self.msgs[msg as usize].slot = 1;
                    self.delivered += 1;
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
                }
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
        for rec in &self.msgs {
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
        for (i, rec) in self.msgs.iter().enumerate() {
            if out.len() >= max {
                break;
            }
            if let DestSet::Broadcast { root, span } = rec.dest {
                for n in 0..topo.nodes() as u32 {
                    let node = NodeId(n);
                    if out.len() >= max {
                        break;
                    }
                    let seen = self.bits[rec.slot as usize + node.idx() / 64] & (1u64 << (node.idx() % 64)) != 0;
                    if topo.in_broadcast(node, root, span) && !seen {
                        out.push(format!("broadcast {i} from node {root} never reached node {node}"));
                    }
                }
            }
        }
        out
    }

    /// Fold in `other`, the scoreboard of another part of a split fabric, after the run
    /// (each part's deliveries of this part's messages already handed over). Its messages
    /// are numbered after this one's.
    pub(crate) fn join(&mut self, other: Scoreboard) {
        assert!(other.pairs.is_none() && self.pairs.is_none(), "all-pairs blocks are not split");
        // The shared messages: the other part's deliveries of them are to its own nodes.
        for (mine, theirs) in self.msgs[..self.shared].iter_mut().zip(&other.msgs[..other.shared]) {
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
        let off = self.bits.len() as u64 - other.shared_bits as u64;
        self.msgs.extend(other.msgs[other.shared..].iter().map(|m| match m.dest {
            DestSet::Broadcast { .. } => MsgRec { slot: m.slot + off, ..*m },
            _ => *m,
        }));
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
