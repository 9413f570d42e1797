//! `flitwave sweep` and `flitwave merge`: every combination of some run keys' values (and
//! seeds), one row a run, in `results.jsonl` and `results.csv`.
//!
//! The rows are numbered (`id`, from 0) in the order of the cartesian product, the last grid
//! key varying fastest and the seed last of all. Rows stream to the files in that order as
//! they complete, so two sweeps of the same grid write the same bytes; the timing goes to
//! `sweep.json` only. A rerun in the same directory runs only the rows missing from
//! `results.jsonl` (a line cut short by a crash is dropped and run again). A shard
//! (`--shard I/N`) runs the rows whose id is I − 1 modulo N; `merge` joins the shards'
//! directories into one in row order, the same bytes as the sweep run whole.

use crate::cli::RunArgs;
use crate::config::{Config, ConfigError, FIELDS, Given, Raw};
use crate::run::{self, Report};
use crate::size_buffers::{bad, parse_jobs, prepare_out};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[derive(Args, Debug, Default)]
#[command(mut_arg("scenario", |a| a.value_name("SPEC.toml").help(
    "Sweep file (TOML): the fixed keys of a scenario file, a [grid] table of key = [values…], seeds = N"
)))]
pub struct SweepArgs {
    /// Run flags: fixed for every row, over the sweep file's fixed keys.
    #[command(flatten)]
    pub run: RunArgs,
    /// A run key and its values, KEY=V1,V2,… (repeat for more keys: the rows are every
    /// combination, the last key varying fastest).
    #[arg(long, help_heading = "Sweep", allow_hyphen_values = true)]
    pub grid: Vec<String>,
    /// Run every combination with seeds 1 to N (the `seed` column).
    #[arg(long, help_heading = "Sweep", allow_hyphen_values = true)]
    pub seeds: Option<String>,
    /// Runs at once (default: the machine's cores).
    #[arg(long, help_heading = "Sweep", allow_hyphen_values = true)]
    pub jobs: Option<String>,
    /// Run only the rows of shard I of N (1-based: the rows whose id is I-1 modulo N), as
    /// $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT with --array=1-N.
    #[arg(long, help_heading = "Sweep", allow_hyphen_values = true)]
    pub shard: Option<String>,
    /// The directory for results.jsonl, results.csv and sweep.json (a rerun resumes it).
    #[arg(long, help_heading = "Sweep")]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug, Default)]
pub struct MergeArgs {
    /// The shards' directories (each written by `flitwave sweep --shard`).
    pub dirs: Vec<PathBuf>,
    /// The directory for the joined results.jsonl, results.csv and sweep.json.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Run keys and the values each takes, in product order.
pub type Grid = Vec<(String, Vec<String>)>;

/// What a sweep runs, in a canonical form: two sweeps with equal specs have the same rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// The keys every row runs with.
    pub fixed: Given,
    /// The varied keys and their values, in product order (the last varies fastest).
    pub grid: Grid,
    /// Seeds 1 to N, varied after every grid key.
    pub seeds: Option<u64>,
}

/// The most rows a sweep may have.
const MAX_ROWS: usize = 10_000_000;

impl Spec {
    /// The grid, then the seeds: every varied key and its values.
    fn dims(&self) -> Grid {
        let mut d = self.grid.clone();
        if let Some(n) = self.seeds {
            d.push(("seed".to_string(), (1..=n).map(|s| s.to_string()).collect()));
        }
        d
    }

    pub fn rows(&self) -> usize {
        self.dims().iter().map(|(_, v)| v.len()).product()
    }

    /// The varied keys' values of row `id`.
    pub fn assignment(&self, id: usize) -> Vec<(String, String)> {
        let dims = self.dims();
        let mut rest = id;
        let mut out: Vec<(String, String)> = dims
            .iter()
            .rev()
            .map(|(k, vs)| {
                let v = vs[rest % vs.len()].clone();
                rest /= vs.len();
                (k.clone(), v)
            })
            .collect();
        out.reverse();
        out
    }

