//! The per-node plans of Seidel's algorithms.
//!
//! Plans are written on a *logical* array or mesh whose sides are powers of two, with the
//! source at logical node 0, from the paper's primitives: the spanning-tree broadcast
//! ([`B::bcast`], §3.1.1), the halving distribute (§3.1.1, "distribute"), the dimensional
//! exchange ([`B::exchange`], §3.1.1, nearest first so no permutation is needed) and the
//! bidirectional pair of trees ([`B::bst`], §3.3.1). A logical node is then placed on a
//! physical node: its coordinates XOR the source's (§4), then through the fill (§5).
//! Pieces are the message's 1/P parts; a send carries a set of pieces.

use super::{Alg, Fill, Plan, PlanSend, Setup, words};
use crate::topology::TopologyKind;
use router::NodeId;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug)]
struct LSend {
    step: u32,
    to: usize,
    set: Vec<u64>,
    delay_steps: u32,
    /// A delayed step's length: a send of this many (plan) pieces.
    delay_pieces: u32,
}

/// The plan under construction on the logical grid `l[0] × l[1]` (a linear array: `l[1] = 1`).
struct B {
    l: [usize; 2],
    w: usize,
    /// Pieces as the algorithm counts them; each is `unit` pieces of the plan.
    pieces: u32,
    unit: u32,
    sends: Vec<Vec<LSend>>,
    steps: u32,
    /// A delay (steps, pieces per step) for a node's next send.
    next_delay: HashMap<usize, (u32, u32)>,
}

fn log2(n: usize) -> u32 {
    n.trailing_zeros()
}

impl B {
    fn new(l: [usize; 2], pieces: u32, unit: u32) -> B {
        B { l, w: words(pieces * unit), pieces, unit, sends: vec![Vec::new(); l[0] * l[1]], steps: 0, next_delay: HashMap::new() }
    }
    fn idx(&self, x0: usize, x1: usize) -> usize {
        x0 + self.l[0] * x1
    }
    fn set(&self, pieces: impl IntoIterator<Item = u32>) -> Vec<u64> {
        let mut s = vec![0u64; self.w];
        for p in pieces {
            for q in p * self.unit..(p + 1) * self.unit {
                s[(q / 64) as usize] |= 1 << (q % 64);
            }
        }
        s
    }
    fn range(&self, lo: u32, hi: u32) -> Vec<u64> {
        self.set(lo..hi)
    }
    fn full(&self) -> Vec<u64> {
        self.range(0, self.pieces)
    }
    fn union(a: &[u64], b: &[u64]) -> Vec<u64> {
        a.iter().zip(b).map(|(x, y)| x | y).collect()
    }

    /// `from` sends `set` to `to` in `step` (nothing is ever sent to the source, logical 0,
    /// which holds the whole message from the start).
    fn send(&mut self, step: u32, from: usize, to: usize, set: Vec<u64>, delay_steps: u32) {
        self.steps = self.steps.max(step + 1);
        // A skipped send drops a pending delay with it: the node's next send waits for data anyway.
        let pending = self.next_delay.remove(&from);
        if to == 0 || from == to {
            return;
        }
        let count = |s: &[u64]| s.iter().map(|w| w.count_ones()).sum::<u32>();
        let (delay_steps, delay_pieces) = match pending {
            Some((d, p)) => (d + delay_steps, p),
            None => (delay_steps, count(&set)),
        };
        self.sends[from].push(LSend { step, to, set, delay_steps, delay_pieces });
    }

