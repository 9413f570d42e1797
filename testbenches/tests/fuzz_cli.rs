//! A fuzz target over the command line: random `flitwave run` flags and values, random
//! scenario and router TOML files, random output paths (among them the inputs, devices,
//! a directory and a file that was there), run by the real binary. Every run must end by
//! itself within [`HANG`] with exit 0, 1 (finished, not everything delivered), 2 (refused,
//! in one error line) or 3 (deadlock), never by a signal or a panic; the input files never
//! change, a refused run leaves the file that was there as it was, and no temporary file
//! is left behind.
//!
//! It runs for a few seconds by default; `FLITWAVE_FUZZ_SECS=60` (CI) runs it longer. The
//! cases are drawn from a fresh seed each time: a failure prints the command line and files.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");
/// A run that takes longer has hung (the runs drawn are small or refused).
const HANG: Duration = Duration::from_secs(30);

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(options).prop_map(str::to_string)
}

/// A value for any flag: numbers at the edges, words the flags take, sizes, odd text.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        pick(&[
            "0",
            "1",
            "2",
            "3",
            "4",
            "7",
            "8",
            "-1",
            "255",
            "65535",
            "65536",
            "4294967295",
            "4294967296",
            "1099511627776",
            "281474976710656",
            "18446744073709551615",
            "18446744073709551616",
            "0.0",
            "0.001",
            "0.5",
            "1.0",
            "1.5",
            "1e308",
            "-0.0",
            "nan",
            "inf",
            "0x10",
            "1_000",
        ]),
        pick(&[
            "on",
            "off",
            "all",
            "none",
            "one",
            "sf",
            "vct",
            "wh",
            "ideal",
            "realistic",
            "booksim",
            "uniform",
            "tornado",
            "transpose",
            "bit-complement",
            "hotspot",
            "snb",
            "mnb",
            "mnb-sbt",
            "kbcast",
            "pmnb-2",
            "dynamic",
            "scatter",
            "gather",
            "total-exchange",
            "st",
            "rh",
            "node",
            "router",
            "full",
            "summary",
            "busy",
            "random",
            "prefix",
            "hypercube",
            "linear",
            "mesh",
            "torus",
            "round-robin",
            "oldest",
            "sync",
            "atomic",
            "0-3,7",
            "1,2",
        ]),
        pick(&["3", "4", "5", "6", "4x4", "2x2x2", "3x5", "8", "1", "1x1", "0x3", "99", "65536x65536", "2x", "x", ""]),
        "[ -~]{0,12}",
        "\\PC{0,6}",
    ]
}

/// Output paths, in the run's directory unless absolute.
fn output_path() -> impl Strategy<Value = String> {
    pick(&[
        "out.json",
        "w.vcd",
        "w.fst",
        "w.gtkw",
        "s.csv",
        "keep.json",
        "s.toml",
        "r.toml",
        "w.flags.txt",
        "dir",
        "/dev/null",
        "/dev/full",
        "/proc/x.json",
        "-",
        "",
        "missing/x.json",
    ])
}

const OUTPUT_FLAGS: &[&str] = &["json", "vcd", "fst", "gtkw", "stats-csv"];

/// Valid runs to start from (so that many cases get past validation and run).
const BASES: &[&[(&str, &str)]] = &[
    &[],
    &[("dims", "3")],
    &[("topology", "mesh"), ("dims", "4x4"), ("traffic", "uniform"), ("rate", "0.1"), ("cycles", "500")],
    &[("topology", "torus"), ("dims", "4x4"), ("traffic", "tornado"), ("rate", "1"), ("cycles", "400"), ("deadlock-avoidance", "off")],
    &[("dims", "4"), ("algorithm", "kbcast"), ("active-count", "3")],
    &[("topology", "mesh"), ("dims", "3x3"), ("algorithm", "mnb-sbt"), ("forwarding", "router")],
    &[("dims", "4"), ("algorithm", "total-exchange"), ("ports", "one")],
    &[("topology", "mesh"), ("dims", "4x4"), ("broadcast-rate", "0.01"), ("cycles", "300"), ("router", "realistic")],
];

/// Flags (each at most once) with values: a valid base or none, a few of the run's flags
/// with any value, perhaps some outputs.
fn flags() -> impl Strategy<Value = Vec<(String, String)>> {
    let base = proptest::sample::select(BASES);
    let run_flag = proptest::sample::select(testbenches::config::FIELDS.clone()).prop_map(str::to_string);
    let out_flag = proptest::sample::select(OUTPUT_FLAGS).prop_map(str::to_string);
    let some = (proptest::collection::vec((run_flag, value()), 0..3), proptest::collection::vec((out_flag, output_path()), 0..4));
    (base, some).prop_map(|(base, (run, out))| {
        let mut all: Vec<(String, String)> = base.iter().map(|(f, v)| (f.to_string(), v.to_string())).collect();
        all.extend(run);
        all.extend(out);
        let mut seen = std::collections::HashSet::new();
        all.retain(|(f, _)| seen.insert(f.clone()));
        all
    })
}

/// A TOML value, mostly well-formed.
fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        value().prop_map(|v| format!("{v:?}")),
        pick(&["0", "1", "3", "4294967295", "4294967296", "-1", "9223372036854775807", "1.5", "true", "false", "[1, 2]", "[]", "{}"]),
        "[ -~]{0,10}",
    ]
}

