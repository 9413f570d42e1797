//! The run keys: every setting of a run, each defined once as a field of a section struct
//! below. A field is at once a flag of `flitwave run` (its name with `-` for `_`), a key of a
//! scenario file under the same name, and, by its doc comment, its help text and its line
//! in `docs/cli.md`. The values are kept as given (text); [`super::Config::resolve`] reads
//! them by field (`raw.router.vcs`) and checks them. Commands that vary keys named by data
//! (a sweep's grid, the algorithm registry's settings) use [`Raw::given`] and [`Raw::from_given`].

use super::{ConfigError, err};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Run keys by name, with their values as text ([`Raw::given`]).
pub type Given = BTreeMap<String, String>;

/// Every run key, by section. The sections are the headings of `flitwave run --help`.
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Raw {
    #[command(flatten)]
    #[serde(flatten)]
    pub topology: TopologyKeys,
    #[command(flatten)]
    #[serde(flatten)]
    pub router: RouterKeys,
    #[command(flatten)]
    #[serde(flatten)]
    pub workload: WorkloadKeys,
    #[command(flatten)]
    #[serde(flatten)]
    pub algorithm: AlgorithmKeys,
    #[command(flatten)]
    #[serde(flatten)]
    pub faults: FaultKeys,
    #[command(flatten)]
    #[serde(flatten)]
    pub outputs: OutputKeys,
    #[command(flatten)]
    #[serde(flatten)]
    pub control: ControlKeys,
    #[command(flatten)]
    #[serde(flatten)]
    pub rtl: RtlKeys,
}

/// The network: its shape and size.
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "Topology")]
#[serde(default, rename_all = "kebab-case")]
pub struct TopologyKeys {
    /// hypercube, linear, mesh or torus.
    #[arg(long, allow_hyphen_values = true)]
    pub topology: Option<String>,
    /// Sizes: d for the hypercube (6), n for a linear array, 16x32 for meshes and tori.
    #[arg(long, allow_hyphen_values = true)]
    pub dims: Option<String>,
    /// on: dateline VCs on tori; off: none (watch the deadlock happen).
    #[arg(long, allow_hyphen_values = true)]
    pub deadlock_avoidance: Option<String>,
}

/// One switch: its pipeline, buffers, VCs, arbiters and replication, and its links.
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "Router")]
#[serde(default, rename_all = "kebab-case")]
pub struct RouterKeys {
    /// Router: ideal, realistic, booksim, or a router TOML file.
    #[arg(long, allow_hyphen_values = true)]
    pub router: Option<String>,
    /// Switching: sf, vct or wh.
    #[arg(long, allow_hyphen_values = true)]
    pub switching: Option<String>,
    /// Virtual channels per port.
    #[arg(long, allow_hyphen_values = true)]
    pub vcs: Option<String>,
    /// Depth of each network input VC buffer (fed by a link), flits.
    #[arg(long, allow_hyphen_values = true)]
    pub buffer_flits: Option<String>,
    /// Depth of each injection VC buffer (fed by the node's NIC), flits (default: --buffer-flits).
    #[arg(long, allow_hyphen_values = true)]
    pub inject_buffer_flits: Option<String>,
    /// Links move 2^nu flits per cycle, NIC channels one.
    #[arg(long, allow_hyphen_values = true)]
    pub nu: Option<String>,
    /// Port model: all, one, or K (NIC channels per node).
    #[arg(long, allow_hyphen_values = true)]
    pub ports: Option<String>,
    /// Arbiter policy: round-robin, fixed, oldest, key.
    #[arg(long, allow_hyphen_values = true)]
    pub arbiter: Option<String>,
    /// Which injection VC a NIC channel starts a new packet in: round-robin (any VC with
    /// room, from the one after the last packet's; default) or vc0.
    #[arg(long, allow_hyphen_values = true)]
    pub injection_vc: Option<String>,
    /// VCs of each ejection port (default: as many as --vcs): packets holding one each share
    /// the port a flit a cycle.
    #[arg(long, allow_hyphen_values = true)]
    pub ejection_vcs: Option<String>,
    /// Which free output VC a head is offered first: round-robin (default), lowest,
    /// most-credits.
    #[arg(long, allow_hyphen_values = true)]
    pub va_policy: Option<String>,
    /// VC allocation of multi-flit packets the routers replicate (--forwarding router): atomic
    /// (every branch in one cycle or none) or per-branch.
    #[arg(long, allow_hyphen_values = true)]
    pub multicast_va: Option<String>,
    /// Replication of multi-flit packets the routers replicate (--forwarding router): async (a
    /// read pointer per branch) or sync (every branch takes a flit before the next follows).
    #[arg(long, allow_hyphen_values = true)]
    pub replication: Option<String>,
}

