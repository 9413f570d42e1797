//! The `flitwave` command line.

use crate::config::{Config, ConfigError, Raw};
use crate::run;
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "flitwave",
    version,
    about = "Cycle-accurate interconnection-network router model: broadcast algorithms on hypercubes, meshes and tori",
    after_help = "With no command, runs a built-in demo and writes its outputs under ./flitwave-out/."
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run one scenario: a TOML file and/or flags (flags override the file).
    Run(Box<RunArgs>),
    /// List topologies, algorithms (with the paper section each implements), traffic patterns, router presets.
    List,
    /// Reproduce a paper's tables and figures by simulation (see `flitwave list`).
    Reproduce {
        /// Which paper: bertsekas-1991, stamoulis-tsitsiklis, varvarigos-bertsekas, lecture-notes, seidel-1993 (see `flitwave list`).
        paper: String,
        /// Where to write the tables and plots.
        #[arg(long, default_value = "flitwave-out/reproduce")]
        out: PathBuf,
        /// Sweep hypercubes only up to this dimension (a quick look; default: the paper's range).
        #[arg(long, allow_hyphen_values = true)]
        max_d: Option<u32>,
    },
    /// The smallest buffer depth per port class within a tolerance of deep buffers, for one
    /// or more loads (run flags as for `run`).
    SizeBuffers(Box<crate::size_buffers::SizeArgs>),
    /// Each case (packet length, start-up and copy cost) forwarded by the nodes and replicated
    /// by the routers, side by side, with the speed-up (docs/compare-forwarding.md).
    CompareForwarding(Box<crate::compare_forwarding::CompareArgs>),
    /// Run every combination of some run keys' values (and seeds) in parallel, one row a run
    /// in DIR/results.jsonl and DIR/results.csv; a rerun resumes (docs/sweep.md).
    Sweep(Box<crate::sweep::SweepArgs>),
    /// Join the directories of a sweep's shards (--shard I/N) into one, in row order.
    Merge(crate::sweep::MergeArgs),
    /// Plot a figure of a sweep's results against a key, a line per value of another, as SVG.
    Plot(crate::sweep_plot::PlotArgs),
    /// Run the built-in demo (what `flitwave` with no arguments does).
    Demo {
        /// Where to write the outputs.
        #[arg(long, default_value = "flitwave-out")]
        out: PathBuf,
    },
}

