//! The waveform tracer: a [`Probe`] that turns each simulated cycle into value changes, with
//! one scope per node, its router, each port and VC, named as RTL would be: nodes by their
//! coordinates ([`fabric::Topology::scope_name`]), ports by the direction their link leaves
//! in ([`fabric::Topology::port_name`]), the NIC's channels `inj`/`ej` (numbered when a
//! node has several):
//!
//! ```text
//! top.clk
//! top.x1_y2.router.out_xp.{valid, flags[2:0], vc, packet[31:0], dest[31:0], msg[31:0]}
//! top.x1_y2.router.out_xp.vc0.credits          credits of output VC 0 (free downstream slots)
//! top.x1_y2.router.out_xp.vc0.owner            the input VC holding output VC 0 (`in_xm.vc1`)
//! top.x1_y2.router.in_xm.{sa_req, sa_gnt}      switch requests and grants, a bit per VC
//! top.x1_y2.router.in_xm.vc0.{occupancy, state[1:0], va_req, va_gnt, route, out_vc}
//! top.x1_y2.router.inj.vc0.{...}               the NIC injection channel's buffer
//! top.x1_y2.nic.{inject_valid, eject_valid, queue[15:0]}
//! top.x1_y2.nic.inj.{valid, flags, packet, msg}, top.x1_y2.nic.ej.{...}
//! ```
//!
//! Timing: the dump's times are half cycles (the sinks scale them to the clock period):
//! `clk` rises at the start of each cycle and falls half-way; every other signal changes on
//! a rising edge and shows the state at the end of the cycle. At cycle t `valid` is high if
//! a flit moved in cycle t; `flags` is {valid, tail, head} (shown as -, BODY, HEAD, TAIL,
//! HEADTAIL); `vc`, `packet`, `dest` and `msg` describe the last flit that moved (they hold,
//! like a data register, while `valid` is low). `va_req`, `va_gnt`, `sa_req` and `sa_gnt`
//! are high in the cycle the allocators saw the request or gave the grant; `route` and
//! `out_vc` hold the output port and VC of the VC's last grant (a packet the router
//! replicates has a grant per branch: `owner` on each output VC shows them all). `owner`
//! holds the input VC that output VC is allocated to, from its grant to the cycle its tail
//! leaves (then `-`, free; the save file names input VCs like `in_xm.vc1`). Buffer occupancy, VC state
//! (0 IDLE, 1 RC, 2 VA, 3 ACTIVE), credits and the NIC queue show the registers' values at
//! the start of cycle t. The GTKWave save file shows flags, states and ports by name. `msg`
//! is the message (broadcast) the packet carries, `packet` its packet-table slot, `dest` its
//! destination node ([`DEST_BROADCAST`] and the span for a broadcast). With 2^ν-wide links
//! each output port has `lane<k>` sub-scopes.

use crate::sink::{WaveSink, ops};
use fabric::Fabric;
use fabric::probe::{CycleView, Probe};
use router::{NONE, NodeId};
use std::io;

/// Which part of a run to trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// Nodes to trace (all if `None`), ascending.
    pub nodes: Option<Vec<u32>>,
    /// First and last cycle traced (inclusive).
    pub from: u64,
    pub to: u64,
    /// Clock period in ps.
    pub clock_ps: u64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions { nodes: None, from: 0, to: u64::MAX, clock_ps: 1000 }
    }
}

/// Translate-filter names of `flags` = {valid, tail, head}.
pub const FLAG_NAMES: [(u64, &str); 5] = [(0, "-"), (4, "BODY"), (5, "HEAD"), (6, "TAIL"), (7, "HEADTAIL")];

/// The signals of one output link (lane); `valid` is NONE where the port has no link.
#[derive(Clone, Copy, Debug)]
struct LinkSigs {
    valid: u32,
    flags: u32,
    vc: u32,
    packet: u32,
    dest: u32,
    msg: u32,
}

/// `dest` of a broadcast packet: this bit, and the dimensions its tree spans.
pub const DEST_BROADCAST: u64 = 1 << 31;

/// The signals of one NIC channel.
#[derive(Clone, Copy, Debug)]
struct ChanSigs {
    valid: u32,
    flags: u32,
    packet: u32,
    msg: u32,
}

