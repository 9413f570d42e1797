//! The parallel prefix (scan) of the PMNBs: every node's rank and the total, per class.

use super::*;

/// The synchronized parallel prefix of §IV-A phase 1 for up to d classes at once. Class c
/// runs on A_0's prefix tree renamed for A_c (node w → rotl(w, c), dimension l → l + c mod
/// d); in step k < d (up-sweep) virtual node v with lowest one bit k reports its block sum
/// across dimension k, in step d + k (down-sweep) every block start whose level exceeds
/// j = d − 1 − k tells v | 2^j how many active nodes precede it, and the total. So in
/// every step each class uses one dimension and the classes use distinct ones. After 2d
/// steps every node knows its rank (active nodes before it in A_c's order) and the total.
pub struct Scan {
    pub(super) d: u32,
    pub(super) n: usize,
    pub(super) classes: u32,
    /// Packet kinds of the up- and down-sweep.
    pub(super) kinds: (u64, u64),
    pub(super) a: Vec<u8>,
    /// Per (class, node): reports of its children, by virtual dimension.
    pub(super) child: Vec<u32>,
    pub(super) before: Vec<u32>,
    pub(super) total: Vec<u32>,
}

impl Scan {
    pub fn new(d: u32, classes: u32, kinds: (u64, u64)) -> Scan {
        let n = 1usize << d;
        let k = classes as usize * n;
        Scan { d, n, classes, kinds, a: vec![0; k], child: vec![0; k * d as usize], before: vec![0; k], total: vec![0; k] }
    }

    pub(super) fn at(&self, c: u32, u: u32) -> usize {
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
    pub(super) fn block(&self, i: usize, j: u32) -> u32 {
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
