//! Waveforms read back with independent tools: the `wellen` crate (the reader behind the
//! Surfer viewer) and GTKWave's own `vcd2fst` and `fst2vcd`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::Temp;

fn flitwave() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flitwave"))
}

/// A file `name` in a folder of its own under the system temp dir (a save file's side files
/// land beside it), the folder removed when the path is dropped.
fn scratch(name: &str) -> Scratch {
    let dir = Temp::dir("wave");
    Scratch { path: dir.0.join(name), _dir: dir }
}

/// The path, and the folder it lives in (removed on drop).
struct Scratch {
    path: PathBuf,
    _dir: Temp,
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = flitwave().args(args).args(["--json", "-", "--quiet"]).output().unwrap();
    assert!(out.status.success(), "flitwave {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Femtoseconds per time unit of a dump, from its timescale.
fn fs_per_unit(w: &wellen::simple::Waveform) -> u64 {
    let ts = w.hierarchy().timescale().expect("a timescale");
    let exp = ts.unit.to_exponent().expect("a known unit") as i32 + 15;
    assert!([1, 10, 100].contains(&ts.factor), "timescale factor {}", ts.factor);
    ts.factor as u64 * 10u64.pow(exp as u32)
}

/// Every signal as a step function: full name (no bit range) → [(cycle, value)], for a
/// clock of 1 ns (`top.clk`'s falling edges fall in the cycle they end).
fn signals(path: &Path) -> BTreeMap<String, Vec<(u64, u64)>> {
    signals_at(path, 1000)
}

/// [`signals`] for a clock of `clock_ps` ps; every change but the clock's on a rising edge.
fn signals_at(path: &Path, clock_ps: u64) -> BTreeMap<String, Vec<(u64, u64)>> {
    let fs = signals_fs(path);
    let period = clock_ps * 1000;
    fs.into_iter()
        .map(|(name, ch)| {
            if name != "top.clk" {
                assert!(ch.iter().all(|&(t, _)| t % period == 0), "{name} changes between rising clock edges");
            }
            (name, ch.into_iter().map(|(t, v)| (t / period, v)).collect())
        })
        .collect()
}

/// Every signal as a step function with times in fs.
fn signals_fs(path: &Path) -> BTreeMap<String, Vec<(u64, u64)>> {
    let mut w = wellen::simple::read(path).unwrap_or_else(|e| panic!("wellen cannot read {}: {e:?}", path.display()));
    let unit = fs_per_unit(&w);
    let h = w.hierarchy();
    let vars: Vec<(String, wellen::SignalRef)> = h.all_vars().map(|v| (h[v].full_name(h), h[v].signal_ref())).collect();
    let refs: Vec<wellen::SignalRef> = vars.iter().map(|(_, r)| *r).collect();
    w.load_signals(&refs);
    let times = w.time_table().to_vec();
    let mut out = BTreeMap::new();
    for (name, r) in vars {
        let sig = w.get_signal(r).unwrap();
        let changes: Vec<(u64, u64)> = sig
            .iter_changes()
            .map(|(ti, v)| {
                let bits = v.to_bit_string().expect("a bit vector");
                (times[ti as usize] * unit, u64::from_str_radix(&bits, 2).expect("2-state value"))
            })
            .collect();
        out.insert(name, changes);
    }
    out
}

/// The value of a step function at time `t`.
fn at(changes: &[(u64, u64)], t: u64) -> u64 {
    match changes.binary_search_by_key(&t, |&(time, _)| time) {
        Ok(i) => changes[i].1,
        Err(0) => 0,
        Err(i) => changes[i - 1].1,
    }
}

/// Cycles in which a 1-bit step function is high, up to `end`.
fn high_cycles(changes: &[(u64, u64)], end: u64) -> Vec<u64> {
    let mut cycles = Vec::new();
    for (i, &(t, v)) in changes.iter().enumerate() {
        if v == 1 {
            let until = changes.get(i + 1).map_or(end, |c| c.0);
            cycles.extend(t..until);
        }
    }
    cycles
}

fn coords(n: u64, sizes: &[u64]) -> Vec<u64> {
    let mut c = Vec::new();
    let mut x = n;
    for &s in sizes {
        c.push(x % s);
        x /= s;
    }
    c
}

/// The output ports of dimension-order routing from `src` to `dst` on a mesh: (node, port).
fn dor_path(src: u64, dst: u64, sizes: &[u64]) -> Vec<(u64, u64)> {
    let mut at = coords(src, sizes);
    let goal = coords(dst, sizes);
    let mut hops = Vec::new();
    for dim in 0..sizes.len() {
        while at[dim] != goal[dim] {
            let up = goal[dim] > at[dim];
            let id: u64 = at
                .iter()
                .zip(sizes.iter().scan(1, |s, &k| {
                    let r = *s;
                    *s *= k;
                    Some(r)
                }))
                .map(|(c, s)| c * s)
                .sum();
            hops.push((id, 2 * dim as u64 + up as u64));
            if up {
                at[dim] += 1;
            } else {
                at[dim] -= 1;
            }
        }
    }
    hops
}

/// Port names of a 2-dimensional mesh by port number (port 2i one step down in dimension i,
/// 2i + 1 one step up), as docs/waveforms.md documents them.
const MESH_PORTS: [&str; 4] = ["xm", "xp", "ym", "yp"];

const TRAFFIC: &[&str] = &[
    "run",
    "--topology",
    "mesh",
    "--dims",
    "4x3",
    "--traffic",
    "uniform",
    "--rate",
    "0.05",
    "--cycles",
    "300",
    "--packet-flits",
    "3",
    "--seed",
    "11",
];

/// The cycles in which output `valid` signals are high add up to the run's flit_hops, and
/// each packet's flits appear on exactly the links of its dimension-order path, between its
/// injection at the source NIC and its ejection at the destination NIC.
#[test]
fn vcd_read_back_matches_flit_hops_and_scoreboard() {
    let vcd = scratch("t.vcd");
    let mut args = TRAFFIC.to_vec();
    args.extend(["--vcd", vcd.to_str().unwrap()]);
    let r = run_json(&args);
    assert_eq!(r["missing_deliveries"], 0);
    let end = r["simulated_cycles"].as_u64().unwrap() + 1;
    let sig = signals(&vcd);
    let sizes = [4u64, 3];
    let name = |node: u64, rest: &str| format!("top.x{}_y{}.{rest}", node % 4, node / 4);
    let mut total = 0;
    // (msg) → link traversals (node, port) counted per flit
    let mut on_links: HashMap<u64, BTreeMap<(u64, u64), u64>> = HashMap::new();
    for node in 0..12u64 {
        for port in 0..4u64 {
            let dir = MESH_PORTS[port as usize];
            let Some(valid) = sig.get(&name(node, &format!("router.out_{dir}.valid"))) else { continue };
            let msg = &sig[&name(node, &format!("router.out_{dir}.msg"))];
            for t in high_cycles(valid, end) {
                total += 1;
                *on_links.entry(at(msg, t)).or_default().entry((node, port)).or_default() += 1;
            }
        }
    }
    assert_eq!(total, r["flit_hops"].as_u64().unwrap(), "valid cycles vs flit_hops");
    // Sources and destinations from the NIC signals.
    let mut src: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut dst: HashMap<u64, (u64, u64)> = HashMap::new();
    for node in 0..12u64 {
        for (dir, map) in [("inj", &mut src), ("ej", &mut dst)] {
            let valid = &sig[&name(node, &format!("nic.{dir}.valid"))];
            let msg = &sig[&name(node, &format!("nic.{dir}.msg"))];
            for t in high_cycles(valid, end) {
                let e = map.entry(at(msg, t)).or_insert((node, 0));
                assert_eq!(e.0, node, "message {} seen at two {dir} NICs", at(msg, t));
                e.1 += 1;
            }
        }
    }
    let delivered = r["deliveries"].as_u64().unwrap();
    assert_eq!(dst.len() as u64, delivered, "every delivered message ejected at one node");
    for (m, &(s, flits_in)) in &src {
        let &(d, flits_out) = dst.get(m).unwrap_or_else(|| panic!("message {m} injected at {s} never ejected"));
        assert_eq!((flits_in, flits_out), (3, 3));
        let expect: BTreeMap<(u64, u64), u64> = dor_path(s, d, &sizes).into_iter().map(|h| (h, 3)).collect();
        assert_eq!(on_links.get(m).cloned().unwrap_or_default(), expect, "message {m} from {s} to {d}");
    }
    let linked: BTreeSet<u64> = on_links.keys().copied().collect();
    assert!(linked.iter().all(|m| src.contains_key(m)), "a flit on a link that no NIC injected");
}

/// The same seed gives a byte-identical VCD; the FST holds the same link activity.
#[test]
fn vcd_is_deterministic_and_fst_agrees() {
    let (a, b, f) = (scratch("a.vcd"), scratch("b.vcd"), scratch("c.fst"));
    for (p, flag) in [(&a, "--vcd"), (&b, "--vcd"), (&f, "--fst")] {
        let mut args = TRAFFIC.to_vec();
        args.extend([flag, p.to_str().unwrap()]);
        run_json(&args);
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "same seed, different VCD");
    let (v, fst) = (signals(&a), signals(&f));
    for (name, changes) in v.iter().filter(|(n, _)| n.ends_with(".valid")) {
        // FST times are ns: clock 1 ns, so equal.
        assert_eq!(fst.get(name), Some(changes), "{name}");
    }
}

/// The save file names the dump and only signals that exist in it.
#[test]
fn gtkw_names_the_dump_and_existing_signals() {
    let (vcd, gtkw) = (scratch("s.vcd"), scratch("s.gtkw"));
    let out = flitwave()
        .args(["run", "--topology", "hypercube", "--dims", "3", "--packet-flits", "2", "--quiet"])
        .args(["--vcd", vcd.to_str().unwrap(), "--gtkw", gtkw.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&gtkw).unwrap();
    let dump = std::path::absolute(&vcd).unwrap();
    assert!(text.contains(&format!("[dumpfile] \"{}\"", dump.display())), "{text}");
    let names: BTreeSet<String> = signals(&vcd).into_keys().collect();
    let mut traced = 0;
    for line in text.lines().filter(|l| l.starts_with("top.") || l.starts_with("+{")) {
        // `+{alias} name` rows show a signal under another label.
        let name = line.rsplit(' ').next().unwrap();
        let base = name.split('[').next().unwrap();
        assert!(names.contains(base), "{line} is not in the dump");
        traced += 1;
    }
    let valid = names.iter().filter(|n| n.ends_with(".valid") && n.contains(".router.out")).count();
    let ejects = names.iter().filter(|n| n.ends_with(".nic.eject_valid")).count();
    assert_eq!(traced, names.len() + valid + ejects, "every dumped signal in its group, plus the overview");
    for line in text.lines().filter(|l| l.starts_with('^')) {
        let file = line.split_once(' ').unwrap().1;
        assert!(Path::new(file).exists(), "translate filter {file} missing");
    }
}

/// GTKWave's own tools accept the files. Without GTKWave installed the test says so and
/// passes, unless FLITWAVE_REQUIRE_GTKWAVE is set (as `.ci/run` does after installing it).
#[test]
fn gtkwave_tools_accept_the_files() {
    for tool in ["vcd2fst", "fst2vcd"] {
        if Command::new(tool).arg("--help").output().is_err() {
            let msg = format!("{tool} not found: install GTKWave (Debian package gtkwave) to run this check");
            assert!(std::env::var_os("FLITWAVE_REQUIRE_GTKWAVE").is_none(), "{msg}");
            eprintln!("skipping: {msg}");
            return;
        }
    }
    for clock in ["1", "0.8", "2.5"] {
        let (vcd, fst, conv) = (scratch("g.vcd"), scratch("g.fst"), scratch("conv.fst"));
        let mut args = TRAFFIC.to_vec();
        args.extend(["--clock-ns", clock, "--vcd", vcd.to_str().unwrap(), "--fst", fst.to_str().unwrap()]);
        run_json(&args);
        let o = Command::new("vcd2fst").arg(&vcd).arg(&conv).output().unwrap();
        assert!(o.status.success() && conv.exists(), "clock {clock}: vcd2fst: {}", String::from_utf8_lossy(&o.stderr));
        let o = Command::new("fst2vcd").arg(&fst).output().unwrap();
        assert!(o.status.success(), "clock {clock}: fst2vcd: {}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("$enddefinitions") && text.contains("top"), "fst2vcd output: {}", &text[..text.len().min(400)]);
        // GTKWave's VCD of our FST has our VCD's timescale and timestamps.
        let timescale =
            |t: &str| t.split("$timescale").nth(1).and_then(|r| r.split("$end").next()).map(|x| x.split_whitespace().collect::<String>());
        let ours = std::fs::read_to_string(&vcd).unwrap();
        assert_eq!(timescale(&text), timescale(&ours), "clock {clock}: fst2vcd's timescale");
        // (fst2vcd puts the initial values in $dumpvars without `#0`.)
        let stamps = |t: &str| t.lines().filter(|l| l.starts_with('#') && *l != "#0").map(String::from).collect::<Vec<String>>();
        let (theirs, ours) = (stamps(&text), stamps(&ours));
        assert!(theirs == ours, "clock {clock}: fst2vcd's {} timestamps differ from our {}", theirs.len(), ours.len());
        // The converted FST reads back like ours, in fs.
        let (a, b) = (signals_fs(&fst), signals_fs(&conv));
        assert_eq!(a, b, "clock {clock}: vcd2fst's FST differs");
    }
}

/// A time window and a node list keep the dump small and still consistent.
#[test]
fn trace_selection_limits_nodes_and_time() {
    let vcd = scratch("w.vcd");
    let mut args = TRAFFIC.to_vec();
    args.extend(["--vcd", vcd.to_str().unwrap(), "--trace-nodes", "0-2,5", "--trace-from", "50", "--trace-to", "120"]);
    run_json(&args);
    let sig = signals(&vcd);
    let nodes: BTreeSet<String> = sig.keys().map(|k| k.split('.').nth(1).unwrap().to_string()).collect();
    assert_eq!(nodes, ["clk", "x0_y0", "x1_y0", "x2_y0", "x1_y1"].iter().map(|s| s.to_string()).collect());
    for changes in sig.values() {
        assert!(changes.iter().all(|&(t, _)| (50..=121).contains(&t)), "{changes:?}");
    }
}

/// Every timestamp of a VCD is followed by a value change; the last is the clock's falling
/// edge in the run's last cycle (with probes attached the run goes on until the last credits
/// are back).
#[test]
fn vcd_has_no_empty_timestamps() {
    let vcd = scratch("e.vcd");
    let mut args = TRAFFIC.to_vec();
    args.extend(["--vcd", vcd.to_str().unwrap()]);
    let r = run_json(&args);
    let text = std::fs::read_to_string(&vcd).unwrap();
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with('#')).collect();
    let empty = lines.windows(2).filter(|w| w[0].starts_with('#') && w[1].starts_with('#')).count();
    assert_eq!(empty, 0, "timestamps followed by no change");
    assert!(!lines.last().unwrap().starts_with('#'), "ends with a timestamp and no change");
    let end: u64 = lines.iter().rev().find_map(|l| l.strip_prefix('#')).and_then(|t| t.parse().ok()).expect("a timestamp");
    // Clock 1 ns: the timescale is 100 ps, a cycle 10 units, the falling edge 5 after it.
    let cycles = r["simulated_cycles"].as_u64().unwrap();
    assert!(end >= 10 * cycles + 5, "the last timestamp {end} is the falling edge of the run's last cycle ({cycles} simulated)");
    assert_eq!(end % 10, 5, "the last timestamp {end} is a falling edge");
}

/// A window that starts after the run's end is said in the summary (the dump holds only the
/// final values), and a window within the run is not.
#[test]
fn a_trace_window_after_the_run_is_noted() {
    let vcd = scratch("late.vcd");
    let base = ["run", "--topology", "hypercube", "--dims", "3", "--algorithm", "snb", "--vcd", vcd.to_str().unwrap()];
    // The 3-cube broadcast takes d = 3 slots on the ideal router (Bertsekas et al. §2): its
    // deliveries are made in cycle 3, the run's last (cycles 0 to 3 simulated).
    for (from, noted) in [("1000", true), ("4", true), ("3", false), ("0", false)] {
        let out = flitwave().args(base).args(["--trace-from", from]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let note = format!("window starts at cycle {from} (--trace-from), after the run's last cycle 3");
        assert_eq!(text.contains(&note), noted, "--trace-from {from}: {text}");
    }
}

/// A windowed trace shows, at every time of its window, the values the full trace shows:
/// the signals that hold the last flit's `vc`, `packet` and `msg` too, from the window's
/// first dump (they were followed before it), also with several lanes per link (ν = 1).
#[test]
fn a_trace_window_agrees_with_the_full_trace() {
    for extra in [&[][..], &["--nu", "1", "--vcs", "2"][..]] {
        let (full, win) = (scratch("full.vcd"), scratch("win.vcd"));
        let mut args = TRAFFIC.to_vec();
        args.extend(extra);
        let mut a = args.clone();
        a.extend(["--vcd", full.to_str().unwrap()]);
        run_json(&a);
        args.extend(["--vcd", win.to_str().unwrap(), "--trace-from", "60", "--trace-to", "140"]);
        run_json(&args);
        let (full, win) = (signals(&full), signals(&win));
        let mut held = 0;
        for (name, changes) in win.iter().filter(|(n, _)| *n != "top.clk") {
            let whole = &full[name];
            for t in 60..=140 {
                assert_eq!(at(changes, t), at(whole, t), "{extra:?} {name} at {t}");
            }
            held += (name.ends_with(".packet") && at(changes, 60) != 0) as u32;
        }
        assert!(held > 5, "{extra:?}: only {held} packet signals hold a value at the window's start");
    }
}

/// The statistics CSV has a row per connected input VC and per link; every VC's histogram
/// covers every simulated cycle, and the links' flits add up to flit_hops.
#[test]
fn stats_csv_accounts_for_every_cycle_and_flit() {
    let csv = scratch("s.csv");
    let mut args = TRAFFIC.to_vec();
    args.extend(["--stats-csv", csv.to_str().unwrap()]);
    let r = run_json(&args);
    let cycles = r["simulated_cycles"].as_u64().unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (mut vcs, mut links, mut flits, mut stalls) = (0, 0, 0u64, 0u64);
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        match f[0] {
            "input_vc" => {
                vcs += 1;
                let h: Vec<u64> = f[col("occupancy_histogram")].split(';').map(|x| x.parse().unwrap()).collect();
                assert_eq!(h.iter().sum::<u64>(), cycles, "{line}");
                let max: usize = f[col("max_occupancy")].parse().unwrap();
                assert!(h.iter().rposition(|&c| c > 0).unwrap() <= max, "{line}");
                stalls +=
                    f[col("stall_credit_cycles")].parse::<u64>().unwrap() + f[col("stall_arbitration_cycles")].parse::<u64>().unwrap();
            }
            "link" => {
                links += 1;
                flits += f[col("flits")].parse::<u64>().unwrap();
            }
            other => panic!("row kind {other}"),
        }
    }
    // 4x3 mesh: 2*(3*3 + 4*2) = 34 links; input VCs: 34 links + 12 injection ports, 2 VCs each.
    assert_eq!(links, 34);
    assert_eq!(vcs, (34 + 12) * 2);
    assert_eq!(flits, r["flit_hops"].as_u64().unwrap());
    let json_stalls: u64 = r["stats"]["vcs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["stall_credit_cycles"].as_u64().unwrap() + v["stall_arbitration_cycles"].as_u64().unwrap())
        .sum();
    assert_eq!(stalls, json_stalls);
}

/// A clock period that is not a power of ten of ns (`--clock-ns 3`, `250`) or not a whole
/// number of ns (`0.8`, `2.5`): the VCD's timescale stays legal (1, 10 or 100 of a unit), its
/// times, read back in fs, are the FST's, every change but the clock's is on a rising edge
/// (cycle × period) and `clk` rises at every cycle and falls half a period later.
#[test]
fn vcd_and_fst_agree_in_time_for_any_clock_period() {
    for (clock, ps) in [("3", 3000u64), ("250", 250_000), ("0.8", 800), ("2.5", 2500)] {
        let (vcd, fst) = (scratch("p.vcd"), scratch("p.fst"));
        let mut args = TRAFFIC.to_vec();
        args.extend(["--clock-ns", clock, "--vcd", vcd.to_str().unwrap(), "--fst", fst.to_str().unwrap()]);
        let r = run_json(&args);
        let (v, f) = (signals_fs(&vcd), signals_fs(&fst));
        assert_eq!(v, f, "clock {clock} ns: VCD and FST differ");
        // Every change on a rising edge: checked by signals_at.
        let cycles = signals_at(&vcd, ps);
        assert!(cycles.iter().filter(|(n, _)| n.ends_with(".valid")).map(|(_, c)| c.len()).sum::<usize>() > 0);
        let clk = &v["top.clk"];
        let end = r["simulated_cycles"].as_u64().unwrap();
        let period = ps * 1000;
        let rising: Vec<u64> = clk.iter().filter(|c| c.1 == 1).map(|c| c.0).collect();
        let falling: Vec<u64> = clk.iter().filter(|c| c.1 == 0).map(|c| c.0).collect();
        assert_eq!(rising, (0..rising.len() as u64).map(|c| c * period).collect::<Vec<_>>(), "clock {clock} ns: rising edges");
        assert_eq!(falling, rising.iter().map(|t| t + period / 2).collect::<Vec<_>>(), "clock {clock} ns: falling edges");
        assert!(rising.len() as u64 >= end, "clock {clock} ns: {} cycles of clk, {end} simulated", rising.len());
    }
}

/// Tracing never changes a result: with probes attached the run goes on until the last
/// credits are back (so the waveform shows them), but those cycles are not simulated work
/// (they counted as cycles and in every histogram and utilization).
#[test]
fn tracing_does_not_change_the_json() {
    let slow = scratch("credit3.toml");
    std::fs::write(&slow, "preset = \"ideal\"\ncredit_delay = 3\n").unwrap();
    let router_bcast =
        ["run", "--dims", "3", "--forwarding", "router", "--router", "realistic", "--switching", "wh", "--packet-flits", "4"];
    let traffic: Vec<&str> = TRAFFIC.iter().copied().chain(["--router", "realistic"]).collect();
    let runs: [&[&str]; 3] = [&router_bcast, &traffic, &["run", "--dims", "3", "--router", slow.to_str().unwrap()]];
    for args in runs {
        // A traced run takes the scan kernel, an untraced one may take the event kernel.
        let strip = |mut v: serde_json::Value| {
            v.as_object_mut().unwrap().remove("wall_seconds");
            v.as_object_mut().unwrap().remove("waveforms");
            v["config"].as_object_mut().unwrap().remove("outputs");
            v
        };
        let plain = strip(run_json(args));
        for flag in ["--vcd", "--fst"] {
            let p = scratch("t.dump");
            let mut a = args.to_vec();
            a.extend([flag, p.to_str().unwrap()]);
            assert_eq!(strip(run_json(&a)), plain, "{a:?}");
        }
    }
}

/// The value of a step function at cycle `t` (None if the signal does not exist).
fn val(sig: &BTreeMap<String, Vec<(u64, u64)>>, name: &str, t: u64) -> Option<u64> {
    sig.get(name).map(|c| at(c, t))
}

/// Cycles in which a step function is not 0, up to `end`.
fn nonzero_cycles(changes: &[(u64, u64)], end: u64) -> Vec<(u64, u64)> {
    let mut cycles = Vec::new();
    for (i, &(t, v)) in changes.iter().enumerate() {
        if v != 0 {
            let until = changes.get(i + 1).map_or(end, |c| c.0);
            cycles.extend((t..until).map(|c| (c, v)));
        }
    }
    cycles
}

/// Every switch grant an input port shows (`sa_gnt`, a bit per VC) is one of its requests
/// (`sa_req`) and puts a flit, in the same cycle, on the output the VC's `route` names, on
/// the VC its `out_vc` names (or, for an ejection route, on the NIC's ejection channel);
/// and the grants to network outputs add up to the run's flit_hops. Every VC allocation
/// grant (`va_gnt`) is one of its requests (`va_req`), and the output VC it gave
/// (`route`, `out_vc`) is the VC the packet's head then carries on that link, sent from this
/// input VC.
#[test]
fn allocator_grants_match_the_flits_that_follow() {
    for extra in [&[][..], &["--vcs", "3", "--arbiter", "round-robin"][..]] {
        let vcd = scratch("alloc.vcd");
        let mut args = TRAFFIC.to_vec();
        args.extend(extra);
        args.extend(["--vcd", vcd.to_str().unwrap()]);
        let r = run_json(&args);
        assert_eq!(r["missing_deliveries"], 0);
        let end = r["simulated_cycles"].as_u64().unwrap() + 1;
        let vcs: u64 = r["config"]["router"]["vcs"].as_u64().unwrap_or(if extra.is_empty() { 2 } else { 3 });
        let sig = signals(&vcd);
        let ports: Vec<String> = MESH_PORTS.iter().map(|p| p.to_string()).chain(["ej".to_string()]).collect();
        let (mut sa_grants, mut to_links, mut va_checked) = (0u64, 0u64, 0u64);
        for node in 0..12u64 {
            let scope = format!("top.x{}_y{}.router", node % 4, node / 4);
            let inputs: Vec<String> = MESH_PORTS.iter().map(|p| format!("in_{p}")).chain(["inj".to_string()]).collect();
            for input in &inputs {
                let Some(gnt) = sig.get(&format!("{scope}.{input}.sa_gnt")) else { continue };
                let req = &sig[&format!("{scope}.{input}.sa_req")];
                for (t, mask) in nonzero_cycles(gnt, end) {
                    assert_eq!(at(req, t) & mask, mask, "{scope}.{input} at {t}: grant {mask:b} not requested");
                    for v in (0..vcs).filter(|v| mask >> v & 1 == 1) {
                        sa_grants += 1;
                        let vc = format!("{scope}.{input}.vc{v}");
                        let route = val(&sig, &format!("{vc}.route"), t).unwrap() as usize;
                        let out_vc = val(&sig, &format!("{vc}.out_vc"), t).unwrap();
                        if route < 4 {
                            let out = format!("{scope}.out_{}", ports[route]);
                            assert_eq!(val(&sig, &format!("{out}.valid"), t), Some(1), "{vc} granted at {t}: no flit on {out}");
                            assert_eq!(val(&sig, &format!("{out}.vc"), t), Some(out_vc), "{vc} granted at {t}: {out} carries another VC");
                            to_links += 1;
                        } else {
                            let ej = format!("top.x{}_y{}.nic.ej.valid", node % 4, node / 4);
                            assert_eq!(val(&sig, &ej, t), Some(1), "{vc} granted ejection at {t}: no flit on {ej}");
                        }
                    }
                }
                for v in 0..vcs {
                    let vc = format!("{scope}.{input}.vc{v}");
                    let Some(va_gnt) = sig.get(&format!("{vc}.va_gnt")) else { continue };
                    for t in high_cycles(va_gnt, end) {
                        assert_eq!(val(&sig, &format!("{vc}.va_req"), t), Some(1), "{vc}: VA grant at {t} without a request");
                        let route = val(&sig, &format!("{vc}.route"), t).unwrap() as usize;
                        let out_vc = val(&sig, &format!("{vc}.out_vc"), t).unwrap();
                        if route >= 4 {
                            continue;
                        }
                        // The output VC was free when granted: the next flit on it is this
                        // packet's head, read from this input VC.
                        let out = format!("{scope}.out_{}", ports[route]);
                        let valid = &sig[&format!("{out}.valid")];
                        let first = high_cycles(valid, end)
                            .into_iter()
                            .find(|&c| c >= t && val(&sig, &format!("{out}.vc"), c) == Some(out_vc))
                            .unwrap_or_else(|| panic!("{vc}: VA grant of {out} VC {out_vc} at {t}, no flit follows on it"));
                        let flags = val(&sig, &format!("{out}.flags"), first).unwrap();
                        assert!(
                            flags & 1 == 1,
                            "{vc}: the first flit on {out} VC {out_vc} after the grant at {t} is not a head ({flags:b})"
                        );
                        let gnt = val(&sig, &format!("{scope}.{input}.sa_gnt"), first).unwrap();
                        assert_eq!(gnt >> v & 1, 1, "{vc}: the head on {out} VC {out_vc} at {first} came from another input VC");
                        va_checked += 1;
                    }
                }
            }
        }
        assert_eq!(to_links, r["flit_hops"].as_u64().unwrap(), "{extra:?}: switch grants to links vs flit_hops");
        assert!(sa_grants > to_links && va_checked > 50, "{extra:?}: {sa_grants} SA grants, {va_checked} VA grants checked");
    }
}

/// Node scopes are named by coordinates and ports by direction, as the topology is wired:
/// every packet's head, leaving a node on port `<dir>`, next leaves (or is ejected at) the
/// node one step that way, read from the input port named for the opposite direction, on
/// the VC it travelled in (on the torus round the ring; on the hypercube across dimension
/// i on both sides). Checked against coordinates computed here, not the model's tables.
#[test]
fn names_follow_the_wiring() {
    for (topology, dims, sizes) in [("mesh", "4x3", vec![4u64, 3]), ("torus", "4x3", vec![4, 3]), ("hypercube", "3", vec![2, 2, 2])] {
        let vcd = scratch("names.vcd");
        let mut args: Vec<&str> = TRAFFIC.to_vec();
        args[2] = topology;
        args[4] = dims;
        args.extend(["--vcd", vcd.to_str().unwrap()]);
        let r = run_json(&args);
        assert_eq!(r["missing_deliveries"], 0);
        let end = r["simulated_cycles"].as_u64().unwrap() + 1;
        let cube = topology == "hypercube";
        let nodes: u64 = sizes.iter().product();
        let scope = |n: u64| {
            if cube { format!("n{n:04}") } else { format!("x{}_y{}", n % sizes[0], n / sizes[0]) }
        };
        let dirs: Vec<String> =
            if cube { (0..3).map(|i| format!("d{i}")).collect() } else { MESH_PORTS.iter().map(|s| s.to_string()).collect() };
        // The node one step in direction `d` from `n`, and the direction back.
        let step = |n: u64, d: &str| -> (u64, String) {
            if cube {
                let i: u64 = d[1..].parse().unwrap();
                return (n ^ (1 << i), d.to_string());
            }
            let (mut x, mut y) = (n % sizes[0], n / sizes[0]);
            let (k, c) = if d.starts_with('x') { (sizes[0], &mut x) } else { (sizes[1], &mut y) };
            let back = if d.ends_with('p') { d.replace('p', "m") } else { d.replace('m', "p") };
            *c = if d.ends_with('p') { (*c + 1) % k } else { (*c + k - 1) % k };
            (y * sizes[0] + x, back)
        };
        let sig = signals(&vcd);
        // Every head flit on a link: msg → [(cycle, node, dir, vc)].
        let mut hops: HashMap<u64, Vec<(u64, u64, String, u64)>> = HashMap::new();
        for n in 0..nodes {
            for d in &dirs {
                let out = format!("top.{}.router.out_{d}", scope(n));
                let Some(valid) = sig.get(&format!("{out}.valid")) else { continue };
                for t in high_cycles(valid, end) {
                    if val(&sig, &format!("{out}.flags"), t).unwrap() & 1 == 1 {
                        let msg = val(&sig, &format!("{out}.msg"), t).unwrap();
                        hops.entry(msg).or_default().push((t, n, d.clone(), val(&sig, &format!("{out}.vc"), t).unwrap()));
                    }
                }
            }
        }
        // Where each head leaves a node and from which input port: (msg, node) → (cycle, input).
        let mut ejected: HashMap<u64, (u64, u64)> = HashMap::new();
        for n in 0..nodes {
            let ej = format!("top.{}.nic.ej", scope(n));
            for t in high_cycles(&sig[&format!("{ej}.valid")], end) {
                if val(&sig, &format!("{ej}.flags"), t).unwrap() & 1 == 1 {
                    ejected.insert(val(&sig, &format!("{ej}.msg"), t).unwrap(), (t, n));
                }
            }
        }
        let mut checked = 0;
        for (msg, mut path) in hops {
            path.sort();
            for (k, (t, n, d, vc)) in path.iter().enumerate() {
                let (next, back) = step(*n, d);
                let (t_next, at_node) = match path.get(k + 1) {
                    Some(h) => (h.0, h.1),
                    None => *ejected.get(&msg).unwrap_or_else(|| panic!("message {msg} never ejected")),
                };
                assert_eq!(at_node, next, "message {msg}: left {} on {d} at {t}, next seen at {}", scope(*n), scope(at_node));
                let gnt = format!("top.{}.router.in_{back}.sa_gnt", scope(next));
                let g = val(&sig, &gnt, t_next).unwrap_or_else(|| panic!("{gnt} missing"));
                assert_eq!(g >> vc & 1, 1, "message {msg}: leaves {} at {t_next}, but not from {gnt} VC {vc}", scope(next));
                checked += 1;
            }
        }
        assert!(checked > 100, "{topology}: {checked} hops checked");
    }
}

/// `--trace-limit` stops the waveform (not the run) at the first timestamp at which the file
/// holds the limit: the VCD ends within a line of it and still reads back, the FST (counted
/// before compression) stays below it, the JSON and the summary say where they stopped, and
/// every result is the untraced run's. The estimate comes before the run, on standard error.
#[test]
fn trace_limit_stops_the_waveform_not_the_run() {
    let strip = |mut v: serde_json::Value| {
        for k in ["wall_seconds", "waveforms"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v["config"].as_object_mut().unwrap().remove("outputs");
        v
    };
    let plain = strip(run_json(TRAFFIC));
    let (vcd, fst) = (scratch("lim.vcd"), scratch("lim.fst"));
    let mut args = TRAFFIC.to_vec();
    args.extend(["--vcd", vcd.to_str().unwrap(), "--fst", fst.to_str().unwrap(), "--trace-limit", "0.08"]);
    let r = run_json(&args);
    let limit = 80_000u64;
    let w = r["waveforms"].as_array().unwrap();
    assert_eq!(w.len(), 2);
    for (file, entry) in [(&vcd, &w[0]), (&fst, &w[1])] {
        let size = std::fs::metadata(file).unwrap().len();
        assert_eq!(entry["bytes"], size);
        assert_eq!(entry["limit_bytes"], limit);
        if file.path == vcd.path {
            // Checked at timestamps: the limit was not reached (within a line) before the
            // last one began.
            let text = std::fs::read_to_string(file).unwrap();
            let last = text.rfind("\n#").unwrap() as u64;
            assert!(last < limit + 64 && size >= limit, "{}: {size} bytes, the last timestamp at {last}, limit {limit}", file.display());
        } else {
            assert!(size <= limit, "{}: {size} bytes for a limit of {limit}", file.display());
        }
        assert!(entry["estimated_bytes"].as_u64().unwrap() > limit / 4, "{entry}");
        let stop = entry["stopped_at_cycle"].as_u64().unwrap_or_else(|| panic!("{}: not stopped: {entry}", file.display()));
        assert!(stop > 0 && stop < r["simulated_cycles"].as_u64().unwrap(), "{entry}");
        // It reads back, and nothing was written from the cycle it stopped at.
        for (name, changes) in signals(file) {
            assert!(changes.iter().all(|&(t, _)| t <= stop), "{}: {name} changes after cycle {stop}", file.display());
        }
    }
    assert!(std::fs::metadata(&vcd).unwrap().len() > limit, "the VCD stops at the limit, not before");
    assert_eq!(strip(r), plain, "--trace-limit changed a result");
    // The summary says so; the estimate comes first, on standard error.
    let out = flitwave().args(&args).output().unwrap();
    assert!(out.status.success());
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let note = format!("waveform {}: ", vcd.display());
    assert!(text.lines().any(|l| l.contains(&note) && l.contains("stopped at cycle") && l.contains("--trace-limit 80 kB")), "{text}");
    assert!(err.lines().any(|l| l.starts_with(&note) && l.contains("estimated")), "{err}");
    // A limit reached within the first timestamp's dump of every value: the VCD ends after
    // that dump and reads back, with nothing after cycle 0.
    let mut args = TRAFFIC.to_vec();
    args.extend(["--vcd", vcd.to_str().unwrap(), "--trace-limit", "0.05"]);
    let r = run_json(&args);
    assert_eq!(r["waveforms"][0]["stopped_at_cycle"], 0, "{}", r["waveforms"]);
    // The header and one value per signal: far less than the whole run (about 200 kB).
    assert!(std::fs::metadata(&vcd).unwrap().len() < 60_000, "{}", r["waveforms"]);
    for (name, changes) in signals(&vcd) {
        assert!(changes.iter().all(|&(t, _)| t == 0), "{name} changes after cycle 0");
    }
}

/// Bad `--clock-ns` and `--trace-limit` values: one line naming the flag, the value and what
/// is allowed, exit 2; fractional periods are accepted.
#[test]
fn bad_clock_and_limit_values_are_one_line_errors() {
    let vcd = scratch("bad.vcd");
    let base = ["run", "--dims", "3", "--quiet", "--vcd", vcd.to_str().unwrap()];
    for (flag, value, allowed) in [
        ("--clock-ns", "0", "a clock period in ns from 0.001 to 1000000"),
        ("--clock-ns", "0.0005", "at most three decimals"),
        ("--clock-ns", "-1", "a clock period in ns"),
        ("--clock-ns", "1e3", "a clock period in ns"),
        ("--clock-ns", "2000000", "a clock period in ns from 0.001 to 1000000"),
        ("--trace-limit", "0", "a size in MB"),
        ("--trace-limit", "lots", "a size in MB"),
        ("--trace-limit", "1.2345", "at most three decimals"),
    ] {
        let out = flitwave().args(base).args([flag, value]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert_eq!(err.lines().count(), 1, "{flag} {value}: {err}");
        assert!(err.contains(&format!("{}: {value}: ", &flag[2..])) && err.contains(allowed), "{flag} {value}: {err}");
    }
    for ok in ["0.8", "2.5", "0.001", "7"] {
        let out = flitwave().args(base).args(["--clock-ns", ok]).output().unwrap();
        assert!(out.status.success(), "--clock-ns {ok}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = flitwave().args(["run", "--dims", "3", "--trace-limit", "5"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("trace-limit: 5: only applies with --vcd PATH or --fst PATH"));
}

/// The waveform does not depend on which routers the stages visit (`--schedule all` visits
/// every router every cycle and rebuilds the allocators' request registers from the VCs'
/// state): the VCD is byte for byte the busy schedule's, allocator signals included.
#[test]
fn the_schedule_does_not_change_the_waveform() {
    let runs: [&[&str]; 2] = [
        TRAFFIC,
        &[
            "run",
            "--dims",
            "4",
            "--forwarding",
            "router",
            "--router",
            "realistic",
            "--switching",
            "wh",
            "--packet-flits",
            "4",
            "--vcs",
            "2",
        ],
    ];
    for args in runs {
        let (busy, all) = (scratch("busy.vcd"), scratch("all.vcd"));
        let mut a = args.to_vec();
        a.extend(["--vcd", busy.to_str().unwrap()]);
        run_json(&a);
        let mut b = args.to_vec();
        b.extend(["--schedule", "all", "--vcd", all.to_str().unwrap()]);
        run_json(&b);
        assert!(std::fs::read(&busy).unwrap() == std::fs::read(&all).unwrap(), "{args:?}: --schedule all changed the VCD");
    }
}

/// Each output VC's `owner` (the input VC holding it, all ones when free), for unicast
/// traffic and for packets the routers replicate (every node of a 4×3 mesh broadcasting,
/// `--forwarding router`), realistic router: every flit on an output VC comes from the input
/// VC that owns it, which has a switch grant that cycle; an owner is taken only with a VC
/// allocation grant to that input VC, and what an input VC is granted is owned the same
/// cycle; an ownership carries one packet, head first and tail last, and the output VCs one
/// input VC takes in one cycle (a replicated packet's branches) carry the same packet. The
/// broadcast run must show packets owning several output VCs at once.
#[test]
fn output_vc_owners_follow_grants_and_flits() {
    let bcast: Vec<&str> =
        "run --topology mesh --dims 4x3 --algorithm mnb-sbt --forwarding router --switching wh --packet-flits 3".split(' ').collect();
    for (what, base) in [("traffic", TRAFFIC.to_vec()), ("router multicast", bcast)] {
        let vcd = scratch("owner.vcd");
        let mut args = base.clone();
        args.extend(["--router", "realistic", "--vcd", vcd.to_str().unwrap()]);
        let r = run_json(&args);
        assert_eq!(r["missing_deliveries"], 0, "{what}");
        let end = r["simulated_cycles"].as_u64().unwrap() + 1;
        let sig = signals(&vcd);
        let vcs = (0..).take_while(|v| sig.contains_key(&format!("top.x0_y0.router.in_xp.vc{v}.occupancy"))).count() as u64;
        // Input ports by number: the links, then the NIC's channels (`inj`, or `inj0`… with several).
        let mut inputs: Vec<String> = MESH_PORTS.iter().map(|p| format!("in_{p}")).collect();
        if sig.contains_key("top.x0_y0.router.inj.sa_req") {
            inputs.push("inj".to_string());
        }
        inputs.extend((0..).map(|k| format!("inj{k}")).take_while(|c| sig.contains_key(&format!("top.x0_y0.router.{c}.sa_req"))));
        let free = (1u64 << (64 - (inputs.len() as u64 * vcs).leading_zeros())) - 1;
        let (mut flits, mut most_branches) = (0u64, 0usize);
        for node in 0..12u64 {
            let scope = format!("top.x{}_y{}.router", node % 4, node / 4);
            // Input VC by its local index (port × VCs + VC): its name, SA grants, VA grants.
            let sa = |l: u64, t: u64| val(&sig, &format!("{scope}.{}.sa_gnt", inputs[(l / vcs) as usize]), t).unwrap_or(0) >> (l % vcs) & 1;
            let va = |l: u64, t: u64| val(&sig, &format!("{scope}.{}.vc{}.va_gnt", inputs[(l / vcs) as usize], l % vcs), t).unwrap_or(0);
            // (cycle taken, input VC) → output VCs taken.
            let mut taken: HashMap<(u64, u64), Vec<(String, u64)>> = HashMap::new();
            // (cycle, input VC) of every flit sent on a link.
            let mut sent: BTreeSet<(u64, u64)> = BTreeSet::new();
            for p in MESH_PORTS {
                let out = format!("{scope}.out_{p}");
                let Some(valid) = sig.get(&format!("{out}.valid")) else { continue };
                for v in 0..vcs {
                    let owner = &sig[&format!("{out}.vc{v}.owner")];
                    assert_eq!(at(owner, 0), free, "{what}: {out} VC {v} owned at the start");
                    for w in owner.windows(2) {
                        let ((_, before), (t, now)) = (w[0], w[1]);
                        if now != free {
                            assert_eq!(before, free, "{what}: {out} VC {v} taken at {t} while owned");
                            assert_eq!(va(now, t), 1, "{what}: {out} VC {v} taken by {now} at {t} without a VA grant");
                            taken.entry((t, now)).or_default().push((out.clone(), v));
                        }
                    }
                    // The flits of each ownership: one packet, head first, tail last.
                    let mut packet = None;
                    for t in high_cycles(valid, end).into_iter().filter(|&t| val(&sig, &format!("{out}.vc"), t) == Some(v)) {
                        flits += 1;
                        let flags = val(&sig, &format!("{out}.flags"), t).unwrap();
                        let tail = flags & 2 != 0;
                        // A tail frees its VC in the cycle it leaves.
                        let x = if tail { at(owner, t.saturating_sub(1)).min(at(owner, t)) } else { at(owner, t) };
                        let x = if x == free { at(owner, t) } else { x };
                        assert_ne!(x, free, "{what}: a flit on {out} VC {v} at {t} with no owner");
                        assert_eq!(sa(x, t), 1, "{what}: a flit on {out} VC {v} at {t}, its owner {x} had no switch grant");
                        sent.insert((t, x));
                        let pk = val(&sig, &format!("{out}.packet"), t).unwrap();
                        if flags & 1 != 0 {
                            assert!(packet.is_none(), "{what}: a head on {out} VC {v} at {t} inside another packet");
                            packet = Some(pk);
                        }
                        assert_eq!(packet, Some(pk), "{what}: {out} VC {v} at {t} carries another packet");
                        if tail {
                            assert_eq!(at(owner, t), free, "{what}: {out} VC {v} still owned after its tail at {t}");
                            packet = None;
                        }
                    }
                }
            }
            // Every switch grant sends a flit that cycle: on an output VC the input VC owns, or
            // to the NIC.
            let ej: Vec<String> = ["ej".to_string()].into_iter().chain((0..8).map(|k| format!("ej{k}"))).collect();
            let ejecting = |t: u64| ej.iter().any(|c| val(&sig, &format!("top.x{}_y{}.nic.{c}.valid", node % 4, node / 4), t) == Some(1));
            for (p, input) in inputs.iter().enumerate() {
                let Some(gnt) = sig.get(&format!("{scope}.{input}.sa_gnt")) else { continue };
                for (t, mask) in nonzero_cycles(gnt, end) {
                    for v in (0..vcs).filter(|v| mask >> v & 1 == 1) {
                        let x = p as u64 * vcs + v;
                        assert!(sent.contains(&(t, x)) || ejecting(t), "{what}: {scope}.{input} VC {v} granted at {t}, nothing sent");
                    }
                }
            }
            // Everything one input VC takes in one cycle carries its packet.
            for ((t, x), outs) in &taken {
                most_branches = most_branches.max(outs.len());
                let heads: Vec<u64> = outs
                    .iter()
                    .map(|(out, v)| {
                        let c = high_cycles(&sig[&format!("{out}.valid")], end)
                            .into_iter()
                            .find(|&c| c >= *t && val(&sig, &format!("{out}.vc"), c) == Some(*v))
                            .unwrap_or_else(|| panic!("{what}: {out} VC {v} taken by {x} at {t}, no flit follows"));
                        val(&sig, &format!("{out}.packet"), c).unwrap()
                    })
                    .collect();
                assert!(heads.windows(2).all(|w| w[0] == w[1]), "{what}: {scope} input VC {x} at {t}: branches carry {heads:?}");
            }
        }
        assert_eq!(flits, r["flit_hops"].as_u64().unwrap(), "{what}: flits on owned output VCs vs flit_hops");
        if what == "router multicast" {
            assert!(most_branches >= 2, "{what}: no packet took several output VCs at once");
        } else {
            assert_eq!(most_branches, 1, "{what}");
        }
    }
}
