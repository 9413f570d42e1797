//! The program a configuration runs, its bounds, and the timings the synchronous
//! algorithms measure on the configured router.

use super::*;

/// Build the program and its bounds for a configuration.
pub fn program(cfg: &Config) -> (Box<dyn Program>, Bounds) {
    use fabric::algorithms::{accumulate::Accumulate, mnb, scatter, total_exchange, wormhole};
    let topo = cfg.spec().topology();
    let one_port = cfg.port_model == PortModel::K(1);
    let channels = cfg.port_model.limit();
    let d = topo.ndims() as u32;
    let l = cfg.packet_flits;
    match &cfg.workload {
        Workload::Algorithm { name, forwarding, root, kbcast, pmnb, dynamic, .. } => {
            let root = NodeId(*root);
            match name.as_str() {
                "pmnb-1" | "pmnb-2" | "pmnb-3" => {
                    use fabric::algorithms::pmnb;
                    let p = pmnb.as_ref().expect("pmnb settings resolved");
                    let ms = l / p.variant.pieces(d) as u16;
                    let pf = fabric::algorithms::prefix::packet_flits(p.tp_cycles as u64, l);
                    let prog = pmnb::Pmnb::new(p.variant, d, &p.active, l, p.tp_cycles as u64, hop_timing(cfg, ms), hop_timing(cfg, pf))
                        .with_handover(handover_timing(cfg, pf, ms));
                    (Box::new(prog), pmnb::bounds(p.variant, d, p.active.len() as u64, p.tp))
                }
                "dynamic" => {
                    use fabric::algorithms::dynamic::{Dynamic, DynamicSpec};
                    let c = dynamic.as_ref().expect("dynamic settings resolved");
                    let spec = DynamicSpec {
                        variant: c.pmnb,
                        d,
                        load: c.load,
                        window: c.cycles,
                        warmup: c.warmup_cycles,
                        flits: l,
                        tp_cycles: c.tp_cycles as u64,
                        seed: cfg.seed,
                        hop: hop_timing(cfg, l / c.pmnb.pieces(d) as u16),
                        prefix_hop: hop_timing(cfg, fabric::algorithms::prefix::packet_flits(c.tp_cycles as u64, l)),
                        handover: handover_timing(
                            cfg,
                            fabric::algorithms::prefix::packet_flits(c.tp_cycles as u64, l),
                            l / c.pmnb.pieces(d) as u16,
                        ),
                    };
                    (Box::new(Dynamic::new(spec)), Bounds::default())
                }
                "kbcast" => {
                    let k = kbcast.as_ref().expect("kbcast settings resolved");
                    let kb = fabric::algorithms::kbcast::KBcast::new(k.variant, d, &k.active, l, k.tp_cycles as u64, cfg.seed);
                    (Box::new(kb), fabric::algorithms::kbcast::bounds(k.variant, d, k.active.len() as u32, k.tp))
                }
                "snb" => {
                    let k_ports = match cfg.port_model {
                        PortModel::K(k) if *forwarding == Forwarding::Node => Some(k as u32),
                        _ => None,
                    };
                    let mut bounds = Snb::bounds(&topo, root, k_ports);
                    if cfg.switching != router::Switching::StoreAndForward {
                        bounds.lower = Some(match forwarding {
                            Forwarding::Router => Snb::worm_lower_bound(&topo, root, l),
                            Forwarding::Node => round_bound(cfg).expect("snb has a round bound under wormhole") as f64,
                        });
                    }
                    (Box::new(Snb::new(root, *forwarding, one_port, l)), bounds)
                }
                "rd" | "dta" | "ho-kao" => {
                    let scheme = wormhole::Scheme::parse(name).expect("a wormhole broadcast");
                    (Box::new(wormhole::WormBroadcast::new(scheme, &topo, root, channels, l)), wormhole::bounds(&topo, root, channels))
                }
                "accumulate" => (Box::new(Accumulate::new(d, root, l)), Accumulate::bounds(d)),
                "mnb" => (Box::new(mnb::Mnb::new(d, one_port, l)), mnb::bounds(d, one_port)),
                "mnb-ring" => (Box::new(mnb::MnbRing::new(d, l)), mnb::MnbRing::bounds(d)),
                "multi-accumulate" => (Box::new(mnb::MultiAccumulate::new(d, one_port, l)), mnb::bounds(d, one_port)),
                "scatter" => (Box::new(scatter::Scatter::new(d, root, l)), scatter::bounds(d, one_port)),
                "gather" => (Box::new(scatter::Gather::new(d, root, one_port, l)), scatter::bounds(d, one_port)),
                "total-exchange" => (Box::new(total_exchange::TotalExchange::new(d, one_port, l)), total_exchange::bounds(d, one_port)),
                "mnb-sbt" => (Box::new(MnbSbt::new(l, *forwarding)), MnbSbt::bounds(&topo, one_port)),
                "edn" | "dilated-diagonal" => {
                    use fabric::algorithms::{dilated_diagonal, edn, rounds};
                    let plan =
                        if name == "edn" { edn::plan(&topo, root) } else { dilated_diagonal::plan(&topo, root).expect("shape validated") };
                    (Box::new(rounds::RoundBroadcast::new(plan, rounds::round_period(&cfg.spec(), l), l)), Bounds::default())
                }
                "st" | "bst" | "rh" | "st-simple" | "bst-simple" => {
                    let c = cfg.cost.as_ref().expect("the cost model is resolved for the Seidel broadcasts");
                    let setup = c.setup(cfg.topology.clone(), &cfg.dims, cfg.nu, root.0);
                    (Box::new(fabric::algorithms::seidel::Seidel::new(&setup)), Bounds::default())
                }
                other => unreachable!("algorithm {other} passed validation"),
            }
        }
        Workload::Traffic { broadcast_rate, forwarding, .. } => {
            let mut t = Traffic::new(cfg.traffic_spec().unwrap(), topo.nodes());
            if *broadcast_rate > 0.0 {
                t = t.with_broadcasts(*broadcast_rate, *forwarding);
            }
            (Box::new(t), Bounds::default())
        }
    }
}