    /// The columns of the results: id, the varied keys, outcome, reason, the figures.
    pub fn columns(&self) -> Vec<String> {
        let mut c = vec!["id".to_string()];
        c.extend(self.dims().into_iter().map(|(k, _)| k));
        c.extend(["outcome", "reason"].map(String::from));
        c.extend(FIGURES.iter().map(|(n, _)| n.to_string()));
        c
    }

    /// `key=value, …` of row `id`, for messages.
    fn describe(&self, id: usize) -> String {
        let a: Vec<String> = self.assignment(id).iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("row {id} ({})", a.join(", "))
    }
}

/// A scalar of the report, as a results column.
type Figure = (&'static str, fn(&Report) -> Value);

fn float(x: Option<f64>) -> Value {
    x.map_or(Value::Null, Value::from)
}

fn int(x: Option<u64>) -> Value {
    x.map_or(Value::Null, Value::from)
}

/// The report's scalars in the results (not its per-VC and per-link statistics).
pub const FIGURES: &[Figure] = &[
    ("latency_avg_cycles", |r| float(r.latency_avg_cycles)),
    ("latency_ci95_cycles", |r| float(r.latency_ci95_cycles)),
    ("latency_p99_cycles", |r| int(r.latency_p99_cycles)),
    ("latency_max_cycles", |r| int(r.latency_max_cycles)),
    ("broadcast_latency_avg_cycles", |r| float(r.broadcast_latency_avg_cycles)),
    ("broadcast_latency_ci95_cycles", |r| float(r.broadcast_latency_ci95_cycles)),
    ("broadcast_latency_p99_cycles", |r| int(r.broadcast_latency_p99_cycles)),
    ("broadcast_latency_max_cycles", |r| int(r.broadcast_latency_max_cycles)),
    ("broadcasts_completed", |r| int(r.broadcasts_completed)),
    ("accepted_flits_per_node_cycle", |r| float(r.accepted_flits_per_node_cycle)),
    ("offered_flits_per_node_cycle", |r| float(r.offered_flits_per_node_cycle)),
    ("saturated", |r| r.saturated.map_or(Value::Null, Value::Bool)),
    ("completion_cycles", |r| int(Some(r.completion_cycles))),
    ("slots", |r| float(Some(r.slots))),
    ("lower_bound_slots", |r| float(r.lower_bound_slots)),
    ("paper_bound_slots", |r| float(r.paper_bound_slots)),
    ("vs_slot_model", |r| float(r.vs_slot_model)),
    ("simulated_cycles", |r| int(Some(r.simulated_cycles))),
    ("packets_sent", |r| int(Some(r.packets_sent))),
    ("expected_deliveries", |r| int(Some(r.expected_deliveries))),
    ("deliveries", |r| int(Some(r.deliveries))),
    ("missing_deliveries", |r| int(Some(r.missing_deliveries))),
    ("duplicate_deliveries", |r| int(Some(r.duplicate_deliveries))),
    ("misrouted_deliveries", |r| int(Some(r.misrouted_deliveries))),
    ("link_transmissions", |r| int(Some(r.link_transmissions))),
    ("flit_hops", |r| int(Some(r.flit_hops))),
    ("max_buffer_occupancy_flits", |r| int(Some(r.max_buffer_occupancy.overall.into()))),
    ("max_network_buffer_occupancy_flits", |r| int(Some(r.max_buffer_occupancy.network.into()))),
    ("max_injection_buffer_occupancy_flits", |r| int(Some(r.max_buffer_occupancy.injection.into()))),
    ("max_nic_queue_packets", |r| int(Some(r.max_nic_queue.into()))),
];

/// ok, deadlock or incomplete (deliveries missing, or the cycle limit), and why not ok.
pub(crate) fn outcome_of(r: &Report) -> (&'static str, Option<String>) {
    match r.exit_code() {
        0 => ("ok", None),
        3 => ("deadlock", Some("the watchdog found input VCs waiting on each other".to_string())),
        _ => ("incomplete", Some(format!("{} deliveries missing, ending {:?}", r.missing_deliveries, r.ending))),
    }
}

/// Keys a sweep does not take: each run would write over the same file.
const NOT_SWEPT: &[&str] = &["vcd", "fst", "gtkw", "stats-csv", "json"];

/// A run key as the scenario files spell it (`packet_flits` → `packet-flits`), if it is one.
fn run_key(field: &str, k: &str) -> Result<String, ConfigError> {
    let key = k.trim().replace('_', "-");
    if !FIELDS.contains(&key.as_str()) || key == "quiet" {
        let keys: Vec<&str> = FIELDS.iter().copied().filter(|f| *f != "quiet" && !NOT_SWEPT.contains(f)).collect();
        return Err(bad(field, k, &format!("a run key; the keys are {}", keys.join(", "))));
    }
    if NOT_SWEPT.contains(&key.as_str()) {
        return Err(bad(field, &key, "a sweep writes no per-run files; run one row with `flitwave run` for them"));
    }
    Ok(key)
}

fn parse_seeds(v: &str) -> Result<u64, ConfigError> {
    match v.trim().parse::<u64>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(bad("seeds", v, "a whole number from 1 to 100000 (seeds 1 to N)")),
    }
}

/// SPEC.toml: fixed keys (by name), `[grid]`, `seeds`.
fn read_spec(path: &Path) -> Result<(Given, Grid, Option<u64>), ConfigError> {
    let name = path.display().to_string();
    let text = crate::input::read_text(path).map_err(|e| bad("spec", &name, &format!("a sweep TOML file (cannot read it: {e})")))?;
    let mut table: toml::Table =
        text.parse().map_err(|e: toml::de::Error| crate::config::toml_error("spec", "malformed TOML: ", &text, &name, &e))?;
    let seeds = match table.remove("seeds") {
        None => None,
        Some(toml::Value::Integer(n)) => Some(parse_seeds(&n.to_string())?),
        Some(v) => return Err(bad("seeds", &v.to_string(), "a whole number from 1 to 100000 (seeds 1 to N)")),
    };
    let mut grid = Vec::new();
    match table.remove("grid") {
        None => {}
        Some(toml::Value::Table(t)) => {
            for (k, v) in t {
                let key = run_key("grid", &k)?;
                let toml::Value::Array(values) = v else {
                    return Err(bad("grid", &format!("{k} = {v}"), "a list of values, like rate = [0.1, 0.2]"));
                };
                let mut texts = Vec::new();
                for x in values {
                    // Each value read as the run file would read it.
                    let mut one = toml::Table::new();
                    one.insert(k.clone(), x);
                    let raw = Raw::from_toml_str(&one.to_string(), &name)?;
                    texts.extend(raw.given().into_values());
                }
                grid.push((key, texts));
            }
        }
        Some(v) => return Err(bad("grid", &v.to_string(), "a table of key = [values…], under [grid]")),
    }
    let fixed = Raw::from_toml_str(&table.to_string(), &name)?;
    Ok((fixed.given(), grid, seeds))
}

/// The spec of `args`: the file's, the flags fixed and the `--grid`s varied on top.
pub fn spec_of(args: &SweepArgs) -> Result<Spec, ConfigError> {
    let flags = args.run.raw()?.given();
    let (mut fixed, mut grid, mut seeds) = match &args.run.scenario {
        Some(p) => read_spec(p)?,
        None => (BTreeMap::new(), Vec::new(), None),
    };
    if let Some((k, _)) = grid.iter().find(|(k, _)| fixed.contains_key(k)) {
        return Err(bad("spec", k, "both a fixed key and in [grid]; keep one"));
    }
    // A flag fixes a key the file varies.
    grid.retain(|(k, _)| !flags.contains_key(k));
    let flagged: Vec<String> = flags.keys().cloned().collect();
    fixed.extend(flags);
    fixed.remove("quiet");
    if let Some((k, v)) = fixed.iter().find(|(k, _)| NOT_SWEPT.contains(&k.as_str())) {
        return Err(bad(k, v, "a sweep writes no per-run files; run one row with `flitwave run` for them"));
    }
    let mut from_flags: Vec<String> = Vec::new();
    for g in &args.grid {
        let Some((k, vs)) = g.split_once('=') else {
            return Err(bad("grid", g, "KEY=V1,V2,… (a run key and its values)"));
        };
        let key = run_key("grid", k)?;
        if from_flags.contains(&key) {
            return Err(bad("grid", &key, "given twice; give every value in one --grid"));
        }
        if let Some(v) = fixed.get(&key).filter(|_| flagged.contains(&key)) {
            return Err(bad(&key, v, &format!("given as a flag and in --grid {key}=…; keep one")));
        }
        let values: Vec<String> = vs.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(bad("grid", g, "KEY=V1,V2,… with no empty value"));
        }
        fixed.remove(&key);
        match grid.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = values,
            None => grid.push((key.clone(), values)),
        }
        from_flags.push(key);
    }
    for (k, vs) in &grid {
        if vs.is_empty() {
            return Err(bad("grid", k, "an empty list; give at least one value"));
        }
        let mut seen = vs.clone();
        seen.sort();
        seen.dedup();
        if seen.len() < vs.len() {
            return Err(bad("grid", &format!("{k}={}", vs.join(",")), "a value is given twice"));
        }
    }
    if let Some(v) = &args.seeds {
        seeds = Some(parse_seeds(v)?);
    }
    if seeds.is_some() {
        if let Some(v) = fixed.get("seed") {
            return Err(bad("seed", v, "given with seeds; the seeds are 1 to N, leave seed out"));
        }
        if grid.iter().any(|(k, _)| k == "seed") {
            return Err(bad("grid", "seed", "given with seeds; give one or the other"));
        }
    }
    let spec = Spec { fixed, grid, seeds };
    let rows = spec.dims().iter().try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()).filter(|&n| n <= MAX_ROWS));
    if rows.is_none() {
        return Err(bad("grid", "the product of the values", &format!("at most {MAX_ROWS} rows")));
    }
    Ok(spec)
}

