//! The combinatorial constructions of Bertsekas, Ozveren, Stamoulis, Tseng and Tsitsiklis,
//! "Optimal communication algorithms for hypercubes", computed once for the tree or
//! schedule rooted at node 0; every node applies them XOR its own identity.
//!
//! Bit positions follow the paper's "position p from the right" (1-based) in comments;
//! in code, bit `p - 1`. A link "of type m" crosses dimension m (port `m - 1`).

use std::collections::HashMap;

fn rotl(x: u32, d: u32) -> u32 {
    ((x << 1) | (x >> (d - 1))) & ((1u32 << d) - 1)
}

fn bit(x: u32, p: u32) -> bool {
    (x >> (p - 1)) & 1 == 1
}

/// The equivalence classes R_kn of d-bit strings with k ones (1 <= k <= d-1) under
/// rotation, in the paper's order: by k, then R_k1 (the class of the string whose k
/// rightmost bits are one) first and the others by their smallest member. Each class is
/// returned as its members in rotation order, starting anywhere.
fn rotation_classes(d: u32) -> Vec<(u32, Vec<u32>, bool)> {
    let n = 1u32 << d;
    let mut seen = vec![false; n as usize];
    let mut by_k: Vec<Vec<Vec<u32>>> = vec![Vec::new(); d as usize + 1];
    for x in 1..n - 1 {
        if seen[x as usize] {
            continue;
        }
        let mut c = vec![x];
        let mut y = rotl(x, d);
        while y != x {
            c.push(y);
            y = rotl(y, d);
        }
        for &y in &c {
            seen[y as usize] = true;
        }
        by_k[x.count_ones() as usize].push(c);
    }
    let mut out = Vec::new();
    for k in 1..d {
        let mut cs = std::mem::take(&mut by_k[k as usize]);
        let first = cs.iter().position(|c| c.contains(&((1 << k) - 1))).expect("R_k1 exists");
        let r1 = cs.remove(first);
        cs.sort_by_key(|c| *c.iter().min().unwrap());
        out.push((k, r1, true));
        out.extend(cs.into_iter().map(|c| (k, c, false)));
    }
    out
}

/// The single-node broadcast from node 0 of §2 whose link sets A_1..A_q hold links of
/// distinct types (so that its translations to every root never collide): the basis of
/// the optimal multinode broadcast. For each node t != 0: its number n(t), m(t) =
/// 1 + (n(t) - 1) mod d, its parent t with bit m(t) cleared, and the index i of the set
/// A_i holding the link into t (the slot in which it is crossed).
#[derive(Clone, Debug)]
pub struct MnbTree {
    pub d: u32,
    /// n(t), for every t (n(0) = 0).
    pub n: Vec<u32>,
    /// Slot (index of A_i) of the link into t; 0 for t = 0.
    pub slot: Vec<u32>,
    pub parent: Vec<u32>,
    /// Children of each node, in the order they are listed.
    pub children: Vec<Vec<u32>>,
}

impl MnbTree {
    pub fn new(d: u32) -> MnbTree {
        let nodes = 1usize << d;
        let mut n = vec![0u32; nodes];
        if d == 1 {
            n[1] = 1;
        } else {
            let mut pos = 1u32;
            for (_, class, is_r_k1) in rotation_classes(d) {
                let m0 = 1 + (pos - 1) % d;
                // First element: bit m0 is one; for R_k1 also the bit just right of it
                // (position m0 - 1, or d when m0 = 1) is zero.
                let first = class
                    .iter()
                    .copied()
                    .find(|&z| bit(z, m0) && (!is_r_k1 || !bit(z, if m0 > 1 { m0 - 1 } else { d })))
                    .expect("a first element satisfying property (1)");
                let mut z = first;
                for _ in 0..class.len() {
                    n[z as usize] = pos;
                    pos += 1;
                    z = rotl(z, d);
                }
            }
            n[nodes - 1] = pos;
            debug_assert_eq!(pos as usize, nodes - 1);
        }
        let q = (nodes as u32 - 1).div_ceil(d);
        let mut slot = vec![0u32; nodes];
        let mut parent = vec![0u32; nodes];
        let mut children = vec![Vec::new(); nodes];
        for t in 1..nodes as u32 {
            let m = 1 + (n[t as usize] - 1) % d;
            slot[t as usize] = ((n[t as usize] - 1) / d + 1).min(q);
            parent[t as usize] = t ^ (1 << (m - 1));
        }
        let mut by_n: Vec<u32> = (1..nodes as u32).collect();
        by_n.sort_by_key(|&t| n[t as usize]);
        for t in by_n {
            children[parent[t as usize] as usize].push(t);
        }
        MnbTree { d, n, slot, parent, children }
    }

