//! What a registry entry is: everything the CLI, its validation, `flitwave list` and the
//! docs know of an algorithm, defined beside the algorithm's code.

use super::{Bounds, Forwarding, dynamic, kbcast, pmnb, seidel};
use crate::topology::{Topology, TopologyKind};
use crate::{FabricSpec, Program, SpecError};
use router::NodeId;

/// One algorithm: its name, where it comes from, where and how it runs, how to build it.
#[derive(Clone, Copy)]
pub struct Algorithm {
    pub name: &'static str,
    pub topologies: &'static [TopologyKind],
    pub reference: &'static str,
    pub summary: &'static str,
    /// The port models it is defined for.
    pub ports: Ports,
    /// Takes --root.
    pub rooted: bool,
    /// Can run with --forwarding router.
    pub router_forwarding: bool,
    /// Its own settings (and so the flags only it takes).
    pub settings: Settings,
    /// Sizes of its topologies it cannot run on: the allowed sizes, said in words.
    pub shape: Option<ShapeCheck>,
    /// A one-to-all broadcast the nodes forward in rounds: the run reports the rounds' lower
    /// bound under wormhole or cut-through switching (`wormhole::lower_bound_rounds`).
    pub rounds: bool,
    /// Its program's nodes keep no shared state, so a run can be split between threads
    /// (what its [`Program::splits`] says; a test holds the two together).
    pub splits: bool,
    /// The program every node runs, and its bounds.
    pub build: fn(&Input) -> (Box<dyn Program>, Bounds),
    /// What the run needs in memory beyond the fabric, and the field that sizes it, given
    /// the run's cycle limit (None: one declared message, [`one_message_memory`]).
    pub memory: Option<MemoryNeed>,
    /// A cost its source predicts in cycles, reported beside the measured time (`rd`: the
    /// notes' T(z)).
    pub cost_cycles: Option<fn(&FabricSpec) -> u64>,
}

/// Checks a topology's sizes: Err says the sizes allowed.
pub type ShapeCheck = fn(&Topology) -> Result<(), String>;

/// An algorithm's memory need for a run, given its cycle limit.
pub type MemoryNeed = fn(&Algorithm, &Input, u64) -> Result<Need, SpecError>;

impl Algorithm {
    /// An entry with the defaults the fields after `build` override: any port model, no
    /// root, node forwarding, no settings of its own, any size of its topologies, no rounds
    /// reported, one thread, one declared message's memory, no cost predicted.
    pub const fn new(
        name: &'static str,
        topologies: &'static [TopologyKind],
        reference: &'static str,
        summary: &'static str,
        build: fn(&Input) -> (Box<dyn Program>, Bounds),
    ) -> Algorithm {
        Algorithm {
            name,
            topologies,
            reference,
            summary,
            ports: Ports::Any,
            rooted: false,
            router_forwarding: false,
            settings: Settings::None,
            shape: None,
            rounds: false,
            splits: false,
            build,
            memory: None,
            cost_cycles: None,
        }
    }

    /// The memory a run of it needs beyond the process and the fabric.
    pub fn memory_need(&self, i: &Input, max_cycles: u64) -> Result<Need, SpecError> {
        match self.memory {
            Some(f) => f(self, i, max_cycles),
            None => Ok(one_message_memory(self.name, i)),
        }
    }
}

/// Port models an algorithm is defined for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ports {
    /// Any: all, one or K.
    Any,
    /// --ports all (the paper's MLA assumption) or one (SLA), not K in between.
    AllOrOne,
    /// --ports all only; the text says why (after the name: "kbcast assumes ...").
    All(&'static str),
}

/// Why the hypercube papers' algorithms take `--ports all` ([`Ports::All`]).
pub const SIMULTANEOUS: &str = "assumes every node sends and receives on all links at once";

/// The settings an algorithm takes besides the common ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settings {
    None,
    /// K broadcasters and their variant ([`kbcast::KbcastConfig`]).
    Kbcast,
    /// An active set and a prefix step ([`pmnb::PmnbConfig`]), for this PMNB.
    Pmnb(pmnb::Variant),
    /// Arrivals at a load served by PMNBs ([`dynamic::DynamicConfig`]).
    Dynamic,
    /// The Seidel 1993 cost model ([`seidel::Setup`]), which also sets the fabric (one-port
    /// wormhole, its packet and buffer sizes).
    Seidel,
}

impl Settings {
    /// The flags (scenario keys) only algorithms with these settings take.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Settings::Kbcast => &["variant", "active", "active-count", "active-set", "tp"],
            Settings::Pmnb(_) => &["active", "active-count", "active-set", "tp"],
            Settings::Dynamic => &["tp", "load", "pmnb"],
            Settings::None | Settings::Seidel => &[],
        }
    }
}

/// What building an algorithm's program takes from a resolved configuration.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    /// The fabric it runs on (topology, router, packet length, port model).
    pub spec: &'a FabricSpec,
    pub root: NodeId,
    pub forwarding: Forwarding,
    pub seed: u64,
    /// The algorithm's own settings, as its [`Settings`] says (`None` otherwise).
    pub kbcast: Option<&'a kbcast::KbcastConfig>,
    pub pmnb: Option<&'a pmnb::PmnbConfig>,
    pub dynamic: Option<&'a dynamic::DynamicConfig>,
    /// Absent when only the memory is estimated (the cost model's plan needs none).
    pub seidel: Option<&'a seidel::Setup>,
}

impl Input<'_> {
    /// The hypercube's dimension, or the number of dimensions of a mesh or torus.
    pub fn d(&self) -> u32 {
        match self.spec.kind {
            TopologyKind::Hypercube => self.spec.sizes[0],
            _ => self.spec.sizes.len() as u32,
        }
    }
    pub fn nodes(&self) -> u128 {
        self.spec.nodes()
    }
    pub fn one_port(&self) -> bool {
        self.spec.ports == crate::PortModel::K(1)
    }
}

/// A run's memory need beyond the process and the fabric: the field that sizes it (`dims`,
/// `active-count`, `cycles`), its value, what it is, and the bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Need {
    pub field: &'static str,
    pub value: String,
    pub what: String,
    pub bytes: u128,
}

/// The scoreboard's record of one declared message, bytes.
pub const RECORD_BYTES: u128 = 24;

/// The scoreboard's bitset over the nodes of one broadcast, bytes.
pub fn bitset_bytes(spec: &FabricSpec) -> u128 {
    spec.nodes().div_ceil(64) * 8
}

/// `--dims` as given: 6, 8x8.
pub fn dims_text(spec: &FabricSpec) -> String {
    spec.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x")
}

/// The memory of an algorithm that declares one message: its record and bitset.
pub fn one_message_memory(name: &str, i: &Input) -> Need {
    Need {
        field: "dims",
        value: dims_text(i.spec),
        what: format!("{name} on {} nodes", i.nodes()),
        bytes: RECORD_BYTES + bitset_bytes(i.spec),
    }
}
