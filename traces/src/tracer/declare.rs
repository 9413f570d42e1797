//! Declaring the hierarchy ([`Tracer::new`]): a scope per traced node, its router, each
//! port and VC, and its NIC, with each signal's name, width and initial value; then the
//! lookups the sampling uses (which input VCs and ports are traced, whose credits are
//! counted from events).

use super::{BATCH, ChanSigs, IvcSigs, LinkSigs, OUT_VC, OpInfo, PortSigs, ROUTE, SignalInfo, TraceOptions, Tracer, VA_GNT, VA_REQ};
use crate::sink::WaveSink;
use fabric::Fabric;
use router::{NONE, NodeId};
use std::io;

fn bits_for(max: u64) -> u32 {
    (64 - max.leading_zeros()).max(1)
}

impl Tracer {
    /// The signals [`Tracer::new`] declares for one traced node whose router has `params`,
    /// every network port linked (fewer where ports have no link, at a mesh's edges), with a
    /// `failed` bit per output link in runs with `faults`: per output link, each lane's
    /// `valid`, `flags`, `vc`, `packet`, `dest`, `msg` and each VC's `credits` and `owner`;
    /// per input port (links and injection channels), `sa_req`, `sa_gnt` and each VC's six
    /// registers; the NIC's three and each channel's four on either side.
    pub fn signals_per_node(params: &router::RouterParams, faults: bool) -> u64 {
        let (net, k, vcs, lanes) = (params.net_ports as u64, params.nic_channels as u64, params.vcs as u64, params.link_width as u64);
        net * (6 * lanes + faults as u64 + 2 * vcs) + (net + k) * (2 + 6 * vcs) + 3 + 8 * k
    }

    /// What tracing holds in memory per declared signal while it runs (its name and group,
    /// the value last written, the writer's tables), as measured on hypercubes and meshes
    /// of 30,000 to 1.6 million signals (docs/performance.md): about 230 bytes writing a VCD,
    /// 275 an FST.
    pub fn bytes_per_signal(fst: bool) -> u64 {
        if fst { 275 } else { 230 }
    }

