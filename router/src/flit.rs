//! Flits and the packet header, with header fields at their RTL bit widths.

use crate::ids::PacketId;
use arbitrary_int::prelude::*;
use bitflags::bitflags;

bitflags! {
    /// Framing bits carried by every flit.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct FlitFlags: u8 {
        /// First flit of a packet: carries the header, opens a route.
        const HEAD = 0b01;
        /// Last flit of a packet: releases the VC and the ejection channel behind it.
        const TAIL = 0b10;
    }
}

/// One flit as it sits in a buffer or crosses a link: 8 bytes, `Copy`.
/// The header proper lives once per packet in the fabric's packet table; the flit carries
/// the packet id (the tag RTL would carry to find it) and its sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Flit {
    pub packet: PacketId,
    pub seq: u16,
    pub flags: FlitFlags,
}

impl Flit {
    #[inline(always)]
    pub fn is_head(&self) -> bool {
        self.flags.contains(FlitFlags::HEAD)
    }
    #[inline(always)]
    pub fn is_tail(&self) -> bool {
        self.flags.contains(FlitFlags::TAIL)
    }
    /// The `seq`-th flit of a packet of `len` flits.
    #[inline(always)]
    pub fn of(packet: PacketId, seq: u16, len: u16) -> Flit {
        let mut flags = FlitFlags::empty();
        if seq == 0 {
            flags |= FlitFlags::HEAD;
        }
        if seq + 1 == len {
            flags |= FlitFlags::TAIL;
        }
        Flit { packet, seq, flags }
    }
}

/// How the routers treat a packet: the header's 2-bit kind field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteKind {
    /// To one destination by the topology's deterministic routing.
    Unicast,
    /// Replicated in the routers along the topology's broadcast tree rooted at `dest`
    /// (hardware multicast), within the set of dimensions given by the header's `span`.
    Broadcast,
}

/// The head flit's header at its RTL widths (see `Header::BITS`).
///
/// | field | bits | meaning |
/// |---|---|---|
/// | kind | 2 | unicast / broadcast |
/// | src | 24 | source node |
/// | dest | 24 | destination node, or the broadcast root |
/// | key | 24 | priority key (smaller goes first where the arbiter honours keys) |
/// | len | 16 | packet length in flits |
/// | span | 32 | broadcast: the dimensions the tree covers (bit i = dimension i) |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: RouteKind,
    pub src: u24,
    pub dest: u24,
    pub key: u24,
    pub len: u16,
    pub span: u32,
}

impl Header {
    /// Header width in bits.
    pub const BITS: u32 = 2 + 24 + 24 + 24 + 16 + 32;
    /// The largest node id a header can address.
    pub const MAX_NODE: u32 = (1 << 24) - 1;
    /// The largest priority key.
    pub const MAX_KEY: u32 = (1 << 24) - 1;
}
