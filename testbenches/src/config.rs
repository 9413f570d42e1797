//! Scenario configuration: a TOML file and command-line flags (flags win) resolved against
//! defaults into one [`Config`], checked field by field. Every problem is a [`ConfigError`]
//! that names the field, the value and what is allowed.

use fabric::algorithms::kbcast::{ActiveSet, Variant};
use fabric::algorithms::pmnb::Variant as PmnbVariant;
use fabric::algorithms::traffic::{Pattern, TrafficSpec};
use fabric::algorithms::{self, Forwarding};
use fabric::{FabricSpec, PortModel, Schedule, TopologyKind};
use router::{ArbiterPolicy, InjectionVc, MulticastVa, NodeId, Pipeline, Replication, Switching, VaPolicy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Bad input: exit code 2 with one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<fabric::SpecError> for ConfigError {
    fn from(e: fabric::SpecError) -> Self {
        ConfigError(e.to_string())
    }
}

fn err(field: &str, value: impl std::fmt::Display, allowed: impl std::fmt::Display) -> ConfigError {
    let value = value.to_string();
    let value = if value.trim().is_empty() { format!("{value:?}") } else { value.replace('\n', " ") };
    ConfigError(format!("{field}: {value}: {allowed}").replace('\n', " "))
}

/// Bytes as GiB with one decimal (MiB below 1 GiB).
fn gib(bytes: u128) -> String {
    fabric::spec::bytes_text(bytes)
}

/// The fields a scenario file or the flags may set, by their flag names.
pub const FIELDS: &[&str] = &[
    "topology",
    "dims",
    "algorithm",
    "ports",
    "switching",
    "router",
    "packet-flits",
    "buffer-flits",
    "inject-buffer-flits",
    "vcs",
    "nu",
    "root",
    "traffic",
    "rate",
    "broadcast-rate",
    "cycles",
    "warmup",
    "batches",
    "seed",
    "deadlock-avoidance",
    "forwarding",
    "arbiter",
    "injection-vc",
    "ejection-vcs",
    "va-policy",
    "multicast-va",
    "replication",
    "startup-cycles",
    "copy-cycles-per-flit",
    "watchdog",
    "max-cycles",
    "hotspot",
    "hotspot-fraction",
    "vcd",
    "fst",
    "gtkw",
    "clock-ns",
    "trace-nodes",
    "trace-from",
    "trace-to",
    "trace-limit",
    "stats-csv",
    "stats",
    "threads",
    "schedule",
    "variant",
    "active",
    "active-count",
    "active-set",
    "tp",
    "cost-model",
    "a",
    "b",
    "rho",
    "message-bytes",
    "fill",
    "load",
    "pmnb",
    "json",
    "quiet",
    "fault",
    "link-failure-rate",
];

/// The fields that are switches (on/off), the only ones a scenario may give as a TOML boolean.
const SWITCHES: &[&str] = &["deadlock-avoidance", "quiet"];

/// Raw settings: field name → value text, with where it came from (for messages).
#[derive(Clone, Debug, Default)]
pub struct Raw {
    pub values: BTreeMap<String, String>,
}

impl Raw {
    /// Read a scenario file. Keys may be written with `-` or `_`.
    pub fn from_toml_file(path: &Path) -> Result<Raw, ConfigError> {
        let text = crate::input::read_text(path)
            .map_err(|e| err("scenario", path.display(), format!("a scenario TOML file (cannot read it: {e})")))?;
        Raw::from_toml_str(&text, &path.display().to_string())
    }

    pub fn from_toml_str(text: &str, name: &str) -> Result<Raw, ConfigError> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| toml_error("scenario", "malformed TOML: ", text, name, &e))?;
        let mut raw = Raw::default();
        let mut spelled: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in table {
            let key = k.replace('_', "-");
            if !FIELDS.contains(&key.as_str()) {
                return Err(err(
                    "scenario",
                    format!("{}: {k}", key_location(text, name, &k)),
                    format!("unknown field; the fields are {}", FIELDS.join(", ")),
                ));
            }
            if let Some(first) = spelled.insert(key.clone(), k.clone()) {
                return Err(err("scenario", format!("{name}: {first} and {k}"), format!("{key} is given twice; keep one")));
            }
            let s = match &v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                // Only switches take a boolean (`deadlock_avoidance = false`).
                toml::Value::Boolean(b) if SWITCHES.contains(&key.as_str()) => if *b { "on" } else { "off" }.to_string(),
                toml::Value::Array(a) if key == "fault" => {
                    let mut lines = Vec::new();
                    for x in a {
                        match x {
                            toml::Value::String(f) => lines.push(f.clone()),
                            other => return Err(err("fault", other.to_string(), "a fault is a string like \"link 5.0 at 100\"")),
                        }
                    }
                    lines.join("\n")
                }
                toml::Value::Array(a) if key == "dims" || key == "root" => {
                    let parts: Vec<String> = a.iter().map(|x| x.to_string()).collect();
                    parts.join(if key == "dims" { "x" } else { "," })
                }
                toml::Value::Boolean(b) => {
                    return Err(err(&key, b, format!("{}: expected a string or a number, not a boolean", key_location(text, name, &k))));
                }
                other => return Err(err(&key, other.to_string(), "expected a string or a number")),
            };
            raw.values.insert(key, s);
        }
        Ok(raw)
    }

    /// Later settings (flags) override earlier ones (the file).
    pub fn overlay(&mut self, other: Raw) {
        self.values.extend(other.values);
    }

    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.values.get(k).map(|s| s.as_str())
    }
}

/// One line for a TOML syntax or type error: `field: file:line:col: what message`.
pub fn toml_error(field: &str, what: &str, text: &str, name: &str, e: &toml::de::Error) -> ConfigError {
    let msg = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let mut start = span.start.min(text.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let before = &text[..start];
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let col = before[line_start..].chars().count() + 1;
            // The key whose value is wrong, when the line is `key = value`.
            let line_text = text[line_start..].lines().next().unwrap_or("");
            let key = line_text
                .split_once('=')
                .map(|(k, _)| k.trim())
                .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
            let at = key.map_or(String::new(), |k| format!("{k}: "));
            let hint = if msg.contains("too large") || msg.contains("too small") {
                " (TOML integers are 64-bit signed; write a larger value as a string)"
            } else {
                ""
            };
            ConfigError(format!("{field}: {name}:{line}:{col}: {at}{what}{msg}{hint}").replace('\n', " "))
        }
        None => ConfigError(format!("{field}: {name}: {what}{msg}").replace('\n', " ")),
    }
}

/// `file:line` of a top-level key (for messages), or just `file` if it cannot be found.
fn key_location(text: &str, name: &str, key: &str) -> String {
    let line = text.lines().position(|l| {
        let l = l.trim_start();
        let rest = l.strip_prefix(key).or_else(|| l.strip_prefix(&format!("\"{key}\""))).or_else(|| l.strip_prefix(&format!("'{key}'")));
        rest.is_some_and(|r| r.trim_start().starts_with('='))
    });
    match line {
        Some(i) => format!("{name}:{}", i + 1),
        None => name.to_string(),
    }
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

/// The settings of `kbcast`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KbcastConfig {
    pub variant: Variant,
    /// The broadcasting nodes, ascending.
    pub active: Vec<u32>,
    /// How they were chosen (explicit list, or a kind of set with --active-count).
    pub active_set: String,
    /// A parallel-prefix step, in slots (0: ranks known, no prefix phase).
    pub tp: f64,
    /// Cycles of a step (t_p × packet-flits, at most 1000 × 65535).
    pub tp_cycles: u32,
}