/// A declared signal: its full GTKWave name, width, and which scope group it belongs to.
#[derive(Clone, Debug)]
pub struct SignalInfo {
    /// `top.n0005.router.out2.kind[2:0]`
    pub name: String,
    pub width: u32,
    /// Index of the traced node.
    pub node: usize,
    /// `out2`, `in1.vc0`, `nic`, ... (the group the save file puts it in).
    pub group: String,
    /// Display as a named value (`flags`, `state`, `route`).
    pub translate: Option<&'static str>,
}

/// The occupancy signal of one input VC (`iv` its global index); the next ones are its
/// `state`, `va_req`, `va_gnt`, `route` and `out_vc` ([`VA_REQ`] and on). `up`: the traced output VC upstream (its index in `Tracer::credit_last`) that
/// gets a credit back when a flit leaves this VC, or NONE.
#[derive(Clone, Copy, Debug)]
struct IvcSigs {
    iv: u32,
    occ: u32,
    up: u32,
}

/// The credits and owner signals of one output port (global index `op`): VC `v`'s credits
/// are `sig + 2v`, its owner `sig + 2v + 1`.
#[derive(Clone, Copy, Debug)]
struct PortSigs {
    op: u32,
    sig: u32,
}

/// What a flit leaving on an output port (global index) of the fabric touches here, looked
/// up once: the downstream input VC 0's entry in `Tracer::ivcs` and its live bit (word
/// `<< 6 | bit`), or NONE; the traced port (`i * net + o`) and its index in `Tracer::ports`,
/// or NONE. (Kept for every port of the fabric: 16 bytes each, also when few nodes are
/// traced.)
#[derive(Clone, Copy, Debug)]
struct OpInfo {
    down: u32,
    down_bit: u32,
    port: u32,
    port_sigs: u32,
}

/// Offsets of an input VC's allocator signals from its occupancy signal.
const VA_REQ: u32 = 2;
const VA_GNT: u32 = 3;
const ROUTE: u32 = 4;
const OUT_VC: u32 = 5;

/// Hand the value changes to the sink in batches of about this many words.
const BATCH: usize = 1 << 16;