    /// Spanning-tree broadcast of `set` from `group[0]` over `group` (2^k nodes): in step i
    /// every holder j sends to j + 2^(k-1-i) (§3.1.1). The root's first send waits `delay` steps.
    fn bcast(&mut self, group: &[usize], set: &[u64], step0: u32, delay: u32) {
        let len = group.len();
        debug_assert!(len.is_power_of_two());
        if len == 1 && delay > 0 {
            // Nothing to send on this line: the root's next send (its other axis) waits instead.
            let pieces = set.iter().map(|w| w.count_ones()).sum();
            self.next_delay.insert(group[0], (delay, pieces));
        }
        for i in 0..log2(len) {
            let half = len >> (i + 1);
            for j in (0..len).step_by(2 * half) {
                let d = if i == 0 && j == 0 { delay } else { 0 };
                self.send(step0 + delay + i, group[j], group[j + half], set.to_vec(), d);
            }
        }
    }

    /// Distribute from `group[0]`: `sets[j]` ends at `group[j]`, halving at each step.
    fn distribute(&mut self, group: &[usize], sets: &[Vec<u64>], step0: u32) {
        let len = group.len();
        for i in 0..log2(len) {
            let half = len >> (i + 1);
            for j in (0..len).step_by(2 * half) {
                let mut s = vec![0u64; self.w];
                for t in &sets[j + half..j + 2 * half] {
                    s = B::union(&s, t);
                }
                self.send(step0 + i, group[j], group[j + half], s, 0);
            }
        }
    }

    /// A dimensional exchange over `nodes` (`init[i]` is what `nodes[i]` brings): in step t
    /// every node sends what it has gathered so far to `partner(node, t)`.
    fn exchange(&mut self, nodes: &[usize], init: Vec<Vec<u64>>, steps: u32, step0: u32, partner: impl Fn(usize, u32) -> usize) {
        let pos: HashMap<usize, usize> = nodes.iter().enumerate().map(|(i, &x)| (x, i)).collect();
        let mut acc = init;
        for t in 0..steps {
            let snap = acc.clone();
            for (i, &x) in nodes.iter().enumerate() {
                let p = partner(x, t);
                let pi = pos[&p];
                self.send(step0 + t, x, p, snap[i].clone(), 0);
                acc[pi] = B::union(&acc[pi], &snap[i]);
            }
        }
    }

    /// Bidirectional spanning trees over `group` (§3.3.1): `group[0]` sends `b` to the far
    /// end; `a` goes over the even positions, `b` over the odd ones from the far end; then
    /// neighbours exchange. d + 1 steps for 2^d nodes.
    fn bst(&mut self, group: &[usize], a: &[u64], b: &[u64], step0: u32) {
        let len = group.len();
        let k = log2(len);
        self.send(step0, group[0], group[len - 1], b.to_vec(), 0);
        let even: Vec<usize> = group.iter().step_by(2).copied().collect();
        let odd: Vec<usize> = group.iter().skip(1).step_by(2).rev().copied().collect();
        self.bcast(&even, a, step0 + 1, 0);
        self.bcast(&odd, b, step0 + 1, 0);
        for t in 0..len / 2 {
            self.send(step0 + k, group[2 * t], group[2 * t + 1], a.to_vec(), 0);
            self.send(step0 + k, group[2 * t + 1], group[2 * t], b.to_vec(), 0);
        }
    }

    /// Linear ST on `group` (§3.1.1–3.1.2): ν = 0 one tree; ν > 0 distribute over the first
    /// 2^ν nodes, 2^ν interleaved trees, exchange within each contiguous 2^ν.
    fn linear_st(&mut self, group: &[usize], nu: u32) {
        let k = (1usize << nu).min(group.len());
        if k == 1 {
            let full = self.full();
            self.bcast(group, &full, 0, 0);
            return;
        }
        let per = self.pieces / k as u32;
        let sets: Vec<Vec<u64>> = (0..k as u32).map(|j| self.range(j * per, (j + 1) * per)).collect();
        self.distribute(&group[..k], &sets, 0);
        let d = log2(group.len());
        let kb = log2(k);
        for (i, s) in sets.iter().enumerate() {
            let sub: Vec<usize> = group.iter().skip(i).step_by(k).copied().collect();
            self.bcast(&sub, s, kb, 0);
        }
        let init: Vec<Vec<u64>> = (0..group.len()).map(|x| sets[x % k].clone()).collect();
        let pos: HashMap<usize, usize> = group.iter().enumerate().map(|(i, &x)| (x, i)).collect();
        let g = group.to_vec();
        self.exchange(group, init, kb, d, move |x, t| g[pos[&x] ^ (1 << t)]);
    }

