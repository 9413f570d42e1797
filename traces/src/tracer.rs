//! The waveform tracer: a [`Probe`] that turns each simulated cycle into value changes, with
//! one scope per node, its router, each port and VC, named as RTL would be:
//!
//! ```text
//! top.n0005.router.out2.{valid, flags[2:0], vc, packet[31:0], msg[31:0]}
//! top.n0005.router.out2.vc0.credits          credits of output VC 0 (free downstream slots)
//! top.n0005.router.in1.vc0.{occupancy, state[1:0]}   network input port 1, VC 0
//! top.n0005.router.inj0.vc0.{occupancy, state[1:0]}  NIC injection channel 0's buffer
//! top.n0005.nic.{inject_valid, eject_valid, queue[15:0]}
//! top.n0005.nic.inj0.{valid, flags, packet, msg}, top.n0005.nic.ej0.{...}
//! ```
//!
//! Timing: at time t (one unit per cycle) `valid` is high if a flit moved in cycle t;
//! `flags` is {valid, tail, head} (shown as -, BODY, HEAD, TAIL, HEADTAIL); `vc`,
//! `packet` and `msg` describe the last flit that moved (they hold, like a data register,
//! while `valid` is low). Buffer occupancy, VC state (0 IDLE, 1 RC, 2 VA, 3 ACTIVE), credits and the NIC
//! queue show the registers' values at the start of cycle t. The GTKWave save file shows
//! flags and states by name. `msg` is the message (broadcast) the packet carries, `packet`
//! its packet-table slot. With 2^ν-wide links each output port has `lane<k>` sub-scopes.

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
    /// Clock period in ns (the dump's time unit).
    pub clock_ns: u32,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions { nodes: None, from: 0, to: u64::MAX, clock_ns: 1 }
    }
}

/// Translate-filter names of `flags` = {valid, tail, head}.
pub const FLAG_NAMES: [(u64, &str); 5] = [(0, "-"), (4, "BODY"), (5, "HEAD"), (6, "TAIL"), (7, "HEADTAIL")];

#[derive(Clone, Copy, Debug)]
struct LinkSigs {
    valid: usize,
    flags: usize,
    vc: usize,
    packet: usize,
    msg: usize,
}

#[derive(Clone, Copy, Debug)]
struct ChanSigs {
    valid: usize,
    flags: usize,
    packet: usize,
    msg: usize,
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
    /// Display as a named value (`kind`, `state`).
    pub translate: Option<&'static str>,
}

/// Occupancy and state signals of one input VC (`iv` its global index), and their values
/// last written, packed as `occupancy << 2 | state` (the same as in `Tracer::last`).
#[derive(Clone, Copy, Debug)]
struct IvcSigs {
    iv: u32,
    occ: u32,
    state: u32,
    last: u32,
}

/// Set in `IvcSigs::last` when a flit enters the VC: sample it even if it was empty and idle.
const WAKE: u32 = 1 << 31;

/// The credits signal of output VC `vc` of global output port `op`, and its value last
/// written (the same as in `Tracer::last`). `port` is the traced node's port index
/// (`i * net + o`).
#[derive(Clone, Copy, Debug)]
struct CreditSigs {
    op: u32,
    port: u32,
    vc: u16,
    last: u16,
    sig: u32,
}

/// Hand the value changes to the sink in batches of about this many words.
const BATCH: usize = 1 << 16;

