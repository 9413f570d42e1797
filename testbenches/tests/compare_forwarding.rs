//! `flitwave compare-forwarding` against separate `flitwave run`s of the same cases, and the
//! start-up costs' effect derived from the broadcast tree.

mod common;

use common::{describe, flitwave};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// Exit code and the JSON on standard output (`--json -`).
fn json_of(args: &[&str]) -> (i32, Value) {
    let o = flitwave(args);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{}", describe(args, &o)));
    (o.status.code().unwrap(), v)
}

/// `flitwave compare-forwarding FLAGS --json -`: exit code and rows.
fn compare(flags: &str) -> (i32, Vec<Value>) {
    let mut args = vec!["compare-forwarding"];
    args.extend(words(flags));
    args.extend(["--json", "-"]);
    let (code, v) = json_of(&args);
    (code, v["rows"].as_array().unwrap_or_else(|| panic!("no rows: {v}")).clone())
}

/// The row of a case.
fn row<'a>(rows: &'a [Value], forwarding: &str, flits: u64, startup: u64) -> &'a Value {
    rows.iter()
        .find(|r| r["forwarding"] == forwarding && r["packet_flits"] == flits && r["startup_cycles"] == startup)
        .unwrap_or_else(|| panic!("no {forwarding} row for {flits} flits, start-up {startup}: {rows:?}"))
}

/// `flitwave run FLAGS --json -`, which must complete.
fn run(flags: &str) -> Value {
    let mut args = vec!["run"];
    args.extend(words(flags));
    args.extend(["--json", "-"]);
    let (code, v) = json_of(&args);
    assert_eq!(code, 0, "flitwave {}", args.join(" "));
    v
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a whole number: {v}"))
}

fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!("flitwave-compare-test-{}-{n}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    p
}

/// The speed-up is node completion over router completion, each as `flitwave run` reports
/// the same case on its own, and the other columns are those runs' figures.
#[test]
fn speedup_is_node_over_router_of_separate_runs() {
    let fabric = "--dims 4 --algorithm mnb-sbt --switching wh --vcs 2 --router realistic";
    let (code, rows) = compare(&format!("{fabric} --packet-flits 1,4 --startup-cycles 0,50"));
    assert_eq!(code, 0);
    assert_eq!(rows.len(), 8, "{rows:?}");
    for flits in [1, 4] {
        for startup in [0, 50] {
            let case = format!("{fabric} --packet-flits {flits} --startup-cycles {startup}");
            let node = run(&format!("{case} --forwarding node"));
            let router = run(&format!("{case} --forwarding router"));
            let (n, r) = (row(&rows, "node", flits, startup), row(&rows, "router", flits, startup));
            for (row, run) in [(n, &node), (r, &router)] {
                assert_eq!(row["outcome"], "ok");
                assert_eq!(row["completion_cycles"], run["completion_cycles"], "{case}");
                assert_eq!(row["nic_packets"], run["packets_sent"], "{case}");
                assert_eq!(row["max_nic_queue"], run["max_nic_queue"], "{case}");
                assert_eq!(row["flit_hops"], run["flit_hops"], "{case}");
                assert_eq!(row["occupancy_p99_flits"], run["occupancy"]["network"]["p99_flits"], "{case}");
                assert_eq!(row["occupancy_max_flits"], run["occupancy"]["network"]["max_flits"], "{case}");
                assert_eq!(row["copy_cycles_per_flit"], 0);
            }
            let expected = u(&node["completion_cycles"]) as f64 / u(&router["completion_cycles"]) as f64;
            let got = r["speedup"].as_f64().unwrap_or_else(|| panic!("no speed-up: {r}"));
            assert!((got - expected).abs() < 1e-12, "{case}: speed-up {got}, runs give {expected}");
            assert!(n["speedup"].is_null(), "a node row has no speed-up: {n}");
            // Every node forwards: each of the 16 broadcasts is 15 packets through the NICs.
            assert_eq!(u(&node["packets_sent"]), 16 * 15);
            assert_eq!(u(&router["packets_sent"]), 16);
        }
    }
}