    /// Linear BST on `group` (§3.3.1–3.3.2): distribute over the first 2^ν nodes, a BST on
    /// each interleaved subarray, exchange within each contiguous 2^ν.
    fn linear_bst(&mut self, group: &[usize], nu: u32) {
        let k = 1usize << nu;
        let per = self.pieces / (2 * k as u32);
        let half = |b: &B, j: u32| b.range(j * per, (j + 1) * per);
        let sets: Vec<Vec<u64>> = (0..k as u32).map(|j| B::union(&half(self, 2 * j), &half(self, 2 * j + 1))).collect();
        self.distribute(&group[..k], &sets, 0);
        let d = log2(group.len());
        for i in 0..k {
            let sub: Vec<usize> = group.iter().skip(i).step_by(k).copied().collect();
            let (a, b) = (half(self, 2 * i as u32), half(self, 2 * i as u32 + 1));
            self.bst(&sub, &a, &b, nu);
        }
        let init: Vec<Vec<u64>> = (0..group.len()).map(|x| sets[x % k].clone()).collect();
        let pos: HashMap<usize, usize> = group.iter().enumerate().map(|(i, &x)| (x, i)).collect();
        let g = group.to_vec();
        self.exchange(group, init, nu, d + 1, move |x, t| g[pos[&x] ^ (1 << t)]);
    }

    /// Linear RH (§3.5): distribute one piece per node, then exchange farthest first.
    ///
    /// From source k (§4.4) the distribute runs on node 0's tree XOR-ed with k, contention-
    /// free and as long as from node 0; the exchange pairs {x, x ⊕ 2^j} XOR-ed with k are
    /// the same physical pairs, so the exchange sends the same worms over the same links
    /// from every source (less the d worms into the source, which holds everything). In the
    /// paper's model, with no hop latency and lock-step steps, the cost is therefore the
    /// same from every source. In the simulation it is not, whenever two or more exchange
    /// steps put more worms on a link than it has lanes (2^j > 2^ν for two j: ν <= d − 3).
    /// Logical node x enters the exchange a few cycles after logical node 0 — the hop
    /// latency its piece picked up along the tree, up to 11 cycles on 16 nodes — and sits
    /// at physical x ⊕ k, so the source decides which worm reaches a contended link first.
    /// Contending worms do not share the link, as max(a, 2^j ā) prices them, but cross it
    /// one after another (one lane each); the pairs served first start their next, longer
    /// exchange early, into partners still receiving, where the worm stops and keeps its
    /// circuit. On 16 nodes with ν = 0 the sources cost 0.924 … 1.093 of Table I at 8 KB
    /// and 0.952 … 1.175 at 64 KB (docs/papers.md). With ν >= d − 2 only the first exchange step
    /// contends: the broadcast ends d − 1 contention-free steps after its busiest link has
    /// carried its worms, in whatever order, and every source costs Table I. Both are
    /// derived and checked in `fabric/tests/seidel.rs` (`rh_linear_cycles`).
    fn linear_rh(&mut self, group: &[usize]) {
        let d = log2(group.len());
        let sets: Vec<Vec<u64>> = (0..group.len() as u32).map(|j| self.set([j])).collect();
        self.distribute(group, &sets, 0);
        let pos: HashMap<usize, usize> = group.iter().enumerate().map(|(i, &x)| (x, i)).collect();
        let g = group.to_vec();
        self.exchange(group, sets, d, d, move |x, t| g[pos[&x] ^ (1 << (d - 1 - t))]);
    }

