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
use arbitrary_int::prelude::*;
use router::{Flit, Header, NONE, NodeId, PREFETCH_FROM, PacketId, RouteKind, Routers, prefetch};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// What a program's send says of a packet, as the NIC queues it (its source is the node).
#[derive(Clone, Copy, Debug)]
pub struct NewPacket {
    pub kind: RouteKind,
    /// The destination (unicast) or the root (broadcast), below 2^24.
    pub dest: u32,
    pub span: u32,
    /// The priority key, at most [`Header::MAX_KEY`].
    pub key: u32,
    pub len: u16,
    pub msg: u32,
    pub aux: u64,
    /// A hop of a broadcast the nodes forward ([`crate::packet::RELAY`]).
    pub relay: bool,
}

/// A packet waiting in the node's memory: its place in the order (priority key in the
/// high 24 bits, submission number below), what its packet-table entry will say beside
/// (the source is the node, the key is in the order, nothing delivered yet), and the next
/// packet of its queue. Its packet-table slot is taken only when a channel starts sending
/// it, so the header is fresh in cache for route computation.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Queued {
    order: u64,
    aux: u64,
    birth: u64,
    msg: u32,
    dest: u32,
    span: u32,
    remaining: u32,
    len: u16,
    kind: RouteKind,
    relay: bool,
}

impl Queued {
    /// Become `q`, field by field: a copy of the whole would go through the stack, where
    /// the narrow stores that built `q` cannot forward to the wide loads of the copy, and
    /// the loads wait for every store before them (queueing writes entries out of cache).
    #[inline(always)]
    fn set(&mut self, q: &Queued) {
        // Every field named: a field added later does not compile until it is copied here.
        let Queued { order, aux, birth, msg, dest, span, remaining, len, kind, relay } = *q;
        (self.order, self.aux, self.birth, self.msg, self.dest) = (order, aux, birth, msg, dest);
        (self.span, self.remaining, self.len, self.kind, self.relay) = (span, remaining, len, kind, relay);
    }
    fn key(&self) -> u32 {
        (self.order >> 40) as u32
    }
    /// The packet queued at node `src`.
    fn packet(&self, src: u32) -> Packet {
        let header = Header {
            kind: self.kind,
            src: u24::new(src),
            dest: u24::new(self.dest),
            key: u24::new(self.key()),
            len: self.len,
            span: self.span,
        };
        let seen = if self.relay { crate::packet::RELAY } else { NONE };
        Packet { header, msg: self.msg, aux: self.aux, birth: self.birth, remaining: self.remaining, seen }
    }
}

type Heap = BinaryHeap<Reverse<(u64, u32)>>;

/// Entries in chunks of [`CHUNK`] that never move: a `Vec` of cache-line entries grows by
/// copying into a block twice the size, so its peak in memory would be twice what it holds,
/// in steps no estimate can follow (a multinode broadcast queues a few million packets);
/// chunks grow the memory with what is queued (a chunk's pages are touched as it fills).
#[derive(Clone, Debug)]
struct Chunks<T> {
    /// Each holds [`CHUNK`] entries, the last one up to that many.
    chunks: Vec<Vec<T>>,
    len: usize,
}

/// Entries per chunk of [`Chunks`] (a power of two): 1 MiB of 64-byte entries.
const CHUNK: usize = 1 << 14;

impl<T> Chunks<T> {
    fn new() -> Chunks<T> {
        Chunks { chunks: Vec::new(), len: 0 }
    }
    fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn push(&mut self, e: T) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks.last_mut().expect("a chunk with room").push(e);
        self.len += 1;
    }
}

impl<T> std::ops::Index<usize> for Chunks<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T> std::ops::IndexMut<usize> for Chunks<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i / CHUNK][i % CHUNK]
    }
}

/// Every queued packet of every node, in one slab: a queue is a list threaded through it,
/// and a packet started gives its entry back to a free list whose most recent entry is
/// taken next (still in cache, where a ring per queue would write a line not touched since
/// it last wrapped, and grow by copying). The links are apart from the entries, so that
/// queueing a packet does not touch the entry of the one before it (long out of cache when
/// queues are long or the fabric large). Queues holding packets out of key order keep
/// those in heaps of (order, entry), here too.
#[derive(Clone, Debug)]
struct Pool {
    q: Chunks<Queued>,
    next: Vec<u32>,
    free: u32,
    heaps: Vec<Heap>,
    free_heaps: Vec<u32>,
    /// Does the fabric prefetch (more nodes than [`PREFETCH_FROM`])? The pool then
    /// prefetches the entry it hands out next; every other prefetch of the NICs reads this
    /// too ([`Nics::prefetches`]).
    prefetch: bool,
}

