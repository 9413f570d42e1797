//! The spine's integration tests: exact slot counts against the papers, conservation under
//! random configurations, order independence, and the deadlock watchdog.

use fabric::algorithms::Forwarding;
use fabric::algorithms::mnb_sbt::MnbSbt;
use fabric::algorithms::snb::Snb;
use fabric::algorithms::traffic::{Pattern, Traffic, TrafficSpec};
use fabric::*;
use proptest::prelude::*;
use router::{ArbiterPolicy, NodeId, Pipeline, Switching};

fn snb(spec: &FabricSpec, root: u32, fwd: Forwarding) -> Fabric {
    let one_port = spec.ports == PortModel::K(1);
    let mut f = Fabric::new(spec, Box::new(Snb::new(NodeId(root), fwd, one_port, spec.packet_flits)));
    assert_eq!(f.run(), Ending::Quiescent);
    assert!(f.scoreboard.ok(), "{:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
    f
}

/// Bertsekas et al. Tables 1 and 2: single-node broadcast takes d slots (MLA and SLA) and
/// 2^d - 1 transmissions, from every root.
#[test]
fn snb_hypercube_matches_tables_for_every_root() {
    for d in 1..=7u32 {
        for ports in [PortModel::All, PortModel::K(1)] {
            for fwd in [Forwarding::Node, Forwarding::Router] {
                let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
                spec.ports = ports;
                for root in 0..(1u32 << d) {
                    let f = snb(&spec, root, fwd);
                    assert_eq!(f.counters.last_delivery, d as u64, "d={d} {ports:?} {fwd:?} root {root}");
                    assert_eq!(f.counters.link_transmissions, (1 << d) - 1);
                }
            }
        }
    }
}

/// Larger cubes and multi-flit packets: d slots of L cycles each, on sampled roots.
#[test]
fn snb_hypercube_multiflit_and_larger() {
    for (d, flits) in [(8u32, 1u16), (10, 1), (5, 4), (6, 3)] {
        for ports in [PortModel::All, PortModel::K(1)] {
            for fwd in [Forwarding::Node, Forwarding::Router] {
                let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
                spec.ports = ports;
                spec.packet_flits = flits;
                spec.buffer_flits = 2 * flits;
                for root in [0, 1, (1 << d) - 1, 0x55 & ((1 << d) - 1)] {
                    let f = snb(&spec, root, fwd);
                    assert_eq!(f.counters.last_delivery, d as u64 * flits as u64, "d={d} L={flits} {ports:?} {fwd:?} root {root}");
                    assert_eq!(f.counters.flit_hops, ((1u64 << d) - 1) * flits as u64);
                }
            }
        }
    }
}

fn mesh_shapes() -> Vec<(TopologyKind, Vec<u32>)> {
    vec![
        (TopologyKind::Linear, vec![7]),
        (TopologyKind::Linear, vec![2]),
        (TopologyKind::Mesh, vec![3, 5]),
        (TopologyKind::Mesh, vec![4, 4]),
        (TopologyKind::Mesh, vec![5, 1]),
        (TopologyKind::Mesh, vec![2, 3, 4]),
        (TopologyKind::Mesh, vec![6, 3]),
    ]
}

fn coords(n: u32, sizes: &[u32]) -> Vec<u32> {
    let mut c = Vec::new();
    let mut x = n;
    for &s in sizes {
        c.push(x % s);
        x /= s;
    }
    c
}

/// The root's eccentricity, from coordinates alone.
fn ecc(c: &[u32], sizes: &[u32]) -> u64 {
    c.iter().zip(sizes).map(|(&x, &k)| x.max(k - 1 - x) as u64).sum()
}

/// All-port dimension-order broadcast (lecture notes, "Allport meshes"): the root's eccentricity.
#[test]
fn snb_mesh_all_port_takes_the_eccentricity() {
    for (kind, sizes) in mesh_shapes() {
        let n: u32 = sizes.iter().product();
        for fwd in [Forwarding::Node, Forwarding::Router] {
            let spec = FabricSpec::ideal(kind.clone(), &sizes);
            for root in 0..n {
                let f = snb(&spec, root, fwd);
                assert_eq!(f.counters.last_delivery, ecc(&coords(root, &sizes), &sizes), "{sizes:?} root {root} {fwd:?}");
                assert_eq!(f.counters.link_transmissions, n as u64 - 1);
            }
        }
    }
}

/// The one-port dimension-order tree of the lecture notes, timed by hand: a node reached at
/// time T along dimension i continues in that direction at T+1, then serves each higher
/// dimension, farther direction first (ties downward), one send per slot.
fn one_port_reference(sizes: &[u32], root: &[u32]) -> u64 {
    let mut latest = 0;
    /// A node to serve: its coordinates, how it was reached (dimension, upward), when.
    struct Reached(Vec<u32>, Option<(usize, bool)>, u64);
    let mut stack = vec![Reached(root.to_vec(), None, 0)];
    while let Some(Reached(c, arrived, t)) = stack.pop() {
        latest = latest.max(t);
        let ahead = |dim: usize, up: bool| if up { sizes[dim] - 1 - c[dim] } else { c[dim] };
        let mut sends = Vec::new();
        let first = match arrived {
            None => 0,
            Some((i, up)) => {
                if ahead(i, up) > 0 {
                    sends.push((i, up));
                }
                i + 1
            }
        };
        for j in first..sizes.len() {
            let order = if ahead(j, true) > ahead(j, false) { [true, false] } else { [false, true] };
            for up in order {
                if ahead(j, up) > 0 {
                    sends.push((j, up));
                }
            }
        }
        for (k, &(j, up)) in sends.iter().enumerate() {
            let mut c2 = c.clone();
            c2[j] = if up { c[j] + 1 } else { c[j] - 1 };
            stack.push(Reached(c2, Some((j, up)), t + k as u64 + 1));
        }
    }
    latest
}

#[test]
fn snb_mesh_one_port_follows_the_farthest_first_schedule() {
    for (kind, sizes) in mesh_shapes() {
        let n: u32 = sizes.iter().product();
        let diameter: u64 = sizes.iter().map(|&k| k as u64 - 1).sum();
        let log2n = (n as u64).next_power_of_two().trailing_zeros() as u64;
        let mut spec = FabricSpec::ideal(kind.clone(), &sizes);
        spec.ports = PortModel::K(1);
        for root in 0..n {
            let c = coords(root, &sizes);
            let f = snb(&spec, root, Forwarding::Node);
            let t = f.counters.last_delivery;
            assert_eq!(t, one_port_reference(&sizes, &c), "{sizes:?} root {c:?}");
            assert!(t <= diameter.max(1), "notes' bound: at most the diameter");
            assert!(t >= ecc(&c, &sizes).max(log2n));
        }
    }
}

fn traffic_fabric(spec: &FabricSpec, pattern: Pattern, rate: f64, cycles: u64, seed: u64) -> Fabric {
    let t = TrafficSpec { pattern, rate, cycles, flits: spec.packet_flits, seed, hotspot: NodeId(0), hotspot_fraction: 0.3 };
    let n = spec.topology().nodes();
    let mut s = spec.clone();
    s.measure = Some(Window { from: cycles / 3, to: cycles, batches: 7 });
    Fabric::new(&s, Box::new(Traffic::new(t, n)))
}

/// What a run produced, minus anything that depends on the packet-table slot numbering.
fn fingerprint(f: &Fabric) -> (u64, u64, u64, u64, u64, Vec<u64>, Vec<u64>) {
    (
        f.counters.flit_hops,
        f.counters.link_transmissions,
        f.counters.last_delivery,
        f.counters.packets_delivered,
        f.now,
        f.latencies.hist.clone(),
        (0..f.output_ports()).map(|op| f.port_flits(op)).collect::<Vec<_>>(),
    )
}

/// A 5×4 wormhole mesh on the realistic router: 2 VCs, 4-flit packets, 4-flit buffers.
fn wormhole_mesh() -> FabricSpec {
    let mut spec = FabricSpec::ideal(TopologyKind::Mesh, &[5, 4]);
    spec.switching = Switching::Wormhole;
    spec.pipeline = Pipeline::REALISTIC;
    spec.vcs = 2;
    spec.packet_flits = 4;
    spec.buffer_flits = 4;
    spec
}

/// Results never depend on the order routers are visited.
#[test]
fn visiting_order_does_not_change_results() {
    let spec = wormhole_mesh();
    let base = {
        let mut f = traffic_fabric(&spec, Pattern::Uniform, 0.08, 1500, 3);
        assert_eq!(f.run(), Ending::Quiescent);
        fingerprint(&f)
    };
    for shuffle in 1..4 {
        let mut s = spec.clone();
        s.shuffle_seed = Some(shuffle);
        let mut f = traffic_fabric(&s, Pattern::Uniform, 0.08, 1500, 3);
        assert_eq!(f.run(), Ending::Quiescent);
        assert_eq!(fingerprint(&f), base, "shuffle {shuffle}");
    }
    let mnb = |shuffle: Option<u64>| {
        let mut s = FabricSpec::ideal(TopologyKind::Hypercube, &[6]);
        s.shuffle_seed = shuffle;
        let mut f = Fabric::new(&s, Box::new(MnbSbt::new(1, Forwarding::Node)));
        assert_eq!(f.run(), Ending::Quiescent);
        assert!(f.scoreboard.ok());
        fingerprint(&f)
    };
    assert_eq!(mnb(Some(9)), mnb(None));
}

/// Watching a run (the CLI's progress line) calls the watcher while the run goes on, sees
/// the fabric advance, and changes no result.
#[test]
fn watching_a_run_changes_nothing() {
    let spec = wormhole_mesh();
    let mut plain = traffic_fabric(&spec, Pattern::Uniform, 0.08, 1500, 3);
    assert_eq!(plain.run(), Ending::Quiescent);
    let mut watched = traffic_fabric(&spec, Pattern::Uniform, 0.08, 1500, 3);
    let mut seen = Vec::new();
    let ending = watched.run_watched(std::time::Duration::ZERO, |f| seen.push(f.now));
    assert_eq!(ending, Ending::Quiescent);
    assert_eq!(fingerprint(&watched), fingerprint(&plain));
    // The clock is read about every 10 ms after the first step, so a short run is seen at
    // least once.
    assert!(!seen.is_empty(), "watcher never called");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "the watcher saw the cycle go backwards: {seen:?}");
    assert!(*seen.last().unwrap() <= watched.now);
}