/// The tracer. Create it before the run, attach it with [`Fabric::add_probe`], and call
/// [`Tracer::finish`] on it afterwards.
///
/// Each cycle it compares what can have changed with the values last written and puts only
/// the changes, with their timestamps, in a batch ([`crate::sink::ops`]) that goes to the
/// sink whole: on a [`crate::Threaded`] sink the encoding happens on another thread.
pub struct Tracer {
    sink: Option<Box<dyn WaveSink>>,
    opts: TraceOptions,
    pub signals: Vec<SignalInfo>,
    pub traced: Vec<NodeId>,
    /// Names of the router's ports (network ports by direction, then the NIC channels'
    /// ejection side), the values `route` shows.
    pub route_names: Vec<String>,
    /// The values `owner` shows: each input VC's local index and name (`in_xm.vc1`), and
    /// free (`-`).
    pub owner_names: Vec<(u64, String)>,
    /// The `clk` signal.
    clk: u32,
    /// Per traced node × port: its input port's `sa_req` signal (`sa_gnt` the next), or NONE.
    in_port: Vec<u32>,
    /// Per traced node: the VCs requesting VC allocation as last written, and whether its
    /// requesters must be looked at again next cycle (some were granted).
    va_last: Vec<u128>,
    va_recheck: Vec<bool>,
    /// Per traced node: VCs granted VC allocation in this cycle.
    va_granted: Vec<u128>,
    /// Per traced node: this cycle's switch requests and grants (a bit per local VC), and
    /// the nodes that have some.
    sa_now: Vec<(u128, u128)>,
    sa_touched: Vec<u32>,
    /// Each signal's value as last written (before the first timestamp: its initial value).
    last: Vec<u64>,
    slot: Vec<u32>,
    net: usize,
    vcs: usize,
    lanes: usize,
    k: usize,
    /// Per traced node × network port × lane (`valid` NONE where the port has no link).
    links: Vec<LinkSigs>,
    /// Runs with faults: each traced output link's `failed` signal and its global port.
    failed: Vec<(u32, u32)>,
    /// Register signals. Their values last written are kept here, packed and per traced
    /// node, not in `last` (which gets them only for the dump).
    ///
    /// Input VCs, per traced node `i` the range `ivc_start[i]..ivc_start[i + 1]`; the value
    /// last written as `occupancy << 2 | state`; a bit in `ivc_live` unless that value is 0
    /// (empty and idle) and no flit has come in since. Node `i`'s bits start at word
    /// `live_start[i]` (entry `ivc_start[i] + j` is bit `j`).
    ivcs: Vec<IvcSigs>,
    ivc_start: Vec<u32>,
    ivc_last: Vec<u32>,
    ivc_live: Vec<u64>,
    live_start: Vec<u32>,
    /// Per entry of `ivcs`, its word and bit in `ivc_live`.
    live_bit: Vec<(u32, u8)>,
    /// Per entry of `ivcs`, the flits written into it in this cycle.
    ivc_pushes: Vec<u8>,
    /// Per input VC of the fabric (global index), its entry in `ivcs` or NONE.
    ivc_entry: Vec<u32>,
    /// Per output port of the fabric (global index).
    by_op: Vec<OpInfo>,
    /// Output ports with credits, per traced node the range `port_start[i]..port_start[i + 1]`;
    /// the credits last written (port `k`'s VC `v` at `k * vcs + v`); set in `port_hot` if
    /// the credits may have changed since (a flit left, or credits were on the return line).
    ///
    /// Where the node downstream is traced too, the credits are counted here from events
    /// instead (`counted`): a flit that leaves takes one (`credit_now`), a flit that leaves
    /// the downstream VC (its occupancy drops by more than flits came in) gives one back,
    /// visible `credit_delay + 1` cycles later (`returns`, in order of that cycle).
    ports: Vec<PortSigs>,
    port_start: Vec<u32>,
    credit_last: Vec<u16>,
    port_hot: Vec<bool>,
    counted: Vec<bool>,
    /// Per traced node: some of its ports' credits are read from the router.
    reads_credits: Vec<bool>,
    credit_now: Vec<u16>,
    returns: std::collections::VecDeque<(u64, u32)>,
    /// Counted credits that changed in this cycle (indices into `credit_now`).
    touched: Vec<u32>,
    /// Per traced node × network port: its index in `ports`, or NONE.
    port_of: Vec<u32>,
    /// `owner`'s value for a free output VC, and the owners this cycle's tails free.
    owner_free: u64,
    owner_frees: Vec<u32>,
    nic_inject: Vec<u32>,
    nic_eject: Vec<u32>,
    nic_queue: Vec<u32>,
    queue_last: Vec<u16>,
    /// Per traced node × channel.
    inj: Vec<ChanSigs>,
    ej: Vec<ChanSigs>,
    /// Pulse signals set in the current cycle (a bit per signal), and those set high in the
    /// last traced cycle and in this one.
    pulsed: Vec<u64>,
    high: Vec<u32>,
    high_now: Vec<u32>,
    /// The last timestamp written; changes still go to it.
    open: Option<u64>,
    /// Write changes (false before the trace window and while the values of the first dump
    /// are gathered).
    emit: bool,
    started: bool,
    done: bool,
    error: Option<io::Error>,
    /// Flits recorded on link `valid` signals (for checks).
    pub link_flits: u64,
    deps: Vec<(u32, u8, router::Flit)>,
    lane_used: Vec<u8>,
    masks: Vec<(u32, u64)>,
    /// Timestamps and changes not yet handed to the sink.
    batch: Vec<u64>,
    /// Where the sink stops for `--trace-limit` (then the tracer stops too).
    limit: Option<crate::sink::SizeLimit>,
}

fn bits_for(max: u64) -> u32 {
    (64 - max.leading_zeros()).max(1)
}

impl Tracer {
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

    /// Stop sampling once the sink has stopped at `limit` (the sink enforces it).
    pub fn set_limit(&mut self, limit: crate::sink::SizeLimit) {
        self.limit = Some(limit);
    }

    /// Start cycle `t`'s timestamp, its clock's rising edge: the dump's times are half
    /// cycles (the sink scales them), `clk` high at 2t and low at 2t + 1. The cycles since
    /// the last timestamp get their edges first.
    #[inline]
    fn time(&mut self, t: u64) {
        if let Some(p) = self.open {
            self.clock_edges(p, t);
        }
        ops::push_time(&mut self.batch, 2 * t);
        self.open = Some(t);
        self.set(self.clk, 1);
    }

    /// The falling edge of cycle `p` (the open one) and both edges of every cycle after it
    /// and before `t`.
    #[cold]
    fn clock_edges(&mut self, p: u64, t: u64) {
        ops::push_time(&mut self.batch, 2 * p + 1);
        self.set(self.clk, 0);
        for c in p + 1..t {
            ops::push_time(&mut self.batch, 2 * c);
            self.set(self.clk, 1);
            ops::push_time(&mut self.batch, 2 * c + 1);
            self.set(self.clk, 0);
        }
    }