impl Pool {
    fn new(prefetch: bool) -> Pool {
        Pool { q: Chunks::new(), next: Vec::new(), free: NONE, heaps: Vec::new(), free_heaps: Vec::new(), prefetch }
    }
    #[inline(always)]
    fn put(&mut self, e: Queued) -> u32 {
        if self.free != NONE {
            let i = self.free;
            self.free = self.next[i as usize];
            self.q[i as usize].set(&e);
            self.next[i as usize] = NONE;
            if self.prefetch && self.free != NONE {
                // The entry taken next: it and its link load meanwhile (a hint only).
                prefetch(&self.q[self.free as usize]);
                prefetch(&self.next[self.free as usize]);
            }
            i
        } else {
            self.q.push(e);
            self.next.push(NONE);
            self.q.len() as u32 - 1
        }
    }
    #[inline(always)]
    fn release(&mut self, i: u32) {
        self.next[i as usize] = self.free;
        self.free = i;
    }
    #[cold]
    fn new_heap(&mut self) -> u32 {
        match self.free_heaps.pop() {
            Some(h) => h,
            None => {
                self.heaps.push(Heap::new());
                self.heaps.len() as u32 - 1
            }
        }
    }
}

/// Packets waiting for one output port, served smallest (key, submission) first. Packets
/// whose keys arrive in non-decreasing order (the common case) go to a plain FIFO, a list
/// in the [`Pool`]; the rest to a heap of the pool's (`heap`, `NONE` while there are none).
/// The key of the FIFO's last packet is kept here, so queueing a packet does not read the
/// FIFO's back.
#[derive(Clone, Copy, Debug)]
struct SendQueue {
    head: u32,
    tail: u32,
    last_key: u32,
    heap: u32,
}

const EMPTY_QUEUE: SendQueue = SendQueue { head: NONE, tail: NONE, last_key: 0, heap: NONE };

