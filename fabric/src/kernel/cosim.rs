//! Co-simulation: routers outside the model (a designer's RTL, Verilated) in place of the
//! model's at some nodes, driven port by port every cycle, and optionally checked against
//! the model's router fed the same inputs.
//!
//! An external router is seen only through its ports, with the timing of the reference RTL
//! (docs/rtl.md): what is on its inputs in cycle `t` is sampled at the clock edge that ends
//! `t` (a flit readable from `t + 1`, a credit usable from `t + 1`), and what is on its
//! outputs in cycle `t + 1` is what it decided in `t` (a flit granted the switch or
//! ejected, a slot freed). Against the model's routers, with `link_latency` 2 and
//! `credit_delay` 1:
//!
//! ```text
//!  model router sends a flit in t        ──► on the external router's in_*   in t + 1
//!  model router frees a slot in t        ──► on the external router's cr_in_* in t + 1
//!  external router's out_* in t + 1      ──► model router: readable in t + 2 (sent in t)
//!  external router's cr_out_* in t + 1   ──► model router: usable in t + 2 (freed in t)
//!  external to external: out_* in t + 1  ──► in_* in t + 1 (the wire between them)
//!  the NIC writes a flit in t            ──► on the injection port's in_* in t
//!  ejection output in t + 1              ──► the NIC reassembles it in t + 1
//! ```
//!
//! so everything but ejection keeps the model's timing: a packet is handed to its node one
//! cycle later at an external router than at the model's (the RTL registers its ejection
//! port). The NIC in front of an external router counts the room of its injection VCs from
//! the credits the router returns for them, and picks a packet's VC by the model's rule
//! ([`router::InjectionVc::choose`]).
//!
//! With a check (`compare` of [`Fabric::attach_external`]), a copy of the model's routers (the shadow) runs at
//! the external nodes from exactly the external routers' inputs, and the first cycle in
//! which an output flit, its VC, an ejection or a credit differs stops the run with a
//! [`Mismatch`]; the ports of the cycles around it are kept for a waveform ([`Window`]).

use super::Fabric;
use crate::packet::PacketTable;
use router::{Ejection, Flit, FlitFlags, Header, NONE, NodeId, PacketId, RouteKind, Routers};
use std::collections::VecDeque;

/// A flit as it crosses an external router's port: the model's flit with its packet's
/// header (meaningful in head flits), the fields of the RTL's flit (docs/rtl.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WireFlit {
    pub packet: u32,
    pub seq: u16,
    pub head: bool,
    pub tail: bool,
    /// Header kind: 0 unicast, 1 broadcast.
    pub kind: u8,
    pub src: u32,
    pub dest: u32,
    pub key: u32,
    pub len: u16,
    pub span: u32,
}

impl WireFlit {
    /// `flit` of a packet in `packets`.
    pub fn of(flit: Flit, packets: &PacketTable) -> WireFlit {
        let h: Header = packets.get(flit.packet).header;
        WireFlit {
            packet: flit.packet.0,
            seq: flit.seq,
            head: flit.is_head(),
            tail: flit.is_tail(),
            kind: matches!(h.kind, RouteKind::Broadcast) as u8,
            src: h.src.value(),
            dest: h.dest.value(),
            key: h.key.value(),
            len: h.len,
            span: h.span,
        }
    }

    /// The model's flit.
    pub fn flit(&self) -> Flit {
        let mut flags = FlitFlags::empty();
        flags.set(FlitFlags::HEAD, self.head);
        flags.set(FlitFlags::TAIL, self.tail);
        Flit { packet: PacketId(self.packet), seq: self.seq, flags }
    }
}

impl std::fmt::Display for WireFlit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "packet {} flit {}", self.packet, self.seq)?;
        if self.head {
            write!(f, " head (src {} dest {} len {})", self.src, self.dest, self.len)?;
        }
        if self.tail {
            write!(f, " tail")?;
        }
        Ok(())
    }
}

/// A flit on a port of an external router: port, VC (an output's VC, an input's VC, or an
/// ejection VC), flit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortFlit {
    pub port: u8,
    pub vc: u8,
    pub flit: WireFlit,
}

/// A credit on a port of an external router: for VC `vc` of port `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PortCredit {
    pub port: u8,
    pub vc: u8,
}