/// Every node broadcasting on its own binomial tree: everything delivered, N(N-1)
/// transmissions, no faster than Table 1's multinode-broadcast lower bound. Node-forwarded,
/// the N trees' N(N-1) edges are N(N-1) packets sent by the nodes; forwarded by
/// the routers (hardware multicast), every node sends one packet and the crossbars make the
/// copies, over the same N(N-1) links.
#[test]
fn mnb_sbt_delivers_everything() {
    for d in 1..=6u32 {
        for (ports, forwarding) in [
            (PortModel::All, Forwarding::Node),
            (PortModel::K(1), Forwarding::Node),
            (PortModel::All, Forwarding::Router),
            (PortModel::K(1), Forwarding::Router),
        ] {
            let mut s = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
            s.ports = ports;
            let mut f = Fabric::new(&s, Box::new(MnbSbt::new(1, forwarding)));
            assert_eq!(f.run(), Ending::Quiescent);
            assert!(f.scoreboard.ok(), "{:?}", f.scoreboard.problems);
            let n = 1u64 << d;
            assert_eq!(f.counters.link_transmissions, n * (n - 1));
            assert_eq!(f.counters.packets_delivered, n * (n - 1));
            let sent = if forwarding == Forwarding::Router { n } else { n * (n - 1) };
            assert_eq!(f.counters.packets_sent, sent, "d {d} {ports:?} {forwarding:?}");
            // One ejection channel takes one packet a cycle: N-1 cycles at least, however forwarded.
            let lower = if ports == PortModel::All { (n - 1).div_ceil(d as u64) } else { n - 1 };
            assert!(f.counters.last_delivery >= lower);
        }
    }
}