/// The lower bound in rounds of a one-to-all broadcast the nodes forward (`snb`, `rd`,
/// `dta`, `ho-kao`) under wormhole or cut-through switching, where a worm reaches any node
/// in one round ([`wormhole::lower_bound_rounds`]); None otherwise.
pub fn round_bound(cfg: &Config) -> Option<u64> {
    use fabric::algorithms::wormhole;
    let Workload::Algorithm { name, forwarding: Forwarding::Node, root, .. } = &cfg.workload else { return None };
    if cfg.switching == router::Switching::StoreAndForward
        || !["snb", "rd", "dta", "ho-kao", "edn", "dilated-diagonal"].contains(&name.as_str())
    {
        return None;
    }
    Some(wormhole::lower_bound_rounds(&cfg.spec().topology(), NodeId(*root), cfg.port_model.limit()))
}

/// `rd`: the notes' T(z) = Σ_{i=1}^{⌈log z⌉} (t_s + ⌈z/2^i⌉ t_d + m t_m), summed over the
/// dimensions, a round's worm costing the NIC's start-up and copy cycles plus this router's
/// zero-load latency over ⌈z/2^i⌉ hops (t_d its cycles a hop, m t_m the flits after the
/// head). Exact for a torus or a mesh with the source in the corner; elsewhere the worms
/// are shorter.
pub fn notes_cost_cycles(cfg: &Config) -> Option<u64> {
    let Workload::Algorithm { name, .. } = &cfg.workload else { return None };
    if name != "rd" {
        return None;
    }
    let start = cfg.startup_cycles + cfg.copy_cycles_per_flit * cfg.packet_flits as u64;
    let worm = |hops: u64| start + cfg.pipeline.zero_load_latency(cfg.switching, hops, cfg.packet_flits as u64);
    Some(cfg.dims.iter().flat_map(|&z| fabric::algorithms::wormhole::rd_round_hops(z)).map(|h| worm(h as u64)).sum())
}

