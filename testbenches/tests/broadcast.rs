//! All-node broadcast on meshes and tori (`mnb-sbt` on the dimension-order trees) and
//! broadcast traffic (`--broadcast-rate`): every destination of every broadcast reached
//! once, completion times against bounds derived here from the topology alone, broadcast
//! latency against the router's zero-load formula, and the flag's validation.

use router::{Pipeline, Switching};
use serde_json::Value;
use std::process::Command;
use testbenches::config::{Config, Raw};
use testbenches::{json, run};

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

/// The report of the run the flags describe (resolved as the CLI does), as JSON.
fn report(flags: &[(&str, &str)]) -> Value {
    let raw = Raw::from_given(flags.iter().copied()).unwrap();
    let cfg = Config::resolve(&raw).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
    serde_json::from_str(&json::to_string(&run::run(&cfg))).unwrap()
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v:#}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v:#}"))
}

/// Sides of a mesh or torus given as `5x3`.
fn sides(dims: &str) -> Vec<u64> {
    dims.split('x').map(|s| s.parse().unwrap()).collect()
}

/// The diameter from the sides alone: a mesh's farthest pair is opposite corners, k − 1
/// hops along each side; a torus ring of k has no node farther than ⌊k/2⌋.
fn diameter(torus: bool, s: &[u64]) -> u64 {
    s.iter().map(|&k| if torus { k / 2 } else { k - 1 }).sum()
}

/// A lower bound on an all-node broadcast of one-flit packets in slots: every node must
/// receive N − 1 packets, at most one a cycle per ejection channel it can use (one-port: 1;
/// all-port: one per link it has — a mesh corner has one per dimension, a side of 2 one
/// link per dimension on a torus too), and some root is a diameter away from a node.
fn lower_bound(torus: bool, s: &[u64], one_port: bool) -> u64 {
    let n: u64 = s.iter().product();
    let min_links: u64 = s.iter().map(|&k| if torus && k > 2 { 2 } else { 1 }).sum();
    let channels = if one_port { 1 } else { min_links };
    diameter(torus, s).max((n - 1).div_ceil(channels))
}

/// mnb-sbt on meshes and tori of several shapes (non-square, odd sides, 1-, 2- and 3-D),
/// forwarded by the nodes and by the routers, one-port and all-port, 1-flit store-and-forward
/// on the ideal router and 3-flit wormhole on the realistic one with one VC per dateline
/// class: every one of the N(N − 1)
/// deliveries exactly once, one link transmission per tree edge (N − 1 per tree), every
/// broadcast timed (its latency no shorter than its root's eccentricity), no unicast latency
/// (the relays are not unicast messages), and the completion time not below the bound
/// derived from the sides.
#[test]
fn mnb_sbt_on_meshes_and_tori_reaches_every_node_once() {
    // Tori with even and odd sides, one VC per dateline class: each branch of a replicated
    // packet takes the VCs of its own class (a tree's branches share one class deadlocked
    // every even-sided torus here, and 5x5).
    let shapes = [
        ("mesh", "5x3"),
        ("mesh", "4x4x2"),
        ("mesh", "7"),
        ("mesh", "2x3"),
        ("torus", "5x3"),
        ("torus", "3x3x3"),
        ("torus", "7"),
        ("torus", "8"),
        ("torus", "4x4"),
        ("torus", "6x4"),
        ("torus", "5x5"),
        ("torus", "4x4x4"),
    ];
    for (topology, dims) in shapes {
        let s = sides(dims);
        let n: u64 = s.iter().product();
        let torus = topology == "torus";
        for forwarding in ["node", "router"] {
            for ports in ["one", "all"] {
                for packet in
                    [&[("packet-flits", "1")][..], &[("packet-flits", "3"), ("switching", "wh"), ("router", "realistic"), ("vcs", "2")]]
                {
                    let mut flags = vec![
                        ("topology", topology),
                        ("dims", dims),
                        ("algorithm", "mnb-sbt"),
                        ("forwarding", forwarding),
                        ("ports", ports),
                    ];
                    flags.extend_from_slice(packet);
                    let v = report(&flags);
                    let what = format!("{flags:?}");
                    assert_eq!(v["ending"], "quiescent", "{what}");
                    assert_eq!(u(&v, "expected_deliveries"), n * (n - 1), "{what}");
                    assert_eq!(u(&v, "deliveries"), n * (n - 1), "{what}");
                    assert_eq!(
                        (u(&v, "missing_deliveries"), u(&v, "duplicate_deliveries"), u(&v, "misrouted_deliveries")),
                        (0, 0, 0),
                        "{what}"
                    );
                    assert_eq!(u(&v, "link_transmissions"), n * (n - 1), "{what}: N - 1 tree edges per broadcast");
                    assert_eq!(u(&v, "broadcasts_completed"), n, "{what}");
                    assert!(v["latency_avg_cycles"].is_null(), "{what}: relays counted as unicast latency");
                    // All broadcasts start in cycle 0: the last one done is the completion.
                    assert_eq!(u(&v, "broadcast_latency_max_cycles"), u(&v, "completion_cycles"), "{what}");
                    if packet.len() == 1 {
                        let lb = lower_bound(torus, &s, ports == "one");
                        assert!(u(&v, "completion_cycles") >= lb, "{what}: {} cycles below the bound {lb}", u(&v, "completion_cycles"));
                        assert_eq!(f(&v, "lower_bound_slots") as u64, lb, "{what}: the reported bound");
                    }
                }
            }
        }
    }
}

