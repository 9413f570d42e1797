//! The validated description of a fabric. [`FabricSpec::validate`] turns raw numbers into a
//! spec the kernel can build, or a [`SpecError`] naming the field, the value and what is
//! allowed.

use crate::nic::Nics;
use crate::topology::{Topology, TopologyKind};
use router::{
    ArbiterPolicy, Header, InjectionVc, MulticastVa, Pipeline, Replication, RouterParams, Routers, Schedule, Switching, VaPolicy,
};
use serde::Serialize;

/// Bad input: which field, what value, what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {value}: {allowed}")]
pub struct SpecError {
    pub field: String,
    pub value: String,
    pub allowed: String,
}

impl SpecError {
    pub fn new(field: &str, value: impl std::fmt::Display, allowed: impl Into<String>) -> SpecError {
        SpecError { field: field.to_string(), value: value.to_string(), allowed: allowed.into() }
    }
}

/// How many NIC channels each node has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PortModel {
    /// One channel per network port: every link at once (the papers' MLA assumption).
    All,
    /// K injection and K ejection channels (K = 1: one-port, the SLA assumption).
    K(u8),
}

impl PortModel {
    pub fn parse(s: &str) -> Option<PortModel> {
        match s {
            "all" => Some(PortModel::All),
            "one" => Some(PortModel::K(1)),
            _ => s.parse::<u8>().ok().filter(|&k| k >= 1).map(PortModel::K),
        }
    }
    /// The channels per node when they are fewer than the links may be (None: all-port).
    pub fn limit(self) -> Option<usize> {
        match self {
            PortModel::All => None,
            PortModel::K(k) => Some(k as usize),
        }
    }
    pub fn channels(self, net_ports: usize) -> usize {
        match self {
            PortModel::All => net_ports,
            PortModel::K(k) => k as usize,
        }
    }
    pub fn name(self) -> String {
        match self {
            PortModel::All => "all".into(),
            PortModel::K(1) => "one".into(),
            PortModel::K(k) => k.to_string(),
        }
    }
}

/// The deepest VC buffer, in flits.
pub const MAX_BUFFER_FLITS: u16 = 4096;

/// Everything needed to build a fabric.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricSpec {
    pub kind: TopologyKind,
    /// Hypercube: `[d]`; others: the size of each dimension.
    pub sizes: Vec<u32>,
    pub switching: Switching,
    pub pipeline: Pipeline,
    pub arbiter: ArbiterPolicy,
    /// VC allocation and replication of multi-flit packets the routers replicate.
    pub multicast_va: MulticastVa,
    pub replication: Replication,
    /// Which injection VC a NIC channel starts a new packet in.
    pub injection: InjectionVc,
    /// VCs of each ejection port (None: as many as `vcs`).
    pub ejection_vcs: Option<u8>,
    /// Which free output VC a head is offered first.
    pub va_policy: VaPolicy,
    pub vcs: u8,
    pub buffer_flits: u16,
    /// Depth of the injection VCs (the input ports the NIC feeds); None: `buffer_flits`.
    pub inject_buffer_flits: Option<u16>,
    /// Longest packet the run will send (store-and-forward and cut-through need buffers that hold it).
    pub packet_flits: u16,
    pub ports: PortModel,
    /// Links move 2^nu flits per cycle; a NIC channel moves one.
    pub nu: u8,
    /// Dateline VC classes on the torus.
    pub deadlock_avoidance: bool,
    pub startup_cycles: u64,
    pub copy_cycles_per_flit: u64,
    /// Deadlock is declared after this many cycles with flits buffered and none moving.
    pub watchdog_cycles: u64,
    /// The run stops (unfinished) after this many cycles.
    pub max_cycles: u64,
    /// Visit routers in a random order each cycle (for testing order independence).
    pub shuffle_seed: Option<u64>,
    /// Measure latency and throughput over this window of cycles ([`crate::measure`]).
    pub measure: Option<crate::measure::Window>,
    /// Which routers the kernel visits each cycle (results never depend on it).
    pub schedule: Schedule,
    /// Tests: the routers rebase their in-line buffer histograms this often (cycles)
    /// instead of every 2^30, to check that rebasing changes nothing.
    #[doc(hidden)]
    pub hist_span: Option<u64>,
    /// Links and routers that fail, and when ([`crate::faults`]).
    pub faults: Vec<crate::faults::Fault>,
}