    /// q = ⌈(2^d − 1)/d⌉, the number of link sets.
    pub fn q(&self) -> u32 {
        ((1u32 << self.d) - 1).div_ceil(self.d)
    }

    /// The link type (dimension, 1-based) of the link into t.
    pub fn m(&self, t: u32) -> u32 {
        1 + (self.n[t as usize] - 1) % self.d
    }
}

/// The single-node scatter tree of §3 rooted at node 0: a shortest-path spanning tree whose
/// d subtrees below the root each hold at most ⌈(2^d − 1)/d⌉ nodes, built class by class
/// from compatible classes.
#[derive(Clone, Debug)]
pub struct ScatterTree {
    pub d: u32,
    pub parent: Vec<u32>,
    /// The child of the root whose subtree holds each node (itself for the root's children).
    pub top: Vec<u32>,
}

impl ScatterTree {
    pub fn new(d: u32) -> ScatterTree {
        let nodes = 1usize << d;
        let mut parent = vec![0u32; nodes];
        let mut m = vec![0u32; nodes];
        if d > 1 {
            let mut class_of: HashMap<u32, Vec<u32>> = HashMap::new();
            let mut pos = 1u32;
            let mut r_d1: Vec<u32> = Vec::new();
            for (k, class, is_r_k1) in rotation_classes(d) {
                let m0 = 1 + (pos - 1) % d;
                let members: Vec<u32> = if k == 1 {
                    let mut v = Vec::new();
                    let mut z = class[0];
                    for j in 0..class.len() as u32 {
                        v.push(z);
                        parent[z as usize] = 0;
                        m[z as usize] = 1 + (pos + j - 1) % d;
                        z = rotl(z, d);
                    }
                    v
                } else {
                    // t: rightmost bit one, leftmost zero; t' clears the one just right of
                    // a longest run of zeros; its class is compatible (has d members).
                    let t = *class.iter().find(|&&x| x & 1 == 1 && (x >> (d - 1)) & 1 == 0).expect("such a member exists");
                    let tp = clear_after_longest_zero_run(t, d);
                    let compatible = class_of.get(&tp).expect("the compatible class was built earlier").clone();
                    assert_eq!(compatible.len(), d as usize, "compatible class of {t:b} has d members");
                    let tpp = *compatible.iter().find(|&&x| m[x as usize] == m0).expect("a member with m = m_kn");
                    let mut r = 0;
                    let mut z = tp;
                    while z != tpp {
                        z = rotl(z, d);
                        r += 1;
                    }
                    let mut first = t;
                    for _ in 0..r {
                        first = rotl(first, d);
                    }
                    let (mut z, mut zp) = (first, tpp);
                    let mut v = Vec::new();
                    for j in 0..class.len() as u32 {
                        v.push(z);
                        parent[z as usize] = zp;
                        m[z as usize] = 1 + (pos + j - 1) % d;
                        debug_assert_eq!(m[zp as usize], m[z as usize]);
                        z = rotl(z, d);
                        zp = rotl(zp, d);
                    }
                    v
                };
                for &x in &members {
                    class_of.insert(x, members.clone());
                }
                if k == d - 1 && is_r_k1 {
                    r_d1 = members.clone();
                }
                pos += class.len() as u32;
            }
            let full = (nodes - 1) as u32;
            let m_full = 1 + (pos - 1) % d;
            parent[full as usize] = *r_d1.iter().find(|&&x| m[x as usize] == m_full).expect("R_(d-1)1 member with m(11..1)");
        }
        let mut top = vec![0u32; nodes];
        for x in 1..nodes as u32 {
            let mut y = x;
            while parent[y as usize] != 0 {
                y = parent[y as usize];
            }
            top[x as usize] = y;
        }
        ScatterTree { d, parent, top }
    }

    /// The next node from `from` towards `to` in the tree (`to` in `from`'s subtree).
    pub fn next_hop(&self, from: u32, to: u32) -> u32 {
        let mut y = to;
        while self.parent[y as usize] != from {
            y = self.parent[y as usize];
        }
        y
    }
}