/// On a ring of N nodes (a 1-D torus), all-port, every root floods both ways round the ring
/// (⌊N/2⌋ hops up, the rest down). In slot s the up-link from node i carries root i − s + 1's
/// packet, and the down-link root i + s − 1's: one packet per link direction and slot, no
/// contention, two receptions a slot per node (two channels). So the N broadcasts finish
/// together in ⌊N/2⌋ slots, the eccentricity — the slot model's answer, on the ideal router
/// with one VC per link (the slot model has no VCs; the dateline classes are off, which a
/// ring of one-flit store-and-forward packets does not need). One-port, a node receives
/// one packet a slot: at least N − 1.
#[test]
fn mnb_sbt_on_a_ring_takes_the_eccentricity_all_port() {
    for n in [3u64, 4, 5, 6, 7, 8, 9] {
        let dims = n.to_string();
        for forwarding in ["node", "router"] {
            let base = [("topology", "torus"), ("dims", dims.as_str()), ("algorithm", "mnb-sbt"), ("forwarding", forwarding)];
            let mut all = base.to_vec();
            all.extend([("ports", "all"), ("vcs", "1"), ("deadlock-avoidance", "off")]);
            let v = report(&all);
            assert_eq!(u(&v, "deliveries"), n * (n - 1), "{all:?}");
            assert_eq!(u(&v, "completion_cycles"), n / 2, "{all:?}");
            let mut one = base.to_vec();
            one.push(("ports", "one"));
            let v = report(&one);
            assert_eq!(u(&v, "missing_deliveries"), 0, "{one:?}");
            assert!(u(&v, "completion_cycles") >= n - 1, "{one:?}: {}", u(&v, "completion_cycles"));
        }
    }
}