impl FabricSpec {
    /// A spec with the `ideal` router and one-flit packets on the given topology.
    pub fn ideal(kind: TopologyKind, sizes: &[u32]) -> FabricSpec {
        FabricSpec {
            kind,
            sizes: sizes.to_vec(),
            switching: Switching::StoreAndForward,
            pipeline: Pipeline::IDEAL,
            arbiter: ArbiterPolicy::Key,
            multicast_va: MulticastVa::Atomic,
            replication: Replication::Async,
            injection: InjectionVc::RoundRobin,
            ejection_vcs: None,
            va_policy: VaPolicy::RoundRobin,
            vcs: 1,
            buffer_flits: 2,
            inject_buffer_flits: None,
            packet_flits: 1,
            ports: PortModel::All,
            nu: 0,
            deadlock_avoidance: true,
            startup_cycles: 0,
            copy_cycles_per_flit: 0,
            watchdog_cycles: 10_000,
            max_cycles: u64::MAX / 4,
            shuffle_seed: None,
            measure: None,
            schedule: Schedule::Busy,
            hist_span: None,
            faults: Vec::new(),
        }
    }

    pub fn topology(&self) -> Topology {
        let mut t = Topology::new(self.kind.clone(), &self.sizes);
        t.dateline = self.kind == TopologyKind::Torus && self.deadlock_avoidance;
        t
    }

    pub fn net_ports(&self) -> usize {
        match self.kind {
            TopologyKind::Hypercube => self.sizes[0] as usize,
            _ => 2 * self.sizes.len(),
        }
    }

    pub fn nodes(&self) -> u128 {
        match self.kind {
            TopologyKind::Hypercube => 1u128 << self.sizes[0].min(100),
            _ => self.sizes.iter().map(|&s| s as u128).product(),
        }
    }

    pub fn router_params(&self) -> RouterParams {
        let net = self.net_ports();
        RouterParams {
            switching: self.switching,
            pipeline: self.pipeline,
            arbiter: self.arbiter,
            multicast_va: self.multicast_va,
            replication: self.replication,
            injection: self.injection,
            ejection_vcs: self.ejection_vcs.unwrap_or(self.vcs),
            va_policy: self.va_policy,
            vcs: self.vcs,
            buffer_flits: self.buffer_flits,
            inject_buffer_flits: self.inject_buffer_flits.unwrap_or(self.buffer_flits),
            net_ports: net as u8,
            nic_channels: self.ports.channels(net) as u8,
            link_width: 1u8 << self.nu,
        }
    }

    /// The next smaller fabric of the same kind, to say what fits: a hypercube of one
    /// dimension less, other shapes with every side a tenth shorter (at least two nodes).
    pub fn shrink(&self) -> Option<FabricSpec> {
        let mut s = self.clone();
        match self.kind {
            TopologyKind::Hypercube => s.sizes[0] = self.sizes[0].checked_sub(1).filter(|&d| d >= 1)?,
            _ => {
                for x in s.sizes.iter_mut() {
                    *x = (*x * 9 / 10).max(1).min(x.saturating_sub(1).max(1));
                }
                if s.sizes == self.sizes || s.nodes() < 2 {
                    return None;
                }
            }
        }
        Some(s)
    }

