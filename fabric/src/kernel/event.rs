//! The event-driven kernel: the same cycle as the scan kernel ([`crate::kernel`]), with the
//! routers evaluated by [`EventEval`] (only routers and VCs with something to do are looked
//! at), the NICs of the nodes with something to send, and the nodes' programs when they
//! receive or a timer fires.
//!
//! ```text
//!  wheel: flits readable, credits visible, requesters and bidders join ──► timers due
//!   ──► stage 1 (ejection) ──► programs (receive, timer, start) ──► NIC injection
//!   ──► stage 2 (VC and switch allocation, crossbar) ──► commit: flits and credits into the wheel
//! ```
//!
//! It gives the scan kernel's results exactly (the tests run both); it applies to fabrics
//! whose packets the routers never replicate, whose links carry one flit a cycle, without
//! waveforms ([`Fabric::event_kernel_unsupported`]), on one thread or split between threads
//! ([`super::split`]: a part's evaluation runs its own routers, and what crosses to another
//! part's goes into the mail).

use super::{Ending, Env, Fabric, PROGRAM_TIMER, WAKE, Watch};
use crate::nic::EventInjection;
use crate::spec::{FabricSpec, KernelChoice};
use router::{Ejection, EventEval, NodeId};

/// Why a run of `spec` goes to the scan kernel rather than the event kernel (None if the
/// event kernel applies): `multicast` if its program sends packets the routers replicate,
/// `traced` with waveforms.
pub fn event_kernel_unsupported(spec: &FabricSpec, multicast: bool, traced: bool) -> Option<String> {
    if traced {
        Some("waveforms are traced (the tracer follows the scan kernel's cycle)".into())
    } else if spec.shuffle_seed.is_some() {
        Some("routers are visited in a shuffled order".into())
    } else if multicast {
        Some("the routers replicate packets (--forwarding router)".into())
    } else {
        EventEval::unsupported(&spec.router_params())
    }
}

/// The event kernel's own state beside the fabric's.
pub(crate) struct EventKernel {
    pub(crate) eval: EventEval,
    /// This cycle's ejections and the nodes whose timer fired.
    ejected: Vec<(NodeId, Ejection)>,
    fired: Vec<u32>,
}

impl Fabric {
    /// Why this fabric runs on the scan kernel rather than the event kernel (None if the
    /// event kernel applies).
    pub fn event_kernel_unsupported(&self) -> Option<String> {
        event_kernel_unsupported(&self.spec, self.program.router_multicast(), !self.probes.is_empty())
    }

    /// Does this run go to the event kernel?
    pub(crate) fn use_event_kernel(&self) -> bool {
        match self.spec.kernel {
            KernelChoice::Scan => false,
            KernelChoice::Auto => self.event_kernel_unsupported().is_none(),
            KernelChoice::Event => match self.event_kernel_unsupported() {
                None => true,
                Some(why) => panic!("the event kernel was asked for, but {why}"),
            },
        }
    }

    /// From now on [`Fabric::step`] runs on the event kernel (from cycle 0, after
    /// [`Fabric::make_part`] on a split fabric). `active` holds the nodes whose NIC has
    /// something to do (the scan kernel's active routers start as every node; here only
    /// cycle 0 is stepped regardless).
    pub(crate) fn start_event_kernel(&mut self) {
        debug_assert_eq!(self.now, 0);
        self.kernel_used = "event";
        let mut eval = EventEval::new(&self.routers, &self.down, &self.up);
        if self.parts > 1 {
            eval.set_part(self.lo as usize, self.hi as usize);
        }
        if let Some(span) = self.spec.event_hist_span {
            eval.set_hist_span(span);
        }
        self.event = Some(Box::new(EventKernel { eval, ejected: Vec::new(), fired: Vec::new() }));
        self.active.clear();
        self.in_active.fill(false);
    }

    /// Hand the event kernel's state back to the routers and links, in the scan kernel's
    /// form (the run is over).
    pub(crate) fn finish_event_kernel(&mut self) {
        if let Some(mut k) = self.event.take() {
            let packets = &self.packets;
            k.eval.finish(&mut self.routers, |p| packets.get(p).flits());
            for (link, &n) in self.links.iter_mut().zip(k.eval.port_flits()) {
                link.flits += n;
            }
        }
    }

    /// Flits buffered in this fabric's routers or on their way into them, on either kernel.
    pub(crate) fn flits_held(&self) -> u64 {
        self.event.as_ref().map_or(self.routers.buffered, |k| k.eval.flits)
    }

    /// [`Fabric::run_loop`] on the event kernel. The routers' state is handed back in the
    /// scan kernel's form at the end.
    pub(crate) fn run_event_loop<W: FnMut(&Fabric)>(&mut self, watch: &mut Watch<W>) -> Ending {
        self.start_event_kernel();
        let ending = loop {
            if self.deadlock.is_some() {
                break Ending::Deadlock;
            }
            if self.now > 0 && self.flits_held() == 0 && self.active.is_empty() {
                match self.timers.next() {
                    None => break Ending::Quiescent,
                    Some(t) => self.now = self.now.max(t.min(self.spec.max_cycles)),
                }
            }
            if self.now >= self.spec.max_cycles {
                break Ending::CycleLimit;
            }
            self.step();
            watch.stepped(self);
        };
        self.finish_event_kernel();
        ending
    }

