//! RTL routers in the fabric (`--rtl`, docs/rtl.md "Co-simulation"): the reference RTL at one
//! node and at every node of a 4x4 mesh, under uniform traffic at three loads, binomial-tree
//! broadcasts and broadcast traffic, delivers every packet exactly once, a cycle later per packet
//! than the model alone (the RTL registers its ejection port) and nothing else different,
//! and `--rtl-compare` finds no difference from the model over 20,000 cycles. Bugs seeded
//! into copies of the RTL are caught at the node, port and cycle where the buggy RTL's
//! outputs first differ from the reference RTL's in the same fabric.
//!
//! Without `verilator` on PATH the tests say so in one line and pass, unless
//! FLITWAVE_REQUIRE_VERILATOR is set (as `.ci/run` does after installing it).

#[path = "rtl_shared/mod.rs"]
mod rtl_shared;

use fabric::{ExternalRouters, Ports};
use rtl_shared::{MUTANTS, have_verilator, rtl_dir, write_mutant};
use std::path::Path;
use std::sync::{Arc, Mutex};
use testbenches::config::{Config, Raw};
use testbenches::run::{self, Report};

fn config(flags: &[(&str, &str)]) -> Config {
    let raw = Raw::from_given(flags.iter().copied()).unwrap();
    Config::resolve(&raw).unwrap_or_else(|e| panic!("{flags:?}: {e}"))
}

fn reference() -> String {
    rtl_dir().join("router.sv").display().to_string()
}

/// The flags of a run on the 4x4 mesh with the model's router alone: `extra` added.
fn mesh(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("topology", "mesh"), ("dims", "4x4"), ("arbiter", "round-robin")];
    v.extend_from_slice(extra);
    v
}

/// Every packet delivered once, none elsewhere, and the RTL no different from the model.
fn assert_clean(what: &str, r: &Report) {
    assert_eq!(r.ending, fabric::Ending::Quiescent, "{what}: {:?}", r.rtl);
    assert_eq!(r.deliveries, r.expected_deliveries, "{what}: every delivery made");
    assert_eq!((r.missing_deliveries, r.duplicate_deliveries, r.misrouted_deliveries), (0, 0, 0), "{what}");
    let rtl = r.rtl.as_ref().expect("an RTL report");
    assert!(rtl.compared && rtl.mismatch.is_none() && rtl.stopped.is_none(), "{what}: {rtl:?}");
}

#[test]
fn reference_rtl_in_the_mesh_matches_the_model_under_traffic() {
    if !have_verilator() {
        return;
    }
    let rtl = reference();
    // Below, near and past saturation (a 4x4 mesh of this router accepts about 0.6
    // flits/node/cycle: 0.15 packets of 4 flits).
    for rate in ["0.05", "0.12", "0.25"] {
        let traffic = [("traffic", "uniform"), ("rate", rate), ("cycles", "20000"), ("warmup", "2000")];
        let alone = run::run(&config(&mesh(&traffic)));
        assert_eq!(alone.deliveries, alone.expected_deliveries);
        for nodes in ["5", "all"] {
            let what = format!("rate {rate}, RTL at {nodes}");
            let mut flags = mesh(&traffic);
            flags.extend([("rtl", rtl.as_str()), ("rtl-nodes", nodes), ("rtl-compare", "on")]);
            let r = run::run(&config(&flags));
            assert_clean(&what, &r);
            assert!(r.simulated_cycles >= 20_000, "{what}: {} cycles", r.simulated_cycles);
            // The same packets, the same links, the same cycles: only what is ejected at an
            // RTL router reaches its NIC a cycle later (docs/rtl.md).
            assert_eq!(
                (r.packets_sent, r.link_transmissions, r.flit_hops),
                (alone.packets_sent, alone.link_transmissions, alone.flit_hops),
                "{what}"
            );
            if nodes == "all" {
                let (a, b) = (alone.latency_avg_cycles.unwrap(), r.latency_avg_cycles.unwrap());
                assert!((b - a - 1.0).abs() < 1e-9, "{what}: latency {b} against {a} + 1 alone");
                assert_eq!(r.latency_max_cycles, alone.latency_max_cycles.map(|m| m + 1), "{what}");
                assert_eq!(r.simulated_cycles, alone.simulated_cycles + 1, "{what}");
            }
        }
    }
}