/// One router's ports in one cycle, one direction: flits (`in_*` or `out_*`) and credits
/// (`cr_in_*` or `cr_out_*`), at most one of each per port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ports {
    pub flits: Vec<PortFlit>,
    pub credits: Vec<PortCredit>,
}

impl Ports {
    fn clear(&mut self) {
        self.flits.clear();
        self.credits.clear();
    }
    fn sort(&mut self) {
        self.flits.sort_unstable_by_key(|f| f.port);
        self.credits.sort_unstable();
    }
}

/// Routers outside the model, one per external node in the order given to
/// [`Fabric::attach_external`]: a Verilated RTL router, or anything with its ports.
pub trait ExternalRouters: Send {
    /// Cycle `t`: `ins[i]` is on router `i`'s inputs and the clock edge ending `t` samples
    /// it; `outs[i]` (cleared by the caller) gets what router `i` then has on its outputs
    /// in `t + 1`. An error (the simulator died, say) ends the run with its message.
    fn step(&mut self, t: u64, ins: &[Ports], outs: &mut [Ports]) -> Result<(), String>;

    /// Cycles `from .. from + cycles` in which nothing is on any input of the `routers`
    /// routers (the fabric skipped them: nothing was in or on its way to any of them). Every clock edge counts
    /// (a router's round-robin state may follow the clock), and nothing may come out.
    fn idle(&mut self, from: u64, cycles: u64, routers: usize) -> Result<(), String> {
        let ins = vec![Ports::default(); routers];
        for t in from..from + cycles {
            let mut outs = vec![Ports::default(); routers];
            self.step(t, &ins, &mut outs)?;
            if outs.iter().any(|o| !o.flits.is_empty() || !o.credits.is_empty()) {
                return Err(format!("cycle {t}: an RTL router sent something while it held nothing and took nothing in"));
            }
        }
        Ok(())
    }
}

/// The first difference between an external router and the model's fed the same inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub node: NodeId,
    /// The router's port (network ports first, then the NIC channels).
    pub port: usize,
    /// The cycle whose decision differs: the model's cycle (an output port shows it in the
    /// next one).
    pub cycle: u64,
    /// What differs: "flit" (an output's flit or VC), "ejection" or "credit".
    pub what: &'static str,
    /// What the model sends there, and what the external router sent (`none`: nothing).
    pub expected: String,
    pub actual: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node {} port {} cycle {}: {} differs: the model {}, the RTL {}",
            self.node, self.port, self.cycle, self.what, self.expected, self.actual
        )
    }
}

/// One cycle of one external router seen from its ports: its inputs, its outputs (the
/// decisions of the cycle), and, when checked, the model's outputs.
#[derive(Clone, Debug, Default)]
pub struct PortsCycle {
    pub cycle: u64,
    pub node: NodeId,
    pub inputs: Ports,
    pub rtl: Ports,
    pub model: Ports,
}

/// The cycles around a mismatch, at the node where it happened: for a waveform with the
/// model's and the RTL's ports side by side.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub cycles: Vec<PortsCycle>,
}

/// Cycles kept before a mismatch, and run after it, for its [`Window`].
pub const WINDOW_BEFORE: usize = 24;
pub const WINDOW_AFTER: u64 = 8;

/// The external routers of a fabric and the NICs' side of them.
pub(crate) struct Cosim {
    nodes: Vec<u32>,
    /// Node id to index into `nodes` (NONE: a model router).
    index: Vec<u32>,
    backend: Box<dyn ExternalRouters>,
    /// This cycle's inputs, as the model's flits (headers looked up when they go out).
    pending: Vec<Vec<(u8, u8, Flit)>>,
    credits: Vec<Vec<PortCredit>>,
    ins: Vec<Ports>,
    outs: Vec<Ports>,
    /// Ejections the external routers decided last cycle, handed to the NICs in this one.
    ejections: Vec<(NodeId, Ejection)>,
    /// Per external node and NIC channel: the VC its packet is in; per injection VC: flits
    /// written and not yet credited back.
    inj_vc: Vec<u8>,
    inj_occ: Vec<u16>,
    /// Flits written into the external routers (by links and NICs) and not yet out.
    inside: u64,
    /// The next cycle the external routers are clocked in (cycles the fabric skips are
    /// clocked as idle ones, [`ExternalRouters::idle`]).
    clocked: u64,
    /// The link protocol on the external routers' outputs, per router, output port and VC
    /// (ejection ports: ejection VC): the packet a VC is in the middle of and the sequence
    /// number its next flit must have (`NONE`: between packets); per network output VC the
    /// credits the router holds.
    open: Vec<(u32, u16)>,
    credits_left: Vec<u16>,
    ov: usize,
    shadow: Option<Box<Shadow>>,
    /// The run stops: the backend's error, or the check's mismatch once its window is full.
    pub(crate) error: Option<String>,
    pub(crate) mismatch: Option<Mismatch>,
    stop_at: Option<u64>,
    // Shape.
    np: usize,
    nnet: usize,
    nk: usize,
    nv: usize,
    inj_depth: u16,
    injection: router::InjectionVc,
}

