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

/// The arguments of `flitwave run`: a scenario file and the run keys as flags (over the
/// file's), each defined once in [`crate::config::Raw`]'s sections.
#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Scenario file (TOML); its keys are the flag names below.
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub keys: Raw,
}

impl RunArgs {
    /// The flags given, as raw settings; a flag whose value is another flag (`--vcs --dims
    /// 3`: the value was left out, and the flags take values that begin with `-`) is refused.
    pub fn raw(&self) -> Result<Raw, ConfigError> {
        for (k, v) in self.keys.given() {
            // A repeated flag's values come one per line.
            for v in v.lines() {
                if let Some(flag) = v.strip_prefix("--")
                    && (crate::config::FIELDS.contains(&flag.split('=').next().unwrap_or(flag)) || flag == "help")
                {
                    return Err(ConfigError::new(
                        &k,
                        format!("--{flag}"),
                        format!("a value is missing (--{k} is followed by the flag --{flag})"),
                    ));
                }
            }
        }
        Ok(self.keys.clone())
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
        let router = raw.router.router.as_deref().map(PathBuf::from).filter(|p| p.is_file());
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
        base.outputs.stats.get_or_insert_with(|| "summary".to_string());
        for (key, path) in base.outputs.files() {
            if let Some(v) = path {
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
    let json = raw.outputs.json.as_deref();
    let quiet = raw.outputs.is_quiet()?;
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

    /// A command that takes the run keys lists its own options under its own heading, not
    /// under the last section of the run keys (clap carries a heading on to the options that
    /// follow it).
    #[test]
    fn a_commands_own_options_are_not_under_a_run_key_heading() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let sections: Vec<String> = {
            let run = RunArgs::augment_args(clap::Command::new("run"));
            run.get_arguments().filter_map(|a| a.get_help_heading().map(str::to_string)).collect()
        };
        assert!(sections.iter().any(|h| h == "RTL co-simulation"), "{sections:?}");
        for name in ["sweep", "size-buffers", "compare-forwarding"] {
            let cmd = cli.find_subcommand(name).unwrap();
            for a in cmd.get_arguments().filter(|a| a.get_long().is_some_and(|l| !crate::config::FIELDS.contains(&l))) {
                let heading = a.get_help_heading();
                assert!(!heading.is_some_and(|h| sections.iter().any(|s| s == h)), "{name} --{}: under {heading:?}", a.get_id());
            }
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