/// How this configuration's router moves pieces of `piece` flits between neighbours:
/// the cycles a lone piece takes beyond its length (0 on the ideal router) and the
/// sustained interval between back-to-back pieces on one link (`piece` when the buffers
/// cover the credit round trip). Measured on a two-node fabric with the same router; the
/// synchronous algorithms stretch their steps by them.
pub fn hop_timing(cfg: &Config, piece: u16) -> (u64, u64) {
    let one = burst_delivery(cfg, &[piece]);
    let burst = 16;
    let gap = (burst_delivery(cfg, &vec![piece; burst + 1]) - one).div_ceil(burst as u64);
    (one - piece as u64, gap.max(piece as u64))
}

/// The cycles a piece of `piece` flits sent right after a prefix packet of `prefix` flits
/// over one link arrives later than alone: how soon after the prefix packet the link, and
/// the buffer behind it, take the piece (the prefix packet's own length when the buffer
/// holds both; more when it holds only the piece).
pub fn handover_timing(cfg: &Config, prefix: u16, piece: u16) -> u64 {
    burst_delivery(cfg, &[prefix, piece]) - burst_delivery(cfg, &[piece])
}

/// On a 1-cube of this configuration's router, node 0 sends packets of the given lengths to
/// node 1 at cycle 0, in order: the cycle of the last delivery.
pub(super) fn burst_delivery(cfg: &Config, pieces: &[u16]) -> u64 {
    struct Burst {
        pieces: Vec<u16>,
    }
    impl Program for Burst {
        fn start(&mut self, cx: &mut fabric::NodeCtx<'_>) {
            if cx.node.0 == 0 {
                for &flits in &self.pieces {
                    let dest = fabric::Dest::Node(NodeId(1));
                    cx.send(fabric::Send { dest, msg: u32::MAX, aux: 0, key: 0, flits });
                }
            }
        }
        fn receive(&mut self, _: &mut fabric::NodeCtx<'_>, _: &fabric::Received) {}
    }
    let mut spec = cfg.spec();
    spec.kind = fabric::TopologyKind::Hypercube;
    spec.sizes = vec![1];
    spec.ports = PortModel::All;
    let mut f = Fabric::new(&spec, Box::new(Burst { pieces: pieces.to_vec() }));
    f.run();
    f.counters.last_delivery
}

/// Build the fabric for a configuration.
pub fn build(cfg: &Config) -> (Fabric, Bounds) {
    let (prog, bounds) = program(cfg);
    (Fabric::new(&cfg.spec(), prog), bounds)
}

/// [`build`], stopping at the cycle it is in when the process is interrupted
/// ([`crate::interrupt`]): the fabric of `flitwave run` (the commands of many runs let
/// their runs finish).
pub(super) fn build_stoppable(cfg: &Config) -> (Fabric, Bounds) {
    let (mut f, bounds) = build(cfg);
    f.stop_when(crate::interrupt::flag());
    (f, bounds)
}

/// Can the run be split between `cfg.threads` threads? Only if its program's nodes keep no
/// shared state ([`fabric::Program::splits`]): synthetic traffic, and the broadcasts
/// (node- or router-forwarded) and personalized communication of the hypercube papers.
pub fn check_threads(cfg: &Config) -> Result<(), ConfigError> {
    if cfg.threads <= 1 || program(cfg).0.splits() {
        return Ok(());
    }
    let what = match &cfg.workload {
        Workload::Algorithm { name, .. } => name.clone(),
        Workload::Traffic { .. } => "this run".to_string(),
    };
    Err(ConfigError(format!(
        "threads: {}: 1 for {what} (its program keeps state or results shared between nodes); runs split between threads: \
         --traffic, snb, mnb-sbt (node- or router-forwarded), mnb, mnb-ring, scatter, gather, total-exchange, and pmnb-1, pmnb-2, pmnb-3",
        cfg.threads
    )))
}