/// The model's routers run at the external nodes from the external routers' inputs.
struct Shadow {
    routers: Routers,
    ejected: Vec<(NodeId, Ejection)>,
    model: Vec<Ports>,
    /// The last cycles at every external node, oldest first; after a mismatch, its node's.
    history: VecDeque<Vec<PortsCycle>>,
    window: Window,
}

impl Fabric {
    /// Replace the model's routers at `nodes` with `backend`'s external routers (one per
    /// node, in that order); with `compare`, check them against the model's. Before the
    /// first cycle. The external routers must have the model's timing under the `realistic`
    /// preset, one-flit links and round-robin arbiters, and route as the topology does
    /// (dimension order on meshes and hypercubes); the fabric must have no torus, faults or
    /// replicated packets, and run on one thread (the caller checks).
    pub fn attach_external(&mut self, nodes: &[u32], backend: Box<dyn ExternalRouters>, compare: bool) {
        assert_eq!(self.now, 0, "external routers attached after the run began");
        let n = self.topo.nodes();
        let mut index = vec![NONE; n];
        for (i, &r) in nodes.iter().enumerate() {
            index[r as usize] = i as u32;
        }
        self.routers.set_external(nodes);
        let shadow = compare.then(|| {
            let mut routers = self.routers.clone();
            // Every router is the shadow's neighbours' stranger: what it sends leaves
            // through the remote lists, what it takes in is only what the RTL takes in.
            routers.set_external(&(0..n as u32).collect::<Vec<_>>());
            routers.set_log(true);
            Box::new(Shadow {
                routers,
                ejected: Vec::new(),
                model: vec![Ports::default(); nodes.len()],
                history: VecDeque::new(),
                window: Window::default(),
            })
        });
        let (np, nnet, nk, nv) = (self.routers.ports(), self.routers.net_ports(), self.routers.nic_channels(), self.routers.vcs());
        let ov = nv.max(self.routers.ejection_vcs());
        self.rtl = Some(Box::new(Cosim {
            nodes: nodes.to_vec(),
            index,
            backend,
            pending: vec![Vec::new(); nodes.len()],
            credits: vec![Vec::new(); nodes.len()],
            ins: vec![Ports::default(); nodes.len()],
            outs: vec![Ports::default(); nodes.len()],
            ejections: Vec::new(),
            inj_vc: vec![0; nodes.len() * nk],
            inj_occ: vec![0; nodes.len() * nk * nv],
            inside: 0,
            clocked: 0,
            open: vec![(NONE, 0); nodes.len() * np * ov],
            credits_left: vec![self.routers.params.buffer_flits; nodes.len() * np * ov],
            ov,
            shadow,
            error: None,
            mismatch: None,
            stop_at: None,
            np,
            nnet,
            nk,
            nv,
            inj_depth: self.routers.params.inject_buffer_flits,
            injection: self.routers.params.injection,
        }));
    }

    /// The external routers' error or the check's mismatch, if the run stopped for one.
    pub fn external_stop(&self) -> Option<Result<&Mismatch, &str>> {
        let c = self.rtl.as_ref()?;
        // A mismatch first: what the RTL did wrong after it (within its window) is its
        // consequence.
        if let Some(m) = &c.mismatch
            && (c.error.is_some() || c.stop_at.is_some_and(|s| self.now > s))
        {
            return Some(Ok(m));
        }
        c.error.as_deref().map(Err)
    }