/// What runs on the network: an algorithm, or synthetic traffic and broadcasts.
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "Workload")]
#[serde(default, rename_all = "kebab-case")]
pub struct WorkloadKeys {
    /// Algorithm to run (see `flitwave list`); default snb.
    #[arg(long, allow_hyphen_values = true)]
    pub algorithm: Option<String>,
    /// Root node: an id, or coordinates like 1,5 in the order of --dims.
    #[arg(long, allow_hyphen_values = true)]
    pub root: Option<String>,
    /// Broadcast forwarding: node (receive, then send again) or router (in-router replication).
    #[arg(long, allow_hyphen_values = true)]
    pub forwarding: Option<String>,
    /// Synthetic traffic pattern instead of an algorithm: uniform, transpose, bit-complement, tornado, hotspot.
    #[arg(long, allow_hyphen_values = true)]
    pub traffic: Option<String>,
    /// Injection rate, packets per node per cycle (Bernoulli).
    #[arg(long, allow_hyphen_values = true)]
    pub rate: Option<String>,
    /// Broadcasts per node per cycle (Bernoulli), with or without --traffic; each to every
    /// other node on the source's broadcast tree, by --forwarding node or router.
    #[arg(long, allow_hyphen_values = true)]
    pub broadcast_rate: Option<String>,
    /// Flits per packet.
    #[arg(long, allow_hyphen_values = true)]
    pub packet_flits: Option<String>,
    /// Cycles of injection (then the network drains).
    #[arg(long, allow_hyphen_values = true)]
    pub cycles: Option<String>,
    /// Traffic: cycles of warm-up before the measurement window [warmup, cycles) (default 0).
    #[arg(long, allow_hyphen_values = true)]
    pub warmup: Option<String>,
    /// Traffic: batches of the window for the latency confidence interval (2 to 100, default 10).
    #[arg(long, allow_hyphen_values = true)]
    pub batches: Option<String>,
    /// Hotspot node for --traffic hotspot.
    #[arg(long, allow_hyphen_values = true)]
    pub hotspot: Option<String>,
    /// Fraction of hotspot traffic.
    #[arg(long, allow_hyphen_values = true)]
    pub hotspot_fraction: Option<String>,
    /// Random seed: traffic, random active sets, kbcast --variant random, dynamic arrivals (the other algorithms are deterministic and do not use it).
    #[arg(long, allow_hyphen_values = true)]
    pub seed: Option<String>,
    /// Software start-up cost per message, cycles.
    #[arg(long, allow_hyphen_values = true)]
    pub startup_cycles: Option<String>,
    /// Internal copy cost per flit, cycles.
    #[arg(long, allow_hyphen_values = true)]
    pub copy_cycles_per_flit: Option<String>,
}

