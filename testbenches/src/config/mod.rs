//! Scenario configuration: a TOML file and command-line flags (flags win) resolved against
//! defaults into one [`Config`], checked field by field. Every problem is a [`ConfigError`]
//! that names the field, the value and what is allowed.

use fabric::algorithms::dynamic::DEFAULT_PMNB;
pub use fabric::algorithms::dynamic::DynamicConfig;
pub use fabric::algorithms::kbcast::KbcastConfig;
use fabric::algorithms::kbcast::{ActiveSet, Variant};
pub use fabric::algorithms::pmnb::PmnbConfig;
use fabric::algorithms::pmnb::Variant as PmnbVariant;
use fabric::algorithms::traffic::{Pattern, TrafficSpec};
use fabric::algorithms::{self, Forwarding, Ports, Settings};
use fabric::{FabricSpec, PortModel, Schedule, TopologyKind};
use router::{ArbiterPolicy, InjectionVc, MulticastVa, NodeId, Pipeline, Replication, Switching, VaPolicy};
use serde::{Deserialize, Serialize};
use std::path::Path;

mod keys;
mod memory;
mod parse;
mod resolve;
mod rtl;
mod workload;
pub use keys::{
    AlgorithmKeys, ControlKeys, FIELDS, FaultKeys, Given, OutputKeys, Raw, RouterKeys, RtlKeys, TopologyKeys, WorkloadKeys, toml_error,
};
use memory::*;
pub(crate) use parse::on_off;
use parse::*;
use workload::*;

/// Bad input, or outputs that could not be written: exit code 2 with one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value refused: the field (the flag or key, or the command's argument), the value
    /// given, and what is allowed or why it cannot be used.
    #[error("{field}: {value}: {reason}")]
    Field { field: String, value: String, reason: String },
    /// Outputs that could not be written once the work was done, each named with its reason
    /// ([`crate::output::failed_after_run`]).
    #[error("{0}")]
    Outputs(String),
}

impl ConfigError {
    /// `field` refused `value` for `reason`, on one line (a blank value is shown quoted).
    pub fn new(field: &str, value: impl std::fmt::Display, reason: impl std::fmt::Display) -> ConfigError {
        let value = value.to_string();
        let value = if value.trim().is_empty() { format!("{value:?}") } else { value.replace('\n', " ") };
        ConfigError::Field { field: field.replace('\n', " "), value, reason: reason.to_string().replace('\n', " ") }
    }
}

impl From<fabric::SpecError> for ConfigError {
    fn from(e: fabric::SpecError) -> Self {
        ConfigError::new(&e.field, e.value, e.allowed)
    }
}

fn err(field: &str, value: impl std::fmt::Display, allowed: impl std::fmt::Display) -> ConfigError {
    ConfigError::new(field, value, allowed)
}

/// Bytes as GiB with one decimal (MiB below 1 GiB).
fn gib(bytes: u128) -> String {
    fabric::spec::bytes_text(bytes)
}

/// A router description file (`--router FILE.toml`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RouterFile {
    /// Base preset: "ideal", "realistic" or "booksim" (default ideal).
    preset: Option<String>,
    rc_delay: Option<u32>,
    va_delay: Option<u32>,
    link_latency: Option<u32>,
    credit_delay: Option<u32>,
    inject_latency: Option<u32>,
}

/// What a run does.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Workload {
    Algorithm {
        name: String,
        forwarding: Forwarding,
        root: u32,
        root_coords: Vec<u32>,
        /// K simultaneous broadcasts (kbcast): who broadcasts, and how.
        #[serde(skip_serializing_if = "Option::is_none")]
        kbcast: Option<KbcastConfig>,
        /// Partial multinode broadcast (pmnb-1, -2, -3): who broadcasts.
        #[serde(skip_serializing_if = "Option::is_none")]
        pmnb: Option<PmnbConfig>,
        /// The dynamic broadcasting scheme.
        #[serde(skip_serializing_if = "Option::is_none")]
        dynamic: Option<DynamicConfig>,
    },
    Traffic {
        pattern: Pattern,
        /// Packets per node per cycle (0: broadcasts only).
        rate: f64,
        /// Broadcasts per node per cycle, each from its source to every other node on the
        /// source's broadcast tree (0: none).
        broadcast_rate: f64,
        /// How the broadcasts are forwarded: re-sent by the nodes or replicated by the routers.
        forwarding: Forwarding,
        /// Flits per node per cycle offered.
        offered_flits: f64,
        cycles: u64,
        /// Cycles before the measurement window `[warmup, cycles)` ([`fabric::measure`]).
        warmup: u64,
        /// Batches of the window for the latency confidence interval.
        batches: u32,
        hotspot: u32,
        hotspot_fraction: f64,
    },
}