    /// The cycles around the check's mismatch at its node (empty without one).
    pub fn mismatch_window(&self) -> Window {
        self.rtl.as_ref().and_then(|c| c.shadow.as_ref()).map(|s| s.window.clone()).unwrap_or_default()
    }
}

impl Cosim {
    /// No flit in an external router or on its way into one, no ejection to hand over.
    pub(crate) fn idle(&self) -> bool {
        self.inside == 0 && self.ejections.is_empty()
    }

    /// Should the run stop before the next cycle?
    pub(crate) fn stops(&self, next: u64) -> bool {
        self.error.is_some() || self.stop_at.is_some_and(|s| next > s)
    }

    /// Is node `r` external (its index)?
    #[inline]
    pub(crate) fn external(&self, r: NodeId) -> Option<usize> {
        let i = self.index[r.idx()];
        (i != NONE).then_some(i as usize)
    }

    /// The NIC writes `flit` into injection channel `ch` of external router `i` in cycle
    /// `t`: into the VC the model's rule picks, if it has room.
    pub(crate) fn inject(&mut self, i: usize, ch: usize, flit: Flit) -> bool {
        let (nv, depth) = (self.nv, self.inj_depth);
        let base = (i * self.nk + ch) * nv;
        let occ = &self.inj_occ[base..base + nv];
        let cur = self.inj_vc[i * self.nk + ch] as usize;
        let Some(vc) = self.injection.choose(flit.is_head(), cur, nv, |v| occ[v] < depth) else {
            return false;
        };
        self.inj_vc[i * self.nk + ch] = vc as u8;
        self.inj_occ[base + vc] += 1;
        self.pending[i].push(((self.nnet + ch) as u8, vc as u8, flit));
        self.inside += 1;
        true
    }

    /// Check flit `w` that external router `i` sends on output `port`, VC `vc`, against the
    /// link protocol: a packet's flits in order, head first, not interleaved with another's
    /// in one VC, and (network ports) only with a credit for it. Else what is wrong.
    fn protocol(&mut self, i: usize, port: usize, vc: usize, w: &WireFlit) -> Result<(), String> {
        if port >= self.np || vc >= self.ov {
            return Err(format!("sent {w} on port {port} VC {vc}, which it does not have"));
        }
        let slot = (i * self.np + port) * self.ov + vc;
        let (open, next) = self.open[slot];
        if open != NONE && (w.packet != open || w.seq != next) {
            return Err(format!("sent {w} on port {port} VC {vc} in the middle of packet {open} (its flit {next} due)"));
        }
        if open == NONE && !w.head {
            return Err(format!("sent {w} on port {port} VC {vc}, where no packet's head went before it"));
        }
        self.open[slot] = if w.tail { (NONE, 0) } else { (w.packet, w.seq + 1) };
        if port < self.nnet {
            if self.credits_left[slot] == 0 {
                return Err(format!("sent {w} on port {port} VC {vc} without a credit for it (the VC downstream is full)"));
            }
            self.credits_left[slot] -= 1;
        }
        Ok(())
    }

    /// Ejections decided in the previous cycle, for this cycle's stage 1.
    pub(crate) fn take_ejections(&mut self, into: &mut Vec<(NodeId, Ejection)>) {
        into.append(&mut self.ejections);
    }
}

/// The NICs' side of the routers: the model's injection channels, or an external router's.
pub(crate) struct Injection<'a> {
    pub routers: &'a mut Routers,
    pub rtl: Option<&'a mut Cosim>,
}

impl crate::nic::InjectionPorts for Injection<'_> {
    #[inline]
    fn write(&mut self, n: NodeId, ch: usize, flit: Flit, t: u64) -> bool {
        if let Some(c) = self.rtl.as_deref_mut()
            && let Some(i) = c.external(n)
        {
            return c.inject(i, ch, flit);
        }
        self.routers.inject(n, ch, flit, t)
    }
}