    /// Set signal `s` to `v` at the open timestamp.
    #[inline(always)]
    fn set(&mut self, s: u32, v: u64) {
        let s = s as usize;
        if self.last[s] != v {
            self.last[s] = v;
            if self.emit {
                ops::push_change(&mut self.batch, s, v);
            }
        }
    }

    /// Set a signal that holds its value (not 0) for this cycle only.
    #[inline(always)]
    fn pulse(&mut self, s: u32, v: u64) {
        debug_assert!(v != 0);
        self.set(s, v);
        self.pulsed[s as usize / 64] |= 1 << (s % 64);
        self.high_now.push(s);
    }

    /// Pulses of the previous traced cycle go low unless this cycle set them again.
    fn lows(&mut self) {
        let high = std::mem::take(&mut self.high);
        for &s in &high {
            if self.pulsed[s as usize / 64] & 1 << (s % 64) == 0 {
                self.set(s, 0);
            }
        }
        self.high = std::mem::replace(&mut self.high_now, high);
        self.high_now.clear();
        for &s in &self.high {
            self.pulsed[s as usize / 64] &= !(1 << (s % 64));
        }
    }

    /// Every signal's value (the first timestamp's dump).
    fn dump(&mut self) {
        // The registers' values are kept apart.
        for (p, &v) in self.ivcs.iter().zip(&self.ivc_last) {
            self.last[p.occ as usize] = (v >> 2) as u64;
            self.last[p.occ as usize + 1] = (v & 3) as u64;
        }
        for (k, p) in self.ports.iter().enumerate() {
            for v in 0..self.vcs {
                self.last[p.sig as usize + 2 * v] = self.credit_last[k * self.vcs + v] as u64;
            }
        }
        for (&s, &v) in self.nic_queue.iter().zip(&self.queue_last) {
            self.last[s as usize] = v as u64;
        }
        for (s, &v) in self.last.iter().enumerate() {
            ops::push_change(&mut self.batch, s, v);
        }
    }

