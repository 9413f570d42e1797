//! Network interfaces: the node's gateway to its router.
//!
//! The port model is the number of NIC channels: `one` = one injection and one ejection
//! channel (one send and one receive at a time), `all` = one per network port, `K` = K of
//! each. A channel moves one flit per cycle (the gateway rate; links move 2^ν). Packets
//! wait in the node's memory in one queue per first-hop output port, each ordered by
//! priority key then submission; an idle channel starts the best queued packet whose first
//! hop no other channel of the node is feeding (all-port: channel i serves port i), after
//! the software start-up cost and the internal copy cost.

use crate::packet::{Packet, PacketTable};
use router::{Flit, NONE, NodeId, PacketId, Routers};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A packet waiting in the node's memory: its place in the order (priority key in the
/// high 24 bits, submission number below) and its header in the NIC's slab. Its
/// packet-table slot is taken only when a channel starts sending it, so the header is fresh
/// in cache for route computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Queued {
    order: u64,
    slab: u32,
    extra: u32,
}

impl Queued {
    fn key(&self) -> u32 {
        (self.order >> 40) as u32
    }
}

/// Packets waiting for one output port, served smallest (key, submission) first. Packets
/// whose keys arrive in non-decreasing order (the common case) go to a plain FIFO; the rest
/// to a heap.
#[derive(Clone, Debug, Default)]
struct SendQueue {
    fifo: VecDeque<Queued>,
    heap: BinaryHeap<Reverse<Queued>>,
}