/// `mnb-sbt` on the 5-cube, every node's `flits`-flit packet replicated by the routers, with
/// `vcs` VCs of `buffer` flits and the multicast options `set` chooses: how the run ended.
fn replicated_mnb(switching: Switching, flits: u16, buffer: u16, vcs: u8, set: impl FnOnce(&mut FabricSpec)) -> (Ending, Fabric) {
    let mut s = FabricSpec::ideal(TopologyKind::Hypercube, &[5]);
    s.switching = switching;
    s.packet_flits = flits;
    s.buffer_flits = buffer;
    s.vcs = vcs;
    s.watchdog_cycles = 200;
    set(&mut s);
    let mut f = Fabric::new(&s, Box::new(MnbSbt::new(flits, Forwarding::Router)));
    let end = f.run();
    (end, f)
}

/// The first run deadlocks naming a wait-for cycle; the second delivers each of the 5-cube's
/// 32 broadcasts to the 31 other nodes once, each `flits` long over one link per delivery.
fn deadlocks_then_drains((end, f): (Ending, Fabric), (end2, g): (Ending, Fabric), flits: u64) {
    assert_eq!(end, Ending::Deadlock);
    assert!(f.deadlock.as_ref().unwrap().wait_for_cycle.len() >= 2);
    assert_eq!(end2, Ending::Quiescent, "{:?}", g.deadlock);
    assert!(g.scoreboard.ok(), "{:?}", g.scoreboard.problems);
    let n = 32u64;
    assert_eq!(g.counters.packets_delivered, n * (n - 1));
    assert_eq!(g.counters.link_transmissions, n * (n - 1));
    assert_eq!(g.counters.flit_hops, flits * n * (n - 1));
}