/// The done-when run: broadcasts at 0.002 per node and cycle over uniform unicast traffic at
/// 0.01 packets per node and cycle on an 8×8 mesh, 4-flit worms, 2 VCs, both forwardings:
/// the scoreboard saw every destination of every broadcast once; unicast and broadcast
/// latency are reported apart, each with its interval, and neither is below what the
/// realistic router's zero-load formula allows (a unicast crosses at least one link; a
/// broadcast reaches a node at least 8 hops away — every node of an 8×8 mesh has one — and
/// forwarded by the nodes, each hop is a packet of its own); the summary says both.
#[test]
fn broadcast_traffic_over_uniform_load_on_a_mesh() {
    let p = Pipeline::REALISTIC;
    let wh = Switching::Wormhole;
    for (forwarding, floor) in [("router", p.zero_load_latency(wh, 8, 4)), ("node", 8 * p.zero_load_latency(wh, 1, 4))] {
        let flags = [
            ("topology", "mesh"),
            ("dims", "8x8"),
            ("traffic", "uniform"),
            ("rate", "0.01"),
            ("broadcast-rate", "0.002"),
            ("packet-flits", "4"),
            ("vcs", "2"),
            ("cycles", "20000"),
            ("warmup", "2000"),
            ("forwarding", forwarding),
        ];
        let v = report(&flags);
        assert_eq!(v["ending"], "quiescent", "{forwarding}");
        assert_eq!(u(&v, "deliveries"), u(&v, "expected_deliveries"));
        assert_eq!((u(&v, "missing_deliveries"), u(&v, "duplicate_deliveries"), u(&v, "misrouted_deliveries")), (0, 0, 0));
        // About 64 × 0.002 × 18000 = 2304 broadcasts in the window.
        let b = u(&v, "broadcasts_completed");
        assert!((2000..2600).contains(&b), "{forwarding}: {b} broadcasts");
        assert!(f(&v, "broadcast_latency_avg_cycles") >= floor as f64, "{forwarding}: {v:#}");
        assert!(u(&v, "broadcast_latency_p99_cycles") as f64 >= f(&v, "broadcast_latency_avg_cycles") * 0.9);
        assert!(f(&v, "broadcast_latency_ci95_cycles") > 0.0);
        assert!(f(&v, "latency_avg_cycles") >= p.zero_load_latency(wh, 1, 4) as f64);
        assert!(f(&v, "latency_ci95_cycles") > 0.0);
        assert_eq!(v["config"]["workload"]["broadcast_rate"], 0.002);
        assert_eq!(v["config"]["workload"]["forwarding"], forwarding);
    }
    let o = Command::new(BIN)
        .args(["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--rate", "0.01", "--broadcast-rate", "0.002"])
        .args(["--cycles", "2000", "--forwarding", "router"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("  unicast latency avg ") && out.contains("  broadcast latency (creation to last delivery) avg "), "{out}");
}

/// At very low load a broadcast meets no other traffic: its latency is the zero-load
/// latency of its farthest destination along its tree. On an 8×8 torus every node's tree is
/// 8 hops deep (4 along each ring), so every broadcast's is the same: replicated by the
/// routers, one worm crossing 8 links, `zero_load_latency(wh, 8, L)`; forwarded by the nodes
/// (all-port: a node re-sends to every child at once), 8 one-hop worms one after another,
/// `8 × zero_load_latency(wh, 1, L)`. No broadcast can be faster; at a broadcast per node
/// every 5,000 cycles, the few that overlap another add less than 3 % to the mean.
#[test]
fn broadcast_latency_at_low_load_is_the_zero_load_latency_of_the_tree_depth() {
    let wh = Switching::Wormhole;
    for (router, p) in [("realistic", Pipeline::REALISTIC), ("ideal", Pipeline::IDEAL)] {
        for (forwarding, expected) in [("router", p.zero_load_latency(wh, 8, 4)), ("node", 8 * p.zero_load_latency(wh, 1, 4))] {
            let flags = [
                ("topology", "torus"),
                ("dims", "8x8"),
                ("broadcast-rate", "0.0002"),
                ("packet-flits", "4"),
                ("router", router),
                ("ports", "all"),
                ("cycles", "40000"),
                ("warmup", "1000"),
                ("forwarding", forwarding),
            ];
            let v = report(&flags);
            let (avg, e) = (f(&v, "broadcast_latency_avg_cycles"), expected as f64);
            assert!(u(&v, "broadcasts_completed") > 300, "{flags:?}");
            assert!(avg >= e && avg <= e * 1.03, "{router} {forwarding}: {avg} against {e}");
            assert!(v["latency_avg_cycles"].is_null(), "{router} {forwarding}: broadcasts alone, no unicast latency");
        }
    }
}

/// Broadcast traffic and mesh mnb-sbt give the same report split between two threads.
#[test]
fn broadcasts_are_the_same_on_two_threads() {
    let runs: [&[(&str, &str)]; 4] = [
        &[
            ("topology", "mesh"),
            ("dims", "5x4"),
            ("traffic", "uniform"),
            ("rate", "0.02"),
            ("broadcast-rate", "0.004"),
            ("cycles", "3000"),
            ("warmup", "500"),
            ("forwarding", "node"),
        ],
        &[
            ("topology", "torus"),
            ("dims", "5x3"),
            ("traffic", "tornado"),
            ("rate", "0.02"),
            ("broadcast-rate", "0.004"),
            ("cycles", "3000"),
            ("forwarding", "router"),
        ],
        &[
            ("topology", "mesh"),
            ("dims", "3x4x2"),
            ("algorithm", "mnb-sbt"),
            ("packet-flits", "3"),
            ("switching", "wh"),
            ("forwarding", "node"),
        ],
        &[
            ("topology", "mesh"),
            ("dims", "3x4x2"),
            ("algorithm", "mnb-sbt"),
            ("packet-flits", "3"),
            ("switching", "wh"),
            ("forwarding", "router"),
        ],
    ];
    for flags in runs {
        let mut one = report(flags);
        let mut two = report(&[flags, &[("threads", "2")]].concat());
        for v in [&mut one, &mut two] {
            let o = v.as_object_mut().unwrap();
            o.remove("wall_seconds");
            o["config"].as_object_mut().unwrap().remove("threads");
        }
        assert_eq!(one, two, "{flags:?}");
    }
}

/// `--broadcast-rate` takes a number in [0, 1], with or without --traffic but not with an
/// algorithm: anything else is one line naming the flag, the value and what is allowed, exit
/// 2. The scenario file key does what the flag does.
#[test]
fn bad_broadcast_rates_are_refused_and_the_file_key_works() {
    for (value, extra) in [("-0.1", None), ("1.5", None), ("NaN", None), ("abc", None), ("inf", None), ("0.1", Some("snb"))] {
        let mut args = vec!["run", "--topology", "mesh", "--dims", "4x4", "--broadcast-rate", value];
        if let Some(a) = extra {
            args.extend(["--algorithm", a]);
        }
        let o = Command::new(BIN).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("broadcast-rate") && err.contains(value) && err.contains("[0, 1]"), "{args:?}: {err}");
    }
    let dir = std::env::temp_dir().join(format!("flitwave-broadcast-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("b.toml");
    std::fs::write(&file, "topology = \"mesh\"\ndims = \"4x4\"\nbroadcast-rate = 0.01\ncycles = 1000\nforwarding = \"router\"\n").unwrap();
    let by_file = Command::new(BIN).args(["run", file.to_str().unwrap(), "--json", "-", "--quiet"]).output().unwrap();
    let by_flags = Command::new(BIN)
        .args(["run", "--topology", "mesh", "--dims", "4x4", "--broadcast-rate", "0.01", "--cycles", "1000", "--forwarding", "router"])
        .args(["--json", "-", "--quiet"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let strip = |o: &std::process::Output| {
        let mut v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        v.as_object_mut().unwrap().remove("wall_seconds");
        v
    };
    let (a, b) = (strip(&by_file), strip(&by_flags));
    assert!(u(&a, "broadcasts_completed") > 0);
    assert_eq!(a, b);
    // --forwarding with traffic needs broadcasts; --rate needs --traffic.
    for args in [
        &["run", "--topology", "mesh", "--dims", "4x4", "--traffic", "uniform", "--forwarding", "router"][..],
        &["run", "--topology", "mesh", "--dims", "4x4", "--broadcast-rate", "0.01", "--rate", "0.1"],
    ] {
        let o = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}
