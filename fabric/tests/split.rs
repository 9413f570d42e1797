//! A fabric split between threads gives exactly the results of the same fabric run on one
//! thread: counters, latencies, scoreboard, per-VC and per-link statistics, how the run
//! ended and the deadlock report.

use fabric::algorithms::Forwarding;
use fabric::algorithms::mnb_sbt::MnbSbt;
use fabric::algorithms::snb::Snb;
use fabric::algorithms::total_exchange::TotalExchange;
use fabric::algorithms::traffic::{Pattern, Traffic, TrafficSpec};
use fabric::kernel::split::run_split;
use fabric::*;
use router::{NodeId, Pipeline, Switching};

fn traffic(spec: &FabricSpec, pattern: Pattern, rate: f64, cycles: u64) -> Fabric {
    let t = TrafficSpec { pattern, rate, cycles, flits: spec.packet_flits, seed: 7, hotspot: NodeId(1), hotspot_fraction: 0.3 };
    let mut s = spec.clone();
    s.measure = Some(Window { from: cycles / 4, to: cycles, batches: 5 });
    Fabric::new(&s, Box::new(Traffic::new(t, s.topology().nodes())))
}

/// Everything a run reports, as text (packet-table slot numbers aside, which are internal).
fn outcome(f: &Fabric, ending: &Ending) -> String {
    let r = &f.routers;
    let vcs = r.input_vcs();
    let per_vc: Vec<_> =
        (0..vcs).map(|iv| (r.max_occupancy(iv), r.occupancy_histogram(iv, f.now), r.stall_credit(iv), r.stall_arbitration(iv))).collect();
    let links: Vec<_> = (0..f.output_ports()).map(|op| f.port_flits(op)).collect();
    format!(
        "{ending:?} now {} counters {} latencies {:?} score {:?} problems {:?} buffered {} deadlock {} per-VC {per_vc:?} links {links:?} nic queue {} measure {:?}",
        f.now,
        serde_json::to_string(&f.counters).unwrap(),
        (&f.latencies.hist, &f.latencies.far),
        f.scoreboard.counts(),
        f.scoreboard.problems,
        r.flits,
        serde_json::to_string(&f.deadlock).unwrap(),
        f.nics.max_queue,
        fabric::measure::summary(f),
    )
}

fn check(name: &str, build: impl Fn() -> Fabric + Sync, expect: Ending) {
    let mut f = build();
    let ending = f.run();
    assert_eq!(ending, expect, "{name}: one thread");
    let base = outcome(&f, &ending);
    for parts in [2, 3, 5] {
        let (g, e) = run_split(parts, &build);
        assert_eq!(outcome(&g, &e), base, "{name}: {parts} parts");
    }
}

fn spec(kind: TopologyKind, sizes: &[u32], switching: Switching, pipeline: Pipeline) -> FabricSpec {
    let mut s = FabricSpec::ideal(kind, sizes);
    s.switching = switching;
    s.pipeline = pipeline;
    s.vcs = 2;
    s.packet_flits = 4;
    s.buffer_flits = 4;
    s.ports = PortModel::K(1);
    s
}

#[test]
fn wormhole_mesh_under_load() {
    let s = spec(TopologyKind::Mesh, &[6, 5], Switching::Wormhole, Pipeline::REALISTIC);
    check("uniform", || traffic(&s, Pattern::Uniform, 0.06, 1500), Ending::Quiescent);
    check("hotspot", || traffic(&s, Pattern::Hotspot, 0.03, 1500), Ending::Quiescent);
}

#[test]
fn torus_hypercube_and_other_switching() {
    let mut s = spec(TopologyKind::Torus, &[6, 4], Switching::VirtualCutThrough, Pipeline::REALISTIC);
    s.arbiter = router::ArbiterPolicy::Oldest;
    check("torus vct", || traffic(&s, Pattern::Tornado, 0.05, 1200), Ending::Quiescent);
    let mut h = spec(TopologyKind::Hypercube, &[5], Switching::StoreAndForward, Pipeline::IDEAL);
    h.ports = PortModel::All;
    h.nu = 1;
    check("hypercube sf", || traffic(&h, Pattern::Uniform, 0.1, 800), Ending::Quiescent);
}

