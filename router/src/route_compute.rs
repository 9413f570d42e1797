//! Route computation: a head at the front of an idle VC asks its topology where it goes
//! (the routing functions themselves belong to the fabric's topologies), and the VC becomes
//! a requester of VC allocation `rc_delay` cycles later.
//!
//! ```text
//!  cycle t: head readable at the front of an idle VC ──► route, output VCs allowed, length
//!  cycle t + rc_delay: requests its output VCs (or ejection VC, or every branch at once)
//! ```

use crate::flit::FlitFlags;
use crate::ids::{NodeId, PacketId, PortId};
use crate::input_unit::{ASYNC, Branches, LOCAL_OUT, MULTI_OUT, ROUTED};
use crate::params::Replication;
use crate::port_set::PortSet;
use crate::router::Routers;
use crate::wheel::vcr;
use crate::work::Width;

/// What route computation decides for a head flit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteDecision {
    /// Output ports the packet takes (several for in-router multicast), LOCAL to eject here.
    pub ports: PortSet,
    /// Output VCs the packet may use on those ports (bit v = VC v): dateline classes.
    pub vc_mask: u16,
    /// Branches of a replicated packet that use `other_mask` instead of `vc_mask`: on a
    /// torus each branch of a broadcast tree has its own dateline class (empty for unicast).
    pub other: PortSet,
    pub other_mask: u16,
}

impl RouteDecision {
    /// A route whose every branch may use the output VCs of `vc_mask`.
    pub fn new(ports: PortSet, vc_mask: u16) -> RouteDecision {
        RouteDecision { ports, vc_mask, other: PortSet::empty(), other_mask: 0 }
    }
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

    /// The head of `packet` is about to be routed: a hint to start loading what
    /// [`RouterEnv::route`] reads ([`crate::prefetch`]). Never changes a result.
    #[inline(always)]
    fn prefetch(&self, _packet: PacketId) {}
}

impl Routers {
    /// Route computation for the head at the front of idle input VC `l` of router `r` in
    /// cycle `t`.
    #[inline(always)]
    pub(crate) fn route_front<S: Width, E: RouterEnv>(&mut self, r: usize, l: usize, t: u64, env: &E) {
        let iv = r * self.npv + l;
        let head = self.inputs.vcs[iv].front;
        assert!(head.is_head(), "router {r} input VC {l}: body flit {head:?} at the front of an idle VC");
        let (rd, meta) = env.route(NodeId(r as u32), PortId(self.port_of[l]), head.packet);
        debug_assert!(!rd.ports.is_empty(), "route computation returned no output for {head:?}");
        // The ports index the state vectors without a bounds check (`flat.rs`).
        assert!(rd.ports.bits() & self.no_port == 0, "router {r}: route computation returned ports {:?} of {}", rd.ports, self.nnet);
        let unicast = rd.ports.bits().is_power_of_two();
        let c = &mut self.inputs.vcs[iv];
        c.flags = ROUTED;
        c.vc_mask = rd.vc_mask;
        c.pkt_len = meta.len;
        if meta.len == 1 {
            // A head that reached the front after a tail was made without its packet's length.
            c.front.flags |= FlitFlags::TAIL;
        }
        c.sa_ready = t + self.rc_delay;
        (c.key, c.birth) = (meta.key, meta.birth);
        if unicast {
            c.out = if rd.ports == PortSet::LOCAL { LOCAL_OUT } else { rd.ports.bits().trailing_zeros() as u8 };
        } else {
            c.out = MULTI_OUT;
            if meta.len > 1 && self.params.replication == Replication::Async {
                c.flags |= ASYNC;
            }
            self.route_multicast(r, l, &rd);
        }
        if self.rc_delay == 0 {
            self.va_join::<S>(r, l);
        } else {
            self.wheel.slot(t + self.rc_delay).va_joins.push(vcr(r, l));
        }
    }

    /// A packet the router replicates to `ports` was routed at local VC `l` of router `r`.
    #[cold]
    #[inline(never)]
    fn route_multicast(&mut self, r: usize, l: usize, rd: &RouteDecision) {
        let ports = rd.ports;
        self.start_multicast();
        let iv = r * self.npv + l;
        if self.inputs.vcs[iv].flags & ASYNC != 0 {
            self.start_async();
            for o in ports.net_ports() {
                let b = self.branch_slot(iv, false, o);
                self.inputs.branch_pos[b] = 0;
            }
            let b = self.branch_slot(iv, true, 0);
            self.inputs.branch_pos[b] = 0;
        }
        self.inputs.branches[iv] =
            Branches { route: ports, granted: PortSet::empty(), pending: ports, other: rd.other & ports, other_mask: rd.other_mask };
    }
}