    /// Bytes the fabric's state needs before any packet is sent.
    pub fn bytes_needed(&self) -> u128 {
        let n = self.nodes();
        let p = self.router_params();
        let parts = Routers::bytes_needed(&p, 1) * n
            + n * (Nics::bytes_per_node(p.net_ports as usize, p.nic_channels as usize * p.ejection_vcs as usize) as u128 + 64)
            + n * p.ports() as u128 * 8
            + Topology::coord_table_bytes(&self.kind, &self.sizes)
            + Topology::route_table_bytes(&self.kind, n);
        // The parts' sizes overstate the resident memory by about an eighth (storage
        // allocated and never touched), as measured (docs/performance.md).
        parts * 7 / 8
    }

    /// What a run of this fabric takes before its workload: the process itself, and the
    /// fabric's state plus `extra` per thread, built once per thread.
    pub fn fixed_bytes(&self, threads: u32, extra: u128) -> u128 {
        PROCESS_BYTES + (self.bytes_needed() + extra) * threads as u128
    }

    /// A VC depth given as `field`: 1 to [`MAX_BUFFER_FLITS`], and a whole packet unless
    /// the switching is wormhole.
    fn check_depth(&self, field: &str, depth: u16) -> Result<(), SpecError> {
        if depth == 0 || depth > MAX_BUFFER_FLITS {
            return Err(SpecError::new(field, depth, format!("1 to {MAX_BUFFER_FLITS} flits per VC")));
        }
        if self.switching != Switching::Wormhole && depth < self.packet_flits {
            let fix = if self.packet_flits <= MAX_BUFFER_FLITS {
                format!("use --{field} {} or --switching wh", self.packet_flits)
            } else {
                format!("buffers hold at most {MAX_BUFFER_FLITS} flits: use --switching wh or shorter packets")
            };
            return Err(SpecError::new(
                field,
                depth,
                format!(
                    "{} switching needs each VC buffer to hold a whole packet ({} flits); {fix}",
                    self.switching.name(),
                    self.packet_flits
                ),
            ));
        }
        Ok(())
    }