/// Settings only some algorithms take (the registry says which).
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "Algorithm settings")]
#[serde(default, rename_all = "kebab-case")]
pub struct AlgorithmKeys {
    /// kbcast variant: prefix, random, same-tree, rank-rotated.
    #[arg(long, allow_hyphen_values = true)]
    pub variant: Option<String>,
    /// kbcast, pmnb-*: the broadcasting nodes, ids and ranges like 3,17,40 or 0-7.
    #[arg(long, allow_hyphen_values = true)]
    pub active: Option<String>,
    /// kbcast, pmnb-*: the number K of broadcasting nodes, chosen by --active-set and --seed.
    #[arg(long, allow_hyphen_values = true)]
    pub active_count: Option<String>,
    /// kbcast, pmnb-*: random, subcube (nodes 0..K-1) or adversarial (the sec. 3.1 set).
    #[arg(long, allow_hyphen_values = true)]
    pub active_set: Option<String>,
    /// kbcast, pmnb-*, dynamic: a parallel-prefix step in slots (0: ranks known, no prefix phase).
    #[arg(long, allow_hyphen_values = true)]
    pub tp: Option<String>,
    /// dynamic: the hypercube utilization factor rho = lambda (N-1)/d (eq. 17).
    #[arg(long, allow_hyphen_values = true)]
    pub load: Option<String>,
    /// dynamic: the PMNB each period runs, pmnb-2 or pmnb-3.
    #[arg(long, allow_hyphen_values = true)]
    pub pmnb: Option<String>,
    /// Seidel broadcasts: the cost model, delta (Table II: a = 0.08 us/byte, b = 75 us, rho = 0.01 us/byte).
    #[arg(long, allow_hyphen_values = true)]
    pub cost_model: Option<String>,
    /// Seidel broadcasts: node-to-network cost a, us per byte (links are 2^nu times faster).
    #[arg(long, allow_hyphen_values = true)]
    pub a: Option<String>,
    /// Seidel broadcasts: start-up cost b per message, us.
    #[arg(long, allow_hyphen_values = true)]
    pub b: Option<String>,
    /// Seidel broadcasts: permutation cost rho inside a node, us per byte.
    #[arg(long, allow_hyphen_values = true)]
    pub rho: Option<String>,
    /// Seidel broadcasts: message length m in bytes (default 1024).
    #[arg(long, allow_hyphen_values = true)]
    pub message_bytes: Option<String>,
    /// Seidel broadcasts on sides that are not powers of two: virtual or companions (sec. 5).
    #[arg(long, allow_hyphen_values = true)]
    pub fill: Option<String>,
}

/// Links and routers that fail.
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "Faults")]
#[serde(default, rename_all = "kebab-case")]
pub struct FaultKeys {
    /// A link or router that fails: "link NODE.PORT at CYCLE", "router NODE at CYCLE", or
    /// @FILE of such lines (repeatable; docs/faults.md).
    #[arg(long, allow_hyphen_values = true)]
    pub fault: Vec<String>,
    /// Each link fails at cycle 0 with this probability, drawn by --seed.
    #[arg(long, allow_hyphen_values = true)]
    pub link_failure_rate: Option<String>,
}

/// What a run writes and says.
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "Outputs")]
#[serde(default, rename_all = "kebab-case")]
pub struct OutputKeys {
    /// Write the JSON result to PATH, or to standard output with -.
    #[arg(long, allow_hyphen_values = true)]
    pub json: Option<String>,
    /// No report on the terminal.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on", value_name = "on|off")]
    pub quiet: Option<String>,
    /// Write a VCD waveform of the run.
    #[arg(long, allow_hyphen_values = true)]
    pub vcd: Option<String>,
    /// Write an FST waveform of the run.
    #[arg(long, allow_hyphen_values = true)]
    pub fst: Option<String>,
    /// Write a GTKWave save file for the waveform (with --vcd or --fst).
    #[arg(long, allow_hyphen_values = true)]
    pub gtkw: Option<String>,
    /// Clock period in ns (the waveform's time unit).
    #[arg(long, allow_hyphen_values = true)]
    pub clock_ns: Option<String>,
    /// Nodes to trace: all, or ids and ranges like 0-3,7.
    #[arg(long, allow_hyphen_values = true)]
    pub trace_nodes: Option<String>,
    /// First cycle traced.
    #[arg(long, allow_hyphen_values = true)]
    pub trace_from: Option<String>,
    /// Last cycle traced.
    #[arg(long, allow_hyphen_values = true)]
    pub trace_to: Option<String>,
    /// Stop tracing (not the run) when a waveform file reaches this many MB.
    #[arg(long, allow_hyphen_values = true)]
    pub trace_limit: Option<String>,
    /// Write buffer and link statistics as CSV.
    #[arg(long, allow_hyphen_values = true)]
    pub stats_csv: Option<String>,
    /// Statistics in the report: summary (network-wide occupancy per port class) or full
    /// (also per VC, per link, per router); default full up to 4,096 routers.
    #[arg(long, allow_hyphen_values = true)]
    pub stats: Option<String>,
}

