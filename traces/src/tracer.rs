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

use crate::sink::WaveSink;
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

/// The tracer. Create it before the run, attach it with [`Fabric::set_probe`], and call
/// [`Tracer::finish`] on it afterwards.
pub struct Tracer {
    sink: Option<Box<dyn WaveSink>>,
    opts: TraceOptions,
    pub signals: Vec<SignalInfo>,
    pub traced: Vec<NodeId>,
    last: Vec<u64>,
    slot: Vec<u32>,
    net: usize,
    ports: usize,
    vcs: usize,
    lanes: usize,
    k: usize,
    /// Per traced node × network port × lane (NONE-filled where the port has no link).
    links: Vec<Option<LinkSigs>>,
    /// Per traced node × network port × VC.
    credits: Vec<usize>,
    /// Per traced node × port × VC: occupancy and state.
    occ: Vec<usize>,
    state: Vec<usize>,
    nic_inject: Vec<usize>,
    nic_eject: Vec<usize>,
    nic_queue: Vec<usize>,
    /// Per traced node × channel.
    inj: Vec<ChanSigs>,
    ej: Vec<ChanSigs>,
    /// Staging of the values of one timestamp.
    staged_val: Vec<u64>,
    staged_mark: Vec<bool>,
    staged: Vec<usize>,
    /// Pulse signals high at the last written cycle.
    high: Vec<usize>,
    /// Register changes for `pending_time`.
    pending: Vec<(usize, u64)>,
    pending_time: Option<u64>,
    started: bool,
    done: bool,
    error: Option<io::Error>,
    /// Flits recorded on link `valid` signals (for checks).
    pub link_flits: u64,
    deps: Vec<(u32, u8, router::Flit)>,
    lane_used: Vec<u8>,
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
            ports,
            vcs,
            lanes,
            k,
            links: vec![None; traced.len() * net * lanes],
            credits: vec![usize::MAX; traced.len() * net * vcs],
            occ: vec![usize::MAX; traced.len() * ports * vcs],
            state: vec![usize::MAX; traced.len() * ports * vcs],
            nic_inject: Vec::new(),
            nic_eject: Vec::new(),
            nic_queue: Vec::new(),
            inj: Vec::new(),
            ej: Vec::new(),
            staged_val: Vec::new(),
            staged_mark: Vec::new(),
            staged: Vec::new(),
            high: Vec::new(),
            pending: Vec::new(),
            pending_time: None,
            started: false,
            done: false,
            error: None,
            link_flits: 0,
            deps: Vec::new(),
            lane_used: vec![0; traced.len() * net],
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
                        t.credits[(i * net + o) * vcs + vc] =
                            var(&mut d, &mut t, "credits", buf_bits, i, &format!("{g}.credits"), depth, None)?;
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
                        t.occ[(i * ports + p) * vcs + vc] = var(&mut d, &mut t, "occupancy", buf_bits, i, &gg, 0, None)?;
                        t.state[(i * ports + p) * vcs + vc] = var(&mut d, &mut t, "state", 2, i, &gg, 0, Some("state"))?;
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
            }
            d.up()?;
        }
        sink.end_definitions()?;
        let ns = t.signals.len();
        t.staged_val = vec![0; ns];
        t.staged_mark = vec![false; ns];
        t.sink = Some(sink);
        Ok(t)
    }

    #[inline]
    fn stage(&mut self, sig: usize, val: u64) {
        if !self.staged_mark[sig] {
            self.staged_mark[sig] = true;
            self.staged.push(sig);
        }
        self.staged_val[sig] = val;
    }

    /// Write the staged values at cycle `t` (the first write dumps every signal).
    fn flush(&mut self, t: u64) -> io::Result<()> {
        let sink = self.sink.as_mut().expect("tracer sink");
        sink.time(t)?;
        if !self.started {
            self.started = true;
            for &s in &self.staged {
                self.last[s] = self.staged_val[s];
            }
            for (s, v) in self.last.iter().enumerate() {
                sink.change(s, *v)?;
            }
        } else {
            for &s in &self.staged {
                let v = self.staged_val[s];
                if v != self.last[s] {
                    sink.change(s, v)?;
                    self.last[s] = v;
                }
            }
        }
        for &s in &self.staged {
            self.staged_mark[s] = false;
        }
        self.staged.clear();
        Ok(())
    }

    /// Stage the register changes pending for their time, and the pulses going low.
    fn stage_pending_and_lows(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for &(s, v) in &pending {
            self.stage(s, v);
        }
        self.pending = pending;
        self.pending.clear();
        let high = std::mem::take(&mut self.high);
        for &s in &high {
            self.stage(s, 0);
        }
        self.high = high;
        self.high.clear();
    }

    /// Register values at the end of cycle `t`, as seen from cycle `t + 1`.
    fn sample_registers(&mut self, f: &Fabric, t: u64, silent: bool) {
        let r = &f.routers;
        for i in 0..self.traced.len() {
            let node = self.traced[i];
            // Registers change only where the router was evaluated, holds flits, has credits
            // coming back, or its NIC works.
            if !(f.is_active(node) || r.may_change(node) || f.nics.busy(node)) {
                continue;
            }
            let base_iv = r.ivc_index(node, 0, 0);
            let pv = self.ports * self.vcs;
            for l in 0..pv {
                let s = self.occ[i * pv + l];
                if s == usize::MAX {
                    continue;
                }
                let iv = base_iv + l;
                self.record(s, r.inputs.len(iv) as u64, silent);
                self.record(self.state[i * pv + l], r.vc_activity(iv) as u64, silent);
            }
            for o in 0..self.net {
                let op = r.port_index(node, o);
                let in_flight = r.outputs.credits_in_flight(op) > 0;
                for vc in 0..self.vcs {
                    let s = self.credits[(i * self.net + o) * self.vcs + vc];
                    if s != usize::MAX {
                        let c = if in_flight { r.outputs.credits_at(op, vc, t + 1) } else { r.outputs.credits[op * self.vcs + vc] };
                        self.record(s, c as u64, silent);
                    }
                }
            }
            self.record(self.nic_queue[i], f.nics.queued(node).min(0xffff) as u64, silent);
        }
    }

    #[inline]
    fn record(&mut self, s: usize, v: u64, silent: bool) {
        if silent {
            self.last[s] = v;
        } else if v != self.last[s] {
            self.pending.push((s, v));
        }
    }

    fn pulse(&mut self, s: usize, v: u64) {
        self.stage(s, v);
        if v != 0 {
            self.high.push(s);
        }
    }

    fn cycle_inner(&mut self, v: &CycleView<'_>) -> io::Result<()> {
        let t = v.t;
        if self.done {
            return Ok(());
        }
        if t < self.opts.from {
            if self.opts.from > 0 {
                self.sample_registers(v.fabric, t, true);
            }
            return Ok(());
        }
        if t > self.opts.to {
            self.close(self.opts.to + 1)?;
            return Ok(());
        }
        // Times before this cycle: pending registers and pulses going low.
        match self.pending_time {
            Some(p) if p < t => {
                self.stage_pending_and_lows();
                self.flush(p)?;
            }
            Some(_) => self.stage_pending_and_lows(),
            None if !self.started && t > self.opts.from => self.flush(self.opts.from)?,
            None => {}
        }
        // This cycle's link and NIC activity.
        self.deps.clear();
        let p = v.fabric.routers.ports();
        for d in v.departures {
            let node = d.out_port as usize / p;
            if self.slot[node] != NONE {
                self.deps.push((d.out_port, d.vc, d.flit));
            }
        }
        self.deps.sort_unstable_by_key(|&(op, vc, _)| (op, vc));
        let deps = std::mem::take(&mut self.deps);
        for &(op, vc, flit) in &deps {
            let (node, o) = (op as usize / p, op as usize % p);
            let i = self.slot[node] as usize;
            let lane = self.lane_used[i * self.net + o] as usize;
            self.lane_used[i * self.net + o] += 1;
            let Some(s) = self.links[(i * self.net + o) * self.lanes + lane.min(self.lanes - 1)] else { continue };
            let msg = v.fabric.packets.get(flit.packet).msg;
            self.pulse(s.valid, 1);
            self.pulse(s.flags, 4 | flit.flags.bits() as u64);
            self.stage(s.vc, vc as u64);
            self.stage(s.packet, flit.packet.0 as u64);
            self.stage(s.msg, msg as u64);
            self.link_flits += 1;
        }
        for &(op, _, _) in &deps {
            let (node, o) = (op as usize / p, op as usize % p);
            self.lane_used[self.slot[node] as usize * self.net + o] = 0;
        }
        self.deps = deps;
        let mut inj_mask: Vec<(usize, u64)> = Vec::new();
        for &(node, ch, flit) in v.injections {
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.inj[i as usize * self.k + ch as usize];
            let msg = v.fabric.packets.get(flit.packet).msg;
            self.chan(s, flit, msg);
            inj_mask.push((self.nic_inject[i as usize], 1 << ch));
        }
        for &(node, ej, msg) in v.ejections {
            let i = self.slot[node.idx()];
            if i == NONE {
                continue;
            }
            let s = self.ej[i as usize * self.k + ej.channel as usize];
            self.chan(s, ej.flit, msg);
            inj_mask.push((self.nic_eject[i as usize], 1 << ej.channel));
        }
        inj_mask.sort_unstable();
        let mut j = 0;
        while j < inj_mask.len() {
            let (s, mut m) = inj_mask[j];
            j += 1;
            while j < inj_mask.len() && inj_mask[j].0 == s {
                m |= inj_mask[j].1;
                j += 1;
            }
            self.pulse(s, m);
        }
        self.flush(t)?;
        self.sample_registers(v.fabric, t, false);
        self.pending_time = Some(t + 1);
        Ok(())
    }

    fn chan(&mut self, s: ChanSigs, flit: router::Flit, msg: u32) {
        self.pulse(s.valid, 1);
        self.pulse(s.flags, 4 | flit.flags.bits() as u64);
        self.stage(s.packet, flit.packet.0 as u64);
        self.stage(s.msg, msg as u64);
    }

    /// Write what is pending (at most up to cycle `end`) and stop tracing.
    fn close(&mut self, end: u64) -> io::Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        if !self.started {
            // Nothing happened inside the window: dump the values at its start.
            return self.flush(self.opts.from);
        }
        if let Some(p) = self.pending_time {
            self.stage_pending_and_lows();
            self.flush(p.min(end))?;
        }
        Ok(())
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