impl Fabric {
    /// The end of cycle `t` at the external routers (after the model's stage 2): their
    /// clock edge on this cycle's inputs; then what they decided goes to its neighbours and
    /// NICs, and what the model's routers sent them in `t` becomes their inputs of `t + 1`.
    /// With a check, the shadow runs cycle `t` and its outputs are compared.
    pub(crate) fn external_cycle(&mut self, t: u64) {
        let Some(mut c) = self.rtl.take() else { return };
        if c.error.is_none() {
            self.external_edge(&mut c, t);
        }
        self.rtl = Some(c);
    }

    fn external_edge(&mut self, c: &mut Cosim, t: u64) {
        let (np, nnet, nv) = (c.np, c.nnet, c.nv);
        for i in 0..c.nodes.len() {
            let ins = &mut c.ins[i];
            ins.clear();
            for &(port, vc, flit) in &c.pending[i] {
                ins.flits.push(PortFlit { port, vc, flit: WireFlit::of(flit, &self.packets) });
            }
            ins.credits.extend_from_slice(&c.credits[i]);
            ins.sort();
            c.pending[i].clear();
            c.credits[i].clear();
            c.outs[i].clear();
        }
        if t > c.clocked
            && let Err(e) = c.backend.idle(c.clocked, t - c.clocked, c.nodes.len())
        {
            c.error = Some(e);
            return;
        }
        c.clocked = t + 1;
        if let Err(e) = c.backend.step(t, &c.ins, &mut c.outs) {
            c.error = Some(e);
            return;
        }
        for o in c.outs.iter_mut() {
            o.sort();
        }
        if c.shadow.is_some() {
            self.shadow_cycle(c, t);
        }
        // What the external routers decided in t.
        let ejection_vcs = self.routers.ejection_vcs();
        for i in 0..c.nodes.len() {
            let r = c.nodes[i] as usize;
            for k in 0..c.outs[i].flits.len() {
                let PortFlit { port, vc, flit: w } = c.outs[i].flits[k];
                let (port, vc) = (port as usize, vc as usize);
                let bad = |what: String| format!("cycle {t}: the RTL router at node {r} {what}");
                if !self.packets.holds(PacketId(w.packet)) {
                    c.error = Some(bad(format!("sent a flit of packet {} on port {port}, which is no packet in the network", w.packet)));
                    return;
                }
                let flit = w.flit();
                if let Err(e) = c.protocol(i, port, vc, &w) {
                    c.error = Some(bad(e));
                    return;
                }
                if port >= nnet {
                    if port - nnet >= c.nk || vc >= ejection_vcs {
                        c.error = Some(bad(format!("ejected a flit on port {port} VC {vc}, which it does not have")));
                        return;
                    }
                    c.ejections.push((NodeId(r as u32), Ejection { channel: (port - nnet) as u8, vc: vc as u8, flit }));
                    c.inside -= 1;
                    continue;
                }
                let op = r * np + port;
                let Some(ip) = self.downstream(op).filter(|_| vc < nv) else {
                    c.error = Some(bad(format!("sent {w} on port {port} VC {vc}, which has no link or no such VC")));
                    return;
                };
                self.routers.external_departure(op, vc, flit);
                let (r2, p2) = (ip / np, ip % np);
                if let Some(j) = c.external(NodeId(r2 as u32)) {
                    c.pending[j].push((p2 as u8, vc as u8, flit));
                } else {
                    self.routers.receive_flit(r2, p2 * nv + vc, flit, t, t);
                    c.inside -= 1;
                }
            }
            for k in 0..c.outs[i].credits.len() {
                let PortCredit { port, vc } = c.outs[i].credits[k];
                let (port, vc) = (port as usize, vc as usize);
                if vc >= nv || port >= np {
                    c.error = Some(format!(
                        "cycle {t}: the RTL router at node {r} returned a credit for port {port} VC {vc}, which it does not have"
                    ));
                    return;
                }
                if port >= nnet {
                    let slot = (i * c.nk + port - nnet) * nv + vc;
                    if c.inj_occ[slot] == 0 {
                        c.error = Some(format!(
                            "cycle {t}: the RTL router at node {r} returned a credit for injection port {port} VC {vc}, which holds no flit"
                        ));
                        return;
                    }
                    c.inj_occ[slot] -= 1;
                    continue;
                }
                let Some(op) = self.upstream(r * np + port) else { continue };
                let (r_up, o_up) = (op / np, op % np);
                if let Some(j) = c.external(NodeId(r_up as u32)) {
                    c.credits[j].push(PortCredit { port: o_up as u8, vc: vc as u8 });
                } else {
                    self.routers.receive_credit(r_up, o_up * nv + vc, t);
                }
            }
        }
        // The credits on the external routers' inputs in t: usable from t + 1.
        for i in 0..c.nodes.len() {
            for k in 0..c.ins[i].credits.len() {
                let PortCredit { port, vc } = c.ins[i].credits[k];
                c.credits_left[(i * np + port as usize) * c.ov + vc as usize] += 1;
            }
        }
        // What the model's routers sent the external ones in t: on their inputs in t + 1.
        for k in 0..self.routers.remote_flits.len() {
            let (x, flit) = self.routers.remote_flits[k];
            let (r, l) = Routers::remote_target(x);
            let i = c.index[r] as usize;
            c.pending[i].push(((l / nv) as u8, (l % nv) as u8, flit));
            c.inside += 1;
        }
        self.routers.remote_flits.clear();
        for k in 0..self.routers.remote_credits.len() {
            let (r, l) = Routers::remote_target(self.routers.remote_credits[k]);
            let i = c.index[r] as usize;
            c.credits[i].push(PortCredit { port: (l / nv) as u8, vc: (l % nv) as u8 });
        }
        self.routers.remote_credits.clear();
    }