/// A node-forwarded multinode broadcast: messages declared at setup are shared by the parts,
/// each recording its own nodes' deliveries.
#[test]
fn node_forwarded_mnb() {
    for ports in [PortModel::All, PortModel::K(1)] {
        let mut s = FabricSpec::ideal(TopologyKind::Hypercube, &[6]);
        s.ports = ports;
        check(&format!("mnb-sbt {ports:?}"), || Fabric::new(&s, Box::new(MnbSbt::new(1, Forwarding::Node))), Ending::Quiescent);
        let (f, _) = run_split(2, || Fabric::new(&s, Box::new(MnbSbt::new(1, Forwarding::Node))));
        let c = f.scoreboard.counts();
        assert_eq!((c.expected, c.deliveries, c.missing), (64 * 63, 64 * 63, 0), "{ports:?}");
    }
}

/// Broadcasts the routers replicate: a copy crosses into a part on every tree branch that
/// leaves the one it is in, and each copy's packet-table slot goes when its share of the
/// tree is done (no slot left over anywhere after the run).
#[test]
fn router_forwarded_broadcasts() {
    let mut runs: Vec<(String, Box<dyn Fn() -> Fabric + Sync>)> = Vec::new();
    for ports in [PortModel::All, PortModel::K(1)] {
        let mut s = FabricSpec::ideal(TopologyKind::Hypercube, &[6]);
        s.ports = ports;
        runs.push((format!("mnb-sbt {ports:?}"), Box::new(move || Fabric::new(&s, Box::new(MnbSbt::new(1, Forwarding::Router))))));
    }
    // Multi-flit worms the routers replicate asynchronously (a read pointer per branch,
    // carried across the join), and synchronously.
    for rep in [router::Replication::Async, router::Replication::Sync] {
        let mut s = spec(TopologyKind::Hypercube, &[5], Switching::VirtualCutThrough, Pipeline::REALISTIC);
        s.packet_flits = 4;
        s.buffer_flits = 8;
        s.vcs = 2;
        s.ports = PortModel::All;
        s.replication = rep;
        runs.push((format!("mnb-sbt 4-flit {rep:?}"), Box::new(move || Fabric::new(&s, Box::new(MnbSbt::new(4, Forwarding::Router))))));
    }
    let mut mesh = spec(TopologyKind::Mesh, &[6, 5], Switching::Wormhole, Pipeline::REALISTIC);
    mesh.vcs = 1;
    let root = mesh.topology().node_at(&[2, 3]);
    runs.push(("snb mesh".into(), Box::new(move || Fabric::new(&mesh, Box::new(Snb::new(root, Forwarding::Router, false, 4))))));
    let torus = spec(TopologyKind::Torus, &[6, 4], Switching::StoreAndForward, Pipeline::IDEAL);
    runs.push(("snb torus".into(), Box::new(move || Fabric::new(&torus, Box::new(Snb::new(NodeId(9), Forwarding::Router, false, 4))))));
    let mut cube = FabricSpec::ideal(TopologyKind::Hypercube, &[7]);
    cube.ports = PortModel::All;
    runs.push(("snb hypercube".into(), Box::new(move || Fabric::new(&cube, Box::new(Snb::new(NodeId(77), Forwarding::Router, false, 1))))));
    for (name, build) in &runs {
        check(name, build, Ending::Quiescent);
        let nodes = build().topo.nodes() as u64;
        for parts in [1, 2, 3, 5] {
            let (f, _) = run_split(parts, build);
            let c = f.scoreboard.counts();
            let broadcasts = if name.starts_with("mnb") { nodes } else { 1 };
            assert_eq!(
                (c.expected, c.deliveries, c.missing, c.duplicates),
                (broadcasts * (nodes - 1), c.expected, 0, 0),
                "{name}, {parts} parts"
            );
            assert_eq!(f.packets.live(), 0, "{name}, {parts} parts: packet-table slots left");
        }
    }
}