/// `I/N` → (I, N), 1-based.
fn parse_shard(v: Option<&str>) -> Result<(usize, usize), ConfigError> {
    let Some(v) = v else { return Ok((1, 1)) };
    let parsed = v.split_once('/').and_then(|(i, n)| Some((i.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)));
    match parsed {
        Some((i, n)) if i >= 1 && i <= n && n <= 1_000_000 => Ok((i, n)),
        _ => Err(bad("shard", v, "I/N with 1 <= I <= N (1-based, like $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT with --array=1-N)")),
    }
}

/// A value as a JSON cell: a number where the text is one, else a string.
fn json_value(text: &str) -> Value {
    match serde_json::from_str::<serde_json::Number>(text) {
        Ok(n) if n.to_string() == text => Value::Number(n),
        _ => Value::String(text.to_string()),
    }
}

/// One results.jsonl line (without its newline): the columns in order.
fn json_line(columns: &[String], values: &[Value]) -> String {
    let fields: Vec<String> =
        columns.iter().zip(values).map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).expect("a string serializes"))).collect();
    format!("{{{}}}", fields.join(","))
}

/// A CSV field, quoted as RFC 4180 asks where it must be.
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One results.csv line with its newline; None is an empty cell.
fn csv_line(values: &[Value]) -> String {
    let cells: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::Null => String::new(),
            Value::String(s) => csv_field(s),
            v => csv_field(&v.to_string()),
        })
        .collect();
    format!("{}\n", cells.join(","))
}

