//! The packet table: one header per packet in flight, in a slab whose slots are reused.
//! Flits carry only the slot index ([`PacketId`]).

use router::{Header, NONE, NodeId, PREFETCH_AHEAD, PacketId, RouteKind};

/// A packet in flight: its header and the bookkeeping for the scoreboard.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub header: Header,
    /// Algorithm-level message carried (scoreboard id) and free algorithm data.
    pub msg: u32,
    pub aux: u64,
    /// Cycle the packet was handed to its NIC.
    pub birth: u64,
    /// Deliveries still expected.
    pub remaining: u32,
    /// Broadcast packets: index of the bitset of nodes already delivered to; unicast
    /// packets: [`NONE`], or [`RELAY`] for a hop of a broadcast the nodes forward.
    pub seen: u32,
}

/// [`Packet::seen`] of a unicast packet that carries a hop of a broadcast the nodes forward
/// ([`crate::program::Dest::Relay`]): not a unicast message, so not a unicast latency sample.
pub const RELAY: u32 = NONE - 1;

impl Packet {
    /// Become `p`, field by field: a copy of the whole would go through the stack, where
    /// the narrow stores that built `p` cannot forward to the wide loads of the copy, and
    /// the loads wait for every store before them.
    #[inline(always)]
    fn set(&mut self, p: &Packet) {
        // Every field named: a field added later does not compile until it is copied here.
        let Packet { header, msg, aux, birth, remaining, seen } = *p;
        (self.header, self.msg, self.aux, self.birth, self.remaining, self.seen) = (header, msg, aux, birth, remaining, seen);
    }
    pub fn src(&self) -> NodeId {
        NodeId(self.header.src.value())
    }
    /// The destination (unicast) or the root (broadcast).
    pub fn dest(&self) -> NodeId {
        NodeId(self.header.dest.value())
    }
    pub fn flits(&self) -> u16 {
        self.header.len
    }
    pub fn key(&self) -> u32 {
        self.header.key.value()
    }
    pub fn is_broadcast(&self) -> bool {
        self.header.kind == RouteKind::Broadcast
    }
    /// A hop of a broadcast the nodes forward ([`RELAY`]).
    pub fn is_relay(&self) -> bool {
        !self.is_broadcast() && self.seen == RELAY
    }
}

/// Slab of packets in flight.
#[derive(Clone, Debug, Default)]
pub struct PacketTable {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// Delivered-to bitsets of broadcast packets, `words` u64 each, reused.
    bits: Vec<u64>,
    words: usize,
    free_bits: Vec<u32>,
    nbits: u32,
    live: usize,
    pub peak_live: usize,
}

impl PacketTable {
    pub fn new(nodes: usize) -> PacketTable {
        PacketTable { words: nodes.div_ceil(64), ..Default::default() }
    }

    pub fn alloc(&mut self, mut p: Packet) -> PacketId {
        p.seen = if p.is_broadcast() {
            self.alloc_bits()
        } else if p.seen == RELAY {
            RELAY
        } else {
            NONE
        };
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        match self.free.pop() {
            Some(i) => {
                // The slot the allocation after the next few takes (the free list is a
                // stack): its line loads while they run. A hint only.
                if let Some(&ahead) = self.free.len().checked_sub(PREFETCH_AHEAD).and_then(|k| self.free.get(k)) {
                    router::prefetch(&self.slots[ahead as usize]);
                }
                self.slots[i as usize].set(&p);
                PacketId(i)
            }
            None => {
                self.slots.push(p);
                PacketId(self.slots.len() as u32 - 1)
            }
        }
    }

    /// A delivered-to bitset for a broadcast packet (apart: unicast packets need none, and
    /// their allocation stays short).
    #[inline(never)]
    fn alloc_bits(&mut self) -> u32 {
        match self.free_bits.pop() {
            Some(b) => b,
            None => {
                self.bits.resize(self.bits.len() + self.words, 0);
                self.nbits += 1;
                self.nbits - 1
            }
        }
    }

    /// Broadcast packets: give back delivered-to bitset `b`, cleared.
    #[inline(never)]
    fn release_bits(&mut self, b: u32) {
        let at = b as usize * self.words;
        self.bits[at..at + self.words].fill(0);
        self.free_bits.push(b);
    }

    /// Is `id` a packet in the network (a slot in use)?
    pub fn holds(&self, id: PacketId) -> bool {
        self.slots.get(id.idx()).is_some_and(|p| p.remaining > 0)
    }

    #[inline(always)]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.idx()]
    }

    /// Record a delivery of broadcast packet `id` at `node`; false if it was delivered there before.
    pub fn mark_seen(&mut self, id: PacketId, node: NodeId) -> bool {
        let b = self.slots[id.idx()].seen as usize;
        let w = &mut self.bits[b * self.words + node.idx() / 64];
        let m = 1u64 << (node.idx() % 64);
        let fresh = *w & m == 0;
        *w |= m;
        fresh
    }

    /// One expected delivery done; frees the slot after the last one. Returns true if freed.
    #[inline]
    pub fn delivered(&mut self, id: PacketId) -> bool {
        self.forfeit(id, 1, 0)
    }

    /// Faults: `copies` expected deliveries will never happen, and `extra` more ejections
    /// (a root's own NIC taking back a broadcast left with no branch) will. Frees the slot
    /// if nothing is owed any more; returns true if freed.
    pub fn forfeit(&mut self, id: PacketId, copies: u32, extra: u32) -> bool {
        let p = &mut self.slots[id.idx()];
        p.remaining = (p.remaining + extra).saturating_sub(copies);
        if p.remaining > 0 {
            return false;
        }
        if p.is_broadcast() {
            let b = p.seen;
            self.release_bits(b);
        }
        self.free.push(id.0);
        self.live -= 1;
        true
    }

    /// Fold in the counts of `other`, the table of another part of a split fabric (its
    /// packets stay there: this is for reporting; `peak_live` becomes the sum of the parts'
    /// peaks, an upper bound).
    pub(crate) fn join_counts(&mut self, other: &PacketTable) {
        self.live += other.live;
        self.peak_live += other.peak_live;
    }

    /// Packets allocated and not yet fully delivered.
    pub fn live(&self) -> usize {
        self.live
    }
}