/// How the run is carried out (results do not depend on threads or schedule).
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "Run control")]
#[serde(default, rename_all = "kebab-case")]
pub struct ControlKeys {
    /// Deadlock watchdog: cycles with flits buffered and none moving.
    #[arg(long, allow_hyphen_values = true)]
    pub watchdog: Option<String>,
    /// Stop the run after this many cycles.
    #[arg(long, allow_hyphen_values = true)]
    pub max_cycles: Option<String>,
    /// Split a run (traffic, or a broadcast such as mnb-sbt) between this many threads, each
    /// owning a range of routers (results do not depend on it).
    #[arg(long, allow_hyphen_values = true)]
    pub threads: Option<String>,
    /// Which routers the kernel visits each cycle: busy (only those with work; default) or
    /// all (every router, every allocation run: for checking). Results do not depend on it.
    #[arg(long, allow_hyphen_values = true)]
    pub schedule: Option<String>,
}

/// RTL routers in place of the model's (docs/rtl.md).
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[command(next_help_heading = "RTL co-simulation")]
#[serde(default, rename_all = "kebab-case")]
pub struct RtlKeys {
    /// Co-simulate the RTL router in this SystemVerilog file (e.g. rtl/router.sv), Verilated,
    /// in place of the model's (docs/rtl.md).
    #[arg(long, allow_hyphen_values = true)]
    pub rtl: Option<String>,
    /// The RTL router's top module (default: the file's name without its extension).
    #[arg(long, allow_hyphen_values = true)]
    pub rtl_top: Option<String>,
    /// The nodes whose router is the RTL: all (default), or a list like 0-3,7.
    #[arg(long, allow_hyphen_values = true)]
    pub rtl_nodes: Option<String>,
    /// Also run the model's router at those nodes on the same inputs and stop at the first
    /// cycle where an output flit, its VC or a credit differs.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on", value_name = "on|off")]
    pub rtl_compare: Option<String>,
    /// Where --rtl-compare writes the waveform around a difference (default
    /// rtl-mismatch.vcd; its GTKWave save file beside it, .gtkw).
    #[arg(long, allow_hyphen_values = true)]
    pub rtl_window: Option<String>,
    /// A TOML description of the RTL router's port map, for routers whose ports differ from
    /// rtl/router.sv's (docs/rtl-adapter.md).
    #[arg(long, allow_hyphen_values = true)]
    pub rtl_adapter: Option<String>,
}

impl OutputKeys {
    /// `--quiet`: no report on the terminal (off unless given).
    pub fn is_quiet(&self) -> Result<bool, ConfigError> {
        Ok(self.quiet.as_deref().map(|v| super::on_off("quiet", v)).transpose()?.unwrap_or(false))
    }