    /// Declare the hierarchy for `fabric` in `sink`.
    pub fn new(fabric: &Fabric, opts: TraceOptions, mut sink: Box<dyn WaveSink>) -> io::Result<Tracer> {
        let n = fabric.topo.nodes();
        let r = &fabric.routers;
        let (net, ports, vcs) = (r.params.net_ports as usize, r.ports(), r.vcs());
        let k = r.params.nic_channels as usize;
        let lanes = r.params.link_width as usize;
        // Output VCs count the credits of the network buffers; input VCs hold up to the
        // deepest class.
        let (depth, deepest) = (r.params.buffer_flits as u64, r.params.deepest_buffer() as u64);
        let traced: Vec<NodeId> = match &opts.nodes {
            None => (0..n as u32).map(NodeId).collect(),
            Some(v) => v.iter().map(|&x| NodeId(x)).collect(),
        };
        let mut slot = vec![NONE; n];
        for (i, nd) in traced.iter().enumerate() {
            slot[nd.idx()] = i as u32;
        }
        let topo = &fabric.topo;
        // Port names: network ports by the direction their link leaves in, NIC channels
        // `inj`/`ej` (numbered when a node has several).
        let chan = |dir: &str, ch: usize| if k == 1 { dir.to_string() } else { format!("{dir}{ch}") };
        let route_names: Vec<String> = (0..net).map(|o| topo.port_name(o)).chain((0..k).map(|ch| chan("ej", ch))).collect();
        let mut t = Tracer {
            sink: None,
            opts,
            signals: Vec::new(),
            traced: traced.clone(),
            route_names: route_names.clone(),
            owner_names: Vec::new(),
            clk: 0,
            in_port: vec![NONE; traced.len() * ports],
            va_last: vec![0; traced.len()],
            va_recheck: vec![false; traced.len()],
            va_granted: vec![0; traced.len()],
            sa_now: vec![(0, 0); traced.len()],
            sa_touched: Vec::new(),
            last: Vec::new(),
            slot,
            net,
            vcs,
            lanes,
            k,
            links: vec![LinkSigs { valid: NONE, flags: NONE, vc: NONE, packet: NONE, dest: NONE, msg: NONE }; traced.len() * net * lanes],
            ivcs: Vec::new(),
            ivc_start: vec![0],
            ivc_last: Vec::new(),
            ivc_live: Vec::new(),
            live_start: vec![0],
            live_bit: Vec::new(),
            ivc_pushes: Vec::new(),
            ivc_entry: vec![NONE; n * ports * vcs],
            by_op: Vec::new(),
            ports: Vec::new(),
            port_start: vec![0],
            credit_last: Vec::new(),
            port_hot: Vec::new(),
            counted: Vec::new(),
            reads_credits: Vec::new(),
            credit_now: Vec::new(),
            returns: std::collections::VecDeque::new(),
            touched: Vec::new(),
            port_of: vec![NONE; traced.len() * net],
            owner_free: 0,
            owner_frees: Vec::new(),
            nic_inject: Vec::new(),
            nic_eject: Vec::new(),
            nic_queue: Vec::new(),
            queue_last: Vec::new(),
            failed: Vec::new(),
            inj: Vec::new(),
            ej: Vec::new(),
            pulsed: Vec::new(),
            high: Vec::new(),
            high_now: Vec::new(),
            open: None,
            emit: true,
            started: false,
            done: false,
            error: None,
            link_flits: 0,
            deps: Vec::new(),
            lane_used: vec![0; traced.len() * net],
            masks: Vec::new(),
            batch: Vec::with_capacity(BATCH + 4096),
            limit: None,
        };
        let mut path: Vec<String> = Vec::new();
        struct Decl<'a> {
            sink: &'a mut dyn WaveSink,
            path: &'a mut Vec<String>,
        }
        impl Decl<'_> {
            fn scope(&mut self, name: String) -> io::Result<()> {
                self.sink.scope(&name)?;
                self.path.push(name);
                Ok(())
            }
            fn up(&mut self) -> io::Result<()> {
                self.path.pop();
                self.sink.upscope()
            }
        }
        let vc_bits = bits_for(vcs as u64 - 1);
        let route_bits = bits_for(route_names.len() as u64 - 1);
        let out_vc_bits = bits_for(vcs.max(r.params.ejection_vcs as usize) as u64 - 1);
        let (credit_bits, buf_bits) = (bits_for(depth), bits_for(deepest));
        // `owner`: an input VC's local index (port × VCs + VC), all ones when free.
        let owner_bits = bits_for((ports * vcs) as u64);
        let owner_free = (1u64 << owner_bits) - 1;
        t.owner_free = owner_free;
        for p in 0..ports {
            let port = if p < net { format!("in_{}", topo.port_name(p)) } else { chan("inj", p - net) };
            t.owner_names.extend((0..vcs).map(|vc| ((p * vcs + vc) as u64, format!("{port}.vc{vc}"))));
        }
        t.owner_names.push((owner_free, "-".to_string()));
        {
            let mut d = Decl { sink: sink.as_mut(), path: &mut path };
            let var = |d: &mut Decl,
                       t: &mut Tracer,
                       name: &str,
                       width: u32,
                       node: usize,
                       group: &str,
                       init: u64,
                       tr: Option<&'static str>|
             -> io::Result<usize> {
                let h = d.sink.var(name, width)?;
                debug_assert_eq!(h, t.signals.len());
                let mut full = format!("{}.{}", d.path.join("."), name);
                if width > 1 {
                    full += &format!("[{}:0]", width - 1);
                }
                t.signals.push(SignalInfo { name: full, width, node, group: group.to_string(), translate: tr });
                t.last.push(init);
                Ok(h)
            };
            d.scope("top".into())?;
            t.clk = var(&mut d, &mut t, "clk", 1, usize::MAX, "clk", 0, None)? as u32;
            for (i, &node) in traced.iter().enumerate() {
                d.scope(topo.scope_name(node))?;
                d.scope("router".into())?;
                for o in 0..net {
                    if fabric.downstream(r.port_index(node, o)).is_none() {
                        continue;
                    }
                    let g = format!("out_{}", topo.port_name(o));
                    d.scope(g.clone())?;
                    for lane in 0..lanes {
                        let lg = if lanes > 1 {
                            d.scope(format!("lane{lane}"))?;
                            format!("{g}.lane{lane}")
                        } else {
                            g.clone()
                        };
                        let s = LinkSigs {
                            valid: var(&mut d, &mut t, "valid", 1, i, &lg, 0, None)? as u32,
                            flags: var(&mut d, &mut t, "flags", 3, i, &lg, 0, Some("flags"))? as u32,
                            vc: var(&mut d, &mut t, "vc", vc_bits, i, &lg, 0, None)? as u32,
                            packet: var(&mut d, &mut t, "packet", 32, i, &lg, 0, None)? as u32,
                            dest: var(&mut d, &mut t, "dest", 32, i, &lg, 0, None)? as u32,
                            msg: var(&mut d, &mut t, "msg", 32, i, &lg, 0, None)? as u32,
                        };
                        t.links[(i * net + o) * lanes + lane] = s;
                        if lanes > 1 {
                            d.up()?;
                        }
                    }
                    if fabric.faults.is_some() {
                        // High from the cycle the link (or a router at its end) fails.
                        let s = var(&mut d, &mut t, "failed", 1, i, &g, 0, None)?;
                        t.failed.push((s as u32, r.port_index(node, o) as u32));
                    }
                    t.port_of[i * net + o] = t.ports.len() as u32;
                    for vc in 0..vcs {
                        d.scope(format!("vc{vc}"))?;
                        let sig = var(&mut d, &mut t, "credits", credit_bits, i, &format!("{g}.credits"), depth, None)?;
                        let owner = var(&mut d, &mut t, "owner", owner_bits, i, &format!("{g}.credits"), owner_free, Some("owner"))?;
                        if vc == 0 {
                            t.ports.push(PortSigs { op: r.port_index(node, o) as u32, sig: sig as u32 });
                        }
                        debug_assert_eq!(sig, t.ports.last().unwrap().sig as usize + 2 * vc, "credits signals in VC order");
                        debug_assert_eq!(owner, sig + 1);
                        t.credit_last.push(depth as u16);
                        d.up()?;
                    }
                    t.port_hot.push(true);
                    d.up()?;
                }
                for p in 0..ports {
                    if p < net && fabric.upstream(r.port_index(node, p)).is_none() {
                        continue;
                    }
                    let g = if p < net { format!("in_{}", topo.port_name(p)) } else { chan("inj", p - net) };
                    d.scope(g.clone())?;
                    let sa = var(&mut d, &mut t, "sa_req", vcs as u32, i, &g, 0, None)?;
                    let gnt = var(&mut d, &mut t, "sa_gnt", vcs as u32, i, &g, 0, None)?;
                    debug_assert_eq!(gnt, sa + 1);
                    t.in_port[i * ports + p] = sa as u32;
                    for vc in 0..vcs {
                        d.scope(format!("vc{vc}"))?;
                        let gg = format!("{g}.vc{vc}");
                        let occ = var(&mut d, &mut t, "occupancy", buf_bits, i, &gg, 0, None)?;
                        let state = var(&mut d, &mut t, "state", 2, i, &gg, 0, Some("state"))?;
                        let va_req = var(&mut d, &mut t, "va_req", 1, i, &gg, 0, None)?;
                        let va_gnt = var(&mut d, &mut t, "va_gnt", 1, i, &gg, 0, None)?;
                        let route = var(&mut d, &mut t, "route", route_bits, i, &gg, 0, Some("route"))?;
                        let out_vc = var(&mut d, &mut t, "out_vc", out_vc_bits, i, &gg, 0, None)?;
                        debug_assert_eq!(
                            [state, va_req, va_gnt, route, out_vc],
                            [1, VA_REQ, VA_GNT, ROUTE, OUT_VC].map(|k| occ + k as usize)
                        );
                        let iv = r.ivc_index(node, p, vc);
                        t.ivc_entry[iv] = t.ivcs.len() as u32;
                        t.ivcs.push(IvcSigs { iv: iv as u32, occ: occ as u32, up: NONE });
                        t.ivc_last.push(0);
                        d.up()?;
                    }
                    d.up()?;
                }
                d.up()?;
                d.scope("nic".into())?;
                let h = var(&mut d, &mut t, "inject_valid", k as u32, i, "nic", 0, None)?;
                t.nic_inject.push(h as u32);
                let h = var(&mut d, &mut t, "eject_valid", k as u32, i, "nic", 0, None)?;
                t.nic_eject.push(h as u32);
                let h = var(&mut d, &mut t, "queue", 16, i, "nic", 0, None)?;
                t.nic_queue.push(h as u32);
                t.queue_last.push(0);
                for dir in ["inj", "ej"] {
                    for ch in 0..k {
                        let g = format!("nic.{}", chan(dir, ch));
                        d.scope(chan(dir, ch))?;
                        let s = ChanSigs {
                            valid: var(&mut d, &mut t, "valid", 1, i, &g, 0, None)? as u32,
                            flags: var(&mut d, &mut t, "flags", 3, i, &g, 0, Some("flags"))? as u32,
                            packet: var(&mut d, &mut t, "packet", 32, i, &g, 0, None)? as u32,
                            msg: var(&mut d, &mut t, "msg", 32, i, &g, 0, None)? as u32,
                        };
                        if dir == "inj" {
                            t.inj.push(s);
                        } else {
                            t.ej.push(s);
                        }
                        d.up()?;
                    }
                }
                d.up()?;
                d.up()?;
                let lo = *t.ivc_start.last().unwrap() as usize;
                let words = (t.ivcs.len() - lo).div_ceil(64);
                let w0 = *t.live_start.last().unwrap();
                t.live_bit.extend((0..t.ivcs.len() - lo).map(|j| (w0 + (j / 64) as u32, (j % 64) as u8)));
                t.live_start.push(w0 + words as u32);
                t.ivc_start.push(t.ivcs.len() as u32);
                t.port_start.push(t.ports.len() as u32);
            }
            d.up()?;
        }
        sink.end_definitions()?;
        assert!(t.signals.len() <= crate::sink::ops::MAX_VARS, "too many signals");
        t.pulsed = vec![0; t.signals.len().div_ceil(64)];
        t.ivc_live = vec![0; *t.live_start.last().unwrap() as usize];
        t.ivc_pushes = vec![0; t.ivcs.len()];
        // Count the credits of ports whose downstream VCs are traced.
        t.counted = vec![false; t.ports.len()];
        t.credit_now = t.credit_last.clone();
        for e in 0..t.ivcs.len() {
            let (node, p, vc) = r.ivc_location(t.ivcs[e].iv as usize);
            let Some(op) = (p < net).then(|| fabric.upstream(r.port_index(node, p))).flatten() else { continue };
            let (up_node, o) = (op / ports, op % ports);
            let i = t.slot[up_node];
            if i == NONE {
                continue;
            }
            let k = t.port_of[i as usize * net + o];
            if k != NONE {
                t.ivcs[e].up = k * vcs as u32 + vc as u32;
                t.counted[k as usize] = true;
            }
        }
        t.reads_credits = (0..t.traced.len()).map(|i| (t.port_start[i]..t.port_start[i + 1]).any(|k| !t.counted[k as usize])).collect();
        t.by_op = (0..n * ports)
            .map(|op| {
                let (node, o) = (op / ports, op % ports);
                let down = fabric.downstream(op).map_or(NONE, |ip| t.ivc_entry[ip * vcs]);
                let down_bit = if down == NONE {
                    NONE
                } else {
                    let (w, b) = t.live_bit[down as usize];
                    w << 6 | b as u32
                };
                let i = t.slot[node];
                let port = if i == NONE || o >= net { NONE } else { i * net as u32 + o as u32 };
                let port_sigs = if port == NONE { NONE } else { t.port_of[port as usize] };
                OpInfo { down, down_bit, port, port_sigs }
            })
            .collect();
        t.sink = Some(sink);
        Ok(t)
    }
}
