//! The narrow interface through which observers (waveform writers, statistics) see a run:
//! after every simulated cycle, a read-only view of what moved and of the fabric's state.

use crate::kernel::Fabric;
use router::{Departure, Ejection, Flit, NodeId};

/// What happened in one cycle.
pub struct CycleView<'a> {
    pub t: u64,
    /// Flits that left on router-to-router links.
    pub departures: &'a [Departure],
    /// Flits handed to NICs.
    pub ejections: &'a [(NodeId, Ejection)],
    /// Flits NICs wrote into injection buffers: (node, channel, flit).
    pub injections: &'a [(NodeId, u8, Flit)],
    /// Everything else, read-only, as at the end of the cycle.
    pub fabric: &'a Fabric,
}

/// An observer of a run. Idle cycles that the kernel skips are not shown.
pub trait Probe {
    fn cycle(&mut self, view: &CycleView<'_>);
}
