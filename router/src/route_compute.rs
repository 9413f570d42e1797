//! Route computation: the interface through which a router asks its topology where a head
//! flit goes. The routing functions themselves belong to the fabric's topologies.

use crate::ids::{NodeId, PacketId, PortId};
use crate::port_set::PortSet;

/// What route computation decides for a head flit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteDecision {
    /// Output ports the packet takes (several for in-router multicast), LOCAL to eject here.
    pub ports: PortSet,
    /// Output VCs the packet may use on those ports (bit v = VC v): dateline classes.
    pub vc_mask: u16,
}

/// Header fields the allocators need, read once at route computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    pub len: u16,
    pub key: u32,
    pub birth: u64,
}

/// What a router needs from the fabric around it while it evaluates a cycle.
pub trait RouterEnv {
    /// Route computation for the head of `packet` arriving at router `at` on input `in_port`
    /// (ports at or above the router's network port count are NIC injection channels).
    fn route(&self, at: NodeId, in_port: PortId, packet: PacketId) -> (RouteDecision, PacketMeta);
}
