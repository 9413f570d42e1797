//! The parallel prefix of Stamoulis & Tsitsiklis §2.4 (and Varvarigos & Bertsekas §IV-A,
//! phase 1): every node x learns r_x = Σ_{y ≥ x} a_y, node 0 learns the total K, in 2d
//! steps on a complete binary tree embedded in the d-cube. Up-sweep (d steps): node x whose
//! lowest one bit is at position i sends its block sum (nodes x .. x + 2^(i−1) − 1) across
//! dimension i once its i − 1 children have reported. Down-sweep (d steps): the node at the
//! start of a block of 2^i knows the sum A of everything after the block; it tells the upper
//! half (across dimension i) A, and keeps A + (the upper half's sum) for its own half.
//!
//! A prefix step lasts t_p slots (`step` cycles) and starts at a multiple of `step` from
//! cycle 0; a node sends what a step asks of it when the step starts. Prefix packets carry
//! one count, so they are short: [`packet_flits`] long, never longer than a data packet. A
//! step of t_p ≤ 1 slot is the transmission of such a packet (the paper's model, §IV-A:
//! "small packets … require only t_p time units to be transmitted over a link"); a longer
//! step is the packet's transmission and then waiting for the step's end (per-step
//! processing). So a prefix packet fits any buffer a data packet fits, and a link carries
//! at most one per step.
//!
//! The component is driven by the algorithm that embeds it, which tags the packets with
//! [`PREFIX_UP`] and [`PREFIX_DOWN`] in the high bits of `aux` and calls [`Prefix::flush`]
//! from its timer.

use crate::program::{Dest, NodeCtx, Send};
use router::NodeId;

/// Flits of a prefix packet when a step lasts `step_cycles` and a data packet is
/// `packet_flits` long: the step's length up to one slot, a slot's worth beyond it.
pub fn packet_flits(step_cycles: u64, packet_flits: u16) -> u16 {
    step_cycles.clamp(1, packet_flits.max(1) as u64) as u16
}

/// Packet kinds, in bits 28..32 of `aux`; the value travels in bits 0..28.
pub const PREFIX_UP: u32 = 1;
pub const PREFIX_DOWN: u32 = 2;
pub const KIND_SHIFT: u32 = 28;
pub const VALUE_MASK: u32 = (1 << KIND_SHIFT) - 1;

pub fn tag(kind: u32, value: u32) -> u64 {
    debug_assert!(value <= VALUE_MASK && kind < 16);
    ((kind << KIND_SHIFT) | value) as u64
}
pub fn kind(aux: u64) -> u32 {
    (aux as u32) >> KIND_SHIFT
}
pub fn value(aux: u64) -> u32 {
    aux as u32 & VALUE_MASK
}

/// What a node learned from a prefix packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learned {
    Nothing,
    /// This node's r_x.
    Rank(u32),
    /// Node 0 learned the total K (it learns its rank r_0 = K at the same time).
    Total(u32),
}

pub struct Prefix {
    d: u32,
    /// Cycles per step.
    step: u64,
    flits: u16,
    a: Vec<u32>,
    sum: Vec<u32>,
    got: Vec<u8>,
    /// Per node and dimension: the block sum its child across that dimension reported.
    upper: Vec<u32>,
    /// Per node: packets waiting for the start of their step.
    pending: Vec<Vec<Due>>,
}

/// A prefix packet to send at cycle `at`.
#[derive(Clone, Copy, Debug)]
struct Due {
    at: u64,
    to: u32,
    aux: u64,
    msg: u32,
}

impl Prefix {
    /// `a[x]` is node x's input; a step lasts `step` cycles (at least 1), its packets are
    /// `flits` long (at most `step`).
    pub fn new(d: u32, a: Vec<u32>, step: u64, flits: u16) -> Prefix {
        assert!(step >= 1 && (1..=step).contains(&(flits as u64)), "a prefix step of {step} cycles cannot carry a {flits}-flit packet");
        let n = 1usize << d;
        Prefix { d, step, flits, sum: a.clone(), a, got: vec![0; n], upper: vec![0; n * d as usize], pending: vec![Vec::new(); n] }
    }