/// The flags of `flitwave run`: each field is a run key, by its flag's name on the command
/// line and in a scenario file ([`crate::config::FIELDS`]), its doc comment the help text.
#[derive(Args, Debug, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct RunArgs {
    /// Scenario file (TOML); its keys are the flag names below.
    #[serde(skip)]
    pub scenario: Option<PathBuf>,
    /// hypercube, linear, mesh or torus.
    #[arg(long, allow_hyphen_values = true)]
    pub topology: Option<String>,
    /// Sizes: d for the hypercube (6), n for a linear array, 16x32 for meshes and tori.
    #[arg(long, allow_hyphen_values = true)]
    pub dims: Option<String>,
    /// Algorithm to run (see `flitwave list`); default snb.
    #[arg(long, allow_hyphen_values = true)]
    pub algorithm: Option<String>,
    /// Port model: all, one, or K (NIC channels per node).
    #[arg(long, allow_hyphen_values = true)]
    pub ports: Option<String>,
    /// Switching: sf, vct or wh.
    #[arg(long, allow_hyphen_values = true)]
    pub switching: Option<String>,
    /// Router: ideal, realistic, booksim, or a router TOML file.
    #[arg(long, allow_hyphen_values = true)]
    pub router: Option<String>,
    /// Flits per packet.
    #[arg(long, allow_hyphen_values = true)]
    pub packet_flits: Option<String>,
    /// Depth of each network input VC buffer (fed by a link), flits.
    #[arg(long, allow_hyphen_values = true)]
    pub buffer_flits: Option<String>,
    /// Depth of each injection VC buffer (fed by the node's NIC), flits (default: --buffer-flits).
    #[arg(long, allow_hyphen_values = true)]
    pub inject_buffer_flits: Option<String>,
    /// Virtual channels per port.
    #[arg(long, allow_hyphen_values = true)]
    pub vcs: Option<String>,
    /// Links move 2^nu flits per cycle, NIC channels one.
    #[arg(long, allow_hyphen_values = true)]
    pub nu: Option<String>,
    /// Root node: an id, or coordinates like 1,5 in the order of --dims.
    #[arg(long, allow_hyphen_values = true)]
    pub root: Option<String>,
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
    /// Cycles of injection (then the network drains).
    #[arg(long, allow_hyphen_values = true)]
    pub cycles: Option<String>,
    /// Traffic: cycles of warm-up before the measurement window [warmup, cycles) (default 0).
    #[arg(long, allow_hyphen_values = true)]
    pub warmup: Option<String>,
    /// Traffic: batches of the window for the latency confidence interval (2 to 100, default 10).
    #[arg(long, allow_hyphen_values = true)]
    pub batches: Option<String>,
    /// Random seed: traffic, random active sets, kbcast --variant random, dynamic arrivals (the other algorithms are deterministic and do not use it).
    #[arg(long, allow_hyphen_values = true)]
    pub seed: Option<String>,
    /// on: dateline VCs on tori; off: none (watch the deadlock happen).
    #[arg(long, allow_hyphen_values = true)]
    pub deadlock_avoidance: Option<String>,
    /// Broadcast forwarding: node (receive, then send again) or router (in-router replication).
    #[arg(long, allow_hyphen_values = true)]
    pub forwarding: Option<String>,
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
    /// Software start-up cost per message, cycles.
    #[arg(long, allow_hyphen_values = true)]
    pub startup_cycles: Option<String>,
    /// Internal copy cost per flit, cycles.
    #[arg(long, allow_hyphen_values = true)]
    pub copy_cycles_per_flit: Option<String>,
    /// Deadlock watchdog: cycles with flits buffered and none moving.
    #[arg(long, allow_hyphen_values = true)]
    pub watchdog: Option<String>,
    /// Stop the run after this many cycles.
    #[arg(long, allow_hyphen_values = true)]
    pub max_cycles: Option<String>,
    /// Hotspot node for --traffic hotspot.
    #[arg(long, allow_hyphen_values = true)]
    pub hotspot: Option<String>,
    /// Fraction of hotspot traffic.
    #[arg(long, allow_hyphen_values = true)]
    pub hotspot_fraction: Option<String>,
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
    /// Split a run (traffic, or a broadcast such as mnb-sbt) between this many threads, each
    /// owning a range of routers (results do not depend on it).
    #[arg(long, allow_hyphen_values = true)]
    pub threads: Option<String>,
    /// Which routers the kernel visits each cycle: busy (only those with work; default) or
    /// all (every router, every allocation run: for checking). Results do not depend on it.
    #[arg(long, allow_hyphen_values = true)]
    pub schedule: Option<String>,
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
    #[arg(long)]
    pub rtl_compare: bool,
    /// Where --rtl-compare writes the waveform around a difference (default
    /// rtl-mismatch.vcd; its GTKWave save file beside it, .gtkw).
    #[arg(long, allow_hyphen_values = true)]
    pub rtl_window: Option<String>,
    /// A TOML description of the RTL router's port map, for routers whose ports differ from
    /// rtl/router.sv's (docs/rtl-adapter.md).
    #[arg(long, allow_hyphen_values = true)]
    pub rtl_adapter: Option<String>,
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
    /// Write the JSON result to PATH, or to standard output with -.
    #[arg(long, allow_hyphen_values = true)]
    pub json: Option<String>,
    /// No report on the terminal.
    #[arg(long)]
    pub quiet: bool,
    /// A link or router that fails: "link NODE.PORT at CYCLE", "router NODE at CYCLE", or
    /// @FILE of such lines (repeatable; docs/faults.md).
    #[arg(long, allow_hyphen_values = true)]
    pub fault: Vec<String>,
    /// Each link fails at cycle 0 with this probability, drawn by --seed.
    #[arg(long, allow_hyphen_values = true)]
    pub link_failure_rate: Option<String>,
}