/// A single-node broadcast on a d-cube's binomial tree: the node farthest from the root (its
/// complement) is reached by a chain of d messages, each received in full and sent again by
/// a node's software, so each pays the start-up on the critical path: node forwarding gets
/// at least d × 50 cycles slower with a 50-cycle start-up. The routers replicate one packet,
/// which the root's NIC starts once (`start_next` in fabric/src/nic.rs delays every packet
/// a NIC starts by the start-up; the root starts one, nothing else does): the whole
/// broadcast shifts by exactly 50 cycles.
#[test]
fn startup_costs_lie_on_the_tree_for_nodes_once_for_routers() {
    let d = 5;
    for ports in ["all", "one"] {
        for (flits, switching) in [(1, "sf"), (4, "sf"), (4, "wh")] {
            let (code, rows) =
                compare(&format!("--dims {d} --ports {ports} --switching {switching} --packet-flits {flits} --startup-cycles 0,50"));
            assert_eq!(code, 0);
            let c = |f, s| u(&row(&rows, f, flits, s)["completion_cycles"]);
            let case = format!("ports {ports}, {switching}, {flits} flits");
            assert!(c("node", 50) >= c("node", 0) + d * 50, "{case}: node {} -> {}", c("node", 0), c("node", 50));
            assert_eq!(c("router", 50), c("router", 0) + 50, "{case}");
            assert_eq!(u(&row(&rows, "router", flits, 50)["nic_packets"]), 1, "{case}");
            assert_eq!(u(&row(&rows, "node", flits, 50)["nic_packets"]), (1 << d) - 1, "{case}");
        }
    }
}

/// Cases the configuration refuses and runs that deadlock are rows with their outcome and no
/// speed-up; the other cases still run, and the exit code is 1.
#[test]
fn refused_and_deadlocked_cases_are_rows() {
    // Store-and-forward needs a whole packet per buffer: 16 flits do not fit in 8.
    let (code, rows) = compare("--dims 3 --switching sf --buffer-flits 8 --packet-flits 4,16 --startup-cycles 0");
    assert_eq!(code, 1);
    assert_eq!(rows.len(), 4);
    for f in ["node", "router"] {
        assert_eq!(row(&rows, f, 4, 0)["outcome"], "ok");
        let r = row(&rows, f, 16, 0);
        assert_eq!(r["outcome"], "refused", "{r}");
        assert!(r["reason"].as_str().unwrap().contains("buffer-flits"), "{r}");
        assert!(r["completion_cycles"].is_null() && r["speedup"].is_null(), "{r}");
    }
    assert!(row(&rows, "router", 4, 0)["speedup"].is_number());
    // 64-flit worms replicated by the routers into 4-flit buffers deadlock; the nodes finish.
    let (code, rows) = compare(
        "--dims 6 --algorithm mnb-sbt --switching wh --vcs 2 --buffer-flits 4 --router realistic --packet-flits 64 --startup-cycles 0",
    );
    assert_eq!(code, 1);
    assert_eq!(row(&rows, "node", 64, 0)["outcome"], "ok");
    let r = row(&rows, "router", 64, 0);
    assert_eq!(r["outcome"], "deadlock", "{r}");
    assert!(r["completion_cycles"].is_null() && r["speedup"].is_null(), "{r}");
    // The table says so too.
    let o = flitwave(&words("compare-forwarding --dims 3 --switching sf --buffer-flits 8 --packet-flits 4,16 --startup-cycles 0"));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("refused") && text.contains("buffer-flits: 8"), "{text}");
}