/// Router-replicated multi-flit broadcasts on the 5-cube (every node broadcasts a 2-flit
/// worm on its binomial tree, 3 VCs of 32 flits), replicated synchronously: when each
/// branch takes its output VC on its own, two worms in one router can each hold a branch the
/// other needs, and the run deadlocks; allocating every branch in one cycle or none, the same
/// run delivers every packet once.
#[test]
fn atomic_multicast_allocation_removes_the_deadlock_inside_a_router() {
    let run = |mva: router::MulticastVa| {
        replicated_mnb(Switching::Wormhole, 2, 32, 3, |s| {
            s.multicast_va = mva;
            s.replication = router::Replication::Sync;
        })
    };
    deadlocks_then_drains(run(router::MulticastVa::PerBranch), run(router::MulticastVa::Atomic), 2);
}

/// Virtual cut-through with buffers of one packet (5-cube, every node broadcasts a 4-flit
/// packet on its binomial tree, routers replicate, 1 VC × 4 flits): replicated
/// synchronously, a packet whose branch meets a full buffer stops its other branches while
/// holding them, and worms in neighbouring routers wait on each other; with a read pointer
/// per branch each branch drains the buffered packet on its own, the trees' channel order
/// (dimensions descending) has no cycle, and every packet is delivered once.
#[test]
fn asynchronous_replication_drains_what_synchronous_replication_deadlocks() {
    let run = |rep: router::Replication| replicated_mnb(Switching::VirtualCutThrough, 4, 4, 1, |s| s.replication = rep);
    deadlocks_then_drains(run(router::Replication::Sync), run(router::Replication::Async), 4);
}