fn csv_header(columns: &[String]) -> String {
    csv_line(&columns.iter().map(|c| Value::String(c.clone())).collect::<Vec<_>>())
}

/// A row: its results.jsonl line and its results.csv line.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    json: String,
    csv: String,
}

impl Row {
    fn new(columns: &[String], values: &[Value]) -> Row {
        Row { json: json_line(columns, values), csv: csv_line(values) }
    }

    /// A results.jsonl line of `spec`'s sweep: (id, row), or None if it is not one.
    fn parse(spec: &Spec, columns: &[String], line: &str) -> Option<(usize, Row)> {
        let Value::Object(map) = serde_json::from_str::<Value>(line).ok()? else { return None };
        let id = map.get("id")?.as_u64()? as usize;
        if map.len() != columns.len() || id >= spec.rows() {
            return None;
        }
        let values: Vec<Value> = columns.iter().map(|c| map.get(c).cloned()).collect::<Option<_>>()?;
        let row = Row::new(columns, &values);
        // The keys must be this row's.
        let ok = spec.assignment(id).iter().all(|(k, v)| map.get(k) == Some(&json_value(v)));
        (ok && row.json == line).then_some((id, row))
    }
}

/// The configuration of row `id`, or why it is refused.
fn resolve_row(spec: &Spec, id: usize) -> Result<Config, ConfigError> {
    let raw = Raw::from_given(spec.fixed.iter().map(|(k, v)| (k.clone(), v.clone())).chain(spec.assignment(id)))?;
    let cfg = Config::resolve(&raw)?;
    run::check_threads(&cfg)?;
    Ok(cfg)
}