    fn column(&self, x0: usize) -> Vec<usize> {
        (0..self.l[1]).map(|x1| self.idx(x0, x1)).collect()
    }
    fn row(&self, x1: usize) -> Vec<usize> {
        (0..self.l[0]).map(|x0| self.idx(x0, x1)).collect()
    }
    fn all(&self) -> Vec<usize> {
        (0..self.l[0] * self.l[1]).collect()
    }

    /// Exchange within every 2^ν × 2^ν block, nearest first: dimension 0's bits, then
    /// dimension 1's (§3.2.2, collection). `init` gives what a node brings.
    fn block_collect(&mut self, nu: u32, step0: u32, per_block_position: impl Fn(u32) -> Vec<u32>) {
        let nodes = self.all();
        let l0 = self.l[0];
        let k = 1usize << nu;
        let init: Vec<Vec<u64>> = nodes.iter().map(|&x| self.set(per_block_position((x % l0 % k + k * (x / l0 % k)) as u32))).collect();
        self.exchange(&nodes, init, 2 * nu, step0, move |x, t| if t < nu { x ^ (1 << t) } else { x ^ (l0 << (t - nu)) });
    }

    /// Mesh ST, column (dimension 1) then rows (§3.2.1); ν > 0: the five phases of §3.2.2.
    fn mesh_st_simple(&mut self, nu: u32) {
        let k = 1usize << nu;
        let (e0, e1) = (log2(self.l[0]), log2(self.l[1]));
        let kk = k as u32;
        let col = self.column(0);
        let sets: Vec<Vec<u64>> = (0..kk).map(|j| self.range(j * kk, (j + 1) * kk)).collect();
        self.distribute(&col[..k], &sets, 0);
        for (j, s) in sets.iter().enumerate() {
            let sub: Vec<usize> = col.iter().skip(j).step_by(k).copied().collect();
            self.bcast(&sub, s, nu, 0);
        }
        let s3 = nu + e1 - nu;
        for x1 in 0..self.l[1] {
            let row = self.row(x1);
            let j = (x1 % k) as u32;
            let rs: Vec<Vec<u64>> = (0..kk).map(|i| self.set([j * kk + i])).collect();
            self.distribute(&row[..k], &rs, s3);
            for (i, s) in rs.iter().enumerate() {
                let sub: Vec<usize> = row.iter().skip(i).step_by(k).copied().collect();
                self.bcast(&sub, s, s3 + nu, 0);
            }
        }
        let s5 = s3 + nu + e0 - nu;
        self.block_collect(nu, s5, |j| vec![j]);
    }