impl RunArgs {
    /// The flags given, as raw settings; a flag whose value is another flag (`--vcs --dims
    /// 3`: the value was left out, and the flags take values that begin with `-`) is refused.
    pub fn raw(&self) -> Result<Raw, ConfigError> {
        let mut raw = Raw::default();
        // The flags given a value, by name.
        let given = serde_json::to_value(self).expect("flags as JSON");
        let fields = given.as_object().expect("an object").iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)));
        for (k, v) in fields {
            if let Some(flag) = v.strip_prefix("--")
                && (crate::config::FIELDS.contains(&flag.split('=').next().unwrap_or(flag)) || flag == "help")
            {
                return Err(ConfigError::new(
                    k,
                    format!("--{flag}"),
                    format!("a value is missing (--{k} is followed by the flag --{flag})"),
                ));
            }
            raw.values.insert(k.to_string(), v.to_string());
        }
        if self.rtl_compare {
            raw.values.insert("rtl-compare".to_string(), "on".to_string());
        }
        if self.quiet {
            raw.values.insert("quiet".to_string(), "on".to_string());
        }
        if !self.fault.is_empty() {
            for f in &self.fault {
                if let Some(flag) = f.strip_prefix("--") {
                    return Err(ConfigError::new(
                        "fault",
                        format!("--{flag}"),
                        format!("a value is missing (--fault is followed by the flag --{flag})"),
                    ));
                }
            }
            raw.values.insert("fault".to_string(), self.fault.join("\n"));
        }
        Ok(raw)
    }

    /// The scenario file's settings (if one is given) with the flags over them.
    pub fn settings(&self) -> Result<Raw, ConfigError> {
        // The flags first: a flag left without its value took the next one's, and the one
        // after may have become the scenario file.
        let flags = self.raw()?;
        let mut raw = match &self.scenario {
            Some(p) => Raw::from_toml_file(p)?,
            None => Raw::default(),
        };
        raw.overlay(flags);
        Ok(raw)
    }

    /// The files the settings `raw` read: the scenario file and a router file.
    pub fn input_files(&self, raw: &Raw) -> Vec<(&'static str, PathBuf)> {
        let router = raw.get("router").map(PathBuf::from).filter(|p| p.is_file());
        [("scenario", self.scenario.clone()), ("router", router)].into_iter().filter_map(|(f, p)| Some((f, p?))).collect()
    }

    /// Refuse `outputs` (`(field, path)`) of a command of these settings that are one of
    /// its input files or the same file as another output.
    pub fn check_outputs(&self, raw: &Raw, outputs: &[(&str, String)]) -> Result<(), ConfigError> {
        let inputs = self.input_files(raw);
        let inputs: Vec<(&str, &std::path::Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
        let outputs: Vec<(&str, &str)> = outputs.iter().map(|(f, p)| (*f, p.as_str())).collect();
        crate::output::check_paths(&outputs, &inputs)
    }

    /// [`RunArgs::settings`] for a command that runs many configurations and reads only
    /// their network-wide figures (`command`: its name; `instead`: the one run to make
    /// with `flitwave run` for waveforms and statistics files, which it refuses).
    pub(crate) fn settings_of_many_runs(&self, command: &str, instead: &str) -> Result<Raw, ConfigError> {
        let mut base = self.settings()?;
        // No per-VC and per-link detail to build.
        base.values.entry("stats".to_string()).or_insert_with(|| "summary".to_string());
        for key in ["vcd", "fst", "gtkw", "stats-csv"] {
            if let Some(v) = base.get(key) {
                return Err(ConfigError::new(
                    key,
                    v,
                    format!("{command} writes no waveforms or statistics files; run {instead} with `flitwave run` for them"),
                ));
            }
        }
        Ok(base)
    }
}

/// `flitwave run`: returns the process exit code.
pub fn cmd_run(args: &RunArgs) -> Result<i32, ConfigError> {
    let raw = args.settings()?;
    let mut cfg = Config::resolve(&raw)?;
    // The JSON path and quiet may come from the file too.
    let json = raw.get("json");
    let quiet = raw.get("quiet").map(|v| crate::config::on_off("quiet", v)).transpose()?.unwrap_or(false);
    cfg.outputs.announce = !quiet;
    let to_stdout = json == Some("-");
    let json_file = json.filter(|p| *p != "-");
    if json_file == Some("") {
        return Err(ConfigError::new("json", "", "a file path, or - for standard output"));
    }
    args.check_outputs(&raw, &run::output_paths(json_file, &cfg.outputs))?;
    if to_stdout {
        crate::output::check_stdout("json")?;
    }
    // Begun before the run, so a bad path is refused before any output.
    let mut json_out = json_file.map(|p| crate::output::Output::begin("json", p)).transpose()?;
    let progress = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let run::Ran { report, outputs } = run::run_with_outputs(&cfg, progress)?;
    let json = crate::json::to_string(&report);
    if let Some(o) = &mut json_out {
        o.write(format!("{json}\n").as_bytes());
    }
    let committed = crate::output::commit_all(json_out.into_iter().chain(outputs));
    if !quiet {
        let text = run::summary(&report);
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }
    let printed = if to_stdout { writeln!(std::io::stdout().lock(), "{json}") } else { Ok(()) };
    committed.map_err(ConfigError::Outputs)?;
    printed.map_err(|e| crate::output::failed_after_run(format!("json: - (standard output): cannot write it: {e}")))?;
    Ok(report.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every flag of `flitwave run` can be set in a scenario file under its own name, as
    /// `--help` promises (the file's keys are checked against `config::FIELDS`).
    #[test]
    fn every_run_flag_is_a_scenario_key() {
        let cmd = RunArgs::augment_args(clap::Command::new("run"));
        let flags: Vec<&str> = cmd.get_arguments().filter_map(|a| a.get_long()).collect();
        assert!(flags.len() > 40, "{flags:?}");
        for f in flags {
            assert!(crate::config::FIELDS.contains(&f), "--{f} cannot be set in a scenario file");
        }
    }

    /// `json` and `quiet` read from a file as from the flags.
    #[test]
    fn json_and_quiet_from_a_scenario_file() {
        let dir = std::env::temp_dir().join(format!("flitwave-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (toml, out) = (dir.join("s.toml"), dir.join("r.json"));
        std::fs::write(&toml, format!("dims = 3\nquiet = true\njson = {:?}\n", out.to_str().unwrap())).unwrap();
        let args = RunArgs { scenario: Some(toml.clone()), ..Default::default() };
        assert_eq!(cmd_run(&args).unwrap(), 0);
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(json["completion_cycles"], 3, "{json}");
        std::fs::write(&toml, "dims = 3\nquiet = \"maybe\"\n").unwrap();
        assert_eq!(cmd_run(&args).unwrap_err().to_string(), "quiet: maybe: on or off");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
