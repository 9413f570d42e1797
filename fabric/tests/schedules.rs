//! One evaluator, many schedules: random fabrics with random pipeline delays (route
//! computation, VC allocation, link, credit return, injection), switching modes, arbiters,
//! port models, link widths (2^nu) and workloads (synthetic traffic, and broadcasts the
//! routers replicate under every replication and multicast allocation mode), run to
//! quiescence, to a deadlock or to a cycle limit, must end the same way at the same cycle
//! with the same counters, latencies, buffer statistics (every VC's occupancy histogram,
//! high-water mark and stall cycles), link counts, deadlock report and router state, whether
//! the kernel visits only the routers with work (on one thread or split between two or
//! three), every router in every cycle, or the routers with work in a random order.

use fabric::algorithms::Forwarding;
use fabric::algorithms::mnb_sbt::MnbSbt;
use fabric::algorithms::traffic::{Pattern, Traffic, TrafficSpec};
use fabric::*;
use proptest::prelude::*;
use router::{ArbiterPolicy, InjectionVc, MulticastVa, NodeId, Pipeline, Replication, Switching, VaPolicy};

/// Everything a run leaves that the reports read, and the routers' state at the end.
fn state(f: &Fabric, ending: Ending) -> String {
    let r = &f.routers;
    let end = f.end();
    let mut s = format!(
        "{ending:?} end {end} counters {:?} latencies {:?} {:?} {} {} score {:?} {:?} queue {} deadlock {:?} measure {:?}\n",
        f.counters,
        f.latencies.hist,
        f.latencies.far,
        f.latencies.count,
        f.latencies.sum,
        f.scoreboard.counts(),
        f.scoreboard.problems,
        f.nics.max_queue,
        f.deadlock,
        fabric::measure::summary(f)
    );
    for iv in 0..r.input_vcs() {
        let c = r.vc_view(iv);
        // Packet ids are table slots (another part's table in a split run): not compared.
        let front = c.front.map(|f| (f.seq, f.flags));
        s += &format!(
            "vc {iv}: hist {:?} held {} max {} stalls {} {} occ {} {:?} {:?} {:?} {:?} front {:?}\n",
            r.occupancy_histogram(iv, end),
            r.held_max(iv, end),
            r.max_occupancy(iv),
            r.stall_credit(iv),
            r.stall_arbitration(iv),
            c.occupancy,
            c.stage,
            c.route,
            c.granted,
            c.pending,
            front
        );
    }
    for op in 0..f.output_ports() {
        let v = r.vcs();
        let owners: Vec<_> = (0..v).map(|vc| r.output_owner(op, vc)).collect();
        // With the credits on their way (an observed run goes on until they are back).
        let credits: Vec<_> = (0..v).map(|vc| r.credits_at(op, vc, u64::MAX)).collect();
        s += &format!("out {op}: flits {} owners {owners:?} credits {credits:?}\n", f.port_flits(op));
    }
    s
}

/// A probe that reads what a waveform writer reads every cycle (and checks that every
/// departure it is shown is a flit that went somewhere).
#[derive(Default)]
struct Watcher {
    departures: u64,
}