    /// The "better" mesh ST (§3.2.1, eq. 6) and BST (§3.4.1, eq. 10; §3.4.2): distribute
    /// over the 2^ν × 2^ν corner block, then in each interleaved submesh: a 2 × 2 corner
    /// block (ST) or two at opposite corners (BST), a spanning tree per piece over the four
    /// interleaved sub-submeshes with alternating orientation (checkerboard: even classes
    /// dimension 1 first, odd dimension 0 first; the class starting on the shorter axis
    /// waits |d1 − d2| steps), two neighbour exchanges, and the block collection.
    fn mesh_better(&mut self, nu: u32, bst: bool) {
        let k = 1usize << nu;
        let q = if bst { 8u32 } else { 4 };
        let kk = k as u32;
        // Phase 1: distribute over the corner block, dimension 1 first.
        let col = self.column(0);
        let colsets: Vec<Vec<u64>> = (0..kk).map(|i1| self.range(i1 * kk * q, (i1 + 1) * kk * q)).collect();
        self.distribute(&col[..k], &colsets, 0);
        for i1 in 0..k {
            let row = self.row(i1);
            let rs: Vec<Vec<u64>> = (0..kk).map(|i0| self.range((i0 + kk * i1 as u32) * q, (i0 + kk * i1 as u32 + 1) * q)).collect();
            self.distribute(&row[..k], &rs, nu);
        }
        let s0 = 2 * nu;
        let (sz0, sz1) = (self.l[0] / k, self.l[1] / k);
        let (w0, w1) = (sz0 / 2, sz1 / 2);
        let (ew0, ew1) = (log2(w0), log2(w1));
        let emax = ew0.max(ew1);
        let delta = ew0.abs_diff(ew1);
        let local_steps = if bst { 3 } else { 2 };
        for i1 in 0..k {
            for i0 in 0..k {
                let base = (i0 as u32 + kk * i1 as u32) * q;
                // Node at submesh coordinates (y0, y1).
                let at = |b: &B, y0: usize, y1: usize| b.idx(i0 + k * y0, i1 + k * y1);
                let piece = |b: &B, j: u32| b.set([base + j]);
                // 2 × 2 corner distribution(s).
                let c00 = at(self, 0, 0);
                if bst {
                    let far = at(self, sz0 - 1, sz1 - 1);
                    let odd = self.set((0..4).map(|c| base + 2 * c + 1));
                    self.send(s0, c00, far, odd, 0);
                    // Top-left keeps 2c, bottom-right 2c+1, for class c = z0 + 2 z1.
                    let (c01, far10) = (at(self, 0, 1), at(self, sz0 - 1, sz1 - 2));
                    let s = self.set([base + 4, base + 6]);
                    self.send(s0 + 1, c00, c01, s, 0);
                    let s = self.set([base + 1, base + 3]);
                    self.send(s0 + 1, far, far10, s, 0);
                    let t = [
                        (c00, at(self, 1, 0), 2),
                        (c01, at(self, 1, 1), 6),
                        (far, at(self, sz0 - 2, sz1 - 1), 5),
                        (far10, at(self, sz0 - 2, sz1 - 2), 1),
                    ];
                    for (from, to, p) in t {
                        let s = piece(self, p);
                        self.send(s0 + 2, from, to, s, 0);
                    }
                } else {
                    let c01 = at(self, 0, 1);
                    let s = self.set([base + 2, base + 3]);
                    self.send(s0, c00, c01, s, 0);
                    let s = piece(self, 1);
                    let c10 = at(self, 1, 0);
                    self.send(s0 + 1, c00, c10, s, 0);
                    let s = piece(self, 3);
                    let c11 = at(self, 1, 1);
                    self.send(s0 + 1, c01, c11, s, 0);
                }
                // Spanning trees over the sub-submeshes.
                let s2 = s0 + local_steps;
                for z1 in 0..2 {
                    for z0 in 0..2 {
                        let c = (z0 + 2 * z1) as u32;
                        let dim1_first = (z0 + z1) % 2 == 0;
                        let (e_first, e_second) = if dim1_first { (ew1, ew0) } else { (ew0, ew1) };
                        let delay = if e_first < e_second { delta } else { 0 };
                        let trees: Vec<(bool, u32)> = if bst { vec![(false, 2 * c), (true, 2 * c + 1)] } else { vec![(false, c)] };
                        for (mirror, p) in trees {
                            let node = |b: &B, v0: usize, v1: usize| {
                                let (v0, v1) = if mirror { (w0 - 1 - v0, w1 - 1 - v1) } else { (v0, v1) };
                                at(b, z0 + 2 * v0, z1 + 2 * v1)
                            };
                            let set = piece(self, p);
                            let first: Vec<usize> = if dim1_first {
                                (0..w1).map(|v| node(self, 0, v)).collect()
                            } else {
                                (0..w0).map(|v| node(self, v, 0)).collect()
                            };
                            self.bcast(&first, &set, s2, delay);
                            let sec_len = if dim1_first { w0 } else { w1 };
                            for v in 0..first.len() {
                                let line: Vec<usize> =
                                    (0..sec_len).map(|u| if dim1_first { node(self, u, v) } else { node(self, v, u) }).collect();
                                self.bcast(&line, &set, s2 + delay + e_first, 0);
                            }
                        }
                    }
                }
                // Two neighbour exchanges: dimension 0, then dimension 1. The classes that
                // started on the longer axis finish |d1 - d2| steps early: they wait, as in
                // the paper's lock-step schedule (else they would meet the late classes'
                // last receptions at the same ports).
                let s3 = s2 + 2 * emax;
                let mut nodes = Vec::new();
                let mut init = Vec::new();
                let tree_pieces = self.unit;
                for y1 in 0..sz1 {
                    for y0 in 0..sz0 {
                        let c = (y0 % 2 + 2 * (y1 % 2)) as u32;
                        let dim1_first = (y0 + y1) % 2 == 0;
                        let long_first = if dim1_first { ew1 > ew0 } else { ew0 > ew1 };
                        if long_first {
                            self.next_delay.insert(at(self, y0, y1), (delta, tree_pieces));
                        }
                        nodes.push(at(self, y0, y1));
                        init.push(if bst { self.set([base + 2 * c, base + 2 * c + 1]) } else { piece(self, c) });
                    }
                }
                let l0 = self.l[0];
                self.exchange(&nodes, init, 2, s3, move |x, t| if t == 0 { x ^ k } else { x ^ (l0 * k) });
            }
        }
        let s4 = s0 + local_steps + 2 * emax + 2;
        self.block_collect(nu, s4, |j| (j * q..(j + 1) * q).collect());
    }