fn clear_after_longest_zero_run(t: u32, d: u32) -> u32 {
    // Scan from the leftmost bit (position d) rightwards for runs of zeros followed by a one.
    let (mut best_len, mut best_one) = (0, 0);
    let mut p = d;
    while p >= 1 {
        if !bit(t, p) {
            let start = p;
            while p >= 1 && !bit(t, p) {
                p -= 1;
            }
            let len = start - p;
            if p >= 1 && len > best_len {
                best_len = len;
                best_one = p;
            }
        } else {
            p -= 1;
        }
    }
    t & !(1 << (best_one - 1))
}

/// Node 0's part of a total exchange: for every packet it sends (origin, destination),
/// the slot and the link type (dimension, 1-based). Node i's schedule is node 0's XOR i.
#[derive(Clone, Debug)]
pub struct ExchangeSchedule {
    pub d: u32,
    pub slots: u32,
    pub at: HashMap<(u32, u32), (u32, u32)>,
}

impl ExchangeSchedule {
    /// §4 under MLA, by the paper's implementation rules: own packets on link k in slots
    /// 1..2^(k−1) in the order of the kth table, the one for e_k last; a packet arriving on
    /// link k goes on through link k0 = the highest dimension below k where it still
    /// differs, queued by origin (lexicographic on origin XOR node) then arrival, from slot
    /// 2^(k0−1) + 1 on. Node 0's queues are simulated alone: what it receives on link k in
    /// a slot is what node e_k sent on link k, XOR e_k. Panics if a link would idle.
    pub fn mla(d: u32) -> ExchangeSchedule {
        // The d tables: column k lists node 0's destinations on link k in slot order.
        let mut cols: Vec<Vec<u32>> = vec![vec![1]];
        for k in 2..=d {
            let rows = cols.iter().map(|c| c.len()).max().unwrap_or(0);
            let mut col = Vec::with_capacity(1 << (k - 1));
            for r in 0..rows {
                for c in &cols {
                    if let Some(&e) = c.get(r) {
                        col.push(e | (1 << (k - 1)));
                    }
                }
            }
            col.push(1 << (k - 1));
            cols.push(col);
        }
        let slots = 1u32 << (d - 1);
        let mut queues: Vec<std::collections::BinaryHeap<std::cmp::Reverse<(u32, u64, u32)>>> = vec![Default::default(); d as usize + 1];
        let mut seq = 0u64;
        let mut at = HashMap::new();
        for s in 1..=slots {
            let mut sent = Vec::with_capacity(d as usize);
            for k in 1..=d {
                let p = if s <= 1 << (k - 1) {
                    (0, cols[k as usize - 1][s as usize - 1])
                } else {
                    let std::cmp::Reverse((o, _, t)) =
                        queues[k as usize].pop().unwrap_or_else(|| panic!("d={d}: link {k} idle in slot {s}"));
                    (o, t)
                };
                at.insert(p, (s, k));
                sent.push((k, p));
            }
            for (k, (o, t)) in sent {
                let (o2, t2) = (o ^ (1 << (k - 1)), t ^ (1 << (k - 1)));
                if t2 == 0 {
                    continue;
                }
                let k0 = 32 - t2.leading_zeros();
                debug_assert!(k0 < k);
                queues[k0 as usize].push(std::cmp::Reverse((o2, seq, t2)));
                seq += 1;
            }
        }
        assert!(queues.iter().all(|q| q.is_empty()), "d={d}: packets left after 2^(d-1) slots");
        ExchangeSchedule { d, slots, at }
    }

