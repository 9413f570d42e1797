//! # router — one cycle-accurate switch router
//!
//! Structured like its RTL, a file per piece of hardware: [`input_unit`] (per-VC FIFOs, VC
//! state and buffer statistics), [`route_compute`], [`vc_allocator`], [`switch_allocator`],
//! [`crossbar`] (which can replicate a flit to several outputs: hardware multicast),
//! [`output_unit`] (output VCs and credits), [`arbiter`], and the delay lines between
//! routers and stages ([`wheel`]: links, credit return, RC and VA delays).
//!
//! The state of every router of a fabric lives in flat vectors in [`Routers`] ([`router`]); a
//! cycle evaluates every router stage by stage (`stages.rs`, with the work registers of
//! `work.rs`), so results never depend on the order routers are visited in, nor on which ones
//! the kernel chooses to visit ([`Schedule`]). What probes read is in `views.rs`, a fabric
//! split between threads in `split.rs`.

mod arbiter;
mod crossbar;
mod flat;
mod flit;
mod ids;
mod input_unit;
mod occupancy;
mod output_unit;
mod params;
mod port_set;
mod prefetch;
mod route_compute;
mod router;
mod split;
mod stages;
mod switch_allocator;
mod vc_allocator;
mod vc_set;
mod views;
mod wheel;
mod work;

pub use arbiter::{Arbiter, VcSet};
pub use flit::{Flit, FlitFlags, Header, RouteKind};
pub use ids::{NONE, NodeId, PacketId, PortId};
pub use input_unit::VcStage;
pub use occupancy::{ClassOccupancy, PortClasses};
pub use params::{ArbiterPolicy, InjectionVc, MulticastVa, Pipeline, Replication, RouterParams, Switching, VaPolicy};
pub use port_set::PortSet;
pub use prefetch::{PREFETCH_AHEAD, PREFETCH_FROM, ahead, prefetch};
pub use route_compute::{PacketMeta, RouteDecision, RouterEnv};
pub use router::{AllocLog, Departure, Ejection, MAX_PORTS, Routers, Schedule, VaGrant, VcActivity, VcView};
pub use vc_set::{MAX_ROUTER_VCS, VcBits};