/// Run row `id` of `spec`: its row, its wall time (resolving, building, running and
/// reporting), its outcome.
fn run_row(spec: &Spec, columns: &[String], id: usize) -> (Row, f64, &'static str) {
    let started = std::time::Instant::now();
    let mut values = vec![Value::from(id)];
    values.extend(spec.assignment(id).iter().map(|(_, v)| json_value(v)));
    let outcome = match resolve_row(spec, id) {
        Ok(cfg) => {
            let r = run::run(&cfg);
            let (outcome, reason) = outcome_of(&r);
            values.push(Value::from(outcome));
            values.push(reason.map_or(Value::Null, Value::from));
            values.extend(FIGURES.iter().map(|(_, f)| f(&r)));
            outcome
        }
        Err(e) => {
            values.push(Value::from("refused"));
            values.push(Value::from(e.to_string()));
            values.extend(FIGURES.iter().map(|_| Value::Null));
            "refused"
        }
    };
    let row = Row::new(columns, &values);
    (row, started.elapsed().as_secs_f64(), outcome)
}

/// sweep.json: what was swept, how far, how long.
#[derive(Debug, Serialize, Deserialize)]
struct Summary {
    spec: Spec,
    columns: Vec<String>,
    /// Rows of the whole sweep.
    rows: usize,
    /// `I/N`, or None for the whole sweep.
    shard: Option<String>,
    /// Rows of this shard (of the whole sweep, without one).
    shard_rows: usize,
    /// Rows of this shard in results.jsonl.
    done: usize,
    /// Rows found done already, not run again.
    skipped: usize,
    /// Rows run this time (a refused combination counts, without running).
    ran: usize,
    /// Outcomes of the rows run this time.
    outcomes: BTreeMap<String, usize>,
    jobs: usize,
    wall_seconds: f64,
    /// The rows' own times added up, each from resolving its configuration to its report
    /// (jobs × wall time, at best).
    run_seconds: f64,
    /// merge: the directories joined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    merged: Vec<String>,
    /// merge: rows no shard has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    missing: Option<usize>,
}

/// Only the spec of a sweep.json (the rest may change between versions).
#[derive(Deserialize)]
struct SpecOnly {
    spec: Spec,
}

/// Write `text` to `path` whole or not at all.
fn write_file(path: &Path, text: &str) -> Result<(), ConfigError> {
    crate::output::write_file("out", path, text)
}

/// The spec of the sweep whose directory is `dir`, if it has a sweep.json.
fn spec_in(dir: &Path) -> Result<Option<Spec>, ConfigError> {
    let path = dir.join("sweep.json");
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| bad("out", &path.display().to_string(), &format!("a readable file ({e})")))?;
    match serde_json::from_str::<SpecOnly>(&text) {
        Ok(s) => Ok(Some(s.spec)),
        Err(_) => {
            Err(bad("out", &path.display().to_string(), "not a flitwave sweep.json; give another directory, this file is left alone"))
        }
    }
}

/// Make `out` a directory of `spec`'s sweep: refuse one holding another sweep's or anyone
/// else's results files.
fn claim(out: &Path, spec: &Spec) -> Result<(), ConfigError> {
    if out.as_os_str() == "-" || out.as_os_str().is_empty() {
        return Err(bad(
            "out",
            &format!("{:?}", out.display().to_string()),
            "a directory to write into (there is no standard output here)",
        ));
    }
    prepare_out(out)?;
    let shown = out.display().to_string();
    match spec_in(out)? {
        Some(s) if s == *spec => Ok(()),
        Some(_) => Err(bad(
            "out",
            &shown,
            "holds the results of another sweep (its sweep.json has other keys, values or seeds); give another directory, nothing was changed",
        )),
        None => match ["results.jsonl", "results.csv"].into_iter().find(|f| out.join(f).exists()) {
            Some(f) => Err(bad(
                "out",
                &shown,
                &format!("has a {f} but no sweep.json: not written by a sweep; give another directory, nothing was changed"),
            )),
            None => Ok(()),
        },
    }
}