    /// §4 under SLA (MTADEA of [SaS85]): the recursive construction with its three phases
    /// one after the other — a total exchange within each half, the 2^(d−1) packets for the
    /// other half across dimension d one per slot, a total exchange of those in each half.
    pub fn sla(d: u32) -> ExchangeSchedule {
        fn te(j: u32, held: Vec<(u32, u32)>, t: &mut u32, at: &mut HashMap<(u32, u32), (u32, u32)>) {
            if j == 0 {
                return;
            }
            let (high, low): (Vec<_>, Vec<_>) = held.into_iter().partition(|&(_, dst)| (dst >> (j - 1)) & 1 == 1);
            te(j - 1, low, t, at);
            let mut high = high;
            high.sort_by_key(|&(_, dst)| dst);
            let mut received = Vec::with_capacity(high.len());
            for p in high {
                *t += 1;
                at.insert(p, (*t, j));
                received.push((p.0 ^ (1 << (j - 1)), p.1 ^ (1 << (j - 1))));
            }
            te(j - 1, received, t, at);
        }
        let mut at = HashMap::new();
        let mut t = 0;
        te(d, (1..1u32 << d).map(|x| (0, x)).collect(), &mut t, &mut at);
        ExchangeSchedule { d, slots: t, at }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §2: each A_i holds links of distinct types; each link's tail was reached in an
    /// earlier set; the sets take q = ⌈(2^d − 1)/d⌉ slots.
    #[test]
    fn mnb_link_sets_have_distinct_types_and_valid_order() {
        for d in 1..=14 {
            let t = MnbTree::new(d);
            let nodes = 1u32 << d;
            let mut types: HashMap<u32, Vec<u32>> = HashMap::new();
            for x in 1..nodes {
                let p = t.parent[x as usize];
                assert_eq!((x ^ p).count_ones(), 1, "d={d}: {x:b} and its parent {p:b} are neighbours");
                assert!(x & (x ^ p) != 0, "the link reverses a one bit of t");
                assert!(t.slot[p as usize] < t.slot[x as usize], "d={d}: parent of {x:b} reached first");
                assert!(t.n[p as usize] < t.n[x as usize], "SLA: parent sends first");
                types.entry(t.slot[x as usize]).or_default().push(t.m(x));
            }
            assert_eq!(types.len() as u32, t.q());
            for (i, ty) in types {
                let mut u = ty.clone();
                u.sort_unstable();
                u.dedup();
                assert_eq!(u.len(), ty.len(), "d={d}: A_{i} has two links of one type");
                if i < t.q() {
                    assert_eq!(ty.len() as u32, d, "A_{i} is full");
                }
            }
        }
    }

    /// §3: the scatter tree is a shortest-path spanning tree with every subtree below the
    /// root holding at most ⌈(2^d − 1)/d⌉ nodes.
    #[test]
    fn scatter_tree_is_shortest_and_balanced() {
        for d in 1..=14 {
            let t = ScatterTree::new(d);
            let nodes = 1u32 << d;
            let mut size: HashMap<u32, u32> = HashMap::new();
            for x in 1..nodes {
                let p = t.parent[x as usize];
                assert_eq!((x ^ p).count_ones(), 1);
                assert_eq!(p.count_ones() + 1, x.count_ones(), "d={d}: shortest paths");
                *size.entry(t.top[x as usize]).or_default() += 1;
            }
            assert_eq!(size.len() as u32, d);
            let bound = (nodes - 1).div_ceil(d);
            assert!(size.values().all(|&s| s <= bound), "d={d}: {size:?} > {bound}");
        }
    }

    /// §4: both total exchange schedules send every packet along a shortest path, node 0
    /// sending d·2^(d−1) packets, in 2^(d−1) (MLA) and d·2^(d−1) (SLA) slots; under SLA one
    /// packet per slot.
    #[test]
    fn exchange_schedules_are_complete_and_tight() {
        for d in 1..=10 {
            for (s, slots) in [(ExchangeSchedule::mla(d), 1u32 << (d - 1)), (ExchangeSchedule::sla(d), d << (d - 1))] {
                assert_eq!(s.slots, slots);
                assert_eq!(s.at.len() as u32, d << (d - 1));
                let mut per_slot: HashMap<u32, Vec<u32>> = HashMap::new();
                for (&(o, t), &(slot, k)) in &s.at {
                    assert!((t >> (k - 1)) & 1 == 1, "the link corrects a differing bit");
                    assert_ne!(o, t);
                    per_slot.entry(slot).or_default().push(k);
                }
                for ks in per_slot.values() {
                    let mut u = ks.clone();
                    u.sort_unstable();
                    u.dedup();
                    assert_eq!(u.len(), ks.len(), "one packet per link per slot");
                }
            }
            let sla = ExchangeSchedule::sla(d);
            let mut slots: Vec<u32> = sla.at.values().map(|&(s, _)| s).collect();
            slots.sort_unstable();
            slots.dedup();
            assert_eq!(slots.len() as u32, d << (d - 1), "SLA: one transmission per slot");
        }
    }
}