    /// Mesh RH (§3.6): column then row distribute (one piece per node), then exchanges:
    /// the longer dimension's extra high bits alone, then bit pairs from the top, with
    /// alternate nodes (checkerboard on bit 0) doing dimension 0 or dimension 1 first.
    fn mesh_rh(&mut self) {
        let (l0, l1) = (self.l[0], self.l[1]);
        let (e0, e1) = (log2(l0), log2(l1));
        let col = self.column(0);
        let cs: Vec<Vec<u64>> = (0..l1).map(|j| self.set((0..l0).map(|x0| (x0 + l0 * j) as u32))).collect();
        self.distribute(&col, &cs, 0);
        for x1 in 0..l1 {
            let row = self.row(x1);
            let rs: Vec<Vec<u64>> = (0..l0).map(|x0| self.set([(x0 + l0 * x1) as u32])).collect();
            self.distribute(&row, &rs, e1);
        }
        let (es, el) = (e0.min(e1), e0.max(e1));
        let long_dim = if e0 >= e1 { 0 } else { 1 };
        let flip = move |x: usize, dim: usize, bit: u32| if dim == 0 { x ^ (1 << bit) } else { x ^ (l0 << bit) };
        let partner = move |x: usize, t: u32| {
            if t < el - es {
                return flip(x, long_dim, el - 1 - t);
            }
            let u = t - (el - es);
            let bit = es - 1 - u / 2;
            let (x0, x1) = (x % l0, x / l0);
            let class = if bit >= 1 { (x0 ^ x1) & 1 } else { 0 };
            let dim = if u.is_multiple_of(2) == (class == 0) { 0 } else { 1 };
            flip(x, dim, bit)
        };
        let nodes = self.all();
        let init: Vec<Vec<u64>> = nodes.iter().map(|&x| self.set([x as u32])).collect();
        self.exchange(&nodes, init, e0 + e1, e0 + e1, partner);
    }
}

/// Per side: logical size and the map from a logical coordinate to a physical one.
fn side_map(n: u32, fill: Fill) -> (usize, Box<dyn Fn(usize) -> u32>) {
    if n.is_power_of_two() {
        return (n as usize, Box::new(|x| x as u32));
    }
    match fill {
        Fill::Virtual => (n.next_power_of_two() as usize, Box::new(move |x| (x as u32).min(n - 1))),
        Fill::Companions => {
            let full = 1u32 << (31 - n.leading_zeros());
            let c = n - full;
            (full as usize, Box::new(move |x| if (x as u32) < c { 2 * x as u32 } else { x as u32 + c }))
        }
        Fill::None => panic!("side {n} is not a power of two and no fill was chosen"),
    }
}