    /// Take in a flit another part sent in cycle `sent` into input VC `l` of router `r`
    /// (its packet id this part's), after this part's cycle `now`.
    pub(crate) fn event_receive_flit(&mut self, r: u32, l: u32, flit: router::Flit, sent: u64, now: u64) {
        let k = self.event.as_mut().expect("the event kernel runs");
        k.eval.receive_flit(r as usize, l as usize, flit, sent, now);
    }

    /// Take in a credit another part sent for output VC `vc` of port `op` (global index),
    /// for a slot freed in cycle `freed`.
    pub(crate) fn event_receive_credit(&mut self, op: u32, vc: u8, freed: u64) {
        let p = self.routers.ports();
        let v = self.routers.vcs();
        let k = self.event.as_mut().expect("the event kernel runs");
        k.eval.receive_credit(op as usize / p, op as usize % p * v + vc as usize, freed);
    }

    /// This cycle's flits and credits for other parts' routers, into the mail.
    fn mail_event(&mut self, k: &mut EventKernel, t: u64) {
        for (x, flit) in k.eval.remote_flits.drain(..) {
            self.mail_flit(x >> 6, x & 63, flit, t);
        }
        let (p, v) = (self.routers.ports() as u32, self.routers.vcs() as u32);
        for x in k.eval.remote_credits.drain(..) {
            let (r, local) = (x >> 6, x & 63);
            self.mail_credit(r * p + local / v, (local % v) as u8, t);
        }
    }

    /// Node `n`'s NIC may have something to do this cycle.
    #[inline]
    fn nic_wakes(&mut self, n: u32) {
        self.activate(n as usize);
    }

    /// Simulate cycle `self.now` on the event kernel.
    pub(crate) fn step_event(&mut self) {
        let mut k = self.event.take().expect("the event kernel runs");
        self.step_event_with(&mut k);
        self.event = Some(k);
    }

    fn step_event_with(&mut self, k: &mut EventKernel) {
        let t = self.now;
        let ejected_before = self.counters.flits_ejected;
        let injected_before = self.counters.flits_injected;
        {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.class_mask };
            k.eval.begin_cycle(&mut self.routers, t, &env);
        }
        let Fabric { timers, fired, in_active, active, .. } = self;
        timers.pop_due(t, |n, kind| {
            if kind == PROGRAM_TIMER {
                if !fired[n as usize] {
                    fired[n as usize] = true;
                    k.fired.push(n);
                }
            } else {
                debug_assert_eq!(kind, WAKE);
                super::activate(in_active, active, n as usize);
            }
        });
        // Stage 1: ejection; the NICs reassemble, the programs receive.
        k.ejected.clear();
        k.eval.eject_stage(&mut self.routers, t, &mut k.ejected);
        for i in 0..k.ejected.len() {
            let (r, ej) = k.ejected[i];
            self.counters.flits_ejected += 1;
            if let Some(pid) = self.nics.receive(r, ej.channel, ej.flit) {
                self.deliver(r, pid, t);
                if self.nics.busy(r) {
                    self.nic_wakes(r.0);
                }
            }
        }
        for i in 0..k.fired.len() {
            let n = k.fired[i];
            self.fired[n as usize] = false;
            self.call_program(NodeId(n), t, |p, cx| p.timer(cx));
            if self.nics.busy(NodeId(n)) {
                self.nic_wakes(n);
            }
        }
        k.fired.clear();
        if t == 0 {
            for n in self.lo..self.hi {
                self.call_program(NodeId(n), t, |p, cx| p.start(cx));
                if self.nics.busy(NodeId(n)) {
                    self.nic_wakes(n);
                }
            }
        }
        // NIC injection; NICs with nothing to do from the next cycle on leave the set, one
        // waiting out a start-up cost gets a timer. Then route computation for the heads
        // written with no latency.
        let Fabric { active, in_active, nics, timers, packets, counters, .. } = self;
        let mut ports = EventInjection { eval: &mut k.eval };
        let mut kept = 0;
        for i in 0..active.len() {
            let n = active[i];
            let injected = nics.inject(NodeId(n), t, &mut ports, packets, None);
            counters.flits_injected += injected.flits as u64;
            let next = injected.next;
            if next == Some(t + 1) {
                active[kept] = n;
                kept += 1;
            } else {
                in_active[n as usize] = false;
                if let Some(at) = next {
                    timers.push(at, n, WAKE);
                }
            }
        }
        active.truncate(kept);
        {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.class_mask };
            k.eval.after_injection(&mut self.routers, t, &env);
        }
        // Stage 2: the flits that cross go onto their links, their credits back upstream.
        let hops_before = k.eval.hops;
        k.eval.network_stage(&mut self.routers, t);
        self.counters.flit_hops = k.eval.hops;
        self.counters.link_transmissions = k.eval.tails;
        let moved =
            k.eval.hops != hops_before || self.counters.flits_ejected != ejected_before || self.counters.flits_injected != injected_before;
        if self.parts > 1 {
            self.mail_event(k, t);
        }
        if moved {
            self.last_move = t;
        }
        // A split fabric's watchdog looks at every part ([`super::split`]).
        if self.parts == 1 && k.eval.flits > 0 && t - self.last_move >= self.spec.watchdog_cycles {
            let packets = &self.packets;
            k.eval.finish(&mut self.routers, |p| packets.get(p).flits());
            self.deadlock = Some(self.find_deadlock(t));
        }
        self.measure.ejected(t, self.counters.flits_ejected - ejected_before); // measure:
        self.now = t + 1;
    }
}