/// The settings of `pmnb-1`, `pmnb-2`, `pmnb-3`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PmnbConfig {
    pub variant: PmnbVariant,
    /// The active nodes, ascending.
    pub active: Vec<u32>,
    pub active_set: String,
    /// A parallel-prefix step, in slots (0: ranks known, no prefix phase).
    pub tp: f64,
    /// Cycles of a step (t_p × packet-flits, at most 1000 × 65535).
    pub tp_cycles: u32,
}

/// The settings of `dynamic`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DynamicConfig {
    /// The PMNB each period runs: pmnb-2 or pmnb-3.
    pub pmnb: PmnbVariant,
    /// The hypercube utilization factor ρ = λ(N − 1)/d (eq. 17).
    pub load: f64,
    /// Broadcast requests per node per slot.
    pub lambda: f64,
    /// Arrivals during [0, cycles); the periods under way then finish, and the backlog
    /// drains for at most as long again.
    pub cycles: u64,
    /// Delays are averaged over arrivals from this cycle on (a tenth of the window).
    pub warmup_cycles: u64,
    pub tp: f64,
    /// Cycles of a step (t_p × packet-flits, at most 1000 × 65535).
    pub tp_cycles: u32,
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

/// Refuse a waveform whose times would pass 2^64 of its timescale unit before the last
/// cycle it may trace (the run's `max_cycles`, or `--trace-to`): the nearest clock below
/// with fewer digits that fits is named, and how far to trace with this one.
fn check_waveform_time(out: &Outputs, max_cycles: u64) -> Result<(), ConfigError> {
    let last = out.trace_to.map_or(max_cycles, |t| t.min(max_cycles));
    let clock = out.clock_ps();
    let fits = |ps: u64| traces::sink::last_timed_cycle(ps) >= last;
    if !out.tracing() || fits(clock) {
        return Ok(());
    }
    // Rounded down to ever fewer digits; the first that fits is the largest of them.
    let shorter = (1..=9).map(|k| clock / 10u64.pow(k) * 10u64.pow(k)).find(|&ps| ps > 0 && fits(ps));
    let instead = shorter
        .map_or(String::new(), |ps| format!("the largest --clock-ns below it with fewer digits that fits is {}; or ", ps as f64 / 1000.0));
    Err(err(
        "clock-ns",
        out.clock_ns,
        format!(
            "waveform times to cycle {last} overflow the 64 bits of its time unit with this clock; {instead}trace to cycle {} at most (--trace-to or --max-cycles)",
            traces::sink::last_timed_cycle(clock)
        ),
    ))
}

/// The faults: `fault` (lines of `link NODE.PORT at CYCLE` / `router NODE at CYCLE`, or
/// `@FILE` naming a file of such lines, `#` starting a comment) and the links failed at
/// random by `link-failure-rate` and `seed`.
fn faults(raw: &Raw, topo: &fabric::Topology, seed: u64) -> Result<(Vec<fabric::faults::Fault>, Option<f64>), ConfigError> {
    let mut list = Vec::new();
    for given in raw.get("fault").into_iter().flat_map(|v| v.split('\n')) {
        if given.trim().is_empty() {
            return Err(err("fault", given, "a fault like \"link 5.0 at 100\" or \"router 5 at 100\", or @FILE of such lines"));
        }
        let text = match given.trim().strip_prefix('@') {
            Some(path) => crate::input::read_text(Path::new(path))
                .map_err(|e| err("fault", given.trim(), format!("a file of faults, one a line (cannot read it: {e})")))?,
            None => given.to_string(),
        };
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                list.push(fabric::faults::Fault::parse(line, topo)?);
            }
        }
    }
    let rate = match raw.get("link-failure-rate") {
        Some(v) => {
            let p = v.trim().parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p));
            let p = p.ok_or_else(|| {
                err("link-failure-rate", v, "a probability from 0 to 1 (each link fails at cycle 0 with it, drawn by --seed)")
            })?;
            list.extend(fabric::faults::Fault::random_links(topo, p, seed));
            Some(p)
        }
        None => None,
    };
    Ok((list, rate))
}

/// Resolve kbcast's settings.
fn kbcast_config(raw: &Raw, topo: &fabric::Topology, packet_flits: u16, seed: u64) -> Result<KbcastConfig, ConfigError> {
    let d = topo.ndims() as u32;
    let variant = match raw.get("variant") {
        Some(v) => Variant::parse(v).ok_or_else(|| err("variant", v, format!("one of {}", Variant::NAMES)))?,
        None => Variant::Prefix,
    };
    let (active, active_set) = active_set(raw, topo, seed)?;
    if variant == Variant::RankRotated && active.len() as u32 > d {
        return Err(err("active", active.len(), format!("rank-rotated is for at most d = {d} broadcasters")));
    }
    let (tp, tp_cycles) = prefix_step(raw, packet_flits)?;
    if raw.get("tp").is_some() && !variant.ranked() {
        return Err(err("tp", tp, format!("the {} variant has no prefix phase", serde_json::to_value(variant).unwrap().as_str().unwrap())));
    }
    Ok(KbcastConfig { variant, active, active_set, tp, tp_cycles })
}

/// pmnb-2 splits each packet into d mini-packets of equal length.
fn check_split(name: &str, packet_flits: u16, d: u32) -> Result<(), ConfigError> {
    if !(packet_flits as u32).is_multiple_of(d) {
        return Err(err(
            "packet-flits",
            packet_flits,
            format!("{name} splits each packet into d = {d} mini-packets: a multiple of {d} (default {d})"),
        ));
    }
    Ok(())
}

/// Resolve the settings of pmnb-1, -2, -3.
fn pmnb_config(name: &str, raw: &Raw, topo: &fabric::Topology, packet_flits: u16, seed: u64) -> Result<PmnbConfig, ConfigError> {
    let variant = PmnbVariant::parse(name).expect("a pmnb algorithm");
    if variant == PmnbVariant::Two {
        check_split(name, packet_flits, topo.ndims() as u32)?;
    }
    let (active, active_set) = active_set(raw, topo, seed)?;
    let (tp, tp_cycles) = prefix_step(raw, packet_flits)?;
    Ok(PmnbConfig { variant, active, active_set, tp, tp_cycles })
}