/// Total exchange: the all-pairs block is declared at setup, each part records the
/// deliveries to its own nodes, and the join merges them.
#[test]
fn total_exchange() {
    for ports in [PortModel::All, PortModel::K(1)] {
        let mut s = FabricSpec::ideal(TopologyKind::Hypercube, &[5]);
        s.ports = ports;
        let one_port = ports == PortModel::K(1);
        let build = || Fabric::new(&s, Box::new(TotalExchange::new(5, one_port, 1)));
        check(&format!("total exchange {ports:?}"), build, Ending::Quiescent);
        let (f, _) = run_split(3, build);
        let c = f.scoreboard.counts();
        assert_eq!((c.expected, c.deliveries, c.missing, c.duplicates, c.misrouted), (32 * 31, 32 * 31, 0, 0, 0), "{ports:?}");
        // Cut short: the same messages are described as never delivered.
        s.max_cycles = 6;
        let build = || Fabric::new(&s, Box::new(TotalExchange::new(5, one_port, 1)));
        let mut f = build();
        f.run();
        let missing = f.scoreboard.describe_missing(&f.topo, 2000);
        assert!(missing.len() as u64 == f.scoreboard.counts().missing && !missing.is_empty(), "{ports:?}: {missing:?}");
        for parts in [2, 3] {
            let (g, _) = run_split(parts, build);
            assert_eq!(g.scoreboard.describe_missing(&g.topo, 2000), missing, "{ports:?}, {parts} parts");
        }
    }
}

/// An offered load the network cannot take fills the source queues; a node whose queue is
/// full stops generating, and the run fails saying where and when, the same on any number
/// of threads, with no queue above its cap.
#[test]
fn saturated_sources_stop() {
    let s = spec(TopologyKind::Mesh, &[4, 4], Switching::Wormhole, Pipeline::REALISTIC);
    let cap = 50;
    let build = || {
        let t = TrafficSpec {
            pattern: Pattern::Uniform,
            rate: 1.0,
            cycles: 3000,
            flits: 4,
            seed: 7,
            hotspot: NodeId(1),
            hotspot_fraction: 0.3,
        };
        Fabric::new(&s, Box::new(Traffic::new(t, 16).with_queue_cap(cap)))
    };
    check("saturated", build, Ending::Quiescent);
    for parts in [1, 2, 3] {
        let (f, _) = run_split(parts, build);
        assert_eq!(f.nics.max_queue, cap, "{parts} parts");
        assert_eq!(f.program().failures().len(), 1, "{parts} parts");
        assert!(f.program().failures()[0].contains(&format!("reached {cap} packets")), "{:?}", f.program().failures());
        let c = f.scoreboard.counts();
        assert_eq!((c.missing, c.duplicates), (0, 0), "{parts} parts: what was generated is delivered");
        let t = (f.program() as &dyn std::any::Any).downcast_ref::<Traffic>().unwrap();
        // A packet a cycle comes in, at most a quarter of one (4 flits at one a cycle) leaves.
        let (cycle, _, queued) = t.saturated().unwrap();
        assert!(queued == cap && (cap as u64..=2 * cap as u64).contains(&cycle), "{:?}", t.saturated());
    }
}

/// A run cut short keeps its flits in flight and reports the same missing deliveries.
#[test]
fn cycle_limit() {
    let mut s = spec(TopologyKind::Mesh, &[4, 4], Switching::Wormhole, Pipeline::REALISTIC);
    s.max_cycles = 700;
    check("cut short", || traffic(&s, Pattern::Uniform, 0.1, 1000), Ending::CycleLimit);
}

/// The watchdog fires in the same cycle and finds the same wait-for cycle.
#[test]
fn deadlock_is_found_the_same() {
    let mut s = spec(TopologyKind::Torus, &[8], Switching::Wormhole, Pipeline::REALISTIC);
    s.deadlock_avoidance = false;
    s.vcs = 1;
    s.watchdog_cycles = 200;
    check("torus ring without dateline", || traffic(&s, Pattern::Uniform, 0.3, 2000), Ending::Deadlock);
    let (f, _) = run_split(2, || traffic(&s, Pattern::Uniform, 0.3, 2000));
    assert!(f.deadlock.expect("a deadlock report").wait_for_cycle.len() >= 2);
}