impl fabric::probe::Probe for Watcher {
    fn cycle(&mut self, v: &fabric::probe::CycleView<'_>) {
        self.departures += v.departures.len() as u64;
        let r = &v.fabric.routers;
        for n in 0..v.fabric.topo.nodes() {
            let _ = (r.may_change(NodeId(n as u32)), v.fabric.is_active(NodeId(n as u32)));
        }
        assert_eq!(self.departures, v.fabric.counters.flit_hops, "cycle {}: departures shown", v.t);
    }
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// What the nodes run: synthetic traffic, or every node broadcasting on its spanning
/// binomial tree with the routers replicating.
#[derive(Clone, Debug)]
enum Load {
    Traffic { pattern: Pattern, rate: f64, cycles: u64, seed: u64 },
    Broadcast { replication: Replication, va: MulticastVa },
}

#[derive(Clone, Debug)]
struct Case {
    kind: TopologyKind,
    sizes: Vec<u32>,
    switching: Switching,
    pipeline: Pipeline,
    arbiter: ArbiterPolicy,
    vcs: u8,
    buffer: u16,
    flits: u16,
    ports: PortModel,
    dateline: bool,
    startup: u64,
    copy: u64,
    nu: u8,
    /// Injection VC choice, ejection VCs, output VC offer order.
    injection: InjectionVc,
    ejection_vcs: Option<u8>,
    va_policy: VaPolicy,
    load: Load,
    max_cycles: u64,
    /// How often the routers rebase their in-line histograms.
    hist_span: Option<u64>,
}

fn case() -> impl Strategy<Value = Case> {
    let topology = prop_oneof![
        (1u32..=5).prop_map(|d| (TopologyKind::Hypercube, vec![d])),
        (2u32..=9).prop_map(|n| (TopologyKind::Linear, vec![n])),
        proptest::collection::vec(2u32..=5, 1..=3).prop_map(|s| (TopologyKind::Mesh, s)),
        proptest::collection::vec(3u32..=6, 1..=2).prop_map(|s| (TopologyKind::Torus, s)),
    ];
    let pipeline = (0u32..=3, 0u32..=3, 1u32..=4, 0u32..=3, 0u32..=3).prop_map(|(rc, va, link, credit, inject)| Pipeline {
        rc_delay: rc,
        va_delay: va,
        link_latency: link,
        credit_delay: credit,
        inject_latency: inject,
    });
    let switching = proptest::sample::select(vec![Switching::StoreAndForward, Switching::VirtualCutThrough, Switching::Wormhole]);
    let arbiter =
        proptest::sample::select(vec![ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key]);
    let pattern = proptest::sample::select(vec![Pattern::Uniform, Pattern::Hotspot, Pattern::BitComplement, Pattern::Tornado]);
    let traffic = (pattern, prop_oneof![Just(0.01), Just(0.05), Just(0.15), Just(0.5)], 20u64..=400, 0u64..100)
        .prop_map(|(pattern, rate, cycles, seed)| Load::Traffic { pattern, rate, cycles, seed });
    let broadcast = (
        proptest::sample::select(vec![Replication::Async, Replication::Sync]),
        proptest::sample::select(vec![MulticastVa::Atomic, MulticastVa::PerBranch]),
    )
        .prop_map(|(replication, va)| Load::Broadcast { replication, va });
    let load = prop_oneof![3 => traffic, 1 => broadcast];
    (
        topology,
        switching,
        pipeline,
        arbiter,
        (1u8..=3, 1u16..=6, 1u16..=4),
        (prop_oneof![Just(PortModel::K(1)), Just(PortModel::All), Just(PortModel::K(2))], any::<bool>()),
        (0u64..=4, 0u64..=2, prop_oneof![4 => Just(0u8), 1 => 1u8..=2]),
        (
            proptest::sample::select(vec![InjectionVc::RoundRobin, InjectionVc::Vc0]),
            proptest::option::of(1u8..=3),
            proptest::sample::select(vec![VaPolicy::RoundRobin, VaPolicy::Lowest, VaPolicy::MostCredits]),
        ),
        load,
        (prop_oneof![Just(u64::MAX / 4), 1u64..=300], proptest::option::of(1u64..60)),
    )
        .prop_map(
            |(
                (kind, sizes),
                switching,
                pipeline,
                arbiter,
                (vcs, buffer, flits),
                (ports, dateline),
                (startup, copy, nu),
                (injection, ejection_vcs, va_policy),
                load,
                (max_cycles, hist_span),
            )| Case {
                kind,
                sizes,
                switching,
                pipeline,
                arbiter,
                vcs,
                buffer,
                flits,
                ports,
                dateline,
                startup,
                copy,
                nu,
                injection,
                ejection_vcs,
                va_policy,
                load,
                max_cycles,
                hist_span,
            },
        )
}

impl Case {
    fn spec(&self) -> FabricSpec {
        let mut s = FabricSpec::ideal(self.kind.clone(), &self.sizes);
        s.switching = self.switching;
        s.pipeline = self.pipeline;
        s.arbiter = self.arbiter;
        s.vcs = self.vcs;
        s.buffer_flits = self.buffer;
        s.packet_flits = self.flits;
        s.ports = self.ports;
        s.deadlock_avoidance = self.dateline;
        s.startup_cycles = self.startup;
        s.copy_cycles_per_flit = self.copy;
        s.nu = self.nu;
        (s.injection, s.ejection_vcs, s.va_policy) = (self.injection, self.ejection_vcs, self.va_policy);
        s.watchdog_cycles = 150;
        s.max_cycles = self.max_cycles;
        match self.load {
            Load::Traffic { cycles, .. } => s.measure = Some(Window { from: cycles / 4, to: cycles, batches: 4 }),
            Load::Broadcast { replication, va } => (s.replication, s.multicast_va) = (replication, va),
        }
        s.hist_span = self.hist_span;
        s
    }