/// Logical coordinate of physical coordinate `p` on a side of `n` (the inverse of `side_map`).
pub fn logical_coord(n: u32, fill: Fill, p: u32) -> Option<u32> {
    if n.is_power_of_two() || fill == Fill::Virtual {
        return Some(p);
    }
    let full = 1u32 << (31 - n.leading_zeros());
    let c = n - full;
    if p < 2 * c { p.is_multiple_of(2).then_some(p / 2) } else { Some(p - c) }
}

/// Piece count an algorithm splits the message into.
pub fn pieces(s: &Setup, l: [usize; 2]) -> u32 {
    let k = 1u32 << s.nu;
    match (s.kind == TopologyKind::Linear, s.alg) {
        (true, Alg::St) => k.min(l[0] as u32),
        (true, Alg::Bst) | (false, Alg::BstSimple) => 2 * k,
        (_, Alg::Rh) => (l[0] * l[1]) as u32,
        (false, Alg::StSimple) => k * k,
        (false, Alg::St) => 4 * k * k,
        (false, Alg::Bst) => 8 * k * k,
        (true, _) => unreachable!("{:?} is a mesh algorithm", s.alg),
    }
}

/// A send placed on a physical node: step, (delay steps, pieces per delayed step), destination, pieces.
type Placed = (u32, (u32, u32), NodeId, Vec<u64>);