    /// Register values at the end of cycle `t`: those that differ from the values written
    /// go to timestamp `t + 1` (or, before the traced window, are only remembered). Input VCs
    /// that were empty and idle and took no flit since, and output ports whose credits
    /// cannot have changed, are not looked at.
    fn sample_registers(&mut self, f: &Fabric, t: u64) {
        let r = &f.routers;
        let credit_ready = t + 1 + r.params.pipeline.credit_delay as u64;
        let Tracer {
            traced,
            ivcs,
            ivc_start,
            ivc_last,
            ivc_live,
            live_start,
            ivc_pushes,
            ports,
            port_start,
            credit_last,
            port_hot,
            counted,
            reads_credits,
            credit_now,
            returns,
            touched,
            nic_queue,
            queue_last,
            batch,
            emit,
            vcs,
            ..
        } = self;
        let (emit, vcs) = (*emit, *vcs);
        let mut change = |s: usize, v: u64| {
            if emit {
                ops::push_change(batch, s, v);
            }
        };
        for (i, &node) in traced.iter().enumerate() {
            // Registers change only where the router was evaluated, holds flits, has credits
            // coming back or just arrived (a port still `hot`), or its NIC works.
            let (plo, phi) = if reads_credits[i] { (port_start[i] as usize, port_start[i + 1] as usize) } else { (0, 0) };
            if !(f.is_active(node) || r.may_change(node) || f.nics.busy(node) || port_hot[plo..phi].contains(&true)) {
                continue;
            }
            let (lo, hi) = (ivc_start[i] as usize, ivc_start[i + 1] as usize);
            let (sigs, lasts, pushes) = (&ivcs[lo..hi], &mut ivc_last[lo..hi], &mut ivc_pushes[lo..hi]);
            let live = &mut ivc_live[live_start[i] as usize..live_start[i + 1] as usize];
            for (w, word) in live.iter_mut().enumerate() {
                let mut bits = *word;
                while bits != 0 {
                    let j = 64 * w + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = sigs[j];
                    let iv = p.iv as usize;
                    let len = r.occupancy_of(iv) as u32;
                    let now = len << 2 | r.vc_activity(iv) as u32;
                    let was = std::mem::replace(&mut lasts[j], now);
                    if (now ^ was) >> 2 != 0 {
                        change(p.occ as usize, len as u64);
                    }
                    if (now ^ was) & 3 != 0 {
                        change(p.occ as usize + 1, (now & 3) as u64);
                    }
                    // Flits that left give credits back upstream.
                    let came = std::mem::take(&mut pushes[j]) as u32;
                    debug_assert!((was >> 2) + came >= len, "input VC {iv}: {} flits, {came} came in, now {len}", was >> 2);
                    let left = ((was >> 2) + came).saturating_sub(len);
                    if left > 0 && p.up != NONE {
                        for _ in 0..left {
                            returns.push_back((credit_ready, p.up));
                        }
                    }
                    // Empty and idle: it stays so until a flit comes in (`wake`).
                    if now == 0 {
                        *word &= !(1 << (j % 64));
                    }
                }
            }
            // Credits of ports whose downstream is not traced, read from the router.
            let ports = ports[plo..phi].iter().zip(&counted[plo..phi]).zip(&mut port_hot[plo..phi]);
            for (k, ((p, &counted), hot)) in (plo..).zip(ports) {
                if counted {
                    continue;
                }
                let op = p.op as usize;
                let in_flight = r.credits_in_flight(op) > 0;
                // Credits change when a flit leaves (`hot`, set by `departures`) or a credit
                // comes back from the return line.
                if !(in_flight || *hot) {
                    continue;
                }
                *hot = in_flight;
                for (v, last) in credit_last[k * vcs..(k + 1) * vcs].iter_mut().enumerate() {
                    // After the commit of `t`, the credits the router will see in `t + 1`.
                    let now = r.credits(op, v);
                    if now != *last {
                        *last = now;
                        change(p.sig as usize + 2 * v, now as u64);
                    }
                }
            }
            let q = f.nics.queued(node).min(0xffff) as u16;
            if q != queue_last[i] {
                queue_last[i] = q;
                change(nic_queue[i] as usize, q as u64);
            }
        }
        // Counted credits: those back by `t + 1`, then every one that changed.
        while let Some(&(ready, c)) = returns.front() {
            if ready > t + 1 {
                break;
            }
            returns.pop_front();
            credit_now[c as usize] += 1;
            touched.push(c);
        }
        for &c in touched.iter() {
            let (c, now) = (c as usize, credit_now[c as usize]);
            if now != credit_last[c] {
                credit_last[c] = now;
                change(ports[c / vcs].sig as usize + 2 * (c % vcs), now as u64);
            }
        }
        touched.clear();
        if cfg!(debug_assertions) {
            for (k, p) in ports.iter().enumerate().filter(|&(k, _)| counted[k]) {
                for v in 0..vcs {
                    let router = r.credits_at(p.op as usize, v, t + 1);
                    assert_eq!(credit_now[k * vcs + v], router, "counted credits of output port {} VC {v} at cycle {}", p.op, t + 1);
                }
            }
        }
    }

    /// A flit enters input VC `iv` (global index) in this cycle.
    #[inline(always)]
    fn wake(&mut self, iv: usize) {
        let e = self.ivc_entry[iv];
        if e != NONE {
            let (w, b) = self.live_bit[e as usize];
            self.ivc_live[w as usize] |= 1 << b;
            self.ivc_pushes[e as usize] += 1;
        }
    }

    /// The `failed` signals of the traced links: high once their link is dead.
    fn failures(&mut self, f: &Fabric) {
        let Some(faults) = f.faults.as_deref() else { return };
        let ports = f.routers.ports();
        for k in 0..self.failed.len() {
            let (s, op) = self.failed[k];
            self.set(s, faults.output_dead(op as usize, ports) as u64);
        }
    }

    /// A flit leaves on output port `op` (global index) for VC `vc`: it enters the VC
    /// downstream and takes a credit. Returns the traced port (`i * net + o`) or NONE.
    #[inline(always)]
    fn departure(&mut self, op: usize, vc: u8, tail: bool) -> u32 {
        let info = self.by_op[op];
        if info.down != NONE {
            // The port's VCs are consecutive entries and bits.
            let bit = (info.down_bit & 63) + vc as u32;
            self.ivc_live[(info.down_bit >> 6) as usize + (bit >> 6) as usize] |= 1 << (bit & 63);
            self.ivc_pushes[info.down as usize + vc as usize] += 1;
        }
        if info.port_sigs != NONE {
            let k = info.port_sigs as usize;
            if tail {
                // The output VC is free from the cycle its tail leaves (after this cycle's
                // grants: a one-flit packet may be granted and leave in one cycle).
                self.owner_frees.push(self.ports[k].sig + 2 * vc as u32 + 1);
            }
            if self.counted[k] {
                let c = k * self.vcs + vc as usize;
                self.credit_now[c] -= 1;
                self.touched.push(c as u32);
            } else {
                self.port_hot[k] = true;
            }
        }
        info.port
    }