/// Resolve the dynamic scheme's settings.
fn dynamic_config(raw: &Raw, topo: &fabric::Topology, packet_flits: u16) -> Result<DynamicConfig, ConfigError> {
    let d = topo.ndims() as u32;
    let pmnb = match raw.get("pmnb") {
        Some(v) => match PmnbVariant::parse(v) {
            Some(p @ (PmnbVariant::Two | PmnbVariant::Three)) => p,
            _ => return Err(err("pmnb", v, "pmnb-2 or pmnb-3 (the PMNB each period runs; pmnb-1 is not linear in M)")),
        },
        None => PmnbVariant::Two,
    };
    if pmnb == PmnbVariant::Two {
        check_split("dynamic with pmnb-2", packet_flits, d)?;
    }
    let load = match raw.get("load") {
        Some(v) => float(
            "load",
            v,
            0.0..=10.0,
            "the hypercube utilization factor rho = lambda(N-1)/d, a number from 0 to 10 (rho < 1 is needed for stability)",
        )?,
        None => 0.5,
    };
    let cycles = match raw.get("cycles") {
        Some(v) => uint("cycles", v, 1, 1 << 40)?,
        None => 20_000 * packet_flits as u64,
    };
    let (tp, tp_cycles) = prefix_step(raw, packet_flits)?;
    let lambda = load * d as f64 / (topo.nodes() as f64 - 1.0);
    Ok(DynamicConfig { pmnb, load, lambda, cycles, warmup_cycles: cycles / 10, tp, tp_cycles })
}

/// The active nodes: `--active LIST`, or `--active-count K` (default d) chosen by
/// `--active-set` (random by `--seed`, subcube, adversarial).
fn active_set(raw: &Raw, topo: &fabric::Topology, seed: u64) -> Result<(Vec<u32>, String), ConfigError> {
    let d = topo.ndims() as u32;
    let n = topo.nodes() as u64;
    Ok(match raw.get("active") {
        Some(v) => {
            if let Some(c) = raw.get("active-count") {
                return Err(err("active-count", c, "give either --active LIST or --active-count K, not both"));
            }
            if let Some(s) = raw.get("active-set") {
                return Err(err(
                    "active-set",
                    s,
                    "chooses --active-count nodes; with --active LIST the list is the set: give one or the other",
                ));
            }
            let list = parse_node_list("active", v, n)?.unwrap_or_else(|| (0..n as u32).collect());
            (list, "list".to_string())
        }
        None => {
            let set = match raw.get("active-set") {
                Some(v) => ActiveSet::parse(v).ok_or_else(|| err("active-set", v, format!("one of {}", ActiveSet::NAMES)))?,
                None => ActiveSet::Random,
            };
            let cap = set.capacity(d) as u64;
            let k = match raw.get("active-count") {
                Some(v) => uint("active-count", v, 1, cap).map_err(|e| match set {
                    // The §3.1 set lies in one half of the cube.
                    ActiveSet::Adversarial => {
                        ConfigError(format!("{} (the adversarial set of sec. 3.1 lies in one half of the cube)", e.0))
                    }
                    _ => e,
                })? as u32,
                None => d,
            };
            (set.choose(d, k, seed), serde_json::to_value(set).unwrap().as_str().unwrap().to_string())
        }
    })
}

/// `--tp`: a parallel-prefix step in slots (default 1), and in cycles.
fn prefix_step(raw: &Raw, packet_flits: u16) -> Result<(f64, u32), ConfigError> {
    let tp = match raw.get("tp") {
        // `+ 0.0` turns -0 into 0 (the config echoes it).
        Some(v) => float("tp", v, 0.0..=1000.0, "a prefix step in slots, a number from 0 to 1000")? + 0.0,
        None => 1.0,
    };
    // Whole up to the rounding of a decimal slot count (2.3 x 100 is 229.99999999999997).
    let exact = tp * packet_flits as f64;
    let flits = exact.round();
    if tp > 0.0 && ((exact - flits).abs() > 1e-9 * flits.max(1.0) || flits < 1.0) {
        return Err(err(
            "tp",
            raw.get("tp").unwrap_or("1"),
            format!(
                "a prefix step is a whole number of cycles: with {packet_flits}-flit packets, a multiple of {}",
                1.0 / packet_flits as f64
            ),
        ));
    }
    Ok((tp, flits as u32))
}

/// A node list: `all`, or ids and ranges like `0-3,7,12`.
fn parse_node_list(field: &str, v: &str, nodes: u64) -> Result<Option<Vec<u32>>, ConfigError> {
    if v.trim() == "all" {
        return Ok(None);
    }
    let allowed = || format!("all, or node ids below {nodes} as a list like 0-3,7,12");
    let mut out = Vec::new();
    for part in v.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let (a, b): (u64, u64) = match (a.parse(), b.parse()) {
            (Ok(a), Ok(b)) if a <= b && b < nodes => (a, b),
            _ => return Err(err(field, v, allowed())),
        };
        out.extend((a..=b).map(|x| x as u32));
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(err(field, v, allowed()));
    }
    Ok(Some(out))
}

fn uint(field: &str, v: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let allowed = || format!("a whole number from {min} to {max}");
    let n: u64 = v.trim().parse().map_err(|_| err(field, v, allowed()))?;
    if n < min || n > max {
        return Err(err(field, v, allowed()));
    }
    Ok(n)
}

/// A decimal number with at most three decimals, in thousandths, from `min` to `max`
/// thousandths (`0.8` is 800), described to the user as `what`.
fn thousandths(field: &str, v: &str, min: u64, max: u64, what: &str) -> Result<u64, ConfigError> {
    let bad = || err(field, v, what);
    let t = v.trim();
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) || frac.len() > 3 || whole.len() > 12 {
        return Err(bad());
    }
    let w: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let f: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<3}").parse().map_err(|_| bad())? };
    let n = w * 1000 + f;
    if n < min || n > max {
        return Err(bad());
    }
    Ok(n)
}

/// A number in `range`, described to the user as `what` (for example "a fraction in [0, 1]").
fn float(field: &str, v: &str, range: std::ops::RangeInclusive<f64>, what: &str) -> Result<f64, ConfigError> {
    match v.trim().parse::<f64>() {
        Ok(x) if range.contains(&x) => Ok(x),
        _ => Err(err(field, v, what)),
    }
}

pub(crate) fn on_off(field: &str, v: &str) -> Result<bool, ConfigError> {
    match v {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(err(field, v, "on or off")),
    }
}

fn parse_dims(kind: &TopologyKind, v: &str) -> Result<Vec<u32>, ConfigError> {
    let allowed = match kind {
        TopologyKind::Hypercube => "the dimension d, like 6",
        TopologyKind::Linear => "the number of nodes, like 16",
        _ => "sizes separated by x, like 16x32",
    };
    let parts: Vec<&str> = v.split(['x', 'X']).collect();
    let mut dims = Vec::new();
    for p in parts {
        let n: i64 = p.trim().parse().map_err(|_| err("dims", v, allowed))?;
        if n <= 0 {
            return Err(err("dims", v, format!("{allowed}; every size must be at least 1")));
        }
        dims.push(u32::try_from(n).map_err(|_| err("dims", v, allowed))?);
    }
    if matches!(kind, TopologyKind::Hypercube | TopologyKind::Linear) && dims.len() != 1 {
        return Err(err("dims", v, format!("a {} takes one number: {allowed}", kind.name())));
    }
    Ok(dims)
}