    /// Cycles per step.
    pub fn step_cycles(&self) -> u64 {
        self.step
    }

    /// Flits of a prefix packet.
    pub fn packet_flits(&self) -> u16 {
        self.flits
    }

    fn children(&self, x: u32) -> u32 {
        if x == 0 { self.d } else { x.trailing_zeros() }
    }

    /// Send at the start of step `s` (now if it has begun).
    pub fn send_at_step(&mut self, cx: &mut NodeCtx<'_>, s: u64, to: u32, aux: u64, msg: u32) {
        self.send_at(cx, s * self.step, to, aux, msg);
    }

    /// Send at the start of the next step (now if one starts now).
    fn send(&mut self, cx: &mut NodeCtx<'_>, to: u32, aux: u64, msg: u32) {
        let at = cx.now.div_ceil(self.step) * self.step;
        self.send_at(cx, at, to, aux, msg);
    }

    fn send_at(&mut self, cx: &mut NodeCtx<'_>, at: u64, to: u32, aux: u64, msg: u32) {
        if at <= cx.now {
            cx.send(Send { dest: Dest::Node(NodeId(to)), msg, aux, key: 0, flits: self.flits });
        } else {
            self.pending[cx.node.idx()].push(Due { at, to, aux, msg });
            cx.wake_at(at);
        }
    }

    /// The embedding program's timer: send the packets whose step has started.
    pub fn flush(&mut self, cx: &mut NodeCtx<'_>) {
        let x = cx.node.idx();
        let mut i = 0;
        while i < self.pending[x].len() {
            let p = self.pending[x][i];
            if p.at <= cx.now {
                self.pending[x].swap_remove(i);
                cx.send(Send { dest: Dest::Node(NodeId(p.to)), msg: p.msg, aux: p.aux, key: 0, flits: self.flits });
            } else {
                i += 1;
            }
        }
    }

    /// Cycle 0 at node x: leaves report at once. `msg` is put in the packets (unused).
    pub fn start(&mut self, cx: &mut NodeCtx<'_>, msg: u32) -> Learned {
        let x = cx.node.0;
        if self.children(x) == 0 {
            return self.report(cx, msg);
        }
        Learned::Nothing
    }

    fn report(&mut self, cx: &mut NodeCtx<'_>, msg: u32) -> Learned {
        let x = cx.node.0;
        if x == 0 {
            let k = self.sum[0];
            return match self.down(cx, 0, self.d, 0, msg) {
                Learned::Rank(_) => Learned::Total(k),
                other => other,
            };
        }
        let i = x.trailing_zeros();
        self.send(cx, x ^ (1 << i), tag(PREFIX_UP, self.sum[x as usize]), msg);
        Learned::Nothing
    }

    /// Node x starts the down-sweep for its block of 2^level, everything after it summing to `after`.
    fn down(&mut self, cx: &mut NodeCtx<'_>, x: u32, level: u32, mut after: u32, msg: u32) -> Learned {
        for i in (1..=level).rev() {
            self.send(cx, x | (1 << (i - 1)), tag(PREFIX_DOWN, after), msg);
            after += self.upper[x as usize * self.d as usize + i as usize - 1];
        }
        Learned::Rank(after + self.a[x as usize])
    }

    /// A prefix packet arrived at node x from `src`.
    pub fn receive(&mut self, cx: &mut NodeCtx<'_>, src: u32, aux: u64, msg: u32) -> Learned {
        let x = cx.node.0;
        let dim = (src ^ x).trailing_zeros();
        let v = value(aux);
        match kind(aux) {
            PREFIX_UP => {
                self.upper[x as usize * self.d as usize + dim as usize] = v;
                self.sum[x as usize] += v;
                self.got[x as usize] += 1;
                if self.got[x as usize] as u32 == self.children(x) { self.report(cx, msg) } else { Learned::Nothing }
            }
            PREFIX_DOWN => self.down(cx, x, dim, v, msg),
            k => unreachable!("prefix packet of kind {k}"),
        }
    }
}
