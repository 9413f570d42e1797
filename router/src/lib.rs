//! # router — one cycle-accurate switch router
//!
//! Structured like its RTL: [`input_unit`] (per-VC FIFOs and VC state), [`route_compute`]
//! (the interface to the topology's routing function), [`vc_allocator`], [`switch_allocator`]
//! (with the crossbar, which can replicate a flit to several outputs: hardware multicast),
//! [`output_unit`] (output VCs, credits and the credit return line) and [`arbiter`]; [`event`]
//! evaluates the same routers event by event.
//!
//! The state of every router of a fabric lives in flat vectors in [`Routers`]; the fabric
//! evaluates each router's cycle in two calls (see [`router`]) and commits what they
//! produced afterwards, so results never depend on the order routers are visited.

pub mod arbiter;
mod credit_line;
pub mod event;
pub mod flit;
pub mod ids;
pub mod input_unit;
pub mod output_unit;
pub mod params;
pub mod port_set;
pub mod route_compute;
pub mod router;
pub mod switch_allocator;
pub mod vc_allocator;
pub mod vc_set;

pub use arbiter::{Arbiter, VcSet};
pub use event::EventEval;
pub use flit::{Flit, FlitFlags, Header, RouteKind};
pub use ids::{Cycle, NONE, NodeId, PacketId, PortId, VcId};
pub use params::{ArbiterPolicy, MulticastVa, Pipeline, Replication, RouterParams, Switching};
pub use port_set::PortSet;
pub use route_compute::{PacketMeta, RouteDecision, RouterEnv};
pub use router::{Departure, Ejection, Freed, MAX_PORTS, Outbox, Routers, VcActivity};
pub use vc_set::{MAX_ROUTER_VCS, VcBits};