impl Config {
    /// Resolve raw settings against the defaults and check everything.
    pub fn resolve(raw: &Raw) -> Result<Config, ConfigError> {
        let (prepared, cost) = crate::cost_model::prepare(raw)?;
        let raw = &prepared;
        let topology = match raw.get("topology") {
            None => TopologyKind::Hypercube,
            Some(t) => TopologyKind::parse(t).ok_or_else(|| err("topology", t, format!("one of {}", TopologyKind::NAMES)))?,
        };
        let dims = match raw.get("dims") {
            Some(v) => parse_dims(&topology, v)?,
            None => match topology {
                TopologyKind::Hypercube => vec![6],
                TopologyKind::Linear => vec![16],
                _ => vec![8, 8],
            },
        };
        let traffic = raw.get("traffic");
        // Broadcast traffic, with or without unicast traffic (--traffic).
        let broadcast_rate = match raw.get("broadcast-rate") {
            Some(v) => {
                let what = "broadcasts per node per cycle, a number in [0, 1], with or without --traffic PATTERN (not with --algorithm)";
                if let Some(a) = raw.get("algorithm") {
                    return Err(err("broadcast-rate", v, format!("{what}; this run is --algorithm {a}")));
                }
                Some(float("broadcast-rate", v, 0.0..=1.0, what)?)
            }
            None => None,
        };
        let is_traffic = traffic.is_some() || broadcast_rate.is_some();
        if let (Some(a), Some(t)) = (raw.get("algorithm"), traffic) {
            return Err(err("algorithm", a, format!("a run is either an algorithm or synthetic traffic (--traffic {t}), not both")));
        }
        let is_dynamic = raw.get("algorithm") == Some("dynamic");
        for f in ["rate", "cycles", "warmup", "batches", "hotspot", "hotspot-fraction"] {
            let applies = traffic.is_some() || (is_traffic && !matches!(f, "rate" | "hotspot" | "hotspot-fraction"));
            if raw.get(f).is_some() && !applies && !(f == "cycles" && is_dynamic) {
                return Err(err(
                    f,
                    raw.get(f).unwrap(),
                    "only applies with --traffic PATTERN (--cycles, --warmup and --batches also with --broadcast-rate alone, --cycles with --algorithm dynamic)",
                ));
            }
        }
        let switching = match raw.get("switching") {
            Some(s) => Switching::parse(s).ok_or_else(|| err("switching", s, format!("one of {}", Switching::NAMES)))?,
            None if is_traffic => Switching::Wormhole,
            None => Switching::StoreAndForward,
        };
        let (router, mut pipeline) = match raw.get("router") {
            None if is_traffic => ("realistic".to_string(), Pipeline::REALISTIC),
            None => ("ideal".to_string(), Pipeline::IDEAL),
            Some(name) => match Pipeline::preset(name) {
                Some(p) => (name.to_string(), p),
                None => (name.to_string(), read_router_file(name)?),
            },
        };
        if pipeline.link_latency == 0 {
            return Err(err("router", &router, "link_latency must be at least 1 cycle"));
        }
        let arbiter = match raw.get("arbiter") {
            Some(s) => ArbiterPolicy::parse(s).ok_or_else(|| err("arbiter", s, format!("one of {}", ArbiterPolicy::NAMES)))?,
            None => ArbiterPolicy::Key,
        };
        let injection_vc = match raw.get("injection-vc") {
            Some(s) => InjectionVc::parse(s).ok_or_else(|| err("injection-vc", s, format!("one of {}", InjectionVc::NAMES)))?,
            None => InjectionVc::RoundRobin,
        };
        let va_policy = match raw.get("va-policy") {
            Some(s) => VaPolicy::parse(s).ok_or_else(|| err("va-policy", s, format!("one of {}", VaPolicy::NAMES)))?,
            None => VaPolicy::RoundRobin,
        };
        // pmnb-2 splits a packet into d mini-packets of a flit each by default.
        let splits = raw.get("algorithm") == Some("pmnb-2") || is_dynamic && raw.get("pmnb").is_none_or(|p| p == "pmnb-2");
        let packet_flits = match raw.get("packet-flits") {
            Some(v) => uint("packet-flits", v, 1, 65535)? as u16,
            None if is_traffic => 4,
            None if splits && topology == TopologyKind::Hypercube => dims[0].clamp(1, 65535) as u16,
            None => 1,
        };
        let buffer_flits = match raw.get("buffer-flits") {
            Some(v) => uint("buffer-flits", v, 1, 4096)? as u16,
            None => (2 * packet_flits as u32).clamp(2, 4096) as u16,
        };
        let inject_buffer_flits = match raw.get("inject-buffer-flits") {
            Some(v) => uint("inject-buffer-flits", v, 1, 4096)? as u16,
            None => buffer_flits,
        };
        let vcs = match raw.get("vcs") {
            Some(v) => uint("vcs", v, 1, 16)? as u8,
            None if topology == TopologyKind::Torus || is_traffic => 2,
            None => 1,
        };
        let nu = match raw.get("nu") {
            Some(v) => uint("nu", v, 0, 6)? as u8,
            None => 0,
        };
        if nu > 0 && vcs == 1 {
            return Err(err(
                "nu",
                nu,
                format!(
                    "links of 2^nu = {} flits per cycle carry one flit per VC and cycle, so one VC never uses them: add --vcs 2 or more (up to 2^nu worms share a link)",
                    1u32 << nu
                ),
            ));
        }
        let port_model = match raw.get("ports") {
            Some(v) => PortModel::parse(v).ok_or_else(|| err("ports", v, "all, one, or a number of ports K >= 1"))?,
            // One injection and one ejection channel per node, as in most NoCs (and BookSim).
            None if is_traffic => PortModel::K(1),
            None => PortModel::All,
        };
        let seed = match raw.get("seed") {
            Some(v) => uint("seed", v, 0, u64::MAX)?,
            None => 1,
        };
        let deadlock_avoidance = match raw.get("deadlock-avoidance") {
            Some(v) => on_off("deadlock-avoidance", v)?,
            None => true,
        };
        if !deadlock_avoidance && topology != TopologyKind::Torus {
            return Err(err("deadlock-avoidance", "off", format!("only tori have dateline VCs to remove; a {} has none", topology.name())));
        }
        let startup_cycles = match raw.get("startup-cycles") {
            Some(v) => uint("startup-cycles", v, 0, 1 << 40)?,
            None => 0,
        };
        let copy_cycles_per_flit = match raw.get("copy-cycles-per-flit") {
            Some(v) => uint("copy-cycles-per-flit", v, 0, 1 << 20)?,
            None => 0,
        };
        // The longest pause in which nothing moves that is not a deadlock: a start-up and
        // copy cost, and twice a flit's way through every stage of a slow router and its
        // credit's way back (the link at least one cycle, as built below).
        let p = &pipeline;
        let round_trip: u64 =
            [p.rc_delay, p.va_delay, p.link_latency.max(1), p.credit_delay, p.inject_latency].iter().map(|&c| c as u64).sum();
        let node_costs = startup_cycles + copy_cycles_per_flit * packet_flits as u64;
        let longest_pause = 2 * round_trip + node_costs;
        let watchdog_cycles = match raw.get("watchdog") {
            Some(v) => {
                let w = uint("watchdog", v, 1, 1 << 40)?;
                if w < longest_pause {
                    return Err(err(
                        "watchdog",
                        v,
                        format!(
                            "at least {longest_pause} cycles here (twice the router's stage, link, credit and injection delays, plus start-up and copy costs): a shorter pause is not a deadlock"
                        ),
                    ));
                }
                w
            }
            None => (2 * round_trip).max(10_000) + node_costs,
        };
        let max_cycles = match raw.get("max-cycles") {
            Some(v) => uint("max-cycles", v, 1, 1 << 48)?,
            None => 1 << 40,
        };
        let mut spec = FabricSpec::ideal(topology.clone(), &dims);
        spec.switching = switching;
        pipeline.link_latency = pipeline.link_latency.max(1);
        spec.pipeline = pipeline;
        spec.arbiter = arbiter;
        spec.injection = injection_vc;
        spec.va_policy = va_policy;
        spec.vcs = vcs;
        let ejection_vcs = match raw.get("ejection-vcs") {
            Some(v) => uint("ejection-vcs", v, 1, 16)? as u8,
            None => vcs,
        };
        spec.ejection_vcs = Some(ejection_vcs);
        spec.buffer_flits = buffer_flits;
        spec.inject_buffer_flits = Some(inject_buffer_flits);
        spec.packet_flits = packet_flits;
        spec.ports = port_model;
        spec.nu = nu;
        spec.deadlock_avoidance = deadlock_avoidance;
        check_addressable(&spec)?;
        spec.validate()?;
        let topo = spec.topology();
        let nodes = topo.nodes() as u64;

        let workload = if is_traffic {
            // Broadcasts alone: no unicast packets (rate 0).
            let t = traffic.unwrap_or("uniform");
            let pattern = Pattern::parse(t).ok_or_else(|| err("traffic", t, format!("one of {}", Pattern::NAMES)))?;
            pattern.check(&topo)?;
            // What only an algorithm run takes would be dropped here: say so.
            for f in std::iter::once("root").chain(ALGORITHM_FLAGS.iter().map(|(f, _)| *f)) {
                if let Some(v) = raw.get(f) {
                    return Err(err(f, v, format!("only applies to --algorithm runs, not --traffic {t}")));
                }
            }
            if pattern != Pattern::Hotspot {
                for f in ["hotspot", "hotspot-fraction"] {
                    if let Some(v) = raw.get(f) {
                        return Err(err(f, v, format!("only applies with --traffic hotspot, not {t}")));
                    }
                }
            }
            let rate = match raw.get("rate") {
                _ if traffic.is_none() => 0.0,
                Some(v) => {
                    let r: f64 = v.trim().parse().map_err(|_| err("rate", v, "packets per node per cycle, a number in (0, 1]"))?;
                    if !(r > 0.0 && r <= 1.0) {
                        return Err(err("rate", v, "packets per node per cycle, a number in (0, 1]"));
                    }
                    r
                }
                None => 0.025,
            };
            let cycles = match raw.get("cycles") {
                Some(v) => uint("cycles", v, 1, 1 << 40)?,
                None => 10_000,
            };
            let warmup = match raw.get("warmup") {
                Some(v) => {
                    let w = uint("warmup", v, 0, 1 << 40)?;
                    if w >= cycles {
                        return Err(err(
                            "warmup",
                            v,
                            format!("fewer cycles than --cycles ({cycles}): the statistics count over the cycles [warmup, cycles)"),
                        ));
                    }
                    w
                }
                None => 0,
            };
            let batches = match raw.get("batches") {
                Some(v) => uint("batches", v, 2, 100)? as u32,
                None => fabric::Window::DEFAULT_BATCHES,
            };
            let hotspot = match raw.get("hotspot") {
                Some(v) => parse_node("hotspot", v, &topo)?,
                None => 0,
            };
            let hotspot_fraction = match raw.get("hotspot-fraction") {
                Some(v) => float("hotspot-fraction", v, 0.0..=1.0, "a fraction in [0, 1]")?,
                None => 0.2,
            };
            // Offered per node of the fabric: the nodes a permutation maps to themselves send nothing.
            let (senders, nodes) = (pattern.senders(&topo), topo.nodes() as u64);
            let broadcast_rate = broadcast_rate.unwrap_or(0.0);
            // A broadcast's flits are offered once to each of its N - 1 destinations.
            let offered_flits = rate * packet_flits as f64 * if senders == nodes { 1.0 } else { senders as f64 / nodes as f64 }
                + broadcast_rate * packet_flits as f64 * (nodes - 1) as f64;
            let forwarding = match raw.get("forwarding") {
                Some(v) if broadcast_rate > 0.0 => {
                    Forwarding::parse(v).ok_or_else(|| err("forwarding", v, format!("one of {}", Forwarding::NAMES)))?
                }
                Some(v) => {
                    return Err(err("forwarding", v, "only applies to broadcast algorithms and to traffic with --broadcast-rate above 0"));
                }
                None => Forwarding::Node,
            };
            Workload::Traffic {
                pattern,
                rate,
                broadcast_rate,
                forwarding,
                offered_flits,
                cycles,
                warmup,
                batches,
                hotspot,
                hotspot_fraction,
            }
        } else {
            let name = raw.get("algorithm").unwrap_or("snb").to_string();
            let info = algorithms::find(&name).ok_or_else(|| {
                err(
                    "algorithm",
                    &name,
                    format!("one of {} (see flitwave list)", algorithms::ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")),
                )
            })?;
            if !info.topologies.contains(&topology) {
                return Err(err(
                    "algorithm",
                    &name,
                    format!(
                        "not defined on a {}; it runs on {}",
                        topology.name(),
                        info.topologies.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            let forwarding = match raw.get("forwarding") {
                Some(v) => Forwarding::parse(v).ok_or_else(|| err("forwarding", v, format!("one of {}", Forwarding::NAMES)))?,
                None => Forwarding::Node,
            };
            if !info.router_forwarding && forwarding == Forwarding::Router {
                return Err(err(
                    "forwarding",
                    "router",
                    format!("{name} forwards at the nodes, as its paper does; snb and mnb-sbt also run as in-router multicast"),
                ));
            }
            if info.all_or_one_port && !matches!(port_model, PortModel::All | PortModel::K(1)) {
                return Err(err(
                    "ports",
                    port_model.name(),
                    format!("{name} is defined for --ports all (the paper's MLA assumption) or one (SLA)"),
                ));
            }
            let root = match raw.get("root") {
                Some(v) => parse_node("root", v, &topo)?,
                None => 0,
            };
            if !info.rooted && raw.get("root").is_some() {
                return Err(err("root", raw.get("root").unwrap(), format!("{name} involves every node; it takes no root")));
            }
            let is_pmnb = name.starts_with("pmnb-");
            if (name == "kbcast" || is_pmnb || name == "dynamic" || name == "edn" || name == "dilated-diagonal")
                && port_model != PortModel::All
            {
                return Err(err(
                    "ports",
                    port_model.name(),
                    format!("{name} assumes every node sends and receives on all links at once: --ports all"),
                ));
            }
            round_broadcast_shape(&name, &topo)?;
            if (name == "dta" || name == "ho-kao") && port_model != PortModel::All {
                return Err(err(
                    "ports",
                    port_model.name(),
                    format!("{name} sends a worm on every link of a node in one round (the notes' all-port hypercube): --ports all"),
                ));
            }
            for (f, algs) in ALGORITHM_FLAGS {
                if let Some(v) = raw.get(f)
                    && !algs.contains(&name.as_str())
                {
                    return Err(err(f, v, format!("only applies to --algorithm {}", algs.join(", "))));
                }
            }
            let kbcast = if name == "kbcast" { Some(kbcast_config(raw, &topo, packet_flits, seed)?) } else { None };
            let pmnb = if is_pmnb { Some(pmnb_config(&name, raw, &topo, packet_flits, seed)?) } else { None };
            let dynamic = if name == "dynamic" { Some(dynamic_config(raw, &topo, packet_flits)?) } else { None };
            Workload::Algorithm { name, forwarding, root, root_coords: topo.coords(NodeId(root)), kbcast, pmnb, dynamic }
        };
        let replicates = match workload {
            Workload::Algorithm { forwarding, .. } => forwarding == Forwarding::Router,
            Workload::Traffic { forwarding, broadcast_rate, .. } => forwarding == Forwarding::Router && broadcast_rate > 0.0,
        };
        let multicast_va =
            multicast_option(raw, "multicast-va", replicates, packet_flits, MulticastVa::parse, MulticastVa::NAMES, MulticastVa::Atomic)?;
        let replication =
            multicast_option(raw, "replication", replicates, packet_flits, Replication::parse, Replication::NAMES, Replication::Async)?;
        let threads = match raw.get("threads") {
            Some(v) => uint("threads", v, 1, 64)? as u32,
            None => 1,
        };
        let (fault_list, link_failure_rate) = faults(raw, &topo, seed)?;
        if threads > 1 && !fault_list.is_empty() {
            return Err(err(
                "threads",
                threads,
                "1 with faults (--fault, --link-failure-rate): a run with faults is not split between threads",
            ));
        }
        // Asynchronous replication keeps a read position per VC and branch once a router
        // replicates a multi-flit packet.
        let positions = replication == Some(Replication::Async) && packet_flits > 1;
        let memory_estimate = check_workload_memory(&spec, &workload, max_cycles, threads, positions)?;
        let outputs = Outputs {
            vcd: raw.get("vcd").map(String::from),
            fst: raw.get("fst").map(String::from),
            gtkw: raw.get("gtkw").map(String::from),
            clock_ns: match raw.get("clock-ns") {
                Some(v) => {
                    thousandths(
                        "clock-ns",
                        v,
                        1,
                        1_000_000_000,
                        "a clock period in ns from 0.001 to 1000000 with at most three decimals (such as 0.8, 2.5 or 10)",
                    )? as f64
                        / 1000.0
                }
                None => 1.0,
            },
            trace_nodes: match raw.get("trace-nodes") {
                Some(v) => parse_node_list("trace-nodes", v, nodes)?,
                None => None,
            },
            trace_from: match raw.get("trace-from") {
                Some(v) => uint("trace-from", v, 0, 1 << 48)?,
                None => 0,
            },
            trace_to: match raw.get("trace-to") {
                Some(v) => Some(uint("trace-to", v, 0, 1 << 48)?),
                None => None,
            },
            trace_limit_bytes: match raw.get("trace-limit") {
                Some(v) => Some(
                    thousandths(
                        "trace-limit",
                        v,
                        1,
                        1_000_000_000,
                        "a size in MB (10^6 bytes) from 0.001 to 1000000 with at most three decimals (such as 0.5 or 200)",
                    )? * 1000,
                ),
                None => None,
            },
            stats_csv: raw.get("stats-csv").map(String::from),
            announce: false,
        };
        let stats = match raw.get("stats") {
            Some(v) => traces::stats::Detail::parse(v).ok_or_else(|| err("stats", v, traces::stats::Detail::NAMES))?,
            // The CSV holds the per-VC and per-link rows: asking for it asks for them.
            None if outputs.stats_csv.is_some() => traces::stats::Detail::Full,
            None => traces::stats::Detail::default_for(nodes),
        };
        if let (Some(p), traces::stats::Detail::Summary) = (&outputs.stats_csv, stats) {
            return Err(err("stats-csv", p, "its per-VC and per-link rows need --stats full (given --stats summary)"));
        }
        // Only the JSON result goes to standard output (`--json -`); these are files.
        for f in ["vcd", "fst", "gtkw", "stats-csv"] {
            match raw.get(f) {
                Some("-") => return Err(err(f, "-", "a file path (only --json takes - for standard output)")),
                Some("") => return Err(err(f, "\"\"", "a file path")),
                _ => {}
            }
        }
        // The FST writer goes back to fill in its header: a device or pipe cannot take it.
        if let Some(p) = &outputs.fst
            && std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir())
        {
            return Err(err("fst", p, "a regular file (an FST is written with seeks; a device or pipe cannot hold it)"));
        }
        if let Some(g) = &outputs.gtkw
            && !outputs.tracing()
        {
            return Err(err("gtkw", g, "a GTKWave save file points at a dump: add --vcd PATH or --fst PATH"));
        }
        for f in ["trace-nodes", "trace-from", "trace-to", "trace-limit", "clock-ns"] {
            if let Some(v) = raw.get(f)
                && !outputs.tracing()
            {
                return Err(err(f, v, "only applies with --vcd PATH or --fst PATH"));
            }
        }
        if let Some(to) = outputs.trace_to
            && to < outputs.trace_from
        {
            return Err(err("trace-to", to, format!("at least --trace-from ({})", outputs.trace_from)));
        }
        check_waveform_time(&outputs, max_cycles)?;
        if let (Some(c), Workload::Algorithm { root, .. }) = (&cost, &workload) {
            crate::cost_model::check(c, &topology, &dims, nu, *root)?;
        }
        let schedule = match raw.get("schedule") {
            Some(k) => Schedule::parse(k).ok_or_else(|| err("schedule", k, Schedule::NAMES))?,
            None => Schedule::Busy,
        };
        if threads > 1 {
            if outputs.tracing() {
                return Err(err("threads", threads, "1 with --vcd or --fst: waveforms are written from one thread"));
            }
            if threads as u64 > nodes {
                return Err(err("threads", threads, format!("at most the {nodes} nodes of the fabric")));
            }
        }
        Ok(Config {
            topology,
            dims,
            nodes,
            workload,
            ports: port_model.name(),
            switching,
            router,
            pipeline,
            arbiter,
            injection_vc,
            ejection_vcs,
            va_policy,
            multicast_va,
            replication,
            packet_flits,
            buffer_flits,
            inject_buffer_flits,
            vcs,
            nu,
            seed,
            deadlock_avoidance,
            startup_cycles,
            copy_cycles_per_flit,
            watchdog_cycles,
            max_cycles,
            threads,
            schedule,
            stats,
            outputs,
            port_model,
            cost,
            memory_estimate,
            faults: fault_list.iter().map(|f| f.to_string()).collect(),
            link_failure_rate,
            fault_list,
        })
    }

    /// The fabric spec this configuration describes.
    pub fn spec(&self) -> FabricSpec {
        let mut s = FabricSpec::ideal(self.topology.clone(), &self.dims);
        s.switching = self.switching;
        s.pipeline = self.pipeline;
        s.arbiter = self.arbiter;
        s.injection = self.injection_vc;
        s.ejection_vcs = Some(self.ejection_vcs);
        s.va_policy = self.va_policy;
        s.multicast_va = self.multicast_va.unwrap_or(MulticastVa::Atomic);
        s.replication = self.replication.unwrap_or(Replication::Async);
        s.vcs = self.vcs;
        s.buffer_flits = self.buffer_flits;
        s.inject_buffer_flits = Some(self.inject_buffer_flits);
        s.packet_flits = self.packet_flits;
        s.ports = self.port_model;
        s.nu = self.nu;
        s.deadlock_avoidance = self.deadlock_avoidance;
        s.startup_cycles = self.startup_cycles;
        s.copy_cycles_per_flit = self.copy_cycles_per_flit;
        s.watchdog_cycles = self.watchdog_cycles;
        s.max_cycles = self.max_cycles;
        s.schedule = self.schedule;
        s.faults = self.fault_list.clone();
        if let Workload::Traffic { cycles, warmup, batches, .. } = self.workload {
            s.measure = Some(fabric::Window { from: warmup, to: cycles, batches });
        }
        s
    }

    pub fn traffic_spec(&self) -> Option<TrafficSpec> {
        match self.workload {
            Workload::Traffic { pattern, rate, cycles, hotspot, hotspot_fraction, .. } => Some(TrafficSpec {
                pattern,
                rate,
                cycles,
                flits: self.packet_flits,
                seed: self.seed,
                hotspot: NodeId(hotspot),
                hotspot_fraction,
            }),
            _ => None,
        }
    }

    /// A short description: "snb on hypercube 6 (64 nodes)".
    pub fn title(&self) -> String {
        let dims = self.dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
        let what = match &self.workload {
            Workload::Algorithm { name, forwarding, .. } => {
                format!("{name} ({} forwarding)", serde_json::to_value(forwarding).unwrap().as_str().unwrap())
            }
            Workload::Traffic { pattern, rate, broadcast_rate, forwarding, .. } => {
                let unicast = format!("{} traffic at {rate} packets/node/cycle", serde_json::to_value(pattern).unwrap().as_str().unwrap());
                let bcast = format!(
                    "broadcasts at {broadcast_rate}/node/cycle ({} forwarding)",
                    serde_json::to_value(forwarding).unwrap().as_str().unwrap()
                );
                match (*rate > 0.0, *broadcast_rate > 0.0) {
                    (true, true) => format!("{unicast} + {bcast}"),
                    (false, true) => bcast,
                    _ => unicast,
                }
            }
        };
        format!("{what} on {} {dims} ({} nodes)", self.topology.name(), self.nodes)
    }
}

/// More nodes than a header can address: say so, and how much memory it would take anyway.
fn check_addressable(spec: &FabricSpec) -> Result<(), ConfigError> {
    let nodes = spec.nodes();
    let max = router::Header::MAX_NODE as u128 + 1;
    if nodes <= max {
        return Ok(());
    }
    let dims = spec.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    Err(err(
        "dims",
        dims,
        format!(
            "a {} of {nodes} nodes would need {} of router state (this machine has {} available), \
             and the header's 24-bit node field addresses at most {max} nodes",
            spec.kind.name(),
            gib(spec.bytes_needed()),
            gib(fabric::spec::available_memory() as u128)
        ),
    ))
}

/// Flags only some algorithms take, and which.
const ALGORITHM_FLAGS: [(&str, &[&str]); 7] = [
    ("variant", &["kbcast"]),
    ("active", &["kbcast", "pmnb-1", "pmnb-2", "pmnb-3"]),
    ("active-count", &["kbcast", "pmnb-1", "pmnb-2", "pmnb-3"]),
    ("active-set", &["kbcast", "pmnb-1", "pmnb-2", "pmnb-3"]),
    ("tp", &["kbcast", "pmnb-1", "pmnb-2", "pmnb-3", "dynamic"]),
    ("load", &["dynamic"]),
    ("pmnb", &["dynamic"]),
];

/// A router option for multi-flit packets the routers replicate: parsed (one of `names`),
/// refused on a run without them (no router forwarding, or one-flit packets, which it would
/// not change), and defaulted on a router-forwarded run (`None` on a run without).
fn multicast_option<T>(
    raw: &Raw,
    field: &str,
    replicates: bool,
    packet_flits: u16,
    parse: fn(&str) -> Option<T>,
    names: &str,
    default: T,
) -> Result<Option<T>, ConfigError> {
    match raw.get(field) {
        Some(s) => {
            let v = parse(s).ok_or_else(|| err(field, s, format!("one of {names}")))?;
            if !replicates {
                return Err(err(field, s, "only applies with --forwarding router (packets the routers replicate)"));
            }
            if packet_flits == 1 {
                return Err(err(field, s, "only applies to packets of more than one flit (--packet-flits is 1)"));
            }
            Ok(Some(v))
        }
        None => Ok(replicates.then_some(default)),
    }
}

/// Memory the run needs at its peak, the fabric and the workload (the scoreboard's records):
/// refuse runs that cannot fit instead of aborting in the allocator; the estimate if it fits.
/// A run split between threads builds the fabric's state once per thread.
fn check_workload_memory(
    spec: &FabricSpec,
    workload: &Workload,
    max_cycles: u64,
    threads: u32,
    positions: bool,
) -> Result<u128, ConfigError> {
    let (field, value, what, need) = memory_need(spec, workload, max_cycles, threads, positions)?;
    let (avail, limit) = fabric::spec::memory_limit();
    let avail = avail as u128;
    if need <= avail {
        return Ok(need);
    }
    // The largest size that fits: smaller dimensions, or (the workload's own bytes growing
    // in proportion) fewer broadcasts or cycles; with a tenth to spare, as what a process
    // already holds when it checks varies from run to run (threads, allocator arenas).
    let room = avail * 9 / 10;
    let fits = if field == "dims" {
        let mut smaller = spec.clone();
        loop {
            match smaller.shrink() {
                None => break "nothing".to_string(),
                Some(s) => smaller = s,
            }
            match memory_need(&smaller, workload, max_cycles, threads, positions) {
                Ok((_, v, _, n)) if n <= room => break format!("--dims {v}"),
                _ => {}
            }
        }
    } else {
        let base = memory_need(spec, workload, 0, threads, positions).map_or(0, |x| x.3);
        let base = if field == "active-count" { fixed_memory(spec, threads, positions) } else { base };
        let have: u128 = value.parse().unwrap_or(0);
        let most = if need > base { have * room.saturating_sub(base) / (need - base) } else { 0 };
        format!("--{field} {most}")
    };
    Err(err(field, value, format!("{what} needs {} of memory; {limit} leaves {}; the largest that fits is {fits}", gib(need), gib(avail))))
}

/// What the process needs beside the workload: its own code and libraries and the fabric's
/// state (once per thread).
fn fixed_memory(spec: &FabricSpec, threads: u32, positions: bool) -> u128 {
    let positions = if positions { router::Routers::branch_pos_bytes(&spec.router_params(), spec.nodes() as usize) } else { 0 };
    spec.fixed_bytes(threads, positions)
}

/// The memory a run needs at its peak: the field that sizes it, its value, what it is, and
/// the bytes.
fn memory_need(
    spec: &FabricSpec,
    workload: &Workload,
    max_cycles: u64,
    threads: u32,
    positions: bool,
) -> Result<(&'static str, String, String, u128), ConfigError> {
    let nodes = spec.nodes();
    // One record per declared message (24 bytes), plus a bitset over the nodes per broadcast.
    let record = 24u128;
    let bitset = nodes.div_ceil(64) * 8;
    let dims = spec.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    let (field, value, what, bytes) = match workload {
        Workload::Algorithm { name, .. } if matches!(name.as_str(), "mnb-sbt" | "mnb" | "mnb-ring") => {
            // Measured (docs/performance.md): the packets every node holds on their way
            // through it, about 32 bytes per pair of nodes at the peak.
            (
                "dims",
                dims,
                format!("{name} on {nodes} nodes tracks {nodes} broadcasts to every node and"),
                nodes * (record + bitset) + nodes * nodes * 32,
            )
        }
        Workload::Algorithm { kbcast: Some(k), .. } => {
            let m = k.active.len() as u128;
            // Measured (docs/performance.md): the scoreboard's bitset per broadcast, grown
            // by doubling, and the relays queued at the nodes.
            let bytes = m * (4 * bitset + 64) + nodes * 3072;
            ("active-count", m.to_string(), format!("kbcast: {m} broadcasts on {nodes} nodes"), bytes)
        }
        Workload::Algorithm { name, .. } if name == "multi-accumulate" => (
            "dims",
            dims,
            format!("multi-accumulate on {nodes} nodes keeps a partial result per node and root and"),
            nodes * nodes * 5 + nodes * record,
        ),
        Workload::Algorithm { name, .. } if name == "total-exchange" => {
            if nodes * nodes >= 1 << 31 {
                return Err(err("dims", dims, format!("total-exchange tracks {} messages; at most 2^31 (d <= 15)", nodes * nodes)));
            }
            (
                "dims",
                dims,
                format!("total-exchange on {nodes} nodes tracks {} messages and", nodes * (nodes - 1)),
                nodes * nodes / 8 + nodes * 64,
            )
        }
        Workload::Algorithm { pmnb: Some(p), .. } => {
            let pieces = p.variant.pieces(spec.sizes.len() as u32) as u128;
            let m = p.active.len() as u128;
            let d = spec.sizes.len() as u128;
            // Declared pieces, the prefix state, and at the peak every node holding half the pieces.
            let bytes = m * pieces * (record + bitset) + nodes * d * (d + 4) * 4 + nodes * m * pieces * 2;
            ("active-count", m.to_string(), format!("a partial multinode broadcast of {m} packets on {nodes} nodes"), bytes)
        }
        Workload::Algorithm { dynamic: Some(dc), .. } => {
            let d = spec.sizes.len() as u32;
            let pieces = dc.pmnb.pieces(d) as u128;
            let slots = dc.cycles.min(max_cycles) as f64 / spec.packet_flits as f64;
            let packets = (dc.lambda * nodes as f64 * slots).ceil() as u128;
            (
                "cycles",
                dc.cycles.to_string(),
                format!("about {packets} broadcasts over {} slots on {nodes} nodes", slots.round()),
                packets * pieces * (record + bitset) + nodes * d as u128 * (d as u128 + 4) * 4,
            )
        }
        Workload::Algorithm { name, .. } => ("dims", dims, format!("{name} on {nodes} nodes"), record + bitset),
        Workload::Traffic { rate, broadcast_rate, cycles, .. } => {
            let packets = (nodes as f64 * rate * (*cycles).min(max_cycles) as f64).ceil() as u128;
            // The scoreboard keeps every broadcast's record, bitset and timing.
            let broadcasts = (nodes as f64 * broadcast_rate * (*cycles).min(max_cycles) as f64).ceil() as u128;
            (
                "cycles",
                cycles.to_string(),
                format!("about {packets} packets and {broadcasts} broadcasts over {cycles} cycles on {nodes} nodes"),
                // The scoreboard forgets delivered unicast packets: below saturation their
                // records are those in flight, a small part of the about 1.5 KiB per node of
                // NIC, measurement and latency state (measured). Saturated sources pile
                // packets up beyond any estimate; the allocator's exit stops them.
                broadcasts * (record + bitset + 24) + nodes * 1536,
            )
        }
    };
    Ok((field, value, what, fixed_memory(spec, threads, positions) + bytes))
}

/// A node given as an id or as coordinates `c0,c1,...` in the order of `--dims`.
/// `edn` runs on M(4^k, 4^k), `dilated-diagonal` on 2-D tori its construction can split.
fn round_broadcast_shape(name: &str, topo: &fabric::Topology) -> Result<(), ConfigError> {
    let dims = || topo.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    match name {
        "edn" if algorithms::edn::levels(topo).is_none() => {
            Err(err("dims", dims(), "edn runs on square meshes of side 4^k: 4x4, 16x16, 64x64, 256x256"))
        }
        "dilated-diagonal" if topo.ndims() != 2 => Err(err("dims", dims(), "dilated-diagonal runs on 2-D tori, like 25x25")),
        "dilated-diagonal" => algorithms::dilated_diagonal::plan(topo, NodeId(0)).map(|_| ()).map_err(|e| err("dims", dims(), e)),
        _ => Ok(()),
    }
}

fn parse_node(field: &str, v: &str, topo: &fabric::Topology) -> Result<u32, ConfigError> {
    let n = topo.nodes() as u64;
    if v.contains(',') {
        let coords: Result<Vec<u32>, _> = v.split(',').map(|c| c.trim().parse::<u32>()).collect();
        let dims = topo.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
        let allowed = format!("{} coordinates, each below its size in {dims}", topo.ndims());
        if topo.kind == TopologyKind::Hypercube {
            return Err(err(field, v, format!("a hypercube node is given by its id, from 0 to {}", n - 1)));
        }
        let coords = coords.map_err(|_| err(field, v, &allowed))?;
        if coords.len() != topo.ndims() || coords.iter().zip(&topo.sizes).any(|(c, s)| c >= s) {
            return Err(err(field, v, allowed));
        }
        Ok(topo.node_at(&coords).0)
    } else {
        let id: i64 = v.trim().parse().map_err(|_| err(field, v, format!("a node id from 0 to {}, or coordinates like 1,5", n - 1)))?;
        if id < 0 || id as u64 >= n {
            return Err(err(field, v, format!("a node id from 0 to {} ({} nodes)", n - 1, n)));
        }
        Ok(id as u32)
    }
}

fn read_router_file(path: &str) -> Result<Pipeline, ConfigError> {
    let text = crate::input::read_text(Path::new(path))
        .map_err(|e| err("router", path, format!("{}, or a router TOML file (cannot read it: {e})", Pipeline::PRESET_NAMES)))?;
    let _: toml::Table = text.parse().map_err(|e: toml::de::Error| toml_error("router", "malformed TOML: ", &text, path, &e))?;
    let f: RouterFile = toml::from_str(&text).map_err(|e| toml_error("router", "", &text, path, &e))?;
    let mut p = match f.preset.as_deref() {
        None => Pipeline::IDEAL,
        Some(name) => Pipeline::preset(name)
            .ok_or_else(|| err("router", format!("{path}: preset = {name}"), format!("one of {}", Pipeline::PRESET_NAMES)))?,
    };
    if let Some(v) = f.rc_delay {
        p.rc_delay = v;
    }
    if let Some(v) = f.va_delay {
        p.va_delay = v;
    }
    if let Some(v) = f.link_latency {
        if v == 0 {
            return Err(err("router", format!("{path}: link_latency = 0"), "at least 1 cycle"));
        }
        p.link_latency = v;
    }
    if let Some(v) = f.credit_delay {
        p.credit_delay = v;
    }
    if let Some(v) = f.inject_latency {
        p.inject_latency = v;
    }
    Ok(p)
}