    /// This cycle's link activity: flits into input VCs and credits taken, and the link
    /// signals (before the traced window, `show` false, only the values they hold).
    fn departures(&mut self, v: &CycleView<'_>, show: bool) {
        if self.lanes == 1 {
            // One flit per link and cycle: no lanes to assign.
            for d in v.departures {
                let port = self.departure(d.out_port as usize, d.vc, d.flit.is_tail());
                if port != NONE {
                    let s = self.links[port as usize];
                    if s.valid != NONE {
                        self.link(s, d.vc, d.flit, v.fabric, show);
                    }
                }
            }
            return;
        }
        let p = v.fabric.routers.ports();
        self.deps.clear();
        for d in v.departures {
            if self.departure(d.out_port as usize, d.vc, d.flit.is_tail()) != NONE {
                self.deps.push((d.out_port, d.vc, d.flit));
            }
        }
        // Flits of one port take its lanes in VC order.
        self.deps.sort_unstable_by_key(|&(op, vc, _)| (op, vc));
        let deps = std::mem::take(&mut self.deps);
        for &(op, vc, flit) in &deps {
            let (node, o) = (op as usize / p, op as usize % p);
            let i = self.slot[node] as usize;
            let lane = self.lane_used[i * self.net + o] as usize;
            self.lane_used[i * self.net + o] += 1;
            debug_assert!(lane < self.lanes, "more flits than lanes on output port {op}");
            let s = self.links[(i * self.net + o) * self.lanes + lane.min(self.lanes - 1)];
            if s.valid != NONE {
                self.link(s, vc, flit, v.fabric, show);
            }
        }
        for &(op, _, _) in &deps {
            let (node, o) = (op as usize / p, op as usize % p);
            self.lane_used[self.slot[node] as usize * self.net + o] = 0;
        }
        self.deps = deps;
    }

    /// A flit on a traced link: `valid` and `flags` pulse (if `show`); `vc`, `packet` and
    /// `msg` hold the last flit's values, followed before the window too so that its first
    /// dump shows them.
    #[inline]
    fn link(&mut self, s: LinkSigs, vc: u8, flit: router::Flit, f: &Fabric, show: bool) {
        let p = f.packets.get(flit.packet);
        let msg = p.msg;
        let dest = if p.is_broadcast() { DEST_BROADCAST | p.header.span as u64 } else { p.dest().0 as u64 };
        if show {
            self.pulse(s.valid, 1);
            self.pulse(s.flags, 4 | flit.flags.bits() as u64);
            self.link_flits += 1;
        }
        self.set(s.vc, vc as u64);
        self.set(s.packet, flit.packet.0 as u64);
        self.set(s.dest, dest);
        self.set(s.msg, msg as u64);
    }