    /// The run under `schedule` (routers visited in a shuffled order if `shuffle`), split
    /// between `parts` threads: how it ended, and its state.
    fn run(&self, schedule: Schedule, shuffle: bool, parts: usize) -> (Ending, String) {
        if parts > 1 {
            let (f, ending) = fabric::kernel::split::run_split(parts, || self.build(schedule, false));
            return (ending.clone(), state(&f, ending));
        }
        let mut f = self.build(schedule, shuffle);
        let ending = f.run();
        (ending.clone(), state(&f, ending))
    }

    /// The run with a probe attached (as a waveform writer is): the routers log what probes
    /// read, credits become visible at the end of their cycle, and the run goes on until
    /// the last credit is back, without counting those cycles.
    fn run_observed(&self) -> (Ending, String) {
        let mut f = self.build(Schedule::Busy, false);
        f.add_probe(Box::new(Watcher::default()));
        let ending = f.run();
        (ending.clone(), state(&f, ending))
    }

    fn build(&self, schedule: Schedule, shuffle: bool) -> Fabric {
        let mut spec = self.spec();
        spec.schedule = schedule;
        spec.shuffle_seed = shuffle.then_some(5);
        let topo = spec.topology();
        match self.load {
            Load::Traffic { pattern, rate, cycles, seed } => {
                let t = TrafficSpec { pattern, rate, cycles, flits: self.flits, seed, hotspot: NodeId(0), hotspot_fraction: 0.3 };
                Fabric::new(&spec, Box::new(Traffic::new(t, topo.nodes())))
            }
            Load::Broadcast { .. } => Fabric::new(&spec, Box::new(MnbSbt::new(self.flits, Forwarding::Router))),
        }
    }

    /// One of size `size` with key arbitration, 2 VCs of 4 flits, 2-flit packets, all-port
    /// NICs and no start-up costs, run to its end.
    fn plain(kind: TopologyKind, size: u32, switching: Switching, pipeline: Pipeline, load: Load) -> Case {
        Case {
            kind,
            sizes: vec![size],
            switching,
            pipeline,
            arbiter: ArbiterPolicy::Key,
            vcs: 2,
            buffer: 4,
            flits: 2,
            ports: PortModel::All,
            dateline: false,
            startup: 0,
            copy: 0,
            nu: 0,
            injection: InjectionVc::RoundRobin,
            ejection_vcs: None,
            va_policy: VaPolicy::RoundRobin,
            load,
            max_cycles: u64::MAX / 4,
            hist_span: None,
        }
    }