/// Bad values: one line naming the flag, the value and what is allowed; exit 2, no output.
#[test]
fn bad_values_exit_2_with_one_line() {
    let file = scratch("a-file");
    std::fs::write(&file, "mine").unwrap();
    let f = file.to_str().unwrap();
    for (args, needles) in [
        ("--packet-flits 0", vec!["packet-flits: 0", "whole numbers from 1 to 65535"]),
        ("--packet-flits 4,4", vec!["packet-flits: 4,4", "twice"]),
        ("--startup-cycles x", vec!["startup-cycles: x", "whole numbers from 0"]),
        ("--startup-cycles 0,-50", vec!["startup-cycles: 0,-50"]),
        ("--copy-cycles-per-flit 1.5", vec!["copy-cycles-per-flit: 1.5", "whole numbers"]),
        ("--forwarding router", vec!["forwarding: router", "both ways"]),
        ("--jobs 0", vec!["jobs: 0", "1 to 256"]),
        ("--fst x.fst", vec!["fst: x.fst"]),
        ("--fabrics cube:6", vec!["fabrics: cube:6", "TOPOLOGY:DIMS", "hypercube:6,mesh:8x8"]),
        ("--fabrics mesh", vec!["fabrics: mesh", "TOPOLOGY:DIMS"]),
        ("--fabrics mesh:4x4,mesh:4x4", vec!["fabrics: mesh:4x4,mesh:4x4", "twice"]),
        ("--fabrics hypercube:3 --dims 3", vec!["dims: 3", "either --fabrics or --topology and --dims"]),
        ("--fabrics hypercube:3,mesh:0x4", vec!["dims"]),
        // Every case refused: the refusal, once.
        ("--switching sf --buffer-flits 2 --packet-flits 4,16", vec!["buffer-flits: 2", "whole packet"]),
    ] {
        let mut a = vec!["compare-forwarding"];
        a.extend(words(args));
        let o = flitwave(&a);
        let d = describe(&a, &o);
        assert_eq!(o.status.code(), Some(2), "{d}");
        assert!(o.stdout.is_empty(), "{d}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{d}");
        assert!(err.starts_with("flitwave: error: "), "{d}");
        for n in needles {
            assert!(err.contains(n), "{n:?} not in {err}");
        }
    }
    // An --out that is a file is refused and left alone.
    let a = ["compare-forwarding", "--dims", "2", "--out", f];
    let o = flitwave(&a);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&a, &o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    std::fs::remove_file(&file).unwrap();
}