impl SendQueue {
    fn push(&mut self, q: Queued) {
        if self.fifo.back().is_none_or(|b| b.key() <= q.key()) {
            self.fifo.push_back(q);
        } else {
            self.heap.push(Reverse(q));
        }
    }
    fn peek(&self) -> Option<&Queued> {
        match (self.fifo.front(), self.heap.peek()) {
            (Some(a), Some(Reverse(b))) => Some(if a.order <= b.order { a } else { b }),
            (Some(a), None) => Some(a),
            (None, Some(Reverse(b))) => Some(b),
            (None, None) => None,
        }
    }
    fn pop(&mut self) -> Option<Queued> {
        match (self.fifo.front(), self.heap.peek()) {
            (Some(a), Some(Reverse(b))) if b.order < a.order => self.heap.pop().map(|r| r.0),
            (Some(_), _) => self.fifo.pop_front(),
            (None, _) => self.heap.pop().map(|r| r.0),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct InjChannel {
    packet: u32,
    seq: u16,
    len: u16,
    start_at: u64,
    port: u8,
}

const IDLE: InjChannel = InjChannel { packet: NONE, seq: 0, len: 0, start_at: 0, port: 0 };

#[derive(Clone, Copy, Debug)]
struct EjChannel {
    packet: u32,
    next: u16,
}

/// The NICs of all nodes.
#[derive(Clone, Debug)]
pub struct Nics {
    k: usize,
    net: usize,
    voq: Vec<SendQueue>,
    queued: Vec<u32>,
    seq: Vec<u64>,
    /// Headers of queued packets, and free slab slots.
    slab: Vec<Packet>,
    free: Vec<u32>,
    /// Per node: bit p set when the queue of port p is not empty; ports being fed by a
    /// channel; channels streaming a packet.
    nonempty: Vec<u64>,
    claimed: Vec<u64>,
    streaming: Vec<u64>,
    inj: Vec<InjChannel>,
    ej: Vec<EjChannel>,
    /// Software start-up cost per message, cycles.
    pub startup_cycles: u64,
    /// Internal copy cost per flit, cycles.
    pub copy_cycles_per_flit: u64,
    /// The most packets any node has had queued.
    pub max_queue: u32,
}

impl Nics {
    pub fn new(nodes: usize, net_ports: usize, channels: usize, startup_cycles: u64, copy_cycles_per_flit: u64) -> Nics {
        Nics {
            k: channels,
            net: net_ports,
            voq: vec![SendQueue::default(); nodes * net_ports],
            queued: vec![0; nodes],
            seq: vec![0; nodes],
            slab: Vec::new(),
            free: Vec::new(),
            nonempty: vec![0; nodes],
            claimed: vec![0; nodes],
            streaming: vec![0; nodes],
            inj: vec![IDLE; nodes * channels],
            ej: vec![EjChannel { packet: NONE, next: 0 }; nodes * channels],
            startup_cycles,
            copy_cycles_per_flit,
            max_queue: 0,
        }
    }

    pub fn bytes_per_node(net_ports: usize, channels: usize) -> usize {
        net_ports * std::mem::size_of::<SendQueue>() + 36 + channels * 24 + 64
    }

    /// Take the NICs of nodes `nodes` from `other`, a copy of these NICs that ran them (a
    /// part of a fabric split between threads). Their queued packets come along; packets
    /// already started refer to `other`'s packet table.
    pub(crate) fn copy_nodes_from(&mut self, other: &Nics, nodes: std::ops::Range<usize>) {
        for n in nodes.clone() {
            for q in n * self.net..(n + 1) * self.net {
                let mut voq = other.voq[q].clone();
                for e in voq.fifo.iter_mut() {
                    e.slab = self.adopt(other.slab[e.slab as usize]);
                }
                let heap: Vec<_> =
                    voq.heap.drain().map(|Reverse(e)| Reverse(Queued { slab: self.adopt(other.slab[e.slab as usize]), ..e })).collect();
                voq.heap = heap.into();
                self.voq[q] = voq;
            }
        }
        let k = self.k;
        self.queued[nodes.clone()].copy_from_slice(&other.queued[nodes.clone()]);
        self.seq[nodes.clone()].copy_from_slice(&other.seq[nodes.clone()]);
        self.nonempty[nodes.clone()].copy_from_slice(&other.nonempty[nodes.clone()]);
        self.claimed[nodes.clone()].copy_from_slice(&other.claimed[nodes.clone()]);
        self.streaming[nodes.clone()].copy_from_slice(&other.streaming[nodes.clone()]);
        self.inj[nodes.start * k..nodes.end * k].copy_from_slice(&other.inj[nodes.start * k..nodes.end * k]);
        self.ej[nodes.start * k..nodes.end * k].copy_from_slice(&other.ej[nodes.start * k..nodes.end * k]);
        self.max_queue = self.max_queue.max(other.max_queue);
    }

    /// A slab slot for a packet header.
    fn adopt(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = p;
                i
            }
            None => {
                self.slab.push(p);
                self.slab.len() as u32 - 1
            }
        }
    }

    /// Queue packet `p` at node `n`, to leave on network port `first_hop`.
    pub fn enqueue(&mut self, n: NodeId, p: Packet, first_hop: usize, copy_flits: u32) {
        let s = self.seq[n.idx()];
        self.seq[n.idx()] += 1;
        debug_assert!(s < 1 << 40, "more than 2^40 packets queued at one node");
        let extra = (copy_flits as u64 * self.copy_cycles_per_flit).min(u32::MAX as u64) as u32;
        let slab = self.adopt(p);
        let order = ((p.key() as u64) << 40) | (s & ((1 << 40) - 1));
        self.voq[n.idx() * self.net + first_hop].push(Queued { order, slab, extra });
        self.nonempty[n.idx()] |= 1 << first_hop;
        self.queued[n.idx()] += 1;
        self.max_queue = self.max_queue.max(self.queued[n.idx()]);
    }

    /// Packets waiting in node `n`'s memory (not yet started on a channel).
    pub fn queued(&self, n: NodeId) -> u32 {
        self.queued[n.idx()]
    }

    /// Does node `n`'s NIC have something to do in cycle `t`? If not, the earliest cycle it will.
    pub fn work(&self, n: NodeId, t: u64) -> (bool, Option<u64>) {
        let i = n.idx();
        let streaming = self.streaming[i];
        if streaming == 0 {
            return (self.queued[i] > 0, None);
        }
        let mut next: Option<u64> = None;
        let mut s = streaming;
        while s != 0 {
            let ch = s.trailing_zeros() as usize;
            s &= s - 1;
            let at = self.inj[i * self.k + ch].start_at;
            if at <= t {
                return (true, None);
            }
            next = Some(next.map_or(at, |x| x.min(at)));
        }
        let idle = streaming != self.all_channels();
        if idle && self.queued[i] > 0 && self.nonempty[i] & !self.claimed[i] != 0 {
            return (true, None);
        }
        (false, next)
    }

    /// The set of all channel bits.
    #[inline(always)]
    fn all_channels(&self) -> u64 {
        if self.k >= 64 { !0 } else { (1u64 << self.k) - 1 }
    }

    /// Is any channel of node `n` busy or any packet queued?
    #[inline(always)]
    pub fn busy(&self, n: NodeId) -> bool {
        self.queued[n.idx()] > 0 || self.streaming[n.idx()] != 0
    }

    /// Start packets on idle channels and stream one flit per channel into the router.
    /// The flits injected (node, channel, flit) are appended to `log`.
    pub fn inject(&mut self, n: NodeId, t: u64, routers: &mut Routers, packets: &mut PacketTable, log: &mut Vec<(NodeId, u8, Flit)>) {
        let i = n.idx();
        if self.streaming[i] == 0 && self.queued[i] == 0 {
            return;
        }
        let base = i * self.k;
        // The channels that may act: those streaming, and idle ones that may start a packet
        // (all-port: channel i feeds only port i), in channel order.
        let mut chans = self.streaming[i];
        if self.queued[i] > 0 {
            chans |= if self.k == self.net { self.nonempty[i] & !self.claimed[i] } else { self.all_channels() };
        }
        while chans != 0 {
            let ch = chans.trailing_zeros() as usize;
            chans &= chans - 1;
            if self.streaming[i] & (1 << ch) == 0 {
                if self.queued[i] == 0 {
                    continue;
                }
                self.start_next(n, ch, t, packets);
                if self.streaming[i] & (1 << ch) == 0 {
                    continue;
                }
            }
            let c = &mut self.inj[base + ch];
            if c.start_at > t || !routers.injection_has_room(n, ch) {
                continue;
            }
            let flit = Flit::of(PacketId(c.packet), c.seq, c.len);
            let ok = routers.inject(n, ch, flit, t);
            debug_assert!(ok);
            log.push((n, ch as u8, flit));
            c.seq += 1;
            if c.seq == c.len {
                self.claimed[i] &= !(1 << c.port);
                self.streaming[i] &= !(1 << ch);
                *c = IDLE;
            }
        }
    }

    fn start_next(&mut self, n: NodeId, ch: usize, t: u64, packets: &mut PacketTable) {
        let i = n.idx();
        let mut free = self.nonempty[i] & !self.claimed[i];
        if self.k == self.net {
            free &= 1 << ch;
        }
        let mut best: Option<(Queued, usize)> = None;
        while free != 0 {
            let port = free.trailing_zeros() as usize;
            free &= free - 1;
            if let Some(q) = self.voq[i * self.net + port].peek()
                && best.is_none_or(|(b, _)| q.order < b.order)
            {
                best = Some((*q, port));
            }
        }
        let Some((q, port)) = best else { return };
        let voq = &mut self.voq[i * self.net + port];
        voq.pop();
        match voq.peek() {
            // The header this queue will start next: bring it in now (its slab slot is
            // rarely still in cache by then).
            Some(next) => prefetch(&self.slab[next.slab as usize]),
            None => self.nonempty[i] &= !(1 << port),
        }
        self.queued[i] -= 1;
        self.claimed[i] |= 1 << port;
        self.streaming[i] |= 1 << ch;
        let packet = self.slab[q.slab as usize];
        self.free.push(q.slab);
        let len = packet.flits();
        let pid = packets.alloc(packet);
        self.inj[i * self.k + ch] =
            InjChannel { packet: pid.0, seq: 0, len, start_at: t + self.startup_cycles + q.extra as u64, port: port as u8 };
    }

    /// A flit ejected to node `n` on channel `ch`; returns the packet when its tail completes it.
    pub fn receive(&mut self, n: NodeId, ch: u8, flit: Flit) -> Option<PacketId> {
        let e = &mut self.ej[n.idx() * self.k + ch as usize];
        if flit.is_head() {
            assert!(
                e.packet == NONE,
                "NIC {n} ejection channel {ch}: head of packet {} while packet {} is incomplete",
                flit.packet,
                e.packet
            );
            e.packet = flit.packet.0;
            e.next = 0;
        }
        assert!(
            e.packet == flit.packet.0 && e.next == flit.seq,
            "NIC {n} ejection channel {ch}: flit {:?} out of order (expected packet {} flit {})",
            flit,
            e.packet,
            e.next
        );
        e.next += 1;
        if flit.is_tail() {
            e.packet = NONE;
            Some(flit.packet)
        } else {
            None
        }
    }
}

/// Hint the CPU to load `x`'s cache line (x86-64; a no-op elsewhere).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not change memory.
    unsafe {
        std::arch::x86_64::_mm_prefetch(x as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