/// Watching a split run (the CLI's progress line) sees it advance and changes no result.
#[test]
fn watching_a_split_run_changes_nothing() {
    let s = spec(TopologyKind::Mesh, &[6, 5], Switching::Wormhole, Pipeline::REALISTIC);
    let build = || traffic(&s, Pattern::Uniform, 0.06, 20_000);
    let (plain, e) = run_split(2, build);
    let mut seen = Vec::new();
    let (watched, e2) = fabric::kernel::split::run_split_watched(2, build, std::time::Duration::from_millis(1), |p| seen.push(p));
    assert_eq!(outcome(&watched, &e2), outcome(&plain, &e));
    assert!(!seen.is_empty(), "never called");
    assert!(seen.windows(2).all(|w| w[0].now <= w[1].now && w[0].deliveries <= w[1].deliveries), "{seen:?}");
    let total = plain.scoreboard.counts().deliveries;
    assert!(seen.iter().all(|p| p.deliveries <= p.expected && p.deliveries <= total), "{seen:?}");
}

/// A part that panics stops the whole run with its own message (the others do not wait for
/// it forever).
#[test]
fn a_panicking_part_stops_the_run() {
    struct Faulty;
    impl Program for Faulty {
        fn start(&mut self, cx: &mut NodeCtx<'_>) {
            cx.wake_at(5);
        }
        fn receive(&mut self, _: &mut NodeCtx<'_>, _: &Received) {}
        fn timer(&mut self, cx: &mut NodeCtx<'_>) {
            assert!(cx.node.0 != 13, "node 13 is faulty");
            cx.wake_at(cx.now + 1);
        }
        fn splits(&self) -> bool {
            true
        }
    }
    let s = spec(TopologyKind::Mesh, &[4, 4], Switching::Wormhole, Pipeline::REALISTIC);
    let r = std::panic::catch_unwind(|| run_split(2, || Fabric::new(&s, Box::new(Faulty))));
    let Err(e) = r else { panic!("the run does not panic") };
    let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|m| m.to_string())).unwrap_or_default();
    assert!(msg.contains("node 13 is faulty"), "{msg}");
}

/// A part whose fabric cannot be built stops the run too (the other part, already running,
/// does not wait for it forever, nor it for the other).
#[test]
fn a_part_that_fails_to_build_stops_the_run() {
    let s = spec(TopologyKind::Mesh, &[4, 4], Switching::Wormhole, Pipeline::REALISTIC);
    let built = std::sync::atomic::AtomicUsize::new(0);
    let r = std::panic::catch_unwind(|| {
        run_split(2, || {
            assert!(built.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0, "the second part cannot be built");
            traffic(&s, Pattern::Uniform, 0.05, 100_000)
        })
    });
    let Err(e) = r else { panic!("the run does not panic") };
    let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|m| m.to_string())).unwrap_or_default();
    assert!(msg.contains("the second part cannot be built"), "{msg}");
}

/// A stop asked from outside (an interrupt, [`Fabric::stop_when`]) ends the run before the
/// next cycle with [`Ending::Interrupted`]: on one thread before cycle 0; split, every part
/// in the round it is in, and the joined fabric is the one-thread fabric after those cycles.
#[test]
fn a_stop_from_outside_ends_every_part_in_the_same_round() {
    let s = spec(TopologyKind::Mesh, &[6, 5], Switching::Wormhole, Pipeline::REALISTIC);
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let build = || {
        let mut f = traffic(&s, Pattern::Uniform, 0.06, 1500);
        f.stop_when(flag.clone());
        f
    };
    let mut f = build();
    assert_eq!((f.run(), f.now), (Ending::Interrupted, 0));
    for parts in [2, 3] {
        let (g, e) = run_split(parts, build);
        assert_eq!(e, Ending::Interrupted, "{parts} parts");
        assert!((1..=2).contains(&g.now), "{parts} parts: stopped at cycle {}", g.now);
        let mut one = spec(TopologyKind::Mesh, &[6, 5], Switching::Wormhole, Pipeline::REALISTIC);
        one.max_cycles = g.now;
        let mut r = traffic(&one, Pattern::Uniform, 0.06, 1500);
        let ending = r.run();
        assert_eq!(outcome(&g, &ending), outcome(&r, &ending), "{parts} parts");
    }
}