/// Every deadlock the watchdog declares names a wait-for cycle, also when a VC in it holds
/// its output VCs or ejection channel mid-packet with nothing buffered, waiting for the rest
/// of its packet from upstream (router-replicated worms with per-branch allocation and
/// synchronous replication deadlock that way: on a one-port 2-cube each node's packet waits
/// for the ejection channel held by an empty VC whose tail is the other node's packet), and
/// under asynchronous replication, where a branch waits for credits for the flit at its own
/// position, not the front flit.
#[test]
fn every_deadlock_names_its_wait_for_cycle() {
    let (mut deadlocks, mut async_deadlocks) = (0, 0);
    for replication in [router::Replication::Sync, router::Replication::Async] {
        for d in 2..=3u32 {
            for switching in [Switching::Wormhole, Switching::VirtualCutThrough, Switching::StoreAndForward] {
                for (vcs, flits, buffer) in [(1, 2, 2), (2, 2, 2), (1, 2, 3), (1, 3, 4), (2, 4, 4), (1, 2, 1)] {
                    if switching != Switching::Wormhole && buffer < flits {
                        continue;
                    }
                    // The fixed arbiter leaves store-and-forward heads waiting for their tails
                    // from upstream in the cycle (with 2-flit packets in 3-flit buffers).
                    for (ports, arbiter) in [
                        (PortModel::All, ArbiterPolicy::Key),
                        (PortModel::K(1), ArbiterPolicy::Key),
                        (PortModel::All, ArbiterPolicy::Fixed),
                    ] {
                        let mut s = FabricSpec::ideal(TopologyKind::Hypercube, &[d]);
                        s.arbiter = arbiter;
                        s.switching = switching;
                        s.packet_flits = flits;
                        s.buffer_flits = buffer;
                        s.vcs = vcs;
                        s.ports = ports;
                        s.watchdog_cycles = 50;
                        s.multicast_va = router::MulticastVa::PerBranch;
                        s.replication = replication;
                        let mut f = Fabric::new(&s, Box::new(MnbSbt::new(flits, Forwarding::Router)));
                        if f.run() == Ending::Deadlock {
                            deadlocks += 1;
                            async_deadlocks += (replication == router::Replication::Async) as u32;
                            let cycle = &f.deadlock.as_ref().unwrap().wait_for_cycle;
                            assert!(
                                cycle.len() >= 2,
                                "d {d} {switching:?} {replication:?} {vcs} VCs {flits}/{buffer} {ports:?} {arbiter:?}: {cycle:?}"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(deadlocks >= 10, "the grid deadlocks often with the old router ({deadlocks})");
    assert!(async_deadlocks >= 1, "no deadlock under asynchronous replication ({async_deadlocks})");
}

/// A wormhole ring without dateline VCs deadlocks under saturating tornado traffic and the
/// watchdog reports the wait-for cycle; with the dateline nothing is lost.
#[test]
fn torus_ring_deadlocks_without_dateline_and_not_with_it() {
    let run = |avoid: bool| {
        let mut s = FabricSpec::ideal(TopologyKind::Torus, &[8]);
        s.switching = Switching::Wormhole;
        s.packet_flits = 8;
        s.buffer_flits = 2;
        s.vcs = if avoid { 2 } else { 1 };
        s.deadlock_avoidance = avoid;
        s.watchdog_cycles = 200;
        let mut f = traffic_fabric(&s, Pattern::Tornado, 1.0, 400, 1);
        let end = f.run();
        (end, f)
    };
    let (end, f) = run(false);
    assert_eq!(end, Ending::Deadlock);
    let d = f.deadlock.as_ref().unwrap();
    assert!(d.wait_for_cycle.len() >= 2, "{d:?}");
    assert!(d.flits_stuck > 0);
    let (end, f) = run(true);
    assert_eq!(end, Ending::Quiescent);
    assert!(f.scoreboard.ok(), "{:?}", f.scoreboard.counts());
}

fn arb_spec() -> impl Strategy<Value = FabricSpec> {
    let topo = prop_oneof![
        (1u32..=5).prop_map(|d| (TopologyKind::Hypercube, vec![d])),
        (2u32..=9).prop_map(|n| (TopologyKind::Linear, vec![n])),
        proptest::collection::vec(1u32..=5, 1..=3)
            .prop_filter("2+ nodes", |v| v.iter().product::<u32>() >= 2)
            .prop_map(|v| (TopologyKind::Mesh, v)),
        proptest::collection::vec(2u32..=5, 1..=2).prop_map(|v| (TopologyKind::Torus, v)),
    ];
    (topo, 0usize..3, 1u16..=4, 0u16..=3, 1u8..=3, any::<bool>(), any::<bool>(), 0u8..=1).prop_map(
        |((kind, sizes), sw, flits, extra, vcs, realistic, one_port, nu)| {
            let mut s = FabricSpec::ideal(kind.clone(), &sizes);
            s.switching = [Switching::StoreAndForward, Switching::VirtualCutThrough, Switching::Wormhole][sw];
            s.packet_flits = flits;
            s.buffer_flits = if s.switching == Switching::Wormhole { 1 + extra } else { flits + extra };
            s.vcs = if kind == TopologyKind::Torus { vcs.max(2) } else { vcs };
            s.pipeline = if realistic { Pipeline::REALISTIC } else { Pipeline::IDEAL };
            s.ports = if one_port { PortModel::K(1) } else { PortModel::All };
            s.nu = nu;
            s.watchdog_cycles = 5_000;
            s
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Conservation: whatever the topology, switching, buffers and router, every packet of
    /// random traffic is delivered exactly once to its destination, nothing deadlocks, and
    /// every flit injected is ejected.
    #[test]
    fn traffic_is_conserved(spec in arb_spec(), rate in 0.01f64..0.3, seed in 0u64..1000) {
        prop_assert!(spec.validate().is_ok(), "{:?}", spec.validate());
        let mut f = traffic_fabric(&spec, Pattern::Uniform, rate, 300, seed);
        let end = f.run();
        prop_assert_eq!(end, Ending::Quiescent, "{:?}", f.deadlock);
        let c = f.scoreboard.counts();
        prop_assert!(f.scoreboard.ok(), "{:?} {:?}", c, f.scoreboard.problems);
        prop_assert_eq!(c.deliveries, f.counters.packets_sent);
        prop_assert_eq!(f.counters.flits_injected, f.counters.flits_ejected);
        prop_assert_eq!(f.routers.flits, 0);
        prop_assert_eq!(f.packets.live(), 0);
    }

    /// A run split between threads gives the one-thread results in any configuration, any
    /// router pipeline (parts meet every cycle or every other), runs cut short and watchdogs
    /// that fire: counters, latencies, per-link flits, scoreboard, the ending and the clock,
    /// and per input VC the high-water mark, the occupancy histogram and the stall counts.
    #[test]
    fn split_runs_match_one_thread(
        spec in arb_spec(),
        rate in 0.01f64..0.5,
        seed in 0u64..1000,
        parts in 2usize..=4,
        (rc, va, link, credit) in (0u32..=2, 0u32..=1, 1u32..=3, 0u32..=2),
        max_cycles in proptest::option::of(20u64..400),
        watchdog in proptest::option::of(2u64..40),
    ) {
        let mut spec = spec;
        spec.pipeline = Pipeline { rc_delay: rc, va_delay: va, link_latency: link, credit_delay: credit, inject_latency: rc.min(1) };
        if let Some(m) = max_cycles {
            spec.max_cycles = m;
        }
        if let Some(w) = watchdog {
            spec.watchdog_cycles = w;
        }
        let n = spec.topology().nodes();
        let parts = parts.min(n);
        let mut one = traffic_fabric(&spec, Pattern::Uniform, rate, 300, seed);
        let e1 = one.run();
        let (split, e2) = fabric::kernel::split::run_split(parts, || traffic_fabric(&spec, Pattern::Uniform, rate, 300, seed));
        prop_assert_eq!(e1, e2);
        prop_assert_eq!(fingerprint(&one), fingerprint(&split));
        prop_assert_eq!(one.scoreboard.counts(), split.scoreboard.counts());
        prop_assert_eq!(one.counters.flits_injected, split.counters.flits_injected);
        prop_assert_eq!(fabric::measure::summary(&one), fabric::measure::summary(&split));
        let per_vc = |f: &Fabric| {
            let r = &f.routers;
            (0..r.input_vcs()).map(|iv| (r.max_occupancy(iv), r.occupancy_histogram(iv, f.now), r.stall_credit(iv), r.stall_arbitration(iv))).collect::<Vec<_>>()
        };
        prop_assert_eq!(per_vc(&one), per_vc(&split));
        prop_assert_eq!(one.deadlock.map(|d| (d.cycle, d.flits_stuck, d.wait_for_cycle)), split.deadlock.map(|d| (d.cycle, d.flits_stuck, d.wait_for_cycle)));
    }

    /// Broadcasts, node- or router-forwarded, reach every node exactly once in any configuration.
    #[test]
    fn broadcast_is_conserved(spec in arb_spec(), root_pick in any::<u32>(), router_fwd in any::<bool>()) {
        let n = spec.topology().nodes() as u32;
        let fwd = if router_fwd { Forwarding::Router } else { Forwarding::Node };
        let one_port = spec.ports == PortModel::K(1);
        let mut f = Fabric::new(&spec, Box::new(Snb::new(NodeId(root_pick % n), fwd, one_port, spec.packet_flits)));
        prop_assert_eq!(f.run(), Ending::Quiescent);
        prop_assert!(f.scoreboard.ok(), "{:?} {:?}", f.scoreboard.counts(), f.scoreboard.problems);
        prop_assert_eq!(f.counters.link_transmissions, n as u64 - 1);
    }
}

/// Does input VC `a` wait for input VC `b`, judged from what the fabric shows of the
/// hardware (the VC states, owners of output and ejection VCs, credits, and the topology's
/// routes with their dateline classes), not from the router's own rules: `b` holds a VC
/// that a branch of `a`'s packet lacking one may take (a broadcast branch only in its own
/// dateline class), or is the full buffer downstream of a granted branch of `a`, or holds
/// an ejection VC that `a`'s packet waits for, or, `a` being empty mid-packet, `b` holds
/// the output VC upstream that sends the rest of it (wormhole switching only).
fn waits_on(f: &Fabric, a: usize, b: usize) -> bool {
    let r = &f.routers;
    let v = r.vcs();
    let c = r.vc_view(a);
    let (node, p, _) = r.ivc_location(a);
    let ip = a / v;
    let Some(front) = c.front else {
        return f.upstream(ip).is_some_and(|up| r.output_owner(up, a % v) == Some(b));
    };
    // Dateline classes on the torus: the lower half of the VCs, and the upper half.
    let low = (1u16 << (v / 2)) - 1;
    let class_mask = [low, ((1u32 << v) - 1) as u16 & !low];
    let pkt = f.packets.get(front.packet);
    let mask_of = |o: usize| -> u16 {
        if pkt.header.kind == router::RouteKind::Broadcast {
            let hop = f.topo.route_broadcast(node, router::PortId(p as u8), pkt.dest(), pkt.header.span);
            class_mask[hop.high.contains(router::PortSet::port(o)) as usize]
        } else {
            class_mask[f.topo.route_unicast(node, pkt.src(), pkt.dest()).class as usize]
        }
    };
    for o in c.pending.network().net_ports() {
        let op = r.port_index(node, o);
        if c.granted.has_port(o) {
            if let (Some(ovc), Some(down)) = (r.output_vc_of(op, a), f.downstream(op))
                && down * v + ovc == b
                && r.credits(op, ovc) == 0
            {
                return true;
            }
        } else if (0..v).any(|vc| mask_of(o) & (1 << vc) != 0 && r.output_owner(op, vc) == Some(b)) {
            return true;
        }
    }
    c.pending.contains(router::PortSet::LOCAL)
        && !c.granted.contains(router::PortSet::LOCAL)
        && (0..r.nic_channels()).any(|ch| (0..r.ejection_vcs()).any(|evc| r.ejection_owner(node, ch, evc) == Some(b)))
}

/// Router-replicated broadcasts on a 4-node torus ring with dateline VCs (2 VCs: a
/// broadcast's branch that crosses the dateline takes VC 1, the others VC 0), wormhole
/// switching with per-branch VC allocation, replicated synchronously and asynchronously: the
/// runs that deadlock (two worms each holding a branch's VC the other needs, in one router
/// or around the ring) name a wait-for cycle, and each VC in it really waits for the next,
/// judged from the VC states and the topology's own dateline classes; a branch that lacks
/// its VC waits only for the VCs of its own class.
#[test]
fn torus_broadcast_deadlocks_name_real_waits_in_each_branchs_dateline_class() {
    let mut deadlocks = 0;
    for replication in [router::Replication::Sync, router::Replication::Async] {
        for (flits, buffer) in [(2, 1), (4, 2), (3, 4)] {
            for ports in [PortModel::All, PortModel::K(1)] {
                for (unicast, broadcast) in [(0.0, 0.1), (0.0, 0.3), (0.5, 0.2)] {
                    for seed in 1..=2 {
                        let mut s = FabricSpec::ideal(TopologyKind::Torus, &[4]);
                        s.switching = Switching::Wormhole;
                        s.packet_flits = flits;
                        s.buffer_flits = buffer;
                        s.vcs = 2;
                        s.ports = ports;
                        s.watchdog_cycles = 50;
                        s.multicast_va = router::MulticastVa::PerBranch;
                        s.replication = replication;
                        let t = TrafficSpec {
                            pattern: Pattern::Uniform,
                            rate: unicast,
                            cycles: 200,
                            flits,
                            seed,
                            hotspot: NodeId(0),
                            hotspot_fraction: 0.3,
                        };
                        let traffic = Traffic::new(t, 4).with_broadcasts(broadcast, Forwarding::Router);
                        let mut f = Fabric::new(&s, Box::new(traffic));
                        if f.run() != Ending::Deadlock {
                            continue;
                        }
                        deadlocks += 1;
                        let at = format!("{replication:?} {flits}/{buffer} {ports:?} rates {unicast}/{broadcast} seed {seed}");
                        let cycle = &f.deadlock.as_ref().unwrap().wait_for_cycle;
                        assert!(cycle.len() >= 2, "{at}: {cycle:?}");
                        let iv = |name: &String| (0..f.routers.input_vcs()).find(|&iv| f.ivc_name(iv) == *name).unwrap();
                        for (k, a) in cycle.iter().enumerate() {
                            let b = &cycle[(k + 1) % cycle.len()];
                            assert!(waits_on(&f, iv(a), iv(b)), "{at}: {a} does not wait for {b} in {cycle:?}");
                        }
                    }
                }
            }
        }
    }
    assert!(deadlocks >= 10, "the grid deadlocks often ({deadlocks})");
}
