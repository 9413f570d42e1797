//! [`Config::resolve`]: raw settings against the defaults, field by field, into one [`Config`].

use super::*;

impl Config {
    /// Resolve raw settings against the defaults and check everything.
    pub fn resolve(raw: &Raw) -> Result<Config, ConfigError> {
        let (prepared, cost) = crate::cost_model::prepare(raw)?;
        let raw = &prepared;
        // By name, for the checks that go over a list of keys.
        let given = raw.given();
        let named = |f: &str| given.get(f).map(String::as_str);
        let topology = match raw.topology.topology.as_deref() {
            None => TopologyKind::Hypercube,
            Some(t) => TopologyKind::parse(t).ok_or_else(|| err("topology", t, format!("one of {}", TopologyKind::NAMES)))?,
        };
        let dims = match raw.topology.dims.as_deref() {
            Some(v) => parse_dims(&topology, v)?,
            None => match topology {
                TopologyKind::Hypercube => vec![6],
                TopologyKind::Linear => vec![16],
                _ => vec![8, 8],
            },
        };
        let traffic = raw.workload.traffic.as_deref();
        // Broadcast traffic, with or without unicast traffic (--traffic).
        let broadcast_rate = match raw.workload.broadcast_rate.as_deref() {
            Some(v) => {
                let what = "broadcasts per node per cycle, a number in [0, 1], with or without --traffic PATTERN (not with --algorithm)";
                if let Some(a) = raw.workload.algorithm.as_deref() {
                    return Err(err("broadcast-rate", v, format!("{what}; this run is --algorithm {a}")));
                }
                Some(float("broadcast-rate", v, 0.0..=1.0, what)?)
            }
            None => None,
        };
        let is_traffic = traffic.is_some() || broadcast_rate.is_some();
        if let (Some(a), Some(t)) = (raw.workload.algorithm.as_deref(), traffic) {
            return Err(err("algorithm", a, format!("a run is either an algorithm or synthetic traffic (--traffic {t}), not both")));
        }
        // The algorithm asked for, if it is one (checked below).
        let chosen = raw.workload.algorithm.as_deref().and_then(algorithms::find);
        let is_dynamic = chosen.is_some_and(|a| a.settings == Settings::Dynamic);
        for f in ["rate", "cycles", "warmup", "batches", "hotspot", "hotspot-fraction"] {
            let applies = traffic.is_some() || (is_traffic && !matches!(f, "rate" | "hotspot" | "hotspot-fraction"));
            if let Some(v) = named(f)
                && !applies
                && !(f == "cycles" && is_dynamic)
            {
                return Err(err(
                    f,
                    v,
                    "only applies with --traffic PATTERN (--cycles, --warmup and --batches also with --broadcast-rate alone, --cycles with --algorithm dynamic)",
                ));
            }
        }
        let switching = match raw.router.switching.as_deref() {
            Some(s) => Switching::parse(s).ok_or_else(|| err("switching", s, format!("one of {}", Switching::NAMES)))?,
            None if is_traffic => Switching::Wormhole,
            None => Switching::StoreAndForward,
        };
        let (router, mut pipeline) = match raw.router.router.as_deref() {
            // The RTL keeps the realistic preset's timing.
            None if is_traffic || raw.rtl.rtl.as_deref().is_some() => ("realistic".to_string(), Pipeline::REALISTIC),
            None => ("ideal".to_string(), Pipeline::IDEAL),
            Some(name) => match Pipeline::preset(name) {
                Some(p) => (name.to_string(), p),
                None => (name.to_string(), read_router_file(name)?),
            },
        };
        if pipeline.link_latency == 0 {
            return Err(err("router", &router, "link_latency must be at least 1 cycle"));
        }
        let arbiter = match raw.router.arbiter.as_deref() {
            Some(s) => ArbiterPolicy::parse(s).ok_or_else(|| err("arbiter", s, format!("one of {}", ArbiterPolicy::NAMES)))?,
            // The RTL's arbiters are round-robin.
            None if raw.rtl.rtl.as_deref().is_some() => ArbiterPolicy::RoundRobin,
            None => ArbiterPolicy::Key,
        };
        let injection_vc = match raw.router.injection_vc.as_deref() {
            Some(s) => InjectionVc::parse(s).ok_or_else(|| err("injection-vc", s, format!("one of {}", InjectionVc::NAMES)))?,
            None => InjectionVc::RoundRobin,
        };
        let va_policy = match raw.router.va_policy.as_deref() {
            Some(s) => VaPolicy::parse(s).ok_or_else(|| err("va-policy", s, format!("one of {}", VaPolicy::NAMES)))?,
            None => VaPolicy::RoundRobin,
        };
        // pmnb-2 (alone or in the dynamic scheme) splits a packet into d mini-packets of a
        // flit each by default.
        let splits = match chosen.map(|a| a.settings) {
            Some(Settings::Pmnb(v)) => v == PmnbVariant::Two,
            Some(Settings::Dynamic) => {
                raw.algorithm.pmnb.as_deref().map_or(Some(DEFAULT_PMNB), PmnbVariant::parse) == Some(PmnbVariant::Two)
            }
            _ => false,
        };
        let packet_flits = match raw.workload.packet_flits.as_deref() {
            Some(v) => uint("packet-flits", v, 1, 65535)? as u16,
            None if is_traffic => 4,
            None if splits && topology == TopologyKind::Hypercube => dims[0].clamp(1, 65535) as u16,
            None => 1,
        };
        let buffer_flits = match raw.router.buffer_flits.as_deref() {
            Some(v) => uint("buffer-flits", v, 1, 4096)? as u16,
            None => (2 * packet_flits as u32).clamp(2, 4096) as u16,
        };
        let inject_buffer_flits = match raw.router.inject_buffer_flits.as_deref() {
            Some(v) => uint("inject-buffer-flits", v, 1, 4096)? as u16,
            None => buffer_flits,
        };
        let vcs = match raw.router.vcs.as_deref() {
            Some(v) => uint("vcs", v, 1, 16)? as u8,
            None if topology == TopologyKind::Torus || is_traffic => 2,
            None => 1,
        };
        let nu = match raw.router.nu.as_deref() {
            Some(v) => uint("nu", v, 0, 6)? as u8,
            None => 0,
        };
        if nu > 0 && vcs == 1 {
            return Err(err(
                "nu",
                nu,
                format!(
                    "links of 2^nu = {} flits per cycle carry one flit per VC and cycle, so one VC never uses them: add --vcs 2 or more (up to 2^nu worms share a link)",
                    1u32 << nu
                ),
            ));
        }
        let port_model = match raw.router.ports.as_deref() {
            Some(v) => PortModel::parse(v).ok_or_else(|| err("ports", v, "all, one, or a number of ports K >= 1"))?,
            // One injection and one ejection channel per node, as in most NoCs (and BookSim).
            None if is_traffic => PortModel::K(1),
            None => PortModel::All,
        };
        let seed = match raw.workload.seed.as_deref() {
            Some(v) => uint("seed", v, 0, u64::MAX)?,
            None => 1,
        };
        let deadlock_avoidance = match raw.topology.deadlock_avoidance.as_deref() {
            Some(v) => on_off("deadlock-avoidance", v)?,
            None => true,
        };
        if !deadlock_avoidance && topology != TopologyKind::Torus {
            return Err(err("deadlock-avoidance", "off", format!("only tori have dateline VCs to remove; a {} has none", topology.name())));
        }
        let startup_cycles = match raw.workload.startup_cycles.as_deref() {
            Some(v) => uint("startup-cycles", v, 0, 1 << 40)?,
            None => 0,
        };
        let copy_cycles_per_flit = match raw.workload.copy_cycles_per_flit.as_deref() {
            Some(v) => uint("copy-cycles-per-flit", v, 0, 1 << 20)?,
            None => 0,
        };
        // The longest pause in which nothing moves that is not a deadlock: a start-up and
        // copy cost, and twice a flit's way through every stage of a slow router and its
        // credit's way back (the link at least one cycle, as built below).
        let p = &pipeline;
        let round_trip: u64 =
            [p.rc_delay, p.va_delay, p.link_latency.max(1), p.credit_delay, p.inject_latency].iter().map(|&c| c as u64).sum();
        let node_costs = startup_cycles + copy_cycles_per_flit * packet_flits as u64;
        let longest_pause = 2 * round_trip + node_costs;
        let watchdog_cycles = match raw.control.watchdog.as_deref() {
            Some(v) => {
                let w = uint("watchdog", v, 1, 1 << 40)?;
                if w < longest_pause {
                    return Err(err(
                        "watchdog",
                        v,
                        format!(
                            "at least {longest_pause} cycles here (twice the router's stage, link, credit and injection delays, plus start-up and copy costs): a shorter pause is not a deadlock"
                        ),
                    ));
                }
                w
            }
            None => (2 * round_trip).max(10_000) + node_costs,
        };
        let max_cycles = match raw.control.max_cycles.as_deref() {
            Some(v) => uint("max-cycles", v, 1, 1 << 48)?,
            None => 1 << 40,
        };
        let mut spec = FabricSpec::ideal(topology.clone(), &dims);
        spec.switching = switching;
        pipeline.link_latency = pipeline.link_latency.max(1);
        spec.pipeline = pipeline;
        spec.arbiter = arbiter;
        spec.injection = injection_vc;
        spec.va_policy = va_policy;
        spec.vcs = vcs;
        let ejection_vcs = match raw.router.ejection_vcs.as_deref() {
            Some(v) => uint("ejection-vcs", v, 1, 16)? as u8,
            None => vcs,
        };
        spec.ejection_vcs = Some(ejection_vcs);
        spec.buffer_flits = buffer_flits;
        spec.inject_buffer_flits = Some(inject_buffer_flits);
        spec.packet_flits = packet_flits;
        spec.ports = port_model;
        spec.nu = nu;
        spec.deadlock_avoidance = deadlock_avoidance;
        check_addressable(&spec)?;
        spec.validate()?;
        let topo = spec.topology();
        let nodes = topo.nodes() as u64;

        let workload = if is_traffic {
            // Broadcasts alone: no unicast packets (rate 0).
            let t = traffic.unwrap_or("uniform");
            let pattern = Pattern::parse(t).ok_or_else(|| err("traffic", t, format!("one of {}", Pattern::NAMES)))?;
            pattern.check(&topo)?;
            // What only an algorithm run takes would be dropped here: say so.
            for f in std::iter::once("root").chain(algorithm_flags()) {
                if let Some(v) = named(f) {
                    return Err(err(f, v, format!("only applies to --algorithm runs, not --traffic {t}")));
                }
            }
            if pattern != Pattern::Hotspot {
                for f in ["hotspot", "hotspot-fraction"] {
                    if let Some(v) = named(f) {
                        return Err(err(f, v, format!("only applies with --traffic hotspot, not {t}")));
                    }
                }
            }
            let rate = match raw.workload.rate.as_deref() {
                _ if traffic.is_none() => 0.0,
                Some(v) => {
                    let r: f64 = v.trim().parse().map_err(|_| err("rate", v, "packets per node per cycle, a number in (0, 1]"))?;
                    if !(r > 0.0 && r <= 1.0) {
                        return Err(err("rate", v, "packets per node per cycle, a number in (0, 1]"));
                    }
                    r
                }
                None => 0.025,
            };
            let cycles = match raw.workload.cycles.as_deref() {
                Some(v) => uint("cycles", v, 1, 1 << 40)?,
                None => 10_000,
            };
            let warmup = match raw.workload.warmup.as_deref() {
                Some(v) => {
                    let w = uint("warmup", v, 0, 1 << 40)?;
                    if w >= cycles {
                        return Err(err(
                            "warmup",
                            v,
                            format!("fewer cycles than --cycles ({cycles}): the statistics count over the cycles [warmup, cycles)"),
                        ));
                    }
                    w
                }
                None => 0,
            };
            let batches = match raw.workload.batches.as_deref() {
                Some(v) => uint("batches", v, 2, 100)? as u32,
                None => fabric::Window::DEFAULT_BATCHES,
            };
            let hotspot = match raw.workload.hotspot.as_deref() {
                Some(v) => parse_node("hotspot", v, &topo)?,
                None => 0,
            };
            let hotspot_fraction = match raw.workload.hotspot_fraction.as_deref() {
                Some(v) => float("hotspot-fraction", v, 0.0..=1.0, "a fraction in [0, 1]")?,
                None => 0.2,
            };
            // Offered per node of the fabric: the nodes a permutation maps to themselves send nothing.
            let (senders, nodes) = (pattern.senders(&topo), topo.nodes() as u64);
            let broadcast_rate = broadcast_rate.unwrap_or(0.0);
            // A broadcast's flits are offered once to each of its N - 1 destinations.
            let offered_flits = rate * packet_flits as f64 * if senders == nodes { 1.0 } else { senders as f64 / nodes as f64 }
                + broadcast_rate * packet_flits as f64 * (nodes - 1) as f64;
            let forwarding = match raw.workload.forwarding.as_deref() {
                Some(v) if broadcast_rate > 0.0 => {
                    Forwarding::parse(v).ok_or_else(|| err("forwarding", v, format!("one of {}", Forwarding::NAMES)))?
                }
                Some(v) => {
                    return Err(err("forwarding", v, "only applies to broadcast algorithms and to traffic with --broadcast-rate above 0"));
                }
                None => Forwarding::Node,
            };
            Workload::Traffic {
                pattern,
                rate,
                broadcast_rate,
                forwarding,
                offered_flits,
                cycles,
                warmup,
                batches,
                hotspot,
                hotspot_fraction,
            }
        } else {
            let name = raw.workload.algorithm.as_deref().unwrap_or(algorithms::DEFAULT.name).to_string();
            let info = algorithms::find(&name).ok_or_else(|| {
                err(
                    "algorithm",
                    &name,
                    format!("one of {} (see flitwave list)", algorithms::ALGORITHMS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")),
                )
            })?;
            if !info.topologies.contains(&topology) {
                return Err(err(
                    "algorithm",
                    &name,
                    format!(
                        "not defined on a {}; it runs on {}",
                        topology.name(),
                        info.topologies.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            let forwarding = match raw.workload.forwarding.as_deref() {
                Some(v) => Forwarding::parse(v).ok_or_else(|| err("forwarding", v, format!("one of {}", Forwarding::NAMES)))?,
                None => Forwarding::Node,
            };
            if !info.router_forwarding && forwarding == Forwarding::Router {
                let multicast: Vec<&str> = algorithms::ALGORITHMS.iter().filter(|a| a.router_forwarding).map(|a| a.name).collect();
                return Err(err(
                    "forwarding",
                    "router",
                    format!("{name} forwards at the nodes, as its paper does; {} also run as in-router multicast", multicast.join(" and ")),
                ));
            }
            if info.ports == Ports::AllOrOne && !matches!(port_model, PortModel::All | PortModel::K(1)) {
                return Err(err(
                    "ports",
                    port_model.name(),
                    format!("{name} is defined for --ports all (the paper's MLA assumption) or one (SLA)"),
                ));
            }
            let root = match raw.workload.root.as_deref() {
                Some(v) => parse_node("root", v, &topo)?,
                None => 0,
            };
            if !info.rooted && raw.workload.root.as_deref().is_some() {
                return Err(err("root", raw.workload.root.as_deref().unwrap(), format!("{name} involves every node; it takes no root")));
            }
            if let Ports::All(why) = info.ports
                && port_model != PortModel::All
            {
                return Err(err("ports", port_model.name(), format!("{name} {why}: --ports all")));
            }
            if let Some(shape) = info.shape {
                shape(&topo).map_err(|e| err("dims", algorithms::entry::dims_text(&spec), e))?;
            }
            for f in algorithm_flags() {
                if let Some(v) = named(f)
                    && !info.settings.flags().contains(&f)
                {
                    let takers: Vec<&str> =
                        algorithms::ALGORITHMS.iter().filter(|a| a.settings.flags().contains(&f)).map(|a| a.name).collect();
                    return Err(err(f, v, format!("only applies to --algorithm {}", takers.join(", "))));
                }
            }
            let (mut kbcast, mut pmnb, mut dynamic) = (None, None, None);
            match info.settings {
                Settings::Kbcast => kbcast = Some(kbcast_config(raw, &topo, packet_flits, seed)?),
                Settings::Pmnb(variant) => pmnb = Some(pmnb_config(variant, &name, raw, &topo, packet_flits, seed)?),
                Settings::Dynamic => dynamic = Some(dynamic_config(raw, &topo, packet_flits)?),
                Settings::None | Settings::Seidel => {}
            }
            Workload::Algorithm { name, forwarding, root, root_coords: topo.coords(NodeId(root)), kbcast, pmnb, dynamic }
        };
        let replicates = workload.replicates();
        let multicast_va = multicast_option(
            "multicast-va",
            raw.router.multicast_va.as_deref(),
            replicates,
            packet_flits,
            MulticastVa::parse,
            MulticastVa::NAMES,
            MulticastVa::Atomic,
        )?;
        let replication = multicast_option(
            "replication",
            raw.router.replication.as_deref(),
            replicates,
            packet_flits,
            Replication::parse,
            Replication::NAMES,
            Replication::Async,
        )?;
        let threads = match raw.control.threads.as_deref() {
            Some(v) => uint("threads", v, 1, 64)? as u32,
            None => 1,
        };
        let (fault_list, link_failure_rate) = faults(raw, &topo, seed)?;
        if threads > 1 && !fault_list.is_empty() {
            return Err(err(
                "threads",
                threads,
                "1 with faults (--fault, --link-failure-rate): a run with faults is not split between threads",
            ));
        }
        // Asynchronous replication keeps a read position per VC and branch once a router
        // replicates a multi-flit packet.
        let positions = replication == Some(Replication::Async) && packet_flits > 1;
        let outputs = Outputs {
            vcd: raw.outputs.vcd.as_deref().map(String::from),
            fst: raw.outputs.fst.as_deref().map(String::from),
            gtkw: raw.outputs.gtkw.as_deref().map(String::from),
            clock_ns: match raw.outputs.clock_ns.as_deref() {
                Some(v) => {
                    thousandths(
                        "clock-ns",
                        v,
                        1,
                        1_000_000_000,
                        "a clock period in ns from 0.001 to 1000000 with at most three decimals (such as 0.8, 2.5 or 10)",
                    )? as f64
                        / 1000.0
                }
                None => 1.0,
            },
            trace_nodes: match raw.outputs.trace_nodes.as_deref() {
                Some(v) => parse_node_list("trace-nodes", v, nodes)?,
                None => None,
            },
            trace_from: match raw.outputs.trace_from.as_deref() {
                Some(v) => uint("trace-from", v, 0, 1 << 48)?,
                None => 0,
            },
            trace_to: match raw.outputs.trace_to.as_deref() {
                Some(v) => Some(uint("trace-to", v, 0, 1 << 48)?),
                None => None,
            },
            trace_limit_bytes: match raw.outputs.trace_limit.as_deref() {
                Some(v) => Some(
                    thousandths(
                        "trace-limit",
                        v,
                        1,
                        1_000_000_000,
                        "a size in MB (10^6 bytes) from 0.001 to 1000000 with at most three decimals (such as 0.5 or 200)",
                    )? * 1000,
                ),
                None => None,
            },
            stats_csv: raw.outputs.stats_csv.as_deref().map(String::from),
            announce: false,
        };
        let stats = match raw.outputs.stats.as_deref() {
            Some(v) => traces::stats::Detail::parse(v).ok_or_else(|| err("stats", v, traces::stats::Detail::NAMES))?,
            // The CSV holds the per-VC and per-link rows: asking for it asks for them.
            None if outputs.stats_csv.is_some() => traces::stats::Detail::Full,
            None => traces::stats::Detail::default_for(nodes),
        };
        if let (Some(p), traces::stats::Detail::Summary) = (&outputs.stats_csv, stats) {
            return Err(err("stats-csv", p, "its per-VC and per-link rows need --stats full (given --stats summary)"));
        }
        // Only the JSON result goes to standard output (`--json -`); these are files.
        for (f, path) in raw.outputs.files() {
            match path {
                Some("-") => return Err(err(f, "-", "a file path (only --json takes - for standard output)")),
                Some("") => return Err(err(f, "\"\"", "a file path")),
                _ => {}
            }
        }
        // The FST writer goes back to fill in its header: a device or pipe cannot take it.
        if let Some(p) = &outputs.fst
            && std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir())
        {
            return Err(err("fst", p, "a regular file (an FST is written with seeks; a device or pipe cannot hold it)"));
        }
        if let Some(g) = &outputs.gtkw
            && !outputs.tracing()
        {
            return Err(err("gtkw", g, "a GTKWave save file points at a dump: add --vcd PATH or --fst PATH"));
        }
        for f in ["trace-nodes", "trace-from", "trace-to", "trace-limit", "clock-ns"] {
            if let Some(v) = named(f)
                && !outputs.tracing()
            {
                return Err(err(f, v, "only applies with --vcd PATH or --fst PATH"));
            }
        }
        if let Some(to) = outputs.trace_to
            && to < outputs.trace_from
        {
            return Err(err("trace-to", to, format!("at least --trace-from ({})", outputs.trace_from)));
        }
        check_waveform_time(&outputs, max_cycles)?;
        let waves = outputs.tracing().then(|| Waves {
            fst: outputs.fst.is_some(),
            faults: !fault_list.is_empty(),
            nodes: outputs.trace_nodes.as_ref().map(|v| v.len() as u128),
        });
        let memory_estimate = check_workload_memory(&spec, Sizing { workload: &workload, max_cycles, threads, positions, waves })?;
        if let (Some(c), Workload::Algorithm { root, .. }) = (&cost, &workload) {
            crate::cost_model::check(c, &topology, &dims, nu, *root)?;
        }
        let schedule = match raw.control.schedule.as_deref() {
            Some(k) => Schedule::parse(k).ok_or_else(|| err("schedule", k, Schedule::NAMES))?,
            None => Schedule::Busy,
        };
        if threads > 1 {
            if outputs.tracing() {
                return Err(err("threads", threads, "1 with --vcd or --fst: waveforms are written from one thread"));
            }
            if threads as u64 > nodes {
                return Err(err("threads", threads, format!("at most the {nodes} nodes of the fabric")));
            }
        }
        let mut cfg = Config {
            topology,
            dims,
            nodes,
            workload,
            ports: port_model.name(),
            switching,
            router,
            pipeline,
            arbiter,
            injection_vc,
            ejection_vcs,
            va_policy,
            multicast_va,
            replication,
            packet_flits,
            buffer_flits,
            inject_buffer_flits,
            vcs,
            nu,
            seed,
            deadlock_avoidance,
            startup_cycles,
            copy_cycles_per_flit,
            watchdog_cycles,
            max_cycles,
            threads,
            schedule,
            stats,
            outputs,
            port_model,
            cost,
            memory_estimate,
            faults: fault_list.iter().map(|f| f.to_string()).collect(),
            link_failure_rate,
            fault_list,
            rtl: None,
        };
        cfg.rtl = rtl::resolve(raw, &given, &mut cfg)?;
        Ok(cfg)
    }

    /// The fabric spec this configuration describes.
    pub fn spec(&self) -> FabricSpec {
        let mut s = FabricSpec::ideal(self.topology.clone(), &self.dims);
        s.switching = self.switching;
        s.pipeline = self.pipeline;
        s.arbiter = self.arbiter;
        s.injection = self.injection_vc;
        s.ejection_vcs = Some(self.ejection_vcs);
        s.va_policy = self.va_policy;
        s.multicast_va = self.multicast_va.unwrap_or(MulticastVa::Atomic);
        s.replication = self.replication.unwrap_or(Replication::Async);
        s.vcs = self.vcs;
        s.buffer_flits = self.buffer_flits;
        s.inject_buffer_flits = Some(self.inject_buffer_flits);
        s.packet_flits = self.packet_flits;
        s.ports = self.port_model;
        s.nu = self.nu;
        s.deadlock_avoidance = self.deadlock_avoidance;
        s.startup_cycles = self.startup_cycles;
        s.copy_cycles_per_flit = self.copy_cycles_per_flit;
        s.watchdog_cycles = self.watchdog_cycles;
        s.max_cycles = self.max_cycles;
        s.schedule = self.schedule;
        s.faults = self.fault_list.clone();
        if let Workload::Traffic { cycles, warmup, batches, .. } = self.workload {
            s.measure = Some(fabric::Window { from: warmup, to: cycles, batches });
        }
        s
    }

    pub fn traffic_spec(&self) -> Option<TrafficSpec> {
        match self.workload {
            Workload::Traffic { pattern, rate, cycles, hotspot, hotspot_fraction, .. } => Some(TrafficSpec {
                pattern,
                rate,
                cycles,
                flits: self.packet_flits,
                seed: self.seed,
                hotspot: NodeId(hotspot),
                hotspot_fraction,
            }),
            _ => None,
        }
    }

    /// A short description: "snb on hypercube 6 (64 nodes)".
    pub fn title(&self) -> String {
        let dims = self.dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
        let what = match &self.workload {
            Workload::Algorithm { name, forwarding, .. } => {
                format!("{name} ({} forwarding)", serde_json::to_value(forwarding).unwrap().as_str().unwrap())
            }
            Workload::Traffic { pattern, rate, broadcast_rate, forwarding, .. } => {
                let unicast = format!("{} traffic at {rate} packets/node/cycle", serde_json::to_value(pattern).unwrap().as_str().unwrap());
                let bcast = format!(
                    "broadcasts at {broadcast_rate}/node/cycle ({} forwarding)",
                    serde_json::to_value(forwarding).unwrap().as_str().unwrap()
                );
                match (*rate > 0.0, *broadcast_rate > 0.0) {
                    (true, true) => format!("{unicast} + {bcast}"),
                    (false, true) => bcast,
                    _ => unicast,
                }
            }
        };
        format!("{what} on {} {dims} ({} nodes)", self.topology.name(), self.nodes)
    }
}

/// Flags only some algorithms take (their settings'), in the registry's order.
pub(super) fn algorithm_flags() -> Vec<&'static str> {
    let mut flags: Vec<&'static str> = Vec::new();
    for f in algorithms::ALGORITHMS.iter().flat_map(|a| a.settings.flags()) {
        if !flags.contains(f) {
            flags.push(f);
        }
    }
    flags
}

/// A router option for multi-flit packets the routers replicate: parsed (one of `names`),
/// refused on a run without them (no router forwarding, or one-flit packets, which it would
/// not change), and defaulted on a router-forwarded run (`None` on a run without).
pub(super) fn multicast_option<T>(
    field: &str,
    given: Option<&str>,
    replicates: bool,
    packet_flits: u16,
    parse: fn(&str) -> Option<T>,
    names: &str,
    default: T,
) -> Result<Option<T>, ConfigError> {
    match given {
        Some(s) => {
            let v = parse(s).ok_or_else(|| err(field, s, format!("one of {names}")))?;
            if !replicates {
                return Err(err(field, s, "only applies with --forwarding router (packets the routers replicate)"));
            }
            if packet_flits == 1 {
                return Err(err(field, s, "only applies to packets of more than one flit (--packet-flits is 1)"));
            }
            Ok(Some(v))
        }
        None => Ok(replicates.then_some(default)),
    }
}