    /// This cycle's allocations: switch requests and grants per input port (pulses, if
    /// `show`), VC grants (pulses) and the output port and VC they gave (held), and which
    /// VCs request VC allocation (those still waiting at the end of the cycle and those
    /// granted in it).
    fn allocators(&mut self, v: &CycleView<'_>, show: bool) {
        let r = &v.fabric.routers;
        let (ports, vcs, npv) = (r.ports(), self.vcs, r.ports() * self.vcs);
        let vmask = if vcs >= 64 { u64::MAX } else { (1u64 << vcs) - 1 };
        if show {
            for &(node, req) in &v.allocs.sa_requests {
                let i = self.slot[node as usize];
                if i != NONE {
                    let now = &mut self.sa_now[i as usize];
                    if *now == (0, 0) {
                        self.sa_touched.push(i);
                    }
                    now.0 |= req;
                }
            }
            for &iv in &v.allocs.sa_grants {
                let i = self.slot[iv as usize / npv];
                if i != NONE {
                    let now = &mut self.sa_now[i as usize];
                    if *now == (0, 0) {
                        self.sa_touched.push(i);
                    }
                    now.1 |= 1 << (iv as usize % npv);
                }
            }
            let touched = std::mem::take(&mut self.sa_touched);
            for &i in &touched {
                let (req, gnt) = std::mem::take(&mut self.sa_now[i as usize]);
                let mut left = req | gnt;
                while left != 0 {
                    let p = left.trailing_zeros() as usize / vcs;
                    let (r, g) = ((req >> (p * vcs)) as u64 & vmask, (gnt >> (p * vcs)) as u64 & vmask);
                    left &= !((vmask as u128) << (p * vcs));
                    let sig = self.in_port[i as usize * ports + p];
                    if sig == NONE {
                        continue;
                    }
                    if r != 0 {
                        self.pulse(sig, r);
                    }
                    if g != 0 {
                        self.pulse(sig + 1, g);
                    }
                }
            }
            self.sa_touched = touched;
            self.sa_touched.clear();
        }
        for g in &v.allocs.va_grants {
            let node = g.iv as usize / npv;
            let i = self.slot[node];
            if i == NONE {
                continue;
            }
            self.va_granted[i as usize] |= 1 << (g.iv as usize % npv);
            let e = self.ivc_entry[g.iv as usize];
            if e == NONE {
                continue;
            }
            let occ = self.ivcs[e as usize].occ;
            if show {
                self.pulse(occ + VA_GNT, 1);
            }
            self.set(occ + ROUTE, g.port as u64);
            self.set(occ + OUT_VC, g.vc as u64);
        }
        // The output VCs' owners (network ports; traced whether or not the input VC is).
        for g in &v.allocs.va_grants {
            let (node, port) = (g.iv as usize / npv, g.port as usize);
            let i = self.slot[node];
            if i == NONE || port >= self.net {
                continue;
            }
            let k = self.port_of[i as usize * self.net + port];
            if k != NONE {
                self.set(self.ports[k as usize].sig + 2 * g.vc as u32 + 1, (g.iv as usize % npv) as u64);
            }
        }
        let frees = std::mem::take(&mut self.owner_frees);
        for &s in &frees {
            self.set(s, self.owner_free);
        }
        self.owner_frees = frees;
        self.owner_frees.clear();
        for i in 0..self.traced.len() {
            let node = self.traced[i];
            let granted = std::mem::take(&mut self.va_granted[i]);
            // Requesters join only where the router registers work, and leave only by a
            // grant.
            if !(granted != 0 || self.va_recheck[i] || self.va_last[i] != 0 || r.has_work(node)) {
                continue;
            }
            self.va_recheck[i] = granted != 0;
            let now = r.va_requesters(node) | granted;
            let mut changed = now ^ self.va_last[i];
            self.va_last[i] = now;
            while changed != 0 {
                let l = changed.trailing_zeros() as usize;
                changed &= changed - 1;
                let e = self.ivc_entry[node.idx() * npv + l];
                if e != NONE {
                    self.set(self.ivcs[e as usize].occ + VA_REQ, (now >> l) as u64 & 1);
                }
            }
        }
    }

    /// Pulse each signal in `masks` with the OR of its masks.
    fn pulse_masks(&mut self) {
        if self.masks.is_empty() {
            return;
        }
        self.masks.sort_unstable();
        let masks = std::mem::take(&mut self.masks);
        let mut j = 0;
        while j < masks.len() {
            let (s, mut m) = masks[j];
            j += 1;
            while j < masks.len() && masks[j].0 == s {
                m |= masks[j].1;
                j += 1;
            }
            if m != 0 {
                self.pulse(s, m);
            }
        }
        self.masks = masks;
    }

    /// This cycle's NIC activity: flits into injection buffers and the NIC signals (before
    /// the traced window, `show` false, only the values they hold).
    fn nics(&mut self, v: &CycleView<'_>, show: bool) {
        self.masks.clear();
        let net = v.fabric.routers.params.net_ports as usize;
        for &(node, ch, flit) in v.injections {
            // The router picked the VC (one flit a channel a cycle: the current packet's).
            let vc = v.fabric.routers.injection_vc_in_use(node, ch as usize);
            self.wake(v.fabric.routers.ivc_index(node, net + ch as usize, vc));
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.inj[i as usize * self.k + ch as usize];
            let msg = v.fabric.packets.get(flit.packet).msg;
            self.chan(s, flit, msg, show);
            if show {
                self.masks.push((self.nic_inject[i as usize], 1 << ch));
            }
        }
        for &(node, ej, msg) in v.ejections {
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.ej[i as usize * self.k + ej.channel as usize];
            self.chan(s, ej.flit, msg, show);
            if show {
                self.masks.push((self.nic_eject[i as usize], 1 << ej.channel));
            }
        }
        // One value per signal: the channels of a node together.
        self.pulse_masks();
    }