impl Workload {
    /// Do the routers replicate packets (broadcasts forwarded by the routers)?
    pub fn replicates(&self) -> bool {
        match self {
            Workload::Algorithm { forwarding, .. } => *forwarding == Forwarding::Router,
            Workload::Traffic { forwarding, broadcast_rate, .. } => *forwarding == Forwarding::Router && *broadcast_rate > 0.0,
        }
    }
}

/// The whole resolved configuration of a run (it is echoed in the JSON result).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Config {
    pub topology: TopologyKind,
    pub dims: Vec<u32>,
    pub nodes: u64,
    pub workload: Workload,
    pub ports: String,
    pub switching: Switching,
    /// "ideal", "realistic", "booksim" or the router file's path.
    pub router: String,
    pub pipeline: Pipeline,
    pub arbiter: ArbiterPolicy,
    /// Which injection VC a NIC channel starts a new packet in.
    pub injection_vc: InjectionVc,
    /// VCs of each ejection port.
    pub ejection_vcs: u8,
    /// Which free output VC a head is offered first.
    pub va_policy: VaPolicy,
    /// VC allocation of replicated multi-flit packets (runs with `--forwarding router` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multicast_va: Option<MulticastVa>,
    /// Replication of multi-flit packets to their branches (runs with `--forwarding router` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replication: Option<Replication>,
    pub packet_flits: u16,
    /// Depth of the network input VCs (fed by links), flits.
    pub buffer_flits: u16,
    /// Depth of the injection VCs (fed by the node's NIC), flits.
    pub inject_buffer_flits: u16,
    pub vcs: u8,
    pub nu: u8,
    pub seed: u64,
    pub deadlock_avoidance: bool,
    pub startup_cycles: u64,
    pub copy_cycles_per_flit: u64,
    pub watchdog_cycles: u64,
    pub max_cycles: u64,
    /// Threads the run is split between (programs that allow it: see [`crate::run::check_threads`];
    /// results do not depend on it).
    pub threads: u32,
    /// Which routers the kernel visits each cycle: busy (those with work) or all (every
    /// router, every allocation run; for checking). Results do not depend on it.
    pub schedule: Schedule,
    /// How much of the statistics the report carries: summary (network-wide per port class)
    /// or full (also per VC, per link, per router).
    pub stats: traces::stats::Detail,
    pub outputs: Outputs,
    /// RTL routers co-simulated in place of the model's (`--rtl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtl: Option<crate::rtl::RtlConfig>,
    #[serde(skip)]
    pub port_model: PortModel,
    /// The Seidel 1993 cost model (st, bst, rh, st-simple, bst-simple).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost_model::CostConfig>,
    /// The faults ([`fabric::faults`]): those given and those drawn by `link_failure_rate`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_failure_rate: Option<f64>,
    #[serde(skip)]
    pub fault_list: Vec<fabric::faults::Fault>,
    /// Bytes the run is estimated to need at its peak (checked against the memory limits).
    #[serde(skip)]
    pub memory_estimate: u128,
}

/// Files a run writes besides its JSON result.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct Outputs {
    pub vcd: Option<String>,
    pub fst: Option<String>,
    pub gtkw: Option<String>,
    /// Clock period, ns (a whole number of ps).
    pub clock_ns: f64,
    /// Nodes traced (all if absent).
    pub trace_nodes: Option<Vec<u32>>,
    pub trace_from: u64,
    pub trace_to: Option<u64>,
    /// Stop tracing once a waveform file reaches this many bytes.
    pub trace_limit_bytes: Option<u64>,
    pub stats_csv: Option<String>,
    /// Say each waveform's estimated size on standard error before the run (not `--quiet`).
    #[serde(skip)]
    pub announce: bool,
}

impl Outputs {
    pub fn tracing(&self) -> bool {
        self.vcd.is_some() || self.fst.is_some()
    }
    /// The clock period in ps.
    pub fn clock_ps(&self) -> u64 {
        (self.clock_ns * 1000.0).round() as u64
    }
}