/// --out writes the table, the JSON with the issue's fields, and the figure, next to the
/// user's own files; --json - puts the JSON on standard output and the table on standard error.
#[test]
fn writes_table_json_and_plot() {
    let dir = scratch("out");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let d = dir.to_str().unwrap();
    let a = ["compare-forwarding", "--dims", "3", "--packet-flits", "1,4", "--startup-cycles", "0,50", "--out", d];
    let o = flitwave(&a);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&a, &o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("compare.txt")).unwrap(), stdout);
    assert!(stdout.starts_with("flitwave compare-forwarding: snb on hypercube 3"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("node ") || l.starts_with("router ")).count(), 8, "{stdout}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("compare.json")).unwrap()).unwrap();
    assert_eq!(v["figure"], "completion_cycles");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for r in rows {
        for k in ["forwarding", "packet_flits", "startup_cycles", "completion_cycles", "nic_packets", "max_nic_queue", "flit_hops"] {
            assert!(r[k].is_number() || r[k].is_string(), "{k} missing in {r}");
        }
        assert!(r.get("speedup").is_some(), "{r}");
        assert_eq!(r["speedup"].is_number(), r["forwarding"] == "router", "{r}");
    }
    let svg = std::fs::read_to_string(dir.join("compare.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("start-up 50 cycles") && svg.contains("packet length"), "{svg:.300}");
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
    // --json -: JSON alone on standard output.
    let a = ["compare-forwarding", "--dims", "3", "--packet-flits", "1", "--startup-cycles", "0", "--json", "-"];
    let o = flitwave(&a);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&a, &o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    assert!(String::from_utf8(o.stderr).unwrap().contains("speed-up"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The default grid: 1, 4, 16 and 64 flits; start-up 0, 50 and the Delta's 938 cycles; no copy cost.
#[test]
fn the_default_grid() {
    let (code, rows) = compare("--dims 2");
    assert_eq!(code, 0);
    assert_eq!(rows.len(), 4 * 3 * 2);
    let mut startups: Vec<u64> = rows.iter().map(|r| u(&r["startup_cycles"])).collect();
    startups.dedup();
    assert_eq!(startups, [0, 50, 938]);
    let flits: Vec<u64> = rows.iter().take(8).map(|r| u(&r["packet_flits"])).collect();
    assert_eq!(flits, [1, 1, 4, 4, 16, 16, 64, 64]);
    assert!(rows.iter().all(|r| r["copy_cycles_per_flit"] == 0));
}

/// README's table is this build's output of README's command (but for the timing line).
#[test]
fn readme_table_is_current() {
    let readme = include_str!("../../README.md");
    let start = readme.find("flitwave compare-forwarding: mnb-sbt on hypercube 6").expect("README shows the 6-cube and mesh table");
    let block = &readme[start..start + readme[start..].find("```").expect("the block ends")];
    let a = words(
        "compare-forwarding --fabrics hypercube:6,mesh:8x8 --algorithm mnb-sbt --switching wh --vcs 2 --router realistic --packet-flits 1,4,16,64 --startup-cycles 0,50",
    );
    let o = flitwave(&a);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&a, &o));
    let out = String::from_utf8(o.stdout).unwrap();
    let rest = |t: &str| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(rest(block), rest(&out), "README:\n{block}\nnow:\n{out}");
}

/// Several fabrics in one command (`--fabrics`): each fabric's rows are those of the same
/// comparison run on that fabric alone, in the order given, named by topology and sides;
/// the table has each fabric's rows under its title, and the plot a line per fabric.
#[test]
fn several_fabrics_in_one_command() {
    let common = "--algorithm mnb-sbt --switching wh --vcs 2 --router realistic --packet-flits 1,4 --startup-cycles 0,50";
    let (code, rows) = compare(&format!("--fabrics hypercube:4,mesh:4x3,torus:4x4 {common}"));
    assert_eq!(code, 0);
    assert_eq!(rows.len(), 3 * 8);
    for (k, (topology, dims)) in [("hypercube", "4"), ("mesh", "4x3"), ("torus", "4x4")].into_iter().enumerate() {
        let (code, alone) = compare(&format!("--topology {topology} --dims {dims} {common}"));
        assert_eq!(code, 0);
        for (got, want) in rows[8 * k..8 * (k + 1)].iter().zip(&alone) {
            assert_eq!((got["topology"].as_str(), got["dims"].as_str()), (Some(topology), Some(dims)), "{got}");
            for f in ["forwarding", "packet_flits", "startup_cycles", "completion_cycles", "nic_packets", "flit_hops", "speedup"] {
                assert_eq!(got[f], want[f], "{topology} {dims} {f}: {got} against {want}");
            }
        }
    }
    let dir = scratch("fabrics");
    let d = dir.to_str().unwrap();
    let mut a = vec!["compare-forwarding", "--fabrics", "hypercube:4,mesh:4x3", "--out", d];
    a.extend(words(common));
    let o = flitwave(&a);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&a, &o));
    let text = String::from_utf8(o.stdout).unwrap();
    let (cube, mesh) =
        (text.find("mnb-sbt on hypercube 4 (16 nodes):\n").unwrap(), text.find("mnb-sbt on mesh 4x3 (12 nodes):\n").unwrap());
    assert!(cube < mesh, "{text}");
    assert_eq!(text[cube..mesh].lines().filter(|l| l.starts_with("router ")).count(), 4, "{text}");
    let svg = std::fs::read_to_string(dir.join("compare.svg")).unwrap();
    assert!(svg.contains("hypercube 4, start-up 50 cycles") && svg.contains("mesh 4x3, start-up 0 cycles"), "{svg:.300}");
    std::fs::remove_dir_all(&dir).unwrap();
}