/// The tracer. Create it before the run, attach it with [`Fabric::set_probe`], and call
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
    /// Each signal's value as last written (before the first timestamp: its initial value).
    last: Vec<u64>,
    slot: Vec<u32>,
    net: usize,
    vcs: usize,
    lanes: usize,
    k: usize,
    /// Per traced node × network port × lane (NONE-filled where the port has no link).
    links: Vec<Option<LinkSigs>>,
    /// Register signals, per traced node `i` the range `start[i]..start[i + 1]`.
    ivcs: Vec<IvcSigs>,
    ivc_start: Vec<u32>,
    /// Per input VC of the fabric (global index), its entry in `ivcs` or NONE.
    ivc_entry: Vec<u32>,
    credits: Vec<CreditSigs>,
    credit_start: Vec<u32>,
    /// Per traced node × network port: credits may have changed since the last sample (a
    /// flit left, or credits were on the return line then).
    credits_hot: Vec<bool>,
    nic_inject: Vec<usize>,
    nic_eject: Vec<usize>,
    nic_queue: Vec<usize>,
    /// Per traced node × channel.
    inj: Vec<ChanSigs>,
    ej: Vec<ChanSigs>,
    /// Per signal, the last cycle a pulse set it (`u64::MAX`: never).
    pulsed_at: Vec<u64>,
    /// Pulse signals set high in the last traced cycle, and in this one.
    high: Vec<u32>,
    high_now: Vec<u32>,
    /// The last timestamp written; changes still go to it.
    open: Option<u64>,
    /// Write changes (false while the values of the first dump are gathered).
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
        let depth = r.params.buffer_flits as u64;
        let traced: Vec<NodeId> = match &opts.nodes {
            None => (0..n as u32).map(NodeId).collect(),
            Some(v) => v.iter().map(|&x| NodeId(x)).collect(),
        };
        let mut slot = vec![NONE; n];
        for (i, nd) in traced.iter().enumerate() {
            slot[nd.idx()] = i as u32;
        }
        let width = (n.max(2) - 1).to_string().len().max(4);
        let mut t = Tracer {
            sink: None,
            opts,
            signals: Vec::new(),
            traced: traced.clone(),
            last: Vec::new(),
            slot,
            net,
            vcs,
            lanes,
            k,
            links: vec![None; traced.len() * net * lanes],
            ivcs: Vec::new(),
            ivc_start: vec![0],
            ivc_entry: vec![NONE; n * ports * vcs],
            credits: Vec::new(),
            credit_start: vec![0],
            credits_hot: vec![true; traced.len() * net],
            nic_inject: Vec::new(),
            nic_eject: Vec::new(),
            nic_queue: Vec::new(),
            inj: Vec::new(),
            ej: Vec::new(),
            pulsed_at: Vec::new(),
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
        let buf_bits = bits_for(depth);
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
            for (i, &node) in traced.iter().enumerate() {
                d.scope(format!("n{:0width$}", node.0))?;
                d.scope("router".into())?;
                for o in 0..net {
                    if fabric.downstream(r.port_index(node, o)).is_none() {
                        continue;
                    }
                    let g = format!("out{o}");
                    d.scope(g.clone())?;
                    for lane in 0..lanes {
                        let lg = if lanes > 1 {
                            d.scope(format!("lane{lane}"))?;
                            format!("{g}.lane{lane}")
                        } else {
                            g.clone()
                        };
                        let s = LinkSigs {
                            valid: var(&mut d, &mut t, "valid", 1, i, &lg, 0, None)?,
                            flags: var(&mut d, &mut t, "flags", 3, i, &lg, 0, Some("flags"))?,
                            vc: var(&mut d, &mut t, "vc", vc_bits, i, &lg, 0, None)?,
                            packet: var(&mut d, &mut t, "packet", 32, i, &lg, 0, None)?,
                            msg: var(&mut d, &mut t, "msg", 32, i, &lg, 0, None)?,
                        };
                        t.links[(i * net + o) * lanes + lane] = Some(s);
                        if lanes > 1 {
                            d.up()?;
                        }
                    }
                    for vc in 0..vcs {
                        d.scope(format!("vc{vc}"))?;
                        let sig = var(&mut d, &mut t, "credits", buf_bits, i, &format!("{g}.credits"), depth, None)?;
                        t.credits.push(CreditSigs {
                            op: r.port_index(node, o) as u32,
                            port: (i * net + o) as u32,
                            vc: vc as u16,
                            last: depth as u16,
                            sig: sig as u32,
                        });
                        d.up()?;
                    }
                    d.up()?;
                }
                for p in 0..ports {
                    if p < net && fabric.upstream(r.port_index(node, p)).is_none() {
                        continue;
                    }
                    let g = if p < net { format!("in{p}") } else { format!("inj{}", p - net) };
                    d.scope(g.clone())?;
                    for vc in 0..vcs {
                        d.scope(format!("vc{vc}"))?;
                        let gg = format!("{g}.vc{vc}");
                        let occ = var(&mut d, &mut t, "occupancy", buf_bits, i, &gg, 0, None)?;
                        let state = var(&mut d, &mut t, "state", 2, i, &gg, 0, Some("state"))?;
                        let iv = r.ivc_index(node, p, vc);
                        t.ivc_entry[iv] = t.ivcs.len() as u32;
                        t.ivcs.push(IvcSigs { iv: iv as u32, occ: occ as u32, state: state as u32, last: 0 });
                        d.up()?;
                    }
                    d.up()?;
                }
                d.up()?;
                d.scope("nic".into())?;
                let h = var(&mut d, &mut t, "inject_valid", k as u32, i, "nic", 0, None)?;
                t.nic_inject.push(h);
                let h = var(&mut d, &mut t, "eject_valid", k as u32, i, "nic", 0, None)?;
                t.nic_eject.push(h);
                let h = var(&mut d, &mut t, "queue", 16, i, "nic", 0, None)?;
                t.nic_queue.push(h);
                for dir in ["inj", "ej"] {
                    for ch in 0..k {
                        let g = format!("nic.{dir}{ch}");
                        d.scope(format!("{dir}{ch}"))?;
                        let s = ChanSigs {
                            valid: var(&mut d, &mut t, "valid", 1, i, &g, 0, None)?,
                            flags: var(&mut d, &mut t, "flags", 3, i, &g, 0, Some("flags"))?,
                            packet: var(&mut d, &mut t, "packet", 32, i, &g, 0, None)?,
                            msg: var(&mut d, &mut t, "msg", 32, i, &g, 0, None)?,
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
                t.ivc_start.push(t.ivcs.len() as u32);
                t.credit_start.push(t.credits.len() as u32);
            }
            d.up()?;
        }
        sink.end_definitions()?;
        assert!(t.signals.len() <= crate::sink::ops::MAX_VARS, "too many signals");
        t.pulsed_at = vec![u64::MAX; t.signals.len()];
        t.sink = Some(sink);
        Ok(t)
    }

    /// Start timestamp `t`.
    #[inline]
    fn time(&mut self, t: u64) {
        ops::push_time(&mut self.batch, t);
        self.open = Some(t);
    }

    /// Set signal `s` to `v` at the open timestamp.
    #[inline(always)]
    fn set(&mut self, s: usize, v: u64) {
        if self.last[s] != v {
            self.last[s] = v;
            if self.emit {
                ops::push_change(&mut self.batch, s, v);
            }
        }
    }

    /// Set a signal that holds its value for cycle `t` only; it goes back to 0 afterwards.
    #[inline(always)]
    fn pulse(&mut self, s: usize, v: u64, t: u64) {
        self.set(s, v);
        self.pulsed_at[s] = t;
        if v != 0 {
            self.high_now.push(s as u32);
        }
    }

    /// Pulses of the previous traced cycle go low, unless cycle `t` set them again.
    fn lows(&mut self, t: u64) {
        let high = std::mem::take(&mut self.high);
        for &s in &high {
            if self.pulsed_at[s as usize] != t {
                self.set(s as usize, 0);
            }
        }
        self.high = high;
        self.high.clear();
        std::mem::swap(&mut self.high, &mut self.high_now);
    }

    /// Every signal's value (the first timestamp's dump).
    fn dump(&mut self) {
        for (s, &v) in self.last.iter().enumerate() {
            ops::push_change(&mut self.batch, s, v);
        }
    }

    /// Register values at the end of cycle `t`: those that differ from the values written
    /// go to timestamp `t + 1` (or, before the traced window, are only remembered). Unless
    /// `full`, input VCs that were empty and idle and took no flit since, and output ports
    /// whose credits cannot have changed, are skipped.
    fn sample_registers(&mut self, f: &Fabric, t: u64, full: bool) {
        let r = &f.routers;
        let Tracer { traced, ivcs, ivc_start, credits, credit_start, credits_hot, nic_queue, last, batch, emit, vcs, .. } = self;
        let (emit, vcs) = (*emit, *vcs);
        let mut set = |s: usize, v: u64| {
            if last[s] != v {
                last[s] = v;
                if emit {
                    ops::push_change(batch, s, v);
                }
            }
        };
        for (i, &node) in traced.iter().enumerate() {
            // Registers change only where the router was evaluated, holds flits, has credits
            // coming back, or its NIC works.
            if !(f.is_active(node) || r.may_change(node) || f.nics.busy(node)) {
                continue;
            }
            for p in &mut ivcs[ivc_start[i] as usize..ivc_start[i + 1] as usize] {
                // Empty and idle, and no flit came in: it stays so.
                if p.last == 0 && !full {
                    continue;
                }
                let iv = p.iv as usize;
                let now = (r.inputs.len(iv) as u32) << 2 | r.vc_activity(iv) as u32;
                if now != p.last {
                    p.last = now;
                    set(p.occ as usize, (now >> 2) as u64);
                    set(p.state as usize, (now & 3) as u64);
                }
            }
            // One output port's VCs at a time.
            for port in credits[credit_start[i] as usize..credit_start[i + 1] as usize].chunks_exact_mut(vcs) {
                let op = port[0].op as usize;
                let in_flight = r.outputs.credits_in_flight(op) > 0;
                // Credits change when a flit leaves (`credits_hot` set by `link`) or a credit
                // comes back from the return line.
                let hot = &mut credits_hot[port[0].port as usize];
                if !(in_flight || *hot || full) {
                    continue;
                }
                *hot = in_flight;
                for c in port {
                    debug_assert_eq!(c.op as usize, op);
                    let vc = c.vc as usize;
                    let now = if in_flight { r.outputs.credits_at(op, vc, t + 1) } else { r.outputs.credits[op * vcs + vc] };
                    if now != c.last {
                        c.last = now;
                        set(c.sig as usize, now as u64);
                    }
                }
            }
            set(nic_queue[i], f.nics.queued(node).min(0xffff) as u64);
        }
    }

    /// A flit enters input VC `iv` (global index) in this cycle.
    #[inline(always)]
    fn wake(&mut self, iv: usize) {
        let e = self.ivc_entry[iv];
        if e != NONE {
            self.ivcs[e as usize].last |= WAKE;
        }
    }

    /// This cycle's link activity.
    fn departures(&mut self, v: &CycleView<'_>) {
        let t = v.t;
        let p = v.fabric.routers.ports();
        if self.lanes == 1 {
            // One flit per link and cycle: no lanes to assign.
            for d in v.departures {
                if let Some(ip) = v.fabric.downstream(d.out_port as usize) {
                    self.wake(ip * self.vcs + d.vc as usize);
                }
                let (node, o) = (d.out_port as usize / p, d.out_port as usize % p);
                let i = self.slot[node];
                if i == NONE {
                    continue;
                }
                let port = i as usize * self.net + o;
                self.credits_hot[port] = true;
                if let Some(s) = self.links[port] {
                    self.link(s, d.vc, d.flit, v.fabric, t);
                }
            }
            return;
        }
        self.deps.clear();
        for d in v.departures {
            if let Some(ip) = v.fabric.downstream(d.out_port as usize) {
                self.wake(ip * self.vcs + d.vc as usize);
            }
            let (node, o) = (d.out_port as usize / p, d.out_port as usize % p);
            let i = self.slot[node];
            if i != NONE {
                self.credits_hot[i as usize * self.net + o] = true;
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
            if let Some(s) = self.links[(i * self.net + o) * self.lanes + lane.min(self.lanes - 1)] {
                self.link(s, vc, flit, v.fabric, t);
            }
        }
        for &(op, _, _) in &deps {
            let (node, o) = (op as usize / p, op as usize % p);
            self.lane_used[self.slot[node] as usize * self.net + o] = 0;
        }
        self.deps = deps;
    }

    #[inline]
    fn link(&mut self, s: LinkSigs, vc: u8, flit: router::Flit, f: &Fabric, t: u64) {
        let msg = f.packets.get(flit.packet).msg;
        self.pulse(s.valid, 1, t);
        self.pulse(s.flags, 4 | flit.flags.bits() as u64, t);
        self.set(s.vc, vc as u64);
        self.set(s.packet, flit.packet.0 as u64);
        self.set(s.msg, msg as u64);
        self.link_flits += 1;
    }

    /// This cycle's NIC activity.
    fn nics(&mut self, v: &CycleView<'_>) {
        let t = v.t;
        self.masks.clear();
        let net = v.fabric.routers.params.net_ports as usize;
        for &(node, ch, flit) in v.injections {
            self.wake(v.fabric.routers.ivc_index(node, net + ch as usize, 0));
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.inj[i as usize * self.k + ch as usize];
            let msg = v.fabric.packets.get(flit.packet).msg;
            self.chan(s, flit, msg, t);
            self.masks.push((self.nic_inject[i as usize] as u32, 1 << ch));
        }
        for &(node, ej, msg) in v.ejections {
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.ej[i as usize * self.k + ej.channel as usize];
            self.chan(s, ej.flit, msg, t);
            self.masks.push((self.nic_eject[i as usize] as u32, 1 << ej.channel));
        }
        // One value per signal: the channels of a node together.
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
            self.pulse(s as usize, m, t);
        }
        self.masks = masks;
    }

    fn chan(&mut self, s: ChanSigs, flit: router::Flit, msg: u32, t: u64) {
        self.pulse(s.valid, 1, t);
        self.pulse(s.flags, 4 | flit.flags.bits() as u64, t);
        self.set(s.packet, flit.packet.0 as u64);
        self.set(s.msg, msg as u64);
    }

    fn cycle_inner(&mut self, v: &CycleView<'_>) -> io::Result<()> {
        let t = v.t;
        if self.done {
            return Ok(());
        }
        if t < self.opts.from {
            if self.opts.from > 0 {
                // Flits that moved are not looked at before the window: sample everything.
                self.emit = false;
                self.sample_registers(v.fabric, t, true);
                self.emit = true;
            }
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
            self.time(self.opts.from);
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
                self.lows(t);
                self.time(t);
            }
        }
        self.departures(v);
        self.nics(v);
        self.lows(t);
        if dump_now {
            self.emit = true;
            self.dump();
        }
        // Registers as seen from the next cycle.
        self.time(t + 1);
        self.sample_registers(v.fabric, t, false);
        if self.batch.len() >= BATCH {
            self.sink.as_mut().expect("tracer sink").ops(&mut self.batch)?;
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
            self.time(self.opts.from);
            self.dump();
        } else {
            // The last traced cycle's pulses go low at the timestamp after it.
            debug_assert!(self.open.is_some_and(|p| p <= end), "timestamp {:?} after the end {end}", self.open);
            let never = u64::MAX;
            self.lows(never);
        }
        let sink = self.sink.as_mut().expect("tracer sink");
        sink.ops(&mut self.batch)
    }

    /// Finish the dump at the end of the run (`end` = the first cycle not simulated).
    pub fn finish(mut self, end: u64) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.close(end.min(self.opts.to.saturating_add(1)))?;
        self.sink.take().expect("tracer sink").finish()
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