/// The rows in `dir`/results.jsonl: a last line cut short (a crash) is left out; any other
/// line that is not a row of `spec` is an error.
fn load(dir: &Path, spec: &Spec, columns: &[String]) -> Result<BTreeMap<usize, Row>, ConfigError> {
    let path = dir.join("results.jsonl");
    let text = match std::fs::read(&path) {
        Ok(b) => String::from_utf8_lossy(&b).to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(bad("results", &path.display().to_string(), &format!("a readable file ({e})"))),
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut rows = BTreeMap::new();
    for (n, line) in lines.iter().enumerate() {
        let last = n + 1 == lines.len();
        match line.strip_suffix('\n').and_then(|l| Row::parse(spec, columns, l)) {
            Some((id, row)) => {
                rows.entry(id).or_insert(row);
            }
            None if last => {}
            None => {
                return Err(bad(
                    "results",
                    &format!("{}:{}", path.display(), n + 1),
                    "not a row of this sweep; remove the line (or the file) to run it again",
                ));
            }
        }
    }
    Ok(rows)
}

/// Both results files holding `rows` in id order, replaced whole.
fn write_rows<'a>(out: &Path, columns: &[String], rows: impl Iterator<Item = &'a Row> + Clone) -> Result<(), ConfigError> {
    let json: String = rows.clone().map(|r| format!("{}\n", r.json)).collect();
    let csv: String = std::iter::once(csv_header(columns)).chain(rows.map(|r| r.csv.clone())).collect();
    write_file(&out.join("results.jsonl"), &json)?;
    write_file(&out.join("results.csv"), &csv)
}

fn open_append(path: &Path) -> Result<std::fs::File, ConfigError> {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| bad("out", &path.display().to_string(), &format!("a writable file ({e})")))
}