    /// The files a run writes besides its JSON result, by key.
    pub fn files(&self) -> [(&'static str, Option<&str>); 4] {
        [
            ("vcd", self.vcd.as_deref()),
            ("fst", self.fst.as_deref()),
            ("gtkw", self.gtkw.as_deref()),
            ("stats-csv", self.stats_csv.as_deref()),
        ]
    }
}

/// The run keys by name: the long flags of `flitwave run` (the fields of [`Raw`]).
pub static FIELDS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    static RUN: std::sync::LazyLock<clap::Command> = std::sync::LazyLock::new(|| Raw::augment_args(clap::Command::new("run")));
    RUN.get_arguments().filter_map(|a| a.get_long()).collect()
});

/// The keys that take a list (`--fault`, repeatable; an array in a scenario file), read from
/// the fields of [`Raw`] that are lists.
static LISTS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let empty = serde_json::to_value(Raw::default()).expect("run keys as JSON");
    empty.as_object().expect("an object").iter().filter(|(_, v)| v.is_array()).map(|(k, _)| k.clone()).collect()
});

/// The fields that are switches (on/off), the only ones a scenario may give as a TOML boolean.
const SWITCHES: &[&str] = &["deadlock-avoidance", "quiet", "rtl-compare"];

impl Raw {
    /// The keys given a value, by name, as text (a list's items one per line).
    pub fn given(&self) -> Given {
        let json = serde_json::to_value(self).expect("run keys as JSON");
        let serde_json::Value::Object(map) = json else { unreachable!("run keys are a struct") };
        map.into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(s) => Some((k, s)),
                serde_json::Value::Array(items) if !items.is_empty() => {
                    Some((k, items.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join("\n")))
                }
                _ => None,
            })
            .collect()
    }

    /// Keys by name (as [`Raw::given`] returns them); an unknown name is refused.
    pub fn from_given<K: AsRef<str>, V: Into<String>>(values: impl IntoIterator<Item = (K, V)>) -> Result<Raw, ConfigError> {
        let mut map = serde_json::Map::new();
        for (k, v) in values {
            let (k, v) = (k.as_ref(), v.into());
            if !FIELDS.contains(&k) {
                return Err(err(k, &v, format!("not a run key; the run keys are {}", FIELDS.join(", "))));
            }
            let value = if LISTS.iter().any(|l| l == k) {
                serde_json::Value::Array(v.split('\n').map(|x| serde_json::Value::String(x.to_string())).collect())
            } else {
                serde_json::Value::String(v)
            };
            map.insert(k.to_string(), value);
        }
        Ok(serde_json::from_value(serde_json::Value::Object(map)).expect("text values of run keys"))
    }

    /// Later settings (flags) override earlier ones (the file).
    pub fn overlay(&mut self, other: Raw) {
        let mut all = self.given();
        all.extend(other.given());
        *self = Raw::from_given(all).expect("run keys");
    }

    /// Read a scenario file. Keys may be written with `-` or `_`.
    pub fn from_toml_file(path: &Path) -> Result<Raw, ConfigError> {
        let text = crate::input::read_text(path)
            .map_err(|e| err("scenario", path.display(), format!("a scenario TOML file (cannot read it: {e})")))?;
        Raw::from_toml_str(&text, &path.display().to_string())
    }

    pub fn from_toml_str(text: &str, name: &str) -> Result<Raw, ConfigError> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| toml_error("scenario", "malformed TOML: ", text, name, &e))?;
        let mut values = BTreeMap::new();
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
                toml::Value::Array(a) if LISTS.contains(&key) => {
                    let mut lines = Vec::new();
                    for x in a {
                        match x {
                            toml::Value::String(f) => lines.push(f.clone()),
                            other => return Err(err(&key, other.to_string(), "a list of strings, such as [\"link 5.0 at 100\"]")),
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
            values.insert(key, s);
        }
        Raw::from_given(values)
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
            ConfigError::new(field, format!("{name}:{line}:{col}"), format!("{at}{what}{msg}{hint}"))
        }
        None => ConfigError::new(field, name, format!("{what}{msg}")),
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