    /// A flit through a traced NIC channel: pulses (if `show`) and held values, as [`Self::link`].
    fn chan(&mut self, s: ChanSigs, flit: router::Flit, msg: u32, show: bool) {
        if show {
            self.pulse(s.valid, 1);
            self.pulse(s.flags, 4 | flit.flags.bits() as u64);
        }
        self.set(s.packet, flit.packet.0 as u64);
        self.set(s.msg, msg as u64);
    }

    fn cycle_inner(&mut self, v: &CycleView<'_>) -> io::Result<()> {
        let t = v.t;
        if self.done {
            return Ok(());
        }
        if t < self.opts.from {
            // Before the window: follow the registers without writing them.
            self.emit = false;
            self.departures(v, false);
            self.failures(v.fabric);
            self.nics(v, false);
            self.allocators(v, false);
            self.sample_registers(v.fabric, t);
            self.emit = true;
            return Ok(());
        }
        if t > self.opts.to {
            return self.close(self.opts.to + 1);
        }
        // The dump of every signal's value comes first: at the window's start if this cycle
        // is later, or after this cycle's activity if it is the start.
        let dump_now = !self.started && t == self.opts.from;
        if !self.started {
            self.started = true;
            // The first timestamp's clock edge goes with the dump.
            self.emit = false;
            self.time(self.opts.from);
            self.emit = true;
            if dump_now {
                self.emit = false;
            } else {
                self.dump();
            }
        }
        match self.open {
            // Registers sampled after the last traced cycle are already at `t`.
            Some(p) if p == t => {}
            _ => {
                // The last traced cycle's pulses go low at its next timestamp.
                self.lows();
                self.time(t);
            }
        }
        self.departures(v, true);
        self.failures(v.fabric);
        self.nics(v, true);
        self.allocators(v, true);
        self.lows();
        if dump_now {
            self.emit = true;
            self.dump();
        }
        // Registers as seen from the next cycle.
        self.time(t + 1);
        self.sample_registers(v.fabric, t);
        if self.batch.len() >= BATCH {
            self.sink.as_mut().expect("tracer sink").ops(&mut self.batch)?;
            if self.limit.as_ref().is_some_and(|l| l.stopped()) {
                // The writer reached the size limit: nothing more goes to it.
                self.done = true;
                self.batch.clear();
            }
        }
        Ok(())
    }

    /// Write what is pending and stop tracing.
    fn close(&mut self, end: u64) -> io::Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        if !self.started {
            // Nothing happened inside the window: dump the values at its start.
            self.emit = false;
            self.time(self.opts.from);
            self.emit = true;
            self.dump();
        } else {
            // The last traced cycle's pulses go low at the timestamp after it.
            debug_assert!(self.open.is_some_and(|p| p <= end), "timestamp {:?} after the end {end}", self.open);
            self.lows();
        }
        // The last cycle's falling edge ends the dump.
        if let Some(p) = self.open {
            ops::push_time(&mut self.batch, 2 * p + 1);
            self.set(self.clk, 0);
        }
        let sink = self.sink.as_mut().expect("tracer sink");
        sink.ops(&mut self.batch)
    }

    /// Finish the dump at the end of the run (`end` = the first cycle not simulated).
    /// An error says why the file could not be written ("No space left on device"): the
    /// writer's own when it stopped, rather than the tracer's finding that it had.
    pub fn finish(mut self, end: u64) -> io::Result<()> {
        let first = match self.error.take() {
            Some(e) => Err(e),
            None => self.close(end.min(self.opts.to.saturating_add(1))),
        };
        let sink = self.sink.take().expect("tracer sink").finish();
        sink.and(first)
    }
}

impl Probe for Tracer {
    fn cycle(&mut self, view: &CycleView<'_>) {
        if let Err(e) = self.cycle_inner(view) {
            // An I/O error (disk full) ends tracing; `finish` reports it.
            self.error.get_or_insert(e);
            self.done = true;
        }
    }
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}