#[test]
fn reference_rtl_in_the_mesh_matches_the_model_in_a_binomial_tree_broadcast() {
    if !have_verilator() {
        return;
    }
    let rtl = reference();
    // Recursive doubling from a corner and from an inner node: the binomial tree, one-port.
    for root in ["0", "6"] {
        let bcast = [
            ("algorithm", "rd"),
            ("ports", "one"),
            ("switching", "wormhole"),
            ("router", "realistic"),
            ("root", root),
            ("packet-flits", "4"),
        ];
        let alone = run::run(&config(&mesh(&bcast)));
        for nodes in ["5", "all"] {
            let what = format!("rd from {root}, RTL at {nodes}");
            let mut flags = mesh(&bcast);
            flags.extend([("rtl", rtl.as_str()), ("rtl-nodes", nodes), ("rtl-compare", "on")]);
            let r = run::run(&config(&flags));
            assert_clean(&what, &r);
            assert_eq!(r.deliveries, 15, "{what}");
            assert_eq!(r.link_transmissions, alone.link_transmissions, "{what}");
            // Each round's forwarders start a cycle later at most per RTL node on the way.
            assert!(r.completion_cycles >= alone.completion_cycles, "{what}");
        }
    }
    // Broadcasts all along, forwarded by the nodes on their spanning trees, over unicast
    // traffic: 20,000 cycles.
    let bcast = [("traffic", "uniform"), ("rate", "0.05"), ("broadcast-rate", "0.005"), ("forwarding", "node"), ("cycles", "20000")];
    for nodes in ["5", "all"] {
        let what = format!("broadcast traffic, RTL at {nodes}");
        let mut flags = mesh(&bcast);
        flags.extend([("rtl", rtl.as_str()), ("rtl-nodes", nodes), ("rtl-compare", "on")]);
        let r = run::run(&config(&flags));
        assert_clean(&what, &r);
        assert!(r.simulated_cycles >= 20_000 && r.broadcasts_completed.unwrap() > 1000, "{what}: {:?}", r.broadcasts_completed);
    }
}

/// One cycle's outputs of the external routers.
type Outputs = Vec<(u64, Vec<Ports>)>;

/// External routers that keep a copy of every cycle's outputs.
struct Recorder {
    inner: Box<dyn ExternalRouters>,
    log: Arc<Mutex<Outputs>>,
}

impl ExternalRouters for Recorder {
    fn step(&mut self, t: u64, ins: &[Ports], outs: &mut [Ports]) -> Result<(), String> {
        self.inner.step(t, ins, outs)?;
        self.log.lock().unwrap().push((t, outs.to_vec()));
        Ok(())
    }
}

/// The outputs of the RTL router in `path` at `nodes` of the run `flags` describes, every
/// cycle, without a check.
fn record(flags: &[(&str, &str)], path: &str, nodes: &[u32]) -> Outputs {
    let mut flags = flags.to_vec();
    flags.push(("rtl", path));
    let cfg = config(&flags);
    let (mut f, _) = run::build(&cfg);
    let rtl = cfg.rtl.as_ref().unwrap();
    let v = testbenches::rtl::Verilated::start(&rtl.program, nodes, &f.routers.params).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    f.attach_external(nodes, Box::new(Recorder { inner: Box::new(v), log: log.clone() }), false);
    f.run();
    drop(f);
    Arc::into_inner(log).expect("the fabric let go of the recorder").into_inner().unwrap()
}

/// The first cycle and port at which two recordings of one router differ, and whether in a
/// flit or a credit: flits before credits, the lowest port first (credits of the injection
/// ports are the NIC's business: not compared).
fn first_difference(a: &Outputs, b: &Outputs, net: usize) -> Option<(u64, usize, &'static str)> {
    const PORTS: usize = 256;
    for ((t, x), (_, y)) in a.iter().zip(b) {
        let (x, y) = (&x[0], &y[0]);
        let flit = |p: &Ports, port: usize| p.flits.iter().find(|f| f.port as usize == port).copied();
        if let Some(port) = (0..PORTS).find(|&port| flit(x, port) != flit(y, port)) {
            return Some((*t, port, if port < net { "flit" } else { "ejection" }));
        }
        let credit = |p: &Ports, port: usize| p.credits.iter().find(|k| k.port as usize == port && port < net).copied();
        if let Some(port) = (0..PORTS).find(|&port| credit(x, port) != credit(y, port)) {
            return Some((*t, port, "credit"));
        }
    }
    None
}

#[test]
fn seeded_rtl_bugs_are_caught_at_their_node_port_and_cycle() {
    if !have_verilator() {
        return;
    }
    let node = 5u32;
    let flags = mesh(&[("traffic", "uniform"), ("rate", "0.15"), ("cycles", "3000")]);
    let good = record(&flags, &reference(), &[node]);
    for (name, edits) in MUTANTS {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cosim-mutant-{name}"));
        write_mutant(name, edits, &dir);
        let path = dir.join("router.sv").display().to_string();
        // Where the buggy router first does something else than the reference in the same
        // fabric (up to there, both see the same inputs).
        let bad = record(&flags, &path, &[node]);
        let (cycle, port, what) = first_difference(&good, &bad, 4).unwrap_or_else(|| panic!("{name}: the bug changes nothing"));
        let mut checked = flags.clone();
        checked.extend([("rtl", path.as_str()), ("rtl-nodes", "5"), ("rtl-compare", "on")]);
        let r = run::run(&config(&checked));
        assert_eq!(r.ending, fabric::Ending::RtlStopped, "{name}: stopped at the difference");
        let m = r.rtl.as_ref().and_then(|x| x.mismatch.clone()).unwrap_or_else(|| panic!("{name}: not caught: {:?}", r.rtl));
        eprintln!("{name}: {}", r.rtl.as_ref().unwrap().stopped.as_deref().unwrap());
        assert_eq!((m.node, m.port, m.cycle, m.what), (node, port, cycle, what), "{name}");
        // A late credit is first seen as one; the others as a flit sent differently.
        assert_eq!(what, if name == "late-credit" { "credit" } else { "flit" }, "{name}");
    }
}