    /// The check: the shadow's cycle `t` at the external nodes, its outputs against the
    /// external routers' (`c.outs`), then this cycle's inputs into it.
    fn shadow_cycle(&mut self, c: &mut Cosim, t: u64) {
        let (np, nnet, nv) = (c.np, c.nnet, c.nv);
        let mut sh = c.shadow.take().expect("a shadow");
        {
            let env = self.env();
            sh.routers.begin_cycle(t, &env);
            sh.ejected.clear();
            sh.routers.eject_stage(t, &mut sh.ejected);
            sh.routers.after_injection(t, &env);
            sh.routers.network_stage(t);
            sh.routers.end_cycle(t);
        }
        for m in sh.model.iter_mut() {
            m.clear();
        }
        for d in &sh.routers.departures {
            let (r, o) = (d.out_port as usize / np, d.out_port as usize % np);
            let i = c.index[r] as usize;
            sh.model[i].flits.push(PortFlit { port: o as u8, vc: d.vc, flit: WireFlit::of(d.flit, &self.packets) });
        }
        for &(r, ej) in &sh.ejected {
            let i = c.index[r.idx()] as usize;
            sh.model[i].flits.push(PortFlit {
                port: (nnet + ej.channel as usize) as u8,
                vc: ej.vc,
                flit: WireFlit::of(ej.flit, &self.packets),
            });
        }
        for &x in &sh.routers.remote_credits {
            let (r_up, k) = Routers::remote_target(x);
            let ip = self.downstream(r_up * np + k / nv).expect("a credit from a linked port");
            let i = c.index[ip / np] as usize;
            sh.model[i].credits.push(PortCredit { port: (ip % np) as u8, vc: (k % nv) as u8 });
        }
        sh.routers.departures.clear();
        sh.routers.allocs.clear();
        sh.routers.remote_flits.clear();
        sh.routers.remote_credits.clear();
        // Compare: the RTL's credits for its injection ports and for ports without a link
        // have no counterpart in the model.
        let mut first: Option<Mismatch> = None;
        for i in 0..c.nodes.len() {
            let r = c.nodes[i] as usize;
            sh.model[i].sort();
            if c.mismatch.is_none() && first.is_none() {
                let linked = |p: usize| p < nnet && self.upstream(r * np + p).is_some();
                first = compare_ports(NodeId(r as u32), t, nnet, np, &sh.model[i], &c.outs[i], linked);
            }
        }
        // The history, and the window once there is a mismatch.
        let record = |i: usize, into: &mut PortsCycle| {
            (into.cycle, into.node) = (t, NodeId(c.nodes[i]));
            into.inputs.clone_from(&c.ins[i]);
            into.rtl.clone_from(&c.outs[i]);
            into.model.clone_from(&sh.model[i]);
        };
        if let Some(m) = &c.mismatch {
            if c.stop_at.is_some_and(|s| t <= s) {
                let mut now = PortsCycle::default();
                record(c.index[m.node.idx()] as usize, &mut now);
                sh.window.cycles.push(now);
            }
        } else {
            // The oldest cycle's buffers hold the newest once the history is full.
            let mut now = if sh.history.len() == WINDOW_BEFORE { sh.history.pop_front().expect("full") } else { Vec::new() };
            now.resize_with(c.nodes.len(), PortsCycle::default);
            for (i, into) in now.iter_mut().enumerate() {
                record(i, into);
            }
            sh.history.push_back(now);
            if let Some(m) = first {
                let i = c.index[m.node.idx()] as usize;
                sh.window.cycles = sh.history.iter().map(|cy| cy[i].clone()).collect();
                sh.history.clear();
                c.stop_at = Some(t + WINDOW_AFTER);
                c.mismatch = Some(m);
            }
        }
        // This cycle's inputs into the shadow (readable, usable from t + 1). A flit into a
        // full VC means its sender had no credit for it: the mismatch is the sender's.
        for i in 0..c.nodes.len() {
            let r = NodeId(c.nodes[i]);
            for f in &c.ins[i].flits {
                let iv = sh.routers.ivc_index(r, f.port as usize, f.vc as usize);
                let depth = if (f.port as usize) < nnet { self.routers.params.buffer_flits } else { c.inj_depth };
                if sh.routers.occupancy_of(iv) >= depth {
                    if c.mismatch.is_none() {
                        let port = f.port as usize;
                        c.mismatch = Some(Mismatch {
                            node: r,
                            port,
                            cycle: t,
                            what: "credit",
                            expected: format!("no room in VC {} of input port {port}", f.vc),
                            actual: format!("a flit into it ({}): a credit for it came back too early", f.flit),
                        });
                        c.stop_at = Some(t + WINDOW_AFTER);
                    }
                    continue;
                }
                sh.routers.arrive_by_hand(iv, f.flit.flit(), t, t + 1);
            }
            for k in &c.ins[i].credits {
                sh.routers.credit_by_hand(sh.routers.port_index(r, k.port as usize), k.vc as usize, t + 1);
            }
        }
        c.shadow = Some(sh);
    }
}

