//! # fabric — topologies, links, NICs, the simulation kernel and the algorithms
//!
//! A [`Fabric`](kernel::Fabric) is built from a validated [`FabricSpec`](spec::FabricSpec)
//! and one [`Program`](program::Program) that every node runs. The kernel steps all routers
//! cycle by cycle in two phases; observers attach through [`probe::Probe`].

pub mod algorithms;
pub mod faults;
pub mod kernel;
pub mod measure;
pub mod nic;
pub mod packet;
pub mod probe;
pub mod program;
pub mod scoreboard;
pub mod spec;
pub mod topology;

pub use kernel::{
    Counters, Deadlock, Ending, ExternalRouters, Fabric, Mismatch, PortCredit, PortFlit, Ports, PortsCycle, PortsWindow, WINDOW_AFTER,
    WINDOW_BEFORE, WireFlit,
};
pub use measure::{Measurement, Window};
pub use program::{Dest, NodeCtx, Program, Received, Send};
pub use router::Schedule;
pub use scoreboard::{DestSet, Scoreboard};
pub use spec::{FabricSpec, PortModel, SpecError};
pub use topology::{Topology, TopologyKind};