impl SendQueue {
    #[inline(always)]
    fn push(&mut self, pool: &mut Pool, q: Queued) {
        if self.head == NONE || self.last_key <= q.key() {
            self.last_key = q.key();
            let i = pool.put(q);
            if self.head == NONE {
                self.head = i;
            } else {
                pool.next[self.tail as usize] = i;
            }
            self.tail = i;
        } else {
            self.push_heap(pool, q);
        }
    }
    #[cold]
    fn push_heap(&mut self, pool: &mut Pool, q: Queued) {
        if self.heap == NONE {
            self.heap = pool.new_heap();
        }
        let order = q.order;
        let i = pool.put(q);
        pool.heaps[self.heap as usize].push(Reverse((order, i)));
    }
    /// The first packet's order and entry.
    #[inline(always)]
    fn peek(&self, pool: &Pool) -> Option<(u64, u32)> {
        let a = (self.head != NONE).then(|| (pool.q[self.head as usize].order, self.head));
        if self.heap == NONE {
            return a;
        }
        let Reverse(b) = *pool.heaps[self.heap as usize].peek().expect("a queue's heap is never empty");
        Some(match a {
            Some(a) if a.0 <= b.0 => a,
            _ => b,
        })
    }
    /// Take the first packet off the queue (its entry is still the caller's to release).
    #[inline(always)]
    fn pop(&mut self, pool: &mut Pool) -> Option<u32> {
        if self.heap == NONE {
            if self.head == NONE {
                return None;
            }
            let i = self.head;
            self.head = pool.next[i as usize];
            return Some(i);
        }
        self.pop_heap(pool)
    }
    #[cold]
    fn pop_heap(&mut self, pool: &mut Pool) -> Option<u32> {
        let (_, i) = self.peek(pool)?;
        if i == self.head {
            self.head = pool.next[i as usize];
        } else {
            let heap = &mut pool.heaps[self.heap as usize];
            heap.pop();
            if heap.is_empty() {
                pool.free_heaps.push(self.heap);
                self.heap = NONE;
            }
        }
        Some(i)
    }
    fn is_empty(&self) -> bool {
        self.head == NONE && self.heap == NONE
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

impl NodeNic {
    /// The ports with packets queued and no channel feeding them yet: where a free channel
    /// may start the next packet.
    #[inline(always)]
    fn startable(&self) -> u64 {
        self.nonempty & !self.claimed
    }
}

/// The NICs of all nodes.
#[derive(Clone, Debug)]
pub struct Nics {
    k: usize,
    net: usize,
    /// The set of all channel bits.
    all_channels: u64,
    voq: Vec<SendQueue>,
    pool: Pool,
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
            voq: vec![EMPTY_QUEUE; nodes * net_ports],
            pool: Pool::new(nodes > PREFETCH_FROM),
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
        // Popped from a copy of their pool (popping frees their queues' heaps).
        let mut theirs = other.pool.clone();
        for n in nodes.clone() {
            for q in n * self.net..(n + 1) * self.net {
                // Re-thread the queue through this pool, in the same order.
                let (mut from, mut to) = (other.voq[q], EMPTY_QUEUE);
                while let Some(i) = from.pop(&mut theirs) {
                    to.push(&mut self.pool, theirs.q[i as usize]);
                }
                self.voq[q] = to;
            }
        }
        let k = self.k;
        self.node[nodes.clone()].copy_from_slice(&other.node[nodes.clone()]);
        self.inj[nodes.start * k..nodes.end * k].copy_from_slice(&other.inj[nodes.start * k..nodes.end * k]);
        let e = k * self.ejv;
        self.ej[nodes.start * e..nodes.end * e].copy_from_slice(&other.ej[nodes.start * e..nodes.end * e]);
        self.max_queue = self.max_queue.max(other.max_queue);
    }

    /// Queue packet `p` at node `n` (its source), to leave on network port `first_hop`.
    #[inline]
    pub fn enqueue(&mut self, n: NodeId, p: Packet, first_hop: usize) {
        let h = &p.header;
        let new = NewPacket {
            kind: h.kind,
            dest: h.dest.value(),
            span: h.span,
            key: h.key.value(),
            len: h.len,
            msg: p.msg,
            aux: p.aux,
            relay: p.is_relay(),
        };
        self.enqueue_new(n, new, p.birth, p.remaining, first_hop);
    }

    /// Queue a packet a program sent from node `n` in cycle `birth`, expected at
    /// `remaining` nodes, to leave on network port `first_hop`.
    #[inline]
    pub fn enqueue_new(&mut self, n: NodeId, p: NewPacket, birth: u64, remaining: u32, first_hop: usize) {
        let st = &mut self.node[n.idx()];
        let s = st.seq;
        st.seq += 1;
        debug_assert!(s < 1 << 40, "more than 2^40 packets queued at one node");
        st.nonempty |= 1 << first_hop;
        st.queued += 1;
        self.max_queue = self.max_queue.max(st.queued);
        let order = ((p.key as u64) << 40) | (s & ((1 << 40) - 1));
        let q = Queued {
            order,
            aux: p.aux,
            birth,
            msg: p.msg,
            dest: p.dest,
            span: p.span,
            remaining,
            len: p.len,
            kind: p.kind,
            relay: p.relay,
        };
        self.voq[n.idx() * self.net + first_hop].push(&mut self.pool, q);
    }

    /// Bring into cache what node `near` will read first when it starts a packet (its
    /// queues' fronts) and, for node `far`, where it keeps its queues. With long queues
    /// (every node broadcasting) these are far out of cache by the time a channel reads
    /// them; the kernel names the nodes it will visit next in its list of active NICs.
    #[inline(always)]
    pub fn prefetch(&self, near: Option<u32>, far: Option<u32>) {
        if !self.pool.prefetch {
            return;
        }
        if let Some(far) = far {
            let far = far as usize;
            let mut ports = self.node[far].startable();
            while ports != 0 {
                let port = ports.trailing_zeros() as usize;
                ports &= ports - 1;
                prefetch(&self.voq[far * self.net + port]);
            }
        }
        if let Some(near) = near {
            let near = near as usize;
            if self.node[near].queued > 0 {
                let mut ports = self.node[near].startable();
                while ports != 0 {
                    let port = ports.trailing_zeros() as usize;
                    ports &= ports - 1;
                    let head = self.voq[near * self.net + port].head;
                    if head != NONE {
                        prefetch(&self.pool.q[head as usize]);
                        prefetch(&self.pool.next[head as usize]);
                    }
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
        if idle && st.queued > 0 && st.startable() != 0 { Some(t) } else { (st.streaming != 0).then_some(start) }
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
        let base = i * self.k;
        let mut written = 0;
        // The earliest start of the channels streaming after this cycle's flit.
        let mut start = u64::MAX;
        let mut chans = self.acting(&st);
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

    /// The channels of a NIC in state `st` that may act: those streaming, and idle ones that
    /// may start a packet (all-port: channel i feeds only port i).
    #[inline(always)]
    fn acting(&self, st: &NodeNic) -> u64 {
        let mut chans = st.streaming;
        if st.queued > 0 {
            chans |= if self.k == self.net { st.startable() } else { self.all_channels };
        }
        chans
    }

    /// Node `n`'s NIC injects soon: a hint to load the state of the router's injection VCs
    /// its channels may write ([`Routers::prefetch_injection`]).
    #[inline(always)]
    pub fn prefetch_injection(&self, n: u32, routers: &Routers) {
        if !self.pool.prefetch {
            return;
        }
        let mut chans = self.acting(&self.node[n as usize]);
        while chans != 0 {
            let ch = chans.trailing_zeros() as usize;
            chans &= chans - 1;
            routers.prefetch_injection(NodeId(n), ch);
        }
    }

    /// Start the best packet node `i` may send on idle channel `ch`, if it has one.
    fn start_next(&mut self, i: usize, ch: usize, t: u64, packets: &mut PacketTable) -> bool {
        let st = &mut self.node[i];
        let free = st.startable();
        let port = if self.k == self.net {
            // All-port: channel `ch` feeds port `ch` alone.
            if free & (1 << ch) == 0 {
                return false;
            }
            ch
        } else {
            let mut free = free;
            let mut best: Option<(u64, usize)> = None;
            while free != 0 {
                let port = free.trailing_zeros() as usize;
                free &= free - 1;
                if let Some((order, _)) = self.voq[i * self.net + port].peek(&self.pool)
                    && best.is_none_or(|(b, _)| order < b)
                {
                    best = Some((order, port));
                }
            }
            let Some((_, port)) = best else { return false };
            port
        };
        let voq = &mut self.voq[i * self.net + port];
        let Some(e) = voq.pop(&mut self.pool) else { unreachable!("port {port} of node {i} chosen with an empty queue") };
        if voq.is_empty() {
            st.nonempty &= !(1 << port);
        }
        st.queued -= 1;
        st.claimed |= 1 << port;
        st.streaming |= 1 << ch;
        let q = &self.pool.q[e as usize];
        let len = q.len;
        let pid = packets.alloc(q.packet(i as u32));
        self.pool.release(e);
        // The software start-up, then the copy of every flit into the send buffer.
        let start_at = t + self.startup_cycles + self.copy_cycles_per_flit * len as u64;
        self.inj[i * self.k + ch] = InjChannel { packet: pid.0, seq: 0, len, start_at, port: port as u8 };
        true
    }

    /// Does this fabric prefetch (more nodes than [`PREFETCH_FROM`])?
    #[inline(always)]
    pub fn prefetches(&self) -> bool {
        self.pool.prefetch
    }

    /// [`Nics::receive`] of a flit on channel `ch`, VC `vc` of node `n` is near: a hint to
    /// load its reassembly state.
    #[inline(always)]
    pub fn prefetch_receive(&self, n: NodeId, ch: u8, vc: u8) {
        prefetch(&self.ej[(n.idx() * self.k + ch as usize) * self.ejv + vc as usize]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary_int::u24;
    use router::{Header, RouteKind};

    /// The (key, message) of the packet queue `q` starts next, taken off the queue.
    fn pop(nics: &mut Nics, q: usize) -> Option<(u32, u32)> {
        nics.voq[q].pop(&mut nics.pool).map(|i| {
            let e = nics.pool.q[i as usize];
            nics.pool.release(i);
            (e.key(), e.msg)
        })
    }

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
            for (msg, &(key, take)) in ops.iter().enumerate() {
                nics.enqueue(NodeId(0), packet(key, msg as u32), 1);
                model.push((key, msg as u32));
                if take {
                    let want = *model.iter().min().unwrap();
                    model.retain(|&e| e != want);
                    proptest::prop_assert_eq!(pop(&mut nics, 1), Some(want));
                }
            }
            while let Some(got) = pop(&mut nics, 1) {
                let want = *model.iter().min().unwrap();
                model.retain(|&e| e != want);
                proptest::prop_assert_eq!(got, want);
            }
            proptest::prop_assert!(model.is_empty());
        }

        /// Queues of several nodes and ports share the pool's entries: however their pushes
        /// and pops interleave (queues emptied and refilled, entries given back and taken by
        /// another queue), each queue gives back exactly its own packets, in its order.
        #[test]
        fn queues_sharing_the_pool_keep_their_own_packets(
            ops in proptest::collection::vec((0usize..6, 0u32..3, 0u8..3), 1..400)
        ) {
            let mut nics = Nics::new(3, 2, 2, 1, 0, 0);
            let mut model: Vec<Vec<(u32, u32)>> = vec![Vec::new(); 6];
            for (msg, &(q, key, op)) in ops.iter().enumerate() {
                if op == 0 {
                    let want = model[q].iter().min().copied();
                    proptest::prop_assert_eq!(pop(&mut nics, q), want);
                    model[q].retain(|&e| Some(e) != want);
                } else {
                    nics.enqueue(NodeId(q as u32 / 2), packet(key, msg as u32), q % 2);
                    model[q].push((key, msg as u32));
                }
            }
            for (q, left) in model.iter_mut().enumerate() {
                while let Some(got) = pop(&mut nics, q) {
                    let want = *left.iter().min().unwrap();
                    left.retain(|&x| x != want);
                    proptest::prop_assert_eq!(got, want);
                }
                proptest::prop_assert!(left.is_empty());
            }
        }
    }
}