/// Build every node's plan.
pub fn build(s: &Setup) -> Plan {
    let mesh = s.kind == TopologyKind::Mesh;
    let (l0, map0) = side_map(s.sizes[0], s.fill);
    let (l1, map1) = if mesh { side_map(s.sizes[1], s.fill) } else { (1, Box::new(|_| 0u32) as Box<dyn Fn(usize) -> u32>) };
    let l = [l0, l1];
    let natural = pieces(s, l);
    // The companions' 2 × 2 BST halves the message: split an unsplit one in two.
    let unit = if s.fill == Fill::Companions && s.companions_bst && natural == 1 { 2 } else { 1 };
    let pieces = natural * unit;
    let mut b = B::new(l, natural, unit);
    match (mesh, s.alg) {
        (false, Alg::St) => b.linear_st(&b.all(), s.nu),
        (false, Alg::Bst) => b.linear_bst(&b.all(), s.nu),
        (_, Alg::Rh) if !mesh => b.linear_rh(&b.all()),
        (true, Alg::Rh) => b.mesh_rh(),
        (true, Alg::StSimple) => b.mesh_st_simple(s.nu),
        (true, Alg::St) => b.mesh_better(s.nu, false),
        (true, Alg::Bst) => b.mesh_better(s.nu, true),
        (true, Alg::BstSimple) => b.linear_bst(&b.all(), s.nu),
        (false, a) => panic!("{a:?} is a mesh algorithm"),
    }
    // Place logical nodes: XOR with the source's logical coordinates, then the fill.
    let n0 = s.sizes[0];
    let (r0, r1) = (s.root.0 % n0, s.root.0 / n0);
    let rl0 = logical_coord(n0, s.fill, r0).expect("the source is a full-size node") as usize;
    let rl1 = if mesh { logical_coord(s.sizes[1], s.fill, r1).expect("the source is a full-size node") as usize } else { 0 };
    let place = |x: usize| -> (u32, u32) { (map0((x % l0) ^ rl0), map1((x / l0) ^ rl1)) };
    let phys = |c: (u32, u32)| NodeId(c.0 + n0 * c.1);
    let nodes = s.sizes.iter().product::<u32>() as usize;
    let mut lsends: Vec<Vec<Placed>> = vec![Vec::new(); nodes];
    let mut seen: HashSet<(u32, u32, Vec<u64>)> = HashSet::new();
    for (x, list) in b.sends.iter().enumerate() {
        let from = phys(place(x));
        for ls in list {
            let to = phys(place(ls.to));
            if to == from || !seen.insert((from.0, to.0, ls.set.clone())) {
                continue;
            }
            lsends[from.idx()].push((ls.step, (ls.delay_steps, ls.delay_pieces), to, ls.set.clone()));
        }
    }
    let mut steps = b.steps;
    // Companions (§5.2): each full-size node passes the whole message on.
    if s.fill == Fill::Companions {
        let comps = |n: u32| n - (1u32 << (31 - n.leading_zeros()));
        let c0 = comps(n0);
        let c1 = if mesh { comps(s.sizes[1]) } else { 0 };
        let full = b.full();
        let bits = |lo: u32, hi: u32| {
            let mut v = vec![0u64; words(pieces)];
            for q in lo..hi {
                v[(q / 64) as usize] |= 1 << (q % 64);
            }
            v
        };
        let half = |lo: bool| if lo { bits(0, pieces / 2) } else { bits(pieces / 2, pieces) };
        for x in 0..l0 * l1 {
            let (p0, p1) = place(x);
            let has0 = p0 < 2 * c0;
            let has1 = mesh && p1 < 2 * c1;
            let me = phys((p0, p1));
            let s0 = steps;
            let mut push = |from: NodeId, to: NodeId, step: u32, set: Vec<u64>| lsends[from.idx()].push((step, (0, 0), to, set));
            match (has0, has1) {
                (false, false) => {}
                (true, false) => push(me, phys((p0 + 1, p1)), s0, full.clone()),
                (false, true) => push(me, phys((p0, p1 + 1)), s0, full.clone()),
                (true, true) if !s.companions_bst => {
                    let down = phys((p0, p1 + 1));
                    push(me, down, s0, full.clone());
                    push(me, phys((p0 + 1, p1)), s0 + 1, full.clone());
                    push(down, phys((p0 + 1, p1 + 1)), s0 + 1, full.clone());
                }
                (true, true) => {
                    // The 2 × 2 block as a linear array (me, right, down, diagonal): BST.
                    let (r, dn, dg) = (phys((p0 + 1, p1)), phys((p0, p1 + 1)), phys((p0 + 1, p1 + 1)));
                    let (a, bb) = (half(true), half(false));
                    push(me, dg, s0, bb.clone());
                    push(me, dn, s0 + 1, a.clone());
                    push(dg, r, s0 + 1, bb.clone());
                    push(me, r, s0 + 2, a.clone());
                    push(dn, dg, s0 + 2, a.clone());
                    push(dg, dn, s0 + 2, bb.clone());
                }
            }
        }
        steps += if c0 > 0 && c1 > 0 {
            if s.companions_bst { 3 } else { 2 }
        } else if c0 + c1 > 0 {
            1
        } else {
            0
        };
    }
    // Sets, flits, delays.
    let mut set_ids: HashMap<Vec<u64>, u32> = HashMap::new();
    let mut plan =
        Plan { pieces, sends: vec![Vec::new(); nodes], sets: Vec::new(), set_flits: Vec::new(), steps, startup_cycles: s.startup_cycles };
    for (n, mut list) in lsends.into_iter().enumerate() {
        list.sort_by_key(|e| e.0);
        for (step, (delay_steps, delay_pieces), to, set) in list {
            let id = *set_ids.entry(set.clone()).or_insert_with(|| {
                let count: u32 = set.iter().map(|w| w.count_ones()).sum();
                let flits = (s.message_flits * count as f64 / pieces as f64 - 1e-9).ceil().max(1.0);
                plan.sets.push(set);
                plan.set_flits.push(flits.min(u16::MAX as f64) as u16);
                plan.sets.len() as u32 - 1
            });
            let step_flits = (s.message_flits * delay_pieces as f64 / pieces as f64 - 1e-9).ceil().max(1.0) as u64;
            plan.sends[n].push(PlanSend { to, set: id, step, delay: delay_steps as u64 * (s.startup_cycles + step_flits) });
        }
    }
    if let Some(first) = plan.sends[s.root.idx()].first_mut() {
        first.delay += s.permute_cycles;
    }
    plan
}
