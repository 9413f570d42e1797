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

/// The injection buffers a NIC writes into: the routers' injection channels, as the kernel
/// evaluating them sees them.
pub trait InjectionPorts {
    /// Write a flit into injection channel `ch` of router `n` in cycle `t`; false (and
    /// nothing written) when full.
    fn write(&mut self, n: NodeId, ch: usize, flit: Flit, t: u64) -> bool;
}

impl InjectionPorts for Routers {
    #[inline]
    fn write(&mut self, n: NodeId, ch: usize, flit: Flit, t: u64) -> bool {
        self.inject(n, ch, flit, t)
    }
}

/// A packet waiting in the node's memory: its place in the order (priority key in the
/// high 24 bits, submission number below) and its header, kept in the queue itself so that
/// the queue's front is one cache line. Its packet-table slot is taken only when a channel
/// starts sending it, so the header is fresh in cache for route computation.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Queued {
    order: u64,
    packet: Packet,
}

impl Queued {
    fn key(&self) -> u32 {
        (self.order >> 40) as u32
    }
}

impl PartialEq for Queued {
    fn eq(&self, o: &Queued) -> bool {
        self.order == o.order
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Queued) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
/// Ordered by place alone (a node's submission numbers are unique).
impl Ord for Queued {
    fn cmp(&self, o: &Queued) -> std::cmp::Ordering {
        self.order.cmp(&o.order)
    }
}

/// Packets waiting for one output port, served smallest (key, submission) first. Packets
/// whose keys arrive in non-decreasing order (the common case) go to a plain FIFO; the rest
/// to a heap. The key of the FIFO's last packet is kept here, so queueing a packet does not
/// read the FIFO's back (usually out of cache when queues are long).
#[derive(Clone, Debug, Default)]
struct SendQueue {
    fifo: VecDeque<Queued>,
    heap: BinaryHeap<Reverse<Queued>>,
    last_key: u32,
}

impl SendQueue {
    fn push(&mut self, q: Queued) {
        if self.fifo.is_empty() || self.last_key <= q.key() {
            self.last_key = q.key();
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

/// What a NIC did in one cycle's injection.
#[derive(Clone, Copy, Debug)]
pub struct Injected {
    /// Flits written into the router.
    pub flits: u32,
    /// [`Nics::next_work`] from the next cycle.
    pub next: Option<u64>,
}

/// What a node's NIC keeps beside its queues and channels, in one place: read at every
/// visit of the kernel.
#[derive(Clone, Copy, Debug, Default)]
struct NodeNic {
    /// Bit p set when the queue of port p is not empty; ports being fed by a channel;
    /// channels streaming a packet.
    nonempty: u64,
    claimed: u64,
    streaming: u64,
    /// Packets submitted so far (the next one's submission number).
    seq: u64,
    /// Packets waiting in the node's memory (not yet started on a channel).
    queued: u32,
}

/// The NICs of all nodes.
#[derive(Clone, Debug)]
pub struct Nics {
    k: usize,
    net: usize,
    /// The set of all channel bits.
    all_channels: u64,
    /// Prefetch the queues of the nodes ahead ([`Nics::prefetch_ahead`])?
    prefetch: bool,
    voq: Vec<SendQueue>,
    node: Vec<NodeNic>,
    inj: Vec<InjChannel>,
    /// Per ejection channel and VC, the packet being reassembled.
    ej: Vec<EjChannel>,
    /// Ejection VCs per channel.
    ejv: usize,
    /// Software start-up cost per message, cycles.
    pub startup_cycles: u64,
    /// Internal copy cost per flit, cycles.
    pub copy_cycles_per_flit: u64,
    /// The most packets any node has had queued.
    pub max_queue: u32,
}

/// How many node ids ahead of an injecting node its NIC prefetches queue fronts.
const PREFETCH_AHEAD: usize = 4;
/// Fabrics of more nodes than this prefetch (smaller ones stay in the caches).
const PREFETCH_FROM: usize = 128;

impl Nics {
    pub fn new(
        nodes: usize,
        net_ports: usize,
        channels: usize,
        ejection_vcs: usize,
        startup_cycles: u64,
        copy_cycles_per_flit: u64,
    ) -> Nics {
        Nics {
            k: channels,
            net: net_ports,
            all_channels: if channels >= 64 { !0 } else { (1u64 << channels) - 1 },
            prefetch: nodes > PREFETCH_FROM,
            voq: vec![SendQueue::default(); nodes * net_ports],
            node: vec![NodeNic::default(); nodes],
            inj: vec![IDLE; nodes * channels],
            ej: vec![EjChannel { packet: NONE, next: 0 }; nodes * channels * ejection_vcs],
            ejv: ejection_vcs,
            startup_cycles,
            copy_cycles_per_flit,
            max_queue: 0,
        }
    }

    pub fn bytes_per_node(net_ports: usize, channels: usize) -> usize {
        net_ports * std::mem::size_of::<SendQueue>() + std::mem::size_of::<NodeNic>() + channels * 24 + 64
    }

    /// Take the NICs of nodes `nodes` from `other`, a copy of these NICs that ran them (a
    /// part of a fabric split between threads). Their queued packets come along; packets
    /// already started refer to `other`'s packet table.
    pub(crate) fn copy_nodes_from(&mut self, other: &Nics, nodes: std::ops::Range<usize>) {
        for n in nodes.clone() {
            for q in n * self.net..(n + 1) * self.net {
                self.voq[q] = other.voq[q].clone();
            }
        }
        let k = self.k;
        self.node[nodes.clone()].copy_from_slice(&other.node[nodes.clone()]);
        self.inj[nodes.start * k..nodes.end * k].copy_from_slice(&other.inj[nodes.start * k..nodes.end * k]);
        let e = k * self.ejv;
        self.ej[nodes.start * e..nodes.end * e].copy_from_slice(&other.ej[nodes.start * e..nodes.end * e]);
        self.max_queue = self.max_queue.max(other.max_queue);
    }

    /// Queue packet `p` at node `n`, to leave on network port `first_hop`.
    pub fn enqueue(&mut self, n: NodeId, p: Packet, first_hop: usize) {
        let st = &mut self.node[n.idx()];
        let s = st.seq;
        st.seq += 1;
        debug_assert!(s < 1 << 40, "more than 2^40 packets queued at one node");
        st.nonempty |= 1 << first_hop;
        st.queued += 1;
        self.max_queue = self.max_queue.max(st.queued);
        let order = ((p.key() as u64) << 40) | (s & ((1 << 40) - 1));
        self.voq[n.idx() * self.net + first_hop].push(Queued { order, packet: p });
    }

    /// Bring into cache what node `i + PREFETCH_AHEAD` will read first when it starts a
    /// packet (its queues' fronts) and, further ahead, where node `i + 2 * PREFETCH_AHEAD`
    /// keeps its queues. With long queues (every node broadcasting) these are far out of
    /// cache by the time a channel reads them; the kernel evaluates large fabrics in node
    /// order, so the nodes ahead come next.
    #[inline(always)]
    fn prefetch_ahead(&self, i: usize) {
        let far = i + 2 * PREFETCH_AHEAD;
        if far < self.node.len() {
            let mut ports = self.node[far].nonempty & !self.node[far].claimed;
            while ports != 0 {
                let port = ports.trailing_zeros() as usize;
                ports &= ports - 1;
                prefetch(&self.voq[far * self.net + port]);
            }
        }
        let near = i + PREFETCH_AHEAD;
        if near < self.node.len() && self.node[near].queued > 0 {
            let mut ports = self.node[near].nonempty & !self.node[near].claimed;
            while ports != 0 {
                let port = ports.trailing_zeros() as usize;
                ports &= ports - 1;
                if let Some(q) = self.voq[near * self.net + port].fifo.front() {
                    prefetch(q);
                }
            }
        }
    }

    /// Packets waiting in node `n`'s memory (not yet started on a channel).
    pub fn queued(&self, n: NodeId) -> u32 {
        self.node[n.idx()].queued
    }

    /// The first cycle from `t` on in which node `n`'s NIC has something to do: `t` itself,
    /// or the end of a start-up cost it waits out; None if nothing until a packet is queued.
    pub fn next_work(&self, n: NodeId, t: u64) -> Option<u64> {
        let i = n.idx();
        let mut start = u64::MAX;
        let mut s = self.node[i].streaming;
        while s != 0 {
            let ch = s.trailing_zeros() as usize;
            s &= s - 1;
            start = start.min(self.inj[i * self.k + ch].start_at);
        }
        self.next_from(&self.node[i], start, t)
    }

    /// [`Nics::next_work`] of a node in state `st`, whose streaming channels' earliest start
    /// is `start` (`u64::MAX` if none streams). A node that streams nothing has no port
    /// claimed, and has packets queued exactly when some port queue is not empty.
    #[inline(always)]
    fn next_from(&self, st: &NodeNic, start: u64, t: u64) -> Option<u64> {
        if start <= t {
            return Some(t);
        }
        // An idle channel, and a queued packet for a port no channel feeds?
        let idle = st.streaming != self.all_channels;
        if idle && st.queued > 0 && st.nonempty & !st.claimed != 0 { Some(t) } else { (st.streaming != 0).then_some(start) }
    }

    /// Is any channel of node `n` busy or any packet queued?
    #[inline(always)]
    pub fn busy(&self, n: NodeId) -> bool {
        let st = &self.node[n.idx()];
        st.queued > 0 || st.streaming != 0
    }

    /// Start packets on idle channels and stream one flit per channel into the router.
    /// With a `log`, the flits injected are appended to it (node, channel, flit).
    pub fn inject<I: InjectionPorts>(
        &mut self,
        n: NodeId,
        t: u64,
        routers: &mut I,
        packets: &mut PacketTable,
        mut log: Option<&mut Vec<(NodeId, u8, Flit)>>,
    ) -> Injected {
        let i = n.idx();
        let st = self.node[i];
        if st.streaming == 0 && st.queued == 0 {
            return Injected { flits: 0, next: None };
        }
        if self.prefetch {
            self.prefetch_ahead(i);
        }
        let base = i * self.k;
        let mut written = 0;
        // The earliest start of the channels streaming after this cycle's flit.
        let mut start = u64::MAX;
        // The channels that may act: those streaming, and idle ones that may start a packet
        // (all-port: channel i feeds only port i), in channel order.
        let mut chans = st.streaming;
        if st.queued > 0 {
            chans |= if self.k == self.net { st.nonempty & !st.claimed } else { self.all_channels };
        }
        while chans != 0 {
            let ch = chans.trailing_zeros() as usize;
            chans &= chans - 1;
            if st.streaming & (1 << ch) == 0 && !self.start_next(i, ch, t, packets) {
                continue;
            }
            let c = &mut self.inj[base + ch];
            if c.start_at <= t {
                let flit = Flit::of(PacketId(c.packet), c.seq, c.len);
                if routers.write(n, ch, flit, t) {
                    written += 1;
                    if let Some(log) = log.as_deref_mut() {
                        log.push((n, ch as u8, flit));
                    }
                    c.seq += 1;
                    if c.seq == c.len {
                        let st = &mut self.node[i];
                        st.claimed &= !(1 << c.port);
                        st.streaming &= !(1 << ch);
                        *c = IDLE;
                        continue;
                    }
                }
            }
            start = start.min(c.start_at);
        }
        Injected { flits: written, next: self.next_from(&self.node[i], start, t + 1) }
    }

    /// Start the best packet node `i` may send on idle channel `ch`, if it has one.
    fn start_next(&mut self, i: usize, ch: usize, t: u64, packets: &mut PacketTable) -> bool {
        let st = &mut self.node[i];
        let mut free = st.nonempty & !st.claimed;
        if self.k == self.net {
            free &= 1 << ch;
        }
        let mut best: Option<(u64, usize)> = None;
        while free != 0 {
            let port = free.trailing_zeros() as usize;
            free &= free - 1;
            if let Some(q) = self.voq[i * self.net + port].peek()
                && best.is_none_or(|(b, _)| q.order < b)
            {
                best = Some((q.order, port));
            }
        }
        let Some((_, port)) = best else { return false };
        let voq = &mut self.voq[i * self.net + port];
        let Some(&Queued { packet, .. }) = voq.peek() else { unreachable!("port {port} of node {i} chosen with an empty queue") };
        voq.pop();
        if voq.peek().is_none() {
            st.nonempty &= !(1 << port);
        }
        st.queued -= 1;
        st.claimed |= 1 << port;
        st.streaming |= 1 << ch;
        let len = packet.flits();
        let pid = packets.alloc(packet);
        // The software start-up, then the copy of every flit into the send buffer.
        let start_at = t + self.startup_cycles + self.copy_cycles_per_flit * len as u64;
        self.inj[i * self.k + ch] = InjChannel { packet: pid.0, seq: 0, len, start_at, port: port as u8 };
        true
    }

    /// A flit ejected to node `n` on channel `ch` from the packet holding its ejection VC
    /// `vc`; returns the packet when its tail completes it.
    #[inline]
    pub fn receive(&mut self, n: NodeId, ch: u8, vc: u8, flit: Flit) -> Option<PacketId> {
        let e = &mut self.ej[(n.idx() * self.k + ch as usize) * self.ejv + vc as usize];
        if flit.is_head() {
            assert!(
                e.packet == NONE,
                "NIC {n} ejection channel {ch} VC {vc}: head of packet {} while packet {} is incomplete",
                flit.packet,
                e.packet
            );
            e.packet = flit.packet.0;
            e.next = 0;
        }
        assert!(
            e.packet == flit.packet.0 && e.next == flit.seq,
            "NIC {n} ejection channel {ch} VC {vc}: flit {:?} out of order (expected packet {} flit {})",
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

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary_int::u24;
    use router::{Header, RouteKind};

    fn packet(key: u32, msg: u32) -> Packet {
        let header = Header { kind: RouteKind::Unicast, src: u24::new(0), dest: u24::new(1), key: u24::new(key), len: 1, span: 0 };
        Packet { header, msg, aux: 0, birth: 0, remaining: 1, seen: NONE }
    }

    proptest::proptest! {
        /// Whatever order keys are queued in (runs of non-decreasing keys to the FIFO, the
        /// rest to the heap), a node's port queue starts packets by smallest key, then
        /// earliest submission; pops interleaved with pushes see the same order among the
        /// packets present.
        #[test]
        fn a_port_queue_serves_smallest_key_then_submission(
            ops in proptest::collection::vec((0u32..6, proptest::bool::ANY), 1..80)
        ) {
            let mut nics = Nics::new(2, 2, 2, 1, 0, 0);
            let mut model: Vec<(u32, u32)> = Vec::new(); // (key, submission) queued, unsorted
            for (msg, &(key, pop)) in ops.iter().enumerate() {
                nics.enqueue(NodeId(0), packet(key, msg as u32), 1);
                model.push((key, msg as u32));
                if pop {
                    let want = *model.iter().min().unwrap();
                    model.retain(|&e| e != want);
                    let i = nics.voq[1].pop().expect("a queued packet");
                    proptest::prop_assert_eq!((i.packet.key(), i.packet.msg), want);
                }
            }
            while let Some(q) = nics.voq[1].pop() {
                let want = *model.iter().min().unwrap();
                model.retain(|&e| e != want);
                proptest::prop_assert_eq!((q.packet.key(), q.packet.msg), want);
            }
            proptest::prop_assert!(model.is_empty());
        }
    }
}