/// `flitwave sweep`: returns the process exit code.
pub fn cmd_sweep(args: &SweepArgs) -> Result<i32, ConfigError> {
    let spec = spec_of(args)?;
    let (shard, shards) = parse_shard(args.shard.as_deref())?;
    let jobs = parse_jobs(args.jobs.as_deref())?;
    let quiet = args.run.keys.outputs.is_quiet()?;
    let out = args
        .out
        .as_deref()
        .ok_or_else(|| bad("out", "missing", "a directory for results.jsonl, results.csv and sweep.json (--out DIR)"))?;
    let columns = spec.columns();
    // A sweep no row of which is a valid run is bad input (a misspelt fixed value).
    if let Err(e) = resolve_row(&spec, 0)
        && (1..spec.rows()).all(|id| resolve_row(&spec, id).is_err())
    {
        return Err(e);
    }
    claim(out, &spec)?;
    let mut rows = load(out, &spec, &columns)?;
    let mine: Vec<usize> = (0..spec.rows()).filter(|id| id % shards == shard - 1).collect();
    let todo: Vec<usize> = mine.iter().copied().filter(|id| !rows.contains_key(id)).collect();
    let mut summary = Summary {
        spec: spec.clone(),
        columns: columns.clone(),
        rows: spec.rows(),
        shard: (shards > 1).then(|| format!("{shard}/{shards}")),
        shard_rows: mine.len(),
        done: mine.len() - todo.len(),
        skipped: mine.len() - todo.len(),
        ran: 0,
        outcomes: BTreeMap::new(),
        jobs,
        wall_seconds: 0.0,
        run_seconds: 0.0,
        merged: Vec::new(),
        missing: None,
    };
    let summary_path = out.join("sweep.json");
    write_file(&summary_path, &format!("{}\n", serde_json::to_string_pretty(&summary).expect("serializable")))?;
    // The rows found, in order and whole (a line cut short gone); the new ones follow.
    write_rows(out, &columns, rows.values())?;
    let started = std::time::Instant::now();
    let (mut json_file, mut csv_file) = (open_append(&out.join("results.jsonl"))?, open_append(&out.join("results.csv"))?);
    let bar = (!quiet && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        let style = indicatif::ProgressStyle::with_template("  [{elapsed_precise}] {wide_bar} {pos}/{len} runs, eta {eta}")
            .expect("a valid template");
        indicatif::ProgressBar::new(todo.len() as u64).with_style(style)
    });
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let interrupted = crate::interrupt::flag();
    let mut failure: Option<ConfigError> = None;
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Row, f64, &'static str)>();
        for _ in 0..jobs.min(todo.len()) {
            let tx = tx.clone();
            let (spec, columns, todo, next, stop, interrupted) = (&spec, &columns, &todo, &next, &stop, &interrupted);
            s.spawn(move || {
                // An interrupt lets the rows running finish and starts no more.
                while !stop.load(Ordering::Relaxed) && !interrupted.load(Ordering::Relaxed) {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&id) = todo.get(k) else { break };
                    let (row, wall, outcome) = run_row(spec, columns, id);
                    if tx.send((k, row, wall, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Rows written in order as they complete; later ones wait for the earlier.
        let mut pending: BTreeMap<usize, Row> = BTreeMap::new();
        let mut written = 0;
        for (k, row, wall, outcome) in rx {
            summary.run_seconds += wall;
            summary.ran += 1;
            *summary.outcomes.entry(outcome.to_string()).or_default() += 1;
            if let Some(b) = &bar {
                b.inc(1);
            }
            pending.insert(k, row);
            while let Some(row) = pending.remove(&written) {
                let ok = writeln!(json_file, "{}", row.json).and_then(|()| csv_file.write_all(row.csv.as_bytes()));
                if let Err(e) = ok {
                    failure.get_or_insert(bad("out", &out.display().to_string(), &format!("a writable directory ({e})")));
                    stop.store(true, Ordering::Relaxed);
                }
                rows.insert(todo[written], row);
                written += 1;
            }
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    // New rows before rows found done (some taken out of the middle): put them in order.
    if todo.first().is_some_and(|first| rows.range(first..).any(|(id, _)| todo.binary_search(id).is_err())) {
        write_rows(out, &columns, rows.values())?;
    }
    summary.done = mine.iter().filter(|id| rows.contains_key(id)).count();
    summary.wall_seconds = started.elapsed().as_secs_f64();
    write_file(&summary_path, &format!("{}\n", serde_json::to_string_pretty(&summary).expect("serializable")))?;
    if !quiet {
        let outcomes: Vec<String> = summary.outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
        println!(
            "flitwave sweep: {} rows{}: {} run ({}), {} done before; {:.1} s ({:.1} s of runs on {} jobs); {}",
            summary.shard_rows,
            summary.shard.as_ref().map(|s| format!(" (shard {s} of {} rows)", summary.rows)).unwrap_or_default(),
            summary.ran,
            if outcomes.is_empty() { "none".to_string() } else { outcomes.join(", ") },
            summary.skipped,
            summary.wall_seconds,
            summary.run_seconds,
            jobs,
            out.join("results.csv").display()
        );
    }
    if interrupted.load(Ordering::Relaxed) {
        eprintln!(
            "flitwave sweep: interrupted: {} of {} rows done, the rows running finished; the same command runs the rest",
            summary.done, summary.shard_rows
        );
        return Ok(crate::interrupt::EXIT_INTERRUPTED);
    }
    Ok(0)
}

/// `flitwave merge`: the shards' rows in one directory; exit 1 if rows are missing or two
/// shards disagree on one.
pub fn cmd_merge(args: &MergeArgs) -> Result<i32, ConfigError> {
    let out = args.out.as_deref().ok_or_else(|| bad("out", "missing", "a directory for the merged results (--out DIR)"))?;
    let Some(first) = args.dirs.first() else {
        return Err(bad("merge", "no directories", "the shards' directories, each written by flitwave sweep --shard I/N"));
    };
    let started = std::time::Instant::now();
    let spec_of_dir = |d: &PathBuf| -> Result<Spec, ConfigError> {
        spec_in(d)?.ok_or_else(|| bad("merge", &d.display().to_string(), "a directory written by flitwave sweep (it has no sweep.json)"))
    };
    let spec = spec_of_dir(first)?;
    let columns = spec.columns();
    let mut rows: BTreeMap<usize, (Row, &PathBuf)> = BTreeMap::new();
    let mut trouble = false;
    for d in &args.dirs {
        if spec_of_dir(d)? != spec {
            return Err(bad(
                "merge",
                &d.display().to_string(),
                &format!("a shard of the same sweep as {} (its sweep.json has other keys, values or seeds)", first.display()),
            ));
        }
        for (id, row) in load(d, &spec, &columns)? {
            match rows.get(&id) {
                None => {
                    rows.insert(id, (row, d));
                }
                Some((r, from)) if *r == row => {
                    eprintln!(
                        "flitwave: merge: {} is in both {} and {} (the same; kept once)",
                        spec.describe(id),
                        from.display(),
                        d.display()
                    );
                }
                Some((_, from)) => {
                    trouble = true;
                    eprintln!(
                        "flitwave: merge: {} differs between {} and {}; kept the first",
                        spec.describe(id),
                        from.display(),
                        d.display()
                    );
                }
            }
        }
    }
    let missing: Vec<usize> = (0..spec.rows()).filter(|id| !rows.contains_key(id)).collect();
    for &id in &missing {
        eprintln!("flitwave: merge: {} missing", spec.describe(id));
    }
    claim(out, &spec)?;
    write_rows(out, &columns, rows.values().map(|(r, _)| r))?;
    let summary = Summary {
        spec: spec.clone(),
        columns,
        rows: spec.rows(),
        shard: None,
        shard_rows: spec.rows(),
        done: rows.len(),
        skipped: 0,
        ran: 0,
        outcomes: BTreeMap::new(),
        jobs: 0,
        wall_seconds: started.elapsed().as_secs_f64(),
        run_seconds: 0.0,
        merged: args.dirs.iter().map(|d| d.display().to_string()).collect(),
        missing: Some(missing.len()),
    };
    write_file(&out.join("sweep.json"), &format!("{}\n", serde_json::to_string_pretty(&summary).expect("serializable")))?;
    Ok(if missing.is_empty() && !trouble { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            fixed: BTreeMap::new(),
            grid: vec![("rate".into(), vec!["0.1".into(), "0.2".into()]), ("vcs".into(), vec!["1".into(), "2".into(), "4".into()])],
            seeds: Some(2),
        }
    }

    #[test]
    fn rows_in_product_order_the_seed_fastest() {
        let s = spec();
        assert_eq!(s.rows(), 12);
        let a = |id| s.assignment(id).into_iter().map(|(_, v)| v).collect::<Vec<_>>().join(" ");
        assert_eq!([a(0), a(1), a(2), a(11)], ["0.1 1 1", "0.1 1 2", "0.1 2 1", "0.2 4 2"]);
        assert_eq!(s.describe(3), "row 3 (rate=0.1, vcs=2, seed=2)");
    }

    #[test]
    fn fields_quoted_as_rfc_4180_asks() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("4x4"), "4x4");
        assert_eq!(csv_line(&[Value::Null, Value::from(1.5), Value::from("x")]), ",1.5,x\n");
    }

    #[test]
    fn numbers_stay_numbers_and_text_text() {
        assert_eq!(json_value("0.1"), Value::from(0.1));
        assert_eq!(json_value("01"), Value::from("01"));
        assert_eq!(json_value("4x4"), Value::from("4x4"));
    }

    #[test]
    fn shards_are_one_based() {
        assert_eq!(parse_shard(Some("1/3")), Ok((1, 3)));
        assert_eq!(parse_shard(None), Ok((1, 1)));
        for bad in ["0/3", "4/3", "1-3", "x/2", "1/0"] {
            assert!(parse_shard(Some(bad)).unwrap_err().to_string().starts_with("shard: "), "{bad}");
        }
    }
}