    /// Check every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SpecError> {
        let dims_str = || self.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
        match self.kind {
            TopologyKind::Hypercube => {
                if self.sizes.len() != 1 || !(1..=20).contains(&self.sizes[0]) {
                    return Err(SpecError::new("dims", dims_str(), "a hypercube takes one dimension count d, 1 <= d <= 20"));
                }
            }
            TopologyKind::Linear => {
                if self.sizes.len() != 1 || self.sizes[0] < 2 {
                    return Err(SpecError::new("dims", dims_str(), "a linear array takes one size n >= 2"));
                }
            }
            TopologyKind::Mesh | TopologyKind::Torus => {
                if self.sizes.is_empty() || self.sizes.len() > 31 {
                    return Err(SpecError::new("dims", dims_str(), "1 to 31 dimension sizes, like 8x8"));
                }
                if self.sizes.contains(&0) {
                    return Err(SpecError::new("dims", dims_str(), "every size must be at least 1"));
                }
                if self.nodes() < 2 {
                    return Err(SpecError::new("dims", dims_str(), "the network needs at least 2 nodes"));
                }
            }
        }
        if self.nodes() > Header::MAX_NODE as u128 + 1 {
            return Err(SpecError::new(
                "dims",
                dims_str(),
                format!("{} nodes; the header's 24-bit node field addresses at most {}", self.nodes(), Header::MAX_NODE as u64 + 1),
            ));
        }
        if !(1..=16).contains(&self.vcs) {
            return Err(SpecError::new("vcs", self.vcs, "1 to 16 virtual channels per port"));
        }
        if let Some(e) = self.ejection_vcs
            && !(1..=16).contains(&e)
        {
            return Err(SpecError::new("ejection-vcs", e, "1 to 16 VCs per ejection port"));
        }
        if self.packet_flits == 0 {
            return Err(SpecError::new("packet-flits", self.packet_flits, "at least 1 flit per packet"));
        }
        self.check_depth("buffer-flits", self.buffer_flits)?;
        if let Some(d) = self.inject_buffer_flits {
            self.check_depth("inject-buffer-flits", d)?;
        }
        let net = self.net_ports();
        // A router has at most 64 ports: its links plus one injection/ejection channel per NIC port.
        let max_k = net.min(router::MAX_PORTS - net);
        if let PortModel::K(k) = self.ports
            && k as usize > max_k
        {
            let allowed = if max_k < net {
                format!(
                    "one, or K from 1 to {max_k} (the NIC channels per node), as a router has at most {} ports and {net} of them are links",
                    router::MAX_PORTS
                )
            } else {
                format!("all, one, or K from 1 to {net} (the network ports per router)")
            };
            return Err(SpecError::new("ports", k, allowed));
        }
        if net + self.ports.channels(net) > router::MAX_PORTS {
            return Err(SpecError::new(
                "ports",
                self.ports.name(),
                format!(
                    "one, or K from 1 to {max_k}: a router has at most {} ports, and with {net} links all-port NICs would need {}",
                    router::MAX_PORTS,
                    2 * net
                ),
            ));
        }
        let router_vcs = self.router_params().ports() * self.vcs as usize;
        if router_vcs > router::MAX_ROUTER_VCS {
            return Err(SpecError::new(
                "vcs",
                self.vcs,
                format!(
                    "a router may have at most {} input VCs (ports x VCs); this one has {} ports ({} links + {} NIC channels), so at most {} VCs",
                    router::MAX_ROUTER_VCS,
                    self.router_params().ports(),
                    net,
                    self.ports.channels(net),
                    router::MAX_ROUTER_VCS / self.router_params().ports()
                ),
            ));
        }
        if self.nu > 6 {
            return Err(SpecError::new("nu", self.nu, "0 to 6 (links move 2^nu flits per cycle)"));
        }
        if self.kind == TopologyKind::Torus && self.deadlock_avoidance && self.vcs < 2 {
            return Err(SpecError::new(
                "vcs",
                self.vcs,
                "a torus with deadlock avoidance needs at least 2 VCs (dateline classes); use --vcs 2 or --deadlock-avoidance off",
            ));
        }
        if self.pipeline.link_latency == 0 {
            return Err(SpecError::new("link_latency", 0, "at least 1 cycle"));
        }
        if self.watchdog_cycles == 0 {
            return Err(SpecError::new("watchdog", 0, "at least 1 cycle"));
        }
        let need = self.fixed_bytes(1, 0);
        let (avail, limit) = memory_limit();
        if need > avail as u128 {
            let mut fits = self.clone();
            let fits = loop {
                match fits.shrink() {
                    Some(s) if s.fixed_bytes(1, 0) <= avail as u128 => {
                        break format!("--dims {}", s.sizes.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("x"));
                    }
                    Some(s) => fits = s,
                    None => break "nothing".to_string(),
                }
            };
            return Err(SpecError::new(
                "dims",
                dims_str(),
                format!(
                    "a {} of {} nodes with {} ports x {} VCs x {} flits needs {} of state; {limit} leaves {}; the largest that fits is {fits}",
                    self.kind.name(),
                    self.nodes(),
                    self.router_params().ports(),
                    self.vcs,
                    self.buffer_flits,
                    bytes_text(need),
                    bytes_text(avail as u128)
                ),
            ));
        }
        Ok(())
    }
}

/// Bytes for a message: GiB with one decimal, or MiB below 1 GiB.
pub fn bytes_text(bytes: u128) -> String {
    if bytes < 1 << 30 { format!("{} MiB", bytes.div_ceil(1 << 20)) } else { format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64) }
}

/// What the process takes beside the model's state (code, libraries, buffers), as measured
/// (docs/performance.md).
pub const PROCESS_BYTES: u128 = 6 << 20;