/// A scenario file: keys of the run (with `_` or `-`), a line of noise now and then.
fn scenario() -> impl Strategy<Value = String> {
    let key = (proptest::sample::select(testbenches::config::FIELDS.clone()), any::<bool>())
        .prop_map(|(k, under)| if under { k.replace('-', "_") } else { k.to_string() });
    let line = prop_oneof![8 => (key, toml_value()).prop_map(|(k, v)| format!("{k} = {v}")), 1 => "[ -~]{0,16}"];
    proptest::collection::vec(line, 0..6).prop_map(|l| l.join("\n") + "\n")
}

/// A router file: its keys, with values at the edges.
fn router() -> impl Strategy<Value = String> {
    let key = pick(&["preset", "rc_delay", "va_delay", "link_latency", "credit_delay", "inject_latency", "sa_delay"]);
    let line = prop_oneof![8 => (key, toml_value()).prop_map(|(k, v)| format!("{k} = {v}")), 1 => "[ -~]{0,16}"];
    proptest::collection::vec(line, 0..4).prop_map(|l| l.join("\n") + "\n")
}

#[derive(Debug, Clone)]
struct Case {
    /// `run s.toml` (the scenario file) or flags alone.
    with_scenario: bool,
    scenario: String,
    /// `--router r.toml` if no flag gives --router.
    with_router: bool,
    router: String,
    flags: Vec<(String, String)>,
    quiet: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (proptest::bool::weighted(0.3), scenario(), proptest::bool::weighted(0.3), router(), flags(), any::<bool>()).prop_map(
        |(with_scenario, scenario, with_router, router, flags, quiet)| Case { with_scenario, scenario, with_router, router, flags, quiet },
    )
}

/// A directory of its own for the runs, emptied before each.
struct Dir(PathBuf);

impl Dir {
    fn reset(&self) {
        let _ = std::fs::remove_dir_all(&self.0);
        std::fs::create_dir_all(self.0.join("dir")).unwrap();
    }
    fn names(&self) -> Vec<String> {
        std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `c`: its exit code, or what went wrong, with the command line and the files.
fn check(d: &Dir, c: &Case) -> Result<i32, String> {
    d.reset();
    let read = |p: &Path| std::fs::read(p).ok();
    let (s, r, keep) = (d.0.join("s.toml"), d.0.join("r.toml"), d.0.join("keep.json"));
    std::fs::write(&s, &c.scenario).unwrap();
    std::fs::write(&r, &c.router).unwrap();
    std::fs::write(&keep, "keep\n").unwrap();
    let mut args: Vec<String> = vec!["run".into()];
    if c.with_scenario {
        args.push("s.toml".into());
    }
    if c.with_router && !c.flags.iter().any(|(f, _)| f == "router") {
        args.extend(["--router".into(), "r.toml".into()]);
    }
    for (f, v) in &c.flags {
        args.push(format!("--{f}"));
        args.push(v.clone());
    }
    if c.quiet {
        args.push("--quiet".into());
    }
    // Bound the work of an accepted run: an overloaded one (`--broadcast-rate 1` queues 40 M
    // packets on the 6-cube, 2.5 M cycles to drain) is long, not hung, and ends at the cycle
    // limit (exit 1). Time in which nothing happens has its own tests (robustness.rs).
    if !c.flags.iter().any(|(f, _)| f == "max-cycles") {
        args.extend(["--max-cycles".into(), "100000".into()]);
    }
    let shown = format!("flitwave {args:?}\n--- s.toml\n{}--- r.toml\n{}", c.scenario, c.router);
    let mut child =
        Command::new(BIN).current_dir(&d.0).args(&args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no end after {HANG:?}: {shown}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    let code = status.code();
    if !matches!(code, Some(0..=3)) {
        return Err(format!("ended with {status:?}: {err}\n{shown}"));
    }
    if code == Some(2) {
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("flitwave: error: ")).collect();
        if errors.len() != 1 || !err.trim_end().lines().last().is_some_and(|l| l.starts_with("flitwave: error: ")) {
            return Err(format!("exit 2 without one error line at the end: {err}\n{shown}"));
        }
        if read(&keep).as_deref() != Some(b"keep\n".as_slice()) {
            return Err(format!("a refused run changed keep.json: {err}\n{shown}"));
        }
    }
    let router_read = args.windows(2).any(|w| w[0] == "--router" && w[1] == "r.toml");
    if (c.with_scenario && read(&s).as_deref() != Some(c.scenario.as_bytes()))
        || (router_read && read(&r).as_deref() != Some(c.router.as_bytes()))
    {
        return Err(format!("an input file changed (exit {code:?}): {err}\n{shown}"));
    }
    if let Some(t) = d.names().iter().find(|n| n.ends_with(".tmp")) {
        return Err(format!("temporary file {t} left (exit {code:?}): {err}\n{shown}"));
    }
    Ok(code.unwrap_or_default())
}

#[test]
fn random_command_lines_and_files_end_cleanly() {
    let secs: u64 = std::env::var("FLITWAVE_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let d = Dir(std::env::temp_dir().join(format!("flitwave-fuzz-{}", std::process::id())));
    let mut runner = TestRunner::default();
    let strategy = case();
    let start = Instant::now();
    // Runs by exit code.
    let mut codes = [0u64; 4];
    while codes.iter().sum::<u64>() == 0 || start.elapsed() < Duration::from_secs(secs) {
        let c = strategy.new_tree(&mut runner).unwrap().current();
        match check(&d, &c) {
            Ok(code) => codes[code as usize] += 1,
            Err(e) => panic!("after {} runs: {e}", codes.iter().sum::<u64>()),
        }
    }
    eprintln!("fuzz: runs ending with exit 0, 1, 2, 3: {codes:?} in {:.1} s", start.elapsed().as_secs_f64());
}