/// The first port of router `node` at which the model's outputs of cycle `t` and the
/// RTL's differ, if any: flits (network ports and ejections) before credits, the lowest
/// port first. Credits count on the ports `linked` says (network ports with a link
/// upstream): the RTL's credits for its injection ports and for unlinked ports have no
/// counterpart in the model.
fn compare_ports(
    node: NodeId,
    t: u64,
    nnet: usize,
    np: usize,
    model: &Ports,
    rtl: &Ports,
    linked: impl Fn(usize) -> bool,
) -> Option<Mismatch> {
    // The header counts in head flits only (a router need not carry it in the others).
    let significant = |f: &PortFlit| {
        let mut f = *f;
        if !f.flit.head {
            f.flit = WireFlit { packet: f.flit.packet, seq: f.flit.seq, tail: f.flit.tail, ..WireFlit::default() };
        }
        f
    };
    let show_flit = |f: Option<&PortFlit>| f.map_or("none".to_string(), |f| format!("VC {}: {}", f.vc, f.flit));
    let show_credit = |k: Option<&PortCredit>| k.map_or("none".to_string(), |k| format!("a credit for VC {}", k.vc));
    // Flits first (a different switch-allocation winner shows as its output's flit), then
    // credits, each port by port.
    for port in 0..np {
        let (m, r) = (model.flits.iter().find(|f| f.port as usize == port), rtl.flits.iter().find(|f| f.port as usize == port));
        if m.map(significant) != r.map(significant) {
            let what = if port < nnet { "flit" } else { "ejection" };
            return Some(Mismatch { node, port, cycle: t, what, expected: show_flit(m), actual: show_flit(r) });
        }
    }
    for port in 0..np {
        let m = model.credits.iter().find(|k| k.port as usize == port);
        let r = rtl.credits.iter().find(|k| k.port as usize == port).filter(|_| linked(port));
        if m != r {
            return Some(Mismatch { node, port, cycle: t, what: "credit", expected: show_credit(m), actual: show_credit(r) });
        }
    }
    None
}