/// Memory available for the model: the smallest of what the machine has free (three
/// quarters of MemAvailable), what the address-space and data-segment limits (`ulimit -v`,
/// `ulimit -d`) leave beside what the process already uses, and what its memory cgroup
/// (v2 `memory.max`, v1 `memory.limit_in_bytes`, the group's and its parents') leaves.
pub fn available_memory() -> u64 {
    memory_limit().0
}

/// [`available_memory`], and which limit it is ("available memory", "ulimit -v", ...).
pub fn memory_limit() -> (u64, &'static str) {
    let mut best = (8u64 << 30, "available memory (assumed: no /proc/meminfo)");
    let mut take = |bytes: Option<u64>, what: &'static str, first: bool| {
        if let Some(b) = bytes
            && (first || b < best.0)
        {
            best = (b, what);
        }
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    take(meminfo.as_deref().and_then(|s| proc_kb(s, "MemAvailable:")).map(|b| b / 4 * 3), "available memory", true);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let used = |key: &str| proc_kb(&status, key).unwrap_or(0);
    take(rlimit(libc::RLIMIT_AS).map(|l| l.saturating_sub(used("VmSize:"))), "the address-space limit (ulimit -v)", false);
    take(rlimit(libc::RLIMIT_DATA).map(|l| l.saturating_sub(used("VmData:"))), "the data-segment limit (ulimit -d)", false);
    take(cgroup_room(), "the memory cgroup's limit", false);
    best
}

/// A `key: N kB` line of a /proc file, in bytes.
fn proc_kb(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The soft limit `resource`, if any.
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the limit into `r`, a valid rlimit.
    let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// What the process's memory cgroups leave: the least, over its group and the groups above
/// it, of the limit less the usage (cgroup v2, else v1).
fn cgroup_room() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut room: Option<u64> = None;
    for line in groups.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let (base, limit, usage) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes")
        } else {
            continue;
        };
        let mut dir = std::path::PathBuf::from(format!("{base}{path}"));
        loop {
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok().and_then(|s| s.trim().parse::<u64>().ok());
            // "max" (v2) does not parse: no limit; v1 writes a huge number for none.
            if let Some(l) = read(limit).filter(|&l| l < 1 << 60) {
                let left = l.saturating_sub(read(usage).unwrap_or(0));
                room = Some(room.map_or(left, |r| r.min(left)));
            }
            if dir.as_os_str().len() <= base.len() || !dir.pop() {
                break;
            }
        }
    }
    room
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_fields_with_their_names() {
        let ok = FabricSpec::ideal(TopologyKind::Hypercube, &[4]);
        assert!(ok.validate().is_ok());
        let e = FabricSpec::ideal(TopologyKind::Hypercube, &[21]).validate().unwrap_err();
        assert_eq!(e.field, "dims");
        let e = FabricSpec::ideal(TopologyKind::Mesh, &[4, 0]).validate().unwrap_err();
        assert_eq!(e.field, "dims");
        let mut s = FabricSpec::ideal(TopologyKind::Torus, &[4, 4]);
        s.vcs = 1;
        assert_eq!(s.validate().unwrap_err().field, "vcs");
        s.deadlock_avoidance = false;
        assert!(s.validate().is_ok());
        let mut s = FabricSpec::ideal(TopologyKind::Mesh, &[4, 4]);
        s.packet_flits = 4;
        s.buffer_flits = 2;
        assert_eq!(s.validate().unwrap_err().field, "buffer-flits");
        s.switching = Switching::Wormhole;
        assert!(s.validate().is_ok());
        s.ports = PortModel::K(5);
        assert_eq!(s.validate().unwrap_err().field, "ports");
    }

    #[test]
    fn too_big_for_memory_says_how_much() {
        let mut s = FabricSpec::ideal(TopologyKind::Mesh, &[4096, 4096]);
        s.buffer_flits = 4096;
        s.vcs = 16;
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "dims");
        assert!(e.allowed.contains("GiB"), "{e}");
    }
}
