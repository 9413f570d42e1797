//! The event kernel against the scan kernel, state by state: random fabrics with random
//! pipeline delays (route computation, VC allocation, link, credit return, injection), run
//! to quiescence, to a deadlock or to a cycle limit on one thread or split between two or
//! three, must end the same way at the same cycle with the same counters, latencies, buffer
//! statistics (every VC's occupancy histogram, high-water mark and stall cycles), link
//! counts, deadlock report and router state.

use fabric::algorithms::traffic::{Pattern, Traffic, TrafficSpec};
use fabric::*;
use proptest::prelude::*;
use router::{ArbiterPolicy, NodeId, Pipeline, Switching};

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
    for iv in 0..r.inputs.ctl.len() {
        let c = &r.inputs.ctl[iv];
        let flits: Vec<_> = (0..c.len).map(|k| r.inputs.entry(iv, k).flit).map(|f| (f.seq, f.flags)).collect();
        s += &format!(
            "vc {iv}: hist {:?} held {} max {} stalls {} {} len {} {:?} {:?} {:?} {:?} ovc {} sa {} flits {:?}\n",
            r.inputs.occupancy_histogram(iv, end),
            r.inputs.held_max(iv, end),
            r.inputs.max_len[iv],
            r.inputs.stall_credit[iv],
            r.inputs.stall_arb[iv],
            c.len,
            c.stage,
            c.route,
            c.granted,
            c.pending,
            c.ovc,
            c.sa_ready,
            flits
        );
    }
    for op in 0..f.output_ports() {
        let v = r.vcs();
        let owners: Vec<_> = (0..v).map(|vc| r.outputs.owner[op * v + vc]).collect();
        let credits: Vec<_> = (0..v).map(|vc| r.credits_at(op, vc, end)).collect();
        s += &format!("out {op}: flits {} owners {owners:?} credits {credits:?}\n", f.port_flits(op));
    }
    s
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
    pattern: Pattern,
    rate: f64,
    cycles: u64,
    seed: u64,
    max_cycles: u64,
    /// How often the event kernel rebases its in-line histograms.
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
    (
        topology,
        switching,
        pipeline,
        arbiter,
        (1u8..=3, 1u16..=6, 1u16..=4),
        (prop_oneof![Just(PortModel::K(1)), Just(PortModel::All), Just(PortModel::K(2))], any::<bool>()),
        (0u64..=4, 0u64..=2),
        (pattern, prop_oneof![Just(0.01), Just(0.05), Just(0.15), Just(0.5)], 20u64..=400, 0u64..100),
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
                (startup, copy),
                (pattern, rate, cycles, seed),
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
                pattern,
                rate,
                cycles,
                seed,
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
        s.watchdog_cycles = 150;
        s.max_cycles = self.max_cycles;
        s.measure = Some(Window { from: self.cycles / 4, to: self.cycles, batches: 5 });
        s.event_hist_span = self.hist_span;
        s
    }

    /// The run on `kernel`, split between `parts` threads: how it ended, and its state.
    fn run(&self, kernel: KernelChoice, parts: usize) -> (Ending, String, &'static str) {
        if parts > 1 {
            let (f, ending) = fabric::kernel::split::run_split(parts, || self.build(kernel));
            return (ending.clone(), state(&f, ending), f.kernel_used);
        }
        let mut f = self.build(kernel);
        let ending = f.run();
        (ending.clone(), state(&f, ending), f.kernel_used)
    }

    fn build(&self, kernel: KernelChoice) -> Fabric {
        let mut spec = self.spec();
        spec.kernel = kernel;
        let topo = spec.topology();
        let t = TrafficSpec {
            pattern: self.pattern,
            rate: self.rate,
            cycles: self.cycles,
            flits: self.flits,
            seed: self.seed,
            hotspot: NodeId(0),
            hotspot_fraction: 0.3,
        };
        Fabric::new(&spec, Box::new(Traffic::new(t, topo.nodes())))
    }

    fn valid(&self) -> bool {
        let spec = self.spec();
        spec.validate().is_ok()
            && self.pattern.check(&spec.topology()).is_ok()
            && (self.kind != TopologyKind::Torus || !self.dateline || self.vcs >= 2)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn both_kernels_leave_the_same_state(c in case(), parts in 1usize..=3) {
        if !c.valid() || parts > c.spec().topology().nodes() {
            return Ok(());
        }
        let (end_scan, scan, k) = c.run(KernelChoice::Scan, 1);
        prop_assert_eq!(k, "scan");
        // The event kernel on one thread, or split between threads.
        let (end_event, event, k) = c.run(KernelChoice::Event, parts);
        prop_assert_eq!(k, "event");
        // KERNELS_SHOW_RUNS=1 lists the runs (to see what the strategy covers).
        if std::env::var_os("KERNELS_SHOW_RUNS").is_some() {
            eprintln!("run: {:?} {:?} lines {}", end_scan, c.kind, scan.lines().count());
        }
        prop_assert_eq!(end_event, end_scan);
        if event != scan {
            let first = scan.lines().zip(event.lines()).find(|(a, b)| a != b);
            prop_assert!(false, "{:?}\nfirst difference:\n scan:  {:?}\n event: {:?}", c, first.map(|p| p.0), first.map(|p| p.1));
        }
    }
}

/// A wormhole ring without its dateline VCs deadlocks on either kernel, at the same cycle,
/// naming the same wait-for cycle.
#[test]
fn a_deadlock_is_found_and_reported_the_same_way() {
    let c = Case {
        kind: TopologyKind::Torus,
        sizes: vec![8],
        switching: Switching::Wormhole,
        pipeline: Pipeline::REALISTIC,
        arbiter: ArbiterPolicy::Key,
        vcs: 1,
        buffer: 2,
        flits: 8,
        ports: PortModel::K(1),
        dateline: false,
        startup: 0,
        copy: 0,
        pattern: Pattern::Tornado,
        rate: 0.3,
        cycles: 2000,
        seed: 1,
        max_cycles: u64::MAX / 4,
        hist_span: Some(7),
    };
    let (end_scan, scan, _) = c.run(KernelChoice::Scan, 1);
    assert_eq!(end_scan, Ending::Deadlock);
    for parts in [1, 2, 3] {
        let (end_event, event, k) = c.run(KernelChoice::Event, parts);
        assert_eq!(k, "event");
        assert_eq!(end_event, Ending::Deadlock);
        assert_eq!(event, scan, "{parts} parts");
    }
}