#[test]
fn a_router_with_another_port_map_plugs_in_through_its_adapter() {
    if !have_verilator() {
        return;
    }
    // rtl/examples/renamed_router.sv: other names, active-low reset, the header first in
    // its flits; the reference router inside, so the model must see no difference.
    let examples = rtl_dir().join("examples");
    let (sv, toml) = (examples.join("renamed_router.sv").display().to_string(), examples.join("renamed_router.toml").display().to_string());
    let traffic = [("traffic", "uniform"), ("rate", "0.12"), ("cycles", "3000")];
    let mut flags = mesh(&traffic);
    flags.extend([("rtl", sv.as_str()), ("rtl-adapter", toml.as_str()), ("rtl-compare", "on")]);
    let r = run::run(&config(&flags));
    assert_clean("renamed_router through its adapter", &r);
    let mut reference_flags = mesh(&traffic);
    let rtl = reference();
    reference_flags.extend([("rtl", rtl.as_str())]);
    let reference = run::run(&config(&reference_flags));
    assert_eq!(
        (r.deliveries, r.latency_avg_cycles, r.simulated_cycles),
        (reference.deliveries, reference.latency_avg_cycles, reference.simulated_cycles)
    );
}

#[path = "refusal/mod.rs"]
mod refusal;

#[test]
fn what_the_rtl_cannot_stand_in_for_is_refused_in_one_line() {
    let rtl = reference();
    let base = ["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--rate", "0.1"];
    let cases: &[(&[&str], &[&str])] = &[
        (&["--rtl-compare"], &["rtl-compare", "only applies with --rtl"]),
        (&["--rtl-nodes", "3"], &["rtl-nodes", "only applies with --rtl"]),
        (&["--rtl", "no/such/router.sv"], &["rtl: no/such/router.sv", "no such file"]),
        (&["--rtl", &rtl, "--router", "ideal"], &["router: ideal", "realistic with --rtl"]),
        (&["--rtl", &rtl, "--arbiter", "oldest"], &["arbiter: oldest", "round-robin"]),
        (&["--rtl", &rtl, "--va-policy", "lowest"], &["va-policy: lowest", "round-robin"]),
        (&["--rtl", &rtl, "--threads", "2"], &["threads: 2", "1 with --rtl"]),
        (&["--rtl", &rtl, "--rtl-nodes", "3-99"], &["rtl-nodes: 3-99", "below 16"]),
        (&["--rtl", &rtl, "--rtl-top", "9x"], &["rtl-top: 9x", "module name"]),
        (&["--rtl", &rtl, "--rtl-window", "w.vcd"], &["rtl-window: w.vcd", "only applies with --rtl-compare"]),
        (&["--rtl", &rtl, "--broadcast-rate", "0.01", "--forwarding", "router"], &["forwarding: router", "node with --rtl"]),
        (&["--rtl", &rtl, "--vcd", "w.vcd", "--trace-nodes", "4-6", "--rtl-nodes", "5"], &["trace-nodes: 4-6", "node 5 is the RTL's"]),
    ];
    for (extra, needles) in cases {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        refusal::refused(&args, needles);
    }
    let pmnb: Vec<&str> =
        ["run", "--topology", "hypercube", "--dims", "4", "--algorithm", "pmnb-1", "--active-count", "6", "--rtl", &rtl].to_vec();
    refusal::refused(&pmnb, &["algorithm: pmnb-1", "timed to the cycle"]);
    let torus: Vec<&str> = ["run", "--topology", "torus", "--dims", "4x4", "--traffic", "uniform", "--rtl", &rtl].to_vec();
    refusal::refused(&torus, &["topology: torus", "mesh, linear or hypercube"]);
}

#[test]
fn cycles_the_fabric_skips_still_clock_the_rtl() {
    if !have_verilator() {
        return;
    }
    // At low load the fabric skips the cycles in which nothing can happen; the RTL's switch
    // allocator takes turns by the clock (output cycle mod NET first), so it must see every
    // edge. Long packets over short buffers make two VCs of one input contend for its read,
    // where whose turn it is decides (unclocked gaps made node 1 send a flit at cycle 54
    // that the model sends at 56).
    let rtl = reference();
    let traffic = [("traffic", "uniform"), ("rate", "0.02"), ("packet-flits", "16"), ("buffer-flits", "4"), ("cycles", "20000")];
    for nodes in ["1", "all"] {
        let mut flags = mesh(&traffic);
        flags.extend([("rtl", rtl.as_str()), ("rtl-nodes", nodes), ("rtl-compare", "on")]);
        assert_clean(&format!("low load, long packets, RTL at {nodes}"), &run::run(&config(&flags)));
    }
}
