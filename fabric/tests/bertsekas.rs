//! Bertsekas, Ozveren, Stamoulis, Tseng, Tsitsiklis, "Optimal communication algorithms for
//! hypercubes": every algorithm meets Table 1's time and Table 2's transmission count
//! exactly on the ideal router with one-flit packets, both port models.

use fabric::algorithms::Forwarding;
use fabric::algorithms::accumulate::Accumulate;
use fabric::algorithms::mnb::{Mnb, MnbRing, MultiAccumulate};
use fabric::algorithms::scatter::{Gather, Scatter};
use fabric::algorithms::snb::Snb;
use fabric::algorithms::total_exchange::TotalExchange;
use fabric::*;
use router::{NodeId, Pipeline, Switching};

/// Table 1 (MLA, SLA) and Table 2, written out independently of the code under test.
fn table(problem: &str, d: u64) -> (u64, u64, u64) {
    let n = 1u64 << d;
    let q = (n - 1).div_ceil(d);
    match problem {
        "snb" | "accumulate" => (d, d, n - 1),
        "scatter" | "gather" => (q, n - 1, d * n / 2),
        "mnb" | "multi-accumulate" => (q, n - 1, n * (n - 1)),
        "mnb-ring" => (n - 1, n - 1, n * (n - 1)),
        "total-exchange" => (n / 2, d * n / 2, d * n * n / 2),
        _ => unreachable!(),
    }
}

fn program(problem: &str, d: u32, root: u32, one_port: bool, flits: u16) -> Box<dyn Program> {
    let root = NodeId(root);
    match problem {
        "snb" => Box::new(Snb::new(root, Forwarding::Node, one_port, flits)),
        "accumulate" => Box::new(Accumulate::new(d, root, flits)),
        "scatter" => Box::new(Scatter::new(d, root, flits)),
        "gather" => Box::new(Gather::new(d, root, one_port, flits)),
        "mnb" => Box::new(Mnb::new(d, one_port, flits)),
        "mnb-ring" => Box::new(MnbRing::new(d, flits)),
        "multi-accumulate" => Box::new(MultiAccumulate::new(d, one_port, flits)),
        "total-exchange" => Box::new(TotalExchange::new(d, one_port, flits)),
        _ => unreachable!(),
    }
}

fn run(spec: &FabricSpec, prog: Box<dyn Program>) -> Fabric {
    let mut f = Fabric::new(spec, prog);
    assert_eq!(f.run(), Ending::Quiescent);
    assert!(f.scoreboard.ok(), "{:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    f
}

fn check(problem: &str, d: u32, roots: &[u32]) {
    check_flits(problem, d, roots, 1);
}

/// With L-flit packets on the ideal store-and-forward router a slot is L cycles.
fn check_flits(problem: &str, d: u32, roots: &[u32], flits: u16) {
    let (mla, sla, tx) = table(problem, d as u64);
    for (one_port, time) in [(false, mla), (true, sla)] {
        let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
        spec.ports = if one_port { PortModel::K(1) } else { PortModel::All };
        spec.packet_flits = flits;
        spec.buffer_flits = 2 * flits;
        for &root in roots {
            let f = run(&spec, program(problem, d, root, one_port, flits));
            let ctx = format!("{problem} d={d} root {root} {} L={flits}", if one_port { "SLA" } else { "MLA" });
            assert_eq!(f.counters.last_delivery, time * flits as u64, "{ctx}: time");
            assert_eq!(f.counters.link_transmissions, tx, "{ctx}: transmissions");
        }
    }
}

#[test]
fn multi_flit_packets_take_l_cycles_per_slot() {
    for p in ROOTED.iter().chain(ALL_NODES) {
        check_flits(p, 5, &[0, 9], 3);
    }
}

const ROOTED: &[&str] = &["snb", "accumulate", "scatter", "gather"];
const ALL_NODES: &[&str] = &["mnb", "mnb-ring", "multi-accumulate", "total-exchange"];

#[test]
fn rooted_problems_meet_the_tables_for_every_root() {
    for d in 1..=6u32 {
        let roots: Vec<u32> = (0..1 << d).collect();
        for p in ROOTED {
            check(p, d, &roots);
        }
    }
    for d in 7..=8u32 {
        for p in ROOTED {
            check(p, d, &[0, 1, (1 << d) - 1, 0b1011_0101 & ((1 << d) - 1)]);
        }
    }
}

#[test]
fn all_node_problems_meet_the_tables() {
    for d in 1..=8u32 {
        for p in ALL_NODES {
            check(p, d, &[0]);
        }
    }
}

/// On the realistic router with multi-flit wormhole packets everything is still delivered
/// and nothing deadlocks; it is slower than the slot model, never faster.
#[test]
fn realistic_router_delivers_everything() {
    for p in ROOTED.iter().chain(ALL_NODES) {
        for one_port in [false, true] {
            let d = 5;
            let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
            spec.ports = if one_port { PortModel::K(1) } else { PortModel::All };
            spec.pipeline = Pipeline::REALISTIC;
            spec.switching = Switching::Wormhole;
            spec.packet_flits = 3;
            spec.buffer_flits = 4;
            spec.vcs = 2;
            let f = run(&spec, program(p, d, 3, one_port, 3));
            let (mla, sla, tx) = table(p, d as u64);
            assert_eq!(f.counters.link_transmissions, tx, "{p}");
            let slots = f.counters.last_delivery as f64 / 3.0;
            assert!(slots >= (if one_port { sla } else { mla }) as f64, "{p}: {slots} slots beats the slot model");
        }
    }
}
