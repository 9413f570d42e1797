//! The narrow interface through which observers (waveform writers, statistics) see a run:
//! after every simulated cycle, a read-only view of what moved and of the fabric's state.

use crate::kernel::Fabric;
use router::{AllocLog, Departure, Ejection, Flit, NodeId};

/// What happened in one cycle.
pub struct CycleView<'a> {
    pub t: u64,
    /// Flits that left on router-to-router links.
    pub departures: &'a [Departure],
    /// Flits handed to NICs, with the message their packet carries (the packet's slot may
    /// already be free again when the probe runs).
    pub ejections: &'a [(NodeId, Ejection, u32)],
    /// Flits NICs wrote into injection buffers: (node, channel, flit).
    pub injections: &'a [(NodeId, u8, Flit)],
    /// What the allocators did: VC allocation grants, switch allocation requests and
    /// grants. Which VCs request VC allocation is state: [`router::Routers::va_requesters`].
    pub allocs: &'a AllocLog,
    /// Everything else, read-only, as at the end of the cycle.
    pub fabric: &'a Fabric,
}

/// An observer of a run. Idle cycles that the kernel skips are not shown.
pub trait Probe: Send {
    fn cycle(&mut self, view: &CycleView<'_>);
    /// For taking a probe back as its own type after the run.
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}