    fn valid(&self) -> bool {
        let spec = self.spec();
        let load_ok = match self.load {
            Load::Traffic { pattern, .. } => pattern.check(&spec.topology()).is_ok(),
            Load::Broadcast { .. } => self.kind == TopologyKind::Hypercube,
        };
        spec.validate().is_ok() && load_ok && (self.kind != TopologyKind::Torus || !self.dateline || self.vcs >= 2)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_schedule_leaves_the_same_state(c in case(), parts in 2usize..=3) {
        if !c.valid() {
            return Ok(());
        }
        let (end_busy, busy) = c.run(Schedule::Busy, false, 1);
        // SCHEDULES_SHOW_RUNS=1 lists the runs (to see what the strategy covers).
        if std::env::var_os("SCHEDULES_SHOW_RUNS").is_some() {
            eprintln!("run: {:?} {:?} {:?} lines {}", end_busy, c.kind, c.load, busy.lines().count());
        }
        let mut others = vec![
            ("all", c.run(Schedule::All, false, 1)),
            ("shuffled", c.run(Schedule::Busy, true, 1)),
            ("observed", c.run_observed()),
        ];
        // Split between threads: programs that allow it.
        if parts <= c.spec().topology().nodes() && matches!(c.load, Load::Traffic { .. }) {
            others.push(("split", c.run(Schedule::Busy, false, parts)));
        }
        for (name, (end, other)) in others {
            prop_assert_eq!(&end, &end_busy, "{}", name);
            if other != busy {
                let first = busy.lines().zip(other.lines()).find(|(a, b)| a != b);
                prop_assert!(false, "{:?}\n{name}: first difference:\n busy:  {:?}\n {name}: {:?}", c, first.map(|p| p.0), first.map(|p| p.1));
            }
        }
    }
}

/// A wormhole ring without its dateline VCs deadlocks under every schedule, at the same
/// cycle, naming the same wait-for cycle.
#[test]
fn a_deadlock_is_found_and_reported_the_same_way() {
    let c = Case {
        vcs: 1,
        buffer: 2,
        flits: 8,
        ports: PortModel::K(1),
        hist_span: Some(7),
        ..Case::plain(
            TopologyKind::Torus,
            8,
            Switching::Wormhole,
            Pipeline::REALISTIC,
            Load::Traffic { pattern: Pattern::Tornado, rate: 0.3, cycles: 2000, seed: 1 },
        )
    };
    let (end, busy) = c.run(Schedule::Busy, false, 1);
    assert_eq!(end, Ending::Deadlock);
    assert!(busy.contains("wait_for_cycle: [\"n"), "{busy}");
    for (schedule, shuffle, parts) in
        [(Schedule::All, false, 1), (Schedule::Busy, true, 1), (Schedule::Busy, false, 2), (Schedule::Busy, false, 3)]
    {
        let (e, other) = c.run(schedule, shuffle, parts);
        assert_eq!(e, Ending::Deadlock);
        assert_eq!(other, busy, "{schedule:?} shuffled {shuffle} {parts} parts");
    }
}

/// A fabric large enough to prefetch (more than 128 routers), with links of one cycle (the
/// stage that sends a flit also writes it into its buffer) and without: every schedule,
/// observed or not, split or not, leaves the same state, under load and with a broadcast
/// the routers replicate, stopped in mid-flight by the cycle limit and run to the end.
#[test]
fn a_large_fabric_leaves_the_same_state_under_every_schedule() {
    for (pipeline, load, max_cycles) in [
        (Pipeline::IDEAL, Load::Traffic { pattern: Pattern::Uniform, rate: 0.3, cycles: 120, seed: 3 }, u64::MAX / 4),
        (Pipeline::IDEAL, Load::Traffic { pattern: Pattern::Uniform, rate: 0.3, cycles: 120, seed: 4 }, 77),
        (Pipeline::REALISTIC, Load::Traffic { pattern: Pattern::Uniform, rate: 0.2, cycles: 120, seed: 5 }, u64::MAX / 4),
        (Pipeline::IDEAL, Load::Broadcast { replication: Replication::Sync, va: MulticastVa::Atomic }, u64::MAX / 4),
    ] {
        let c = Case { max_cycles, ..Case::plain(TopologyKind::Hypercube, 8, Switching::StoreAndForward, pipeline, load) };
        assert!(c.valid(), "{c:?}");
        let (end, busy) = c.run(Schedule::Busy, false, 1);
        let mut others = vec![("all", c.run(Schedule::All, false, 1)), ("observed", c.run_observed())];
        if matches!(c.load, Load::Traffic { .. }) {
            others.push(("split", c.run(Schedule::Busy, false, 2)));
        }
        for (name, (e, other)) in others {
            assert_eq!(e, end, "{name} {c:?}");
            if other != busy {
                let first = busy.lines().zip(other.lines()).find(|(a, b)| a != b);
                panic!("{c:?}\n{name}: first difference:\n busy: {:?}\n {name}: {:?}", first.map(|p| p.0), first.map(|p| p.1));
            }
        }
    }
}
