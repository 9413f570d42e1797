//! Modelled faults: every packet is delivered, lost to a fault or undeliverable, and which
//! one is checked against routes computed here from the coordinates, not by the model.

use fabric::faults::{Fault, FaultReport};
use fabric::*;
use router::{Pipeline, Switching};
use std::sync::{Arc, Mutex};

mod scheduled;
use scheduled::Scheduled;

const SIDE: u32 = 6;

/// `per_node` packets per node to uniform random other nodes at random cycles below `span`.
fn plan(per_node: usize, span: u64, seed: u64) -> Vec<Vec<(u64, u32)>> {
    let mut x = seed;
    let mut next = move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    };
    let n = (SIDE * SIDE) as u64;
    (0..n)
        .map(|s| {
            let mut v: Vec<(u64, u32)> = (0..per_node)
                .map(|_| {
                    let t = next() % span;
                    let d = (s + 1 + next() % (n - 1)) % n;
                    (t, d as u32)
                })
                .collect();
            v.sort_by_key(|p| p.0);
            v
        })
        .collect()
}

/// The nodes a packet from `s` to `d` visits under XY routing on the mesh (x first, node id
/// x + SIDE * y), in order.
fn xy_path(s: u32, d: u32) -> Vec<u32> {
    let (mut at, to) = ([s % SIDE, s / SIDE], [d % SIDE, d / SIDE]);
    let mut path = vec![s];
    // x first, then y.
    for dim in 0..2 {
        while at[dim] != to[dim] {
            if to[dim] > at[dim] {
                at[dim] += 1
            } else {
                at[dim] -= 1
            }
            path.push(at[0] + SIDE * at[1]);
        }
    }
    path
}

fn crosses(path: &[u32], a: u32, b: u32) -> bool {
    path.windows(2).any(|w| (w[0] == a && w[1] == b) || (w[0] == b && w[1] == a))
}

struct Outcome {
    report: FaultReport,
    ending: Ending,
    /// (source, sequence number) of every packet received.
    got: Vec<(u32, u64)>,
    plan: Arc<Vec<Vec<(u64, u32)>>>,
}

fn run(faults: &[&str], flits: u16, realistic: bool, per_node: usize, span: u64) -> Outcome {
    let mut spec = FabricSpec::ideal(TopologyKind::Mesh, &[SIDE, SIDE]);
    spec.packet_flits = flits;
    spec.vcs = 2;
    if realistic {
        spec.switching = Switching::Wormhole;
        spec.pipeline = Pipeline { rc_delay: 1, va_delay: 1, link_latency: 2, credit_delay: 1, ..spec.pipeline };
        spec.buffer_flits = 4;
    } else {
        spec.buffer_flits = 2 * flits;
    }
    let topo = spec.topology();
    spec.faults = faults.iter().map(|f| Fault::parse(f, &topo).unwrap()).collect();
    spec.validate().unwrap();
    let plan = Arc::new(plan(per_node, span, 35));
    let got = Arc::new(Mutex::new(Vec::new()));
    let prog = Scheduled { sends: plan.to_vec(), next: vec![0; (SIDE * SIDE) as usize], flits, got: got.clone() };
    let mut f = Fabric::new(&spec, Box::new(prog));
    let ending = f.run();
    let report = f.faults.as_ref().unwrap().report();
    let got = got.lock().unwrap().iter().map(|d| (d.0, d.4)).collect();
    Outcome { report, ending, got, plan }
}

/// One link failed from the start: the packets whose XY path crosses it are exactly the
/// undeliverable ones, every other one arrives, none is lost, and the counts add up.
#[test]
fn a_dead_link_makes_exactly_the_packets_over_it_undeliverable() {
    // Node 14 is (2, 2); port 1 leaves up in x, to node 15.
    for (flits, realistic) in [(1, false), (4, true)] {
        let o = run(&["link 14.1 at 0"], flits, realistic, 60, 3000);
        assert_eq!(o.ending, Ending::Quiescent);
        let mut want_lost = 0;
        let mut want_got = Vec::new();
        for (s, mine) in o.plan.iter().enumerate() {
            for (k, &(_, d)) in mine.iter().enumerate() {
                if crosses(&xy_path(s as u32, d), 14, 15) {
                    want_lost += 1;
                } else {
                    want_got.push((s as u32, k as u64));
                }
            }
        }
        let mut got = o.got.clone();
        got.sort();
        want_got.sort();
        let r = &o.report;
        assert!(want_lost > 20, "the test crosses the link: {want_lost}");
        assert_eq!(got, want_got, "flits {flits}: the packets delivered are those whose XY path avoids the link");
        assert_eq!(r.undeliverable, want_lost, "{r:?}");
        assert_eq!(r.lost_to_faults, 0, "{r:?}");
        assert_eq!(r.sent, (SIDE * SIDE) as u64 * 60);
        assert_eq!(r.delivered + r.lost_to_faults + r.undeliverable, r.sent, "{r:?}");
        assert!(r.accounted());
        assert_eq!(r.faults.len(), 1);
        assert_eq!(r.faults[0].undeliverable, want_lost);
    }
}

/// A router fails mid-run under wormhole traffic with long worms and shallow buffers (worms
/// cut in half): the run still ends with the network empty, every packet accounted for, and
/// every packet whose path avoids the router delivered.
#[test]
fn a_router_failing_mid_run_cuts_worms_without_wedging_the_network() {
    let mut lost = 0;
    for (fault, flits) in [("router 14 at 400", 8), ("link 14.1 at 400", 8), ("router 21 at 250", 3)] {
        let o = run(&[fault], flits, true, 40, 1200);
        assert_eq!(o.ending, Ending::Quiescent, "{fault}");
        let r = &o.report;
        assert!(r.accounted(), "{fault}: {r:?}");
        assert_eq!(r.delivered, o.got.len() as u64);
        assert!(r.undeliverable > 0, "{fault}: {r:?}");
        lost += r.lost_to_faults;
        let hurt: Vec<u32> = match fault.split_whitespace().collect::<Vec<_>>()[..] {
            ["router", n, ..] => vec![n.parse().unwrap()],
            _ => vec![14, 15],
        };
        let mut got = o.got.clone();
        got.sort();
        for (s, mine) in o.plan.iter().enumerate() {
            for (k, &(_, d)) in mine.iter().enumerate() {
                let path = xy_path(s as u32, d);
                let touches = if hurt.len() == 1 { path.contains(&hurt[0]) } else { crosses(&path, 14, 15) };
                if !touches {
                    assert!(got.binary_search(&(s as u32, k as u64)).is_ok(), "{fault}: packet {s}->{d} avoids the fault, not delivered");
                }
            }
        }
    }
    assert!(lost > 0, "some worm was on a failed part when it failed");
}

/// Bad fault specifications are refused with what is allowed.
#[test]
fn bad_fault_specs_are_refused() {
    let topo = Topology::new(TopologyKind::Mesh, &[SIDE, SIDE]);
    for (bad, says) in [
        ("link 36.0 at 5", "does not exist"),
        ("link 5.1 at 5", "no link on port"),
        ("link 5.9", "no link on port"),
        ("router 99", "does not exist"),
        ("switch 3 at 4", "a fault is"),
        ("link 3.0 at soon", "cycle"),
        ("link 3", "NODE.PORT"),
    ] {
        let e = Fault::parse(bad, &topo).unwrap_err().to_string();
        assert!(e.contains(says) && !e.contains('\n'), "{bad}: {e}");
    }
    assert_eq!(Fault::parse("link 4.xp at 7", &topo).unwrap().to_string(), "link 4.1 at 7");
}
