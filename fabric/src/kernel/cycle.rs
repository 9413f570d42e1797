//! One simulated cycle ([`Fabric::step`]): route computation, timers, ejection and
//! delivery to the programs, NIC injection, allocation and the crossbar, probes and the
//! watchdog; and what a program's sends become (queued packets and timers).

use super::{Fabric, PROGRAM_TIMER, Stepper, WAKE};
use crate::faults::{Ejected, FaultState};
use crate::nic::NewPacket;
use crate::packet::PacketTable;
use crate::probe::CycleView;
use crate::program::{Dest, NodeCtx, Program, Received};
use crate::topology::Topology;
use rand::seq::SliceRandom;
use router::{Header, NodeId, PREFETCH_AHEAD, PacketId, PacketMeta, PortId, RouteDecision, RouteKind, RouterEnv};

/// The route computation the routers see: the topology's routing functions applied to the
/// packet table's headers, with dateline VC classes.
pub(super) struct Env<'a> {
    topo: &'a Topology,
    packets: &'a PacketTable,
    class_mask: [u16; 2],
    faults: Option<&'a FaultState>,
}

impl RouterEnv for Env<'_> {
    #[inline(always)]
    fn route(&self, at: NodeId, in_port: PortId, packet: PacketId) -> (RouteDecision, PacketMeta) {
        let p = self.packets.get(packet);
        let hop = match p.header.kind {
            RouteKind::Unicast => self.topo.route_unicast(at, p.src(), p.dest()),
            RouteKind::Broadcast => self.topo.route_broadcast(at, in_port, p.dest(), p.header.span),
        };
        let hop = match self.faults {
            Some(f) => f.route(at, packet, p.header.kind, hop),
            None => hop,
        };
        (
            RouteDecision {
                ports: hop.ports,
                vc_mask: self.class_mask[hop.class as usize],
                other: hop.high,
                other_mask: self.class_mask[1],
            },
            PacketMeta { len: p.flits(), key: p.key(), birth: p.birth },
        )
    }

    #[inline(always)]
    fn prefetch(&self, packet: PacketId) {
        router::prefetch(self.packets.get(packet));
    }
}

impl Fabric {
    /// The route computation the routers see.
    pub(super) fn env(&self) -> Env<'_> {
        Env { topo: &self.topo, packets: &self.packets, class_mask: self.wiring.class_mask, faults: self.faults.as_deref() }
    }

    /// May the cycle do a piece of work in a neighbouring stage, where it reads a cache line
    /// once instead of twice? When nothing can tell: no probe looks at the routers between
    /// the stages, no fault changes a route between them, no external router takes part.
    fn moves_work(&self) -> bool {
        self.probes.is_empty() && self.faults.is_none() && self.rtl.is_none()
    }

    /// Node `n`'s NIC may have something to do this cycle.
    #[inline]
    fn nic_wakes(&mut self, n: u32) {
        if !self.step.in_active[n as usize] {
            self.step.in_active[n as usize] = true;
            self.step.nic_active.push(n);
        }
    }

    /// Simulate cycle `self.now`.
    pub fn step(&mut self) {
        let t = self.now;
        // measure: the source queues at the batch boundaries reached
        let (lo, hi) = (self.part.lo, self.part.hi);
        self.measure.sample_queues(t, || (lo..hi).map(|n| self.nics.queued(NodeId(n)) as u64).sum());
        let routers = &self.routers;
        self.measure.sample_occupancy(t, |at| routers.class_occupancy(lo as usize..hi as usize, at)); // measure:
        let ejected_before = self.counters.flits_ejected;
        let injected_before = self.counters.flits_injected;
        let hops_before = self.routers.hops;
        if let Some(rng) = self.step.shuffle.as_mut() {
            let mut perm: Vec<u32> = (0..self.topo.nodes() as u32).collect();
            perm.shuffle(rng);
            self.routers.set_order(Some(perm));
        }
        if let Some(f) = self.faults.as_mut() {
            f.apply_due(t, &self.topo, &self.routers, &self.wiring.down, &self.packets);
        }
        {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.wiring.class_mask, faults: self.faults.as_deref() };
            self.routers.begin_cycle(t, &env);
        }
        self.settle_faulty_routes();
        let Stepper { timers, fired, fired_list, in_active, nic_active, .. } = &mut self.step;
        timers.pop_due(t, |n, kind| {
            if kind == PROGRAM_TIMER {
                if !fired[n as usize] {
                    fired[n as usize] = true;
                    fired_list.push(n);
                }
            } else {
                debug_assert_eq!(kind, WAKE);
                if !in_active[n as usize] {
                    in_active[n as usize] = true;
                    nic_active.push(n);
                }
            }
        });
        // Stage 1: ejection; the NICs reassemble, the programs receive.
        let mut ejected = std::mem::take(&mut self.step.ejected);
        ejected.clear();
        self.routers.eject_stage(t, &mut ejected);
        if let Some(c) = self.rtl.as_mut() {
            c.take_ejections(&mut ejected);
        }
        let dist = if self.nics.prefetches() { PREFETCH_AHEAD } else { 0 };
        for (i, &(r, ej)) in ejected.iter().enumerate() {
            // Two ejections ahead, the NIC's reassembly state and the packet; one ahead, the
            // scoreboard's word for the delivery of a tail (its message from the packet).
            if let Some(&(s, next)) = router::ahead(&ejected, i, 2 * dist) {
                self.nics.prefetch_receive(s, next.channel, next.vc);
                router::prefetch(self.packets.get(next.flit.packet));
            }
            if let Some(&(s, next)) = router::ahead(&ejected, i, dist)
                && next.flit.is_tail()
            {
                self.scoreboard.prefetch(self.packets.get(next.flit.packet).msg, s);
            }
            self.counters.flits_ejected += 1;
            if !self.probes.is_empty() {
                let msg = self.packets.get(ej.flit.packet).msg;
                self.step.eject_log.push((r, ej, msg));
            }
            if let Some(pid) = self.nics.receive(r, ej.channel, ej.vc, ej.flit) {
                self.deliver(r, pid, t);
                if self.nics.busy(r) {
                    self.nic_wakes(r.0);
                }
            }
        }
        self.step.ejected = ejected;
        let fired_list = std::mem::take(&mut self.step.fired_list);
        for (i, &n) in fired_list.iter().enumerate() {
            if let Some(&next) = router::ahead(&fired_list, i, dist) {
                self.program.prefetch_timer(NodeId(next));
            }
            self.step.fired[n as usize] = false;
            self.call_program(NodeId(n), t, |p, cx| p.timer(cx));
            if self.nics.busy(NodeId(n)) {
                self.nic_wakes(n);
            }
        }
        self.step.fired_list = fired_list;
        self.step.fired_list.clear();
        if t == 0 {
            for n in self.part.lo..self.part.hi {
                self.call_program(NodeId(n), t, |p, cx| p.start(cx));
                if self.nics.busy(NodeId(n)) {
                    self.nic_wakes(n);
                }
            }
        }
        // NIC injection; NICs with nothing to do from the next cycle on leave the set, one
        // waiting out a start-up cost gets a timer. Then route computation for the heads
        // written with no latency: each NIC's right after its injection, while their VCs and
        // packets are in the caches (a head's route reads only its own router and packet, so
        // when it runs among the other NICs' injections changes nothing); with probes, faults
        // or external routers, after every NIC's.
        {
            let route_each = self.moves_work();
            let Fabric { step, nics, packets, counters, routers, probes, rtl, topo, wiring, .. } = self;
            let class_mask = wiring.class_mask;
            let mut ports = super::cosim::Injection { routers, rtl: rtl.as_deref_mut() };
            let Stepper { nic_active, in_active, timers, inject_log, .. } = step;
            let mut log = (!probes.is_empty()).then_some(inject_log);
            let mut kept = 0;
            for i in 0..nic_active.len() {
                let n = nic_active[i];
                let near = nic_active.get(i + PREFETCH_AHEAD).copied();
                nics.prefetch(near, nic_active.get(i + 2 * PREFETCH_AHEAD).copied());
                if let Some(m) = near {
                    nics.prefetch_injection(m, ports.routers);
                }
                let injected = nics.inject(NodeId(n), t, &mut ports, packets, log.as_deref_mut());
                if route_each && ports.routers.injected_heads() {
                    ports.routers.after_injection(t, &Env { topo, packets, class_mask, faults: None });
                }
                counters.flits_injected += injected.flits as u64;
                let next = injected.next;
                if next == Some(t + 1) {
                    nic_active[kept] = n;
                    kept += 1;
                } else {
                    in_active[n as usize] = false;
                    if let Some(at) = next {
                        timers.push(at, n, WAKE);
                    }
                }
            }
            nic_active.truncate(kept);
        }
        {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.wiring.class_mask, faults: self.faults.as_deref() };
            self.routers.after_injection(t, &env);
        }
        self.settle_faulty_routes();
        // Stage 2: the flits that cross go onto their links, their credits back upstream;
        // over links of one cycle, into their buffers too (`Routers::network_stage_arriving`)
        // unless probes look at the buffers at the end of the cycle, faults may change the
        // routes before the next, or there is no next (the run stops at its cycle limit
        // with them on their links).
        if self.moves_work() && t + 1 < self.spec.max_cycles && self.routers.arrive_early_on() {
            let env = Env { topo: &self.topo, packets: &self.packets, class_mask: self.wiring.class_mask, faults: None };
            self.routers.network_stage_arriving(t, &env);
        } else {
            self.routers.network_stage(t);
        }
        if let Some(f) = self.faults.as_mut() {
            f.departed(&self.routers.departures, self.routers.ports());
            if self.probes.is_empty() {
                self.routers.departures.clear();
                self.routers.allocs.clear();
            }
        }
        if self.rtl.is_some() {
            self.external_cycle(t);
        }
        self.counters.flit_hops = self.routers.hops;
        self.counters.link_transmissions = self.routers.tails;
        let moved = self.routers.hops != hops_before
            || self.counters.flits_ejected != ejected_before
            || self.counters.flits_injected != injected_before;
        if self.part.parts > 1 {
            self.post_mail(t);
        }
        self.routers.end_cycle(t);
        if !self.probes.is_empty() {
            let mut probes = std::mem::take(&mut self.probes);
            let departures = std::mem::take(&mut self.routers.departures);
            let allocs = std::mem::take(&mut self.routers.allocs);
            let view = CycleView {
                t,
                departures: &departures,
                ejections: &self.step.eject_log,
                injections: &self.step.inject_log,
                allocs: &allocs,
                fabric: self,
            };
            for p in probes.iter_mut() {
                p.cycle(&view);
            }
            self.probes = probes;
            self.routers.departures = departures;
            self.routers.departures.clear();
            self.routers.allocs = allocs;
            self.routers.allocs.clear();
            self.step.eject_log.clear();
            self.step.inject_log.clear();
        }
        if moved {
            self.step.last_move = t;
        }
        // A split fabric's watchdog looks at every part ([`split`]).
        if self.part.parts == 1
            && !self.routers.is_empty()
            && (t - self.step.last_move >= self.spec.watchdog_cycles || self.stuck_for_good(t, self.step.last_move))
        {
            self.deadlock = Some(self.find_deadlock(t));
        }
        self.measure.ejected(t, self.counters.flits_ejected - ejected_before); // measure:
        self.now = t + 1;
    }

    /// The tail of packet `pid` was ejected at node `r`: check it belongs here, then hand it
    /// to the node's program.
    fn deliver(&mut self, r: NodeId, pid: PacketId, t: u64) {
        if let Some(f) = self.faults.as_mut()
            && let Ejected::Discard = f.ejected(&self.topo, &self.packets, r, pid)
        {
            if self.packets.delivered(pid) {
                f.freed(pid);
            }
            return;
        }
        let p = *self.packets.get(pid);
        let ok = if p.is_broadcast() {
            if !self.topo.in_broadcast(r, p.dest(), p.header.span) {
                self.scoreboard.packet_error(
                    false,
                    format!("cycle {t}: broadcast packet from node {} ejected at node {r}, outside its tree", p.dest()),
                );
                false
            } else if !self.packets.mark_seen(pid, r) {
                self.scoreboard.packet_error(true, format!("cycle {t}: broadcast packet from node {} ejected at node {r} twice", p.dest()));
                false
            } else {
                true
            }
        } else if p.dest() != r {
            self.scoreboard.packet_error(false, format!("cycle {t}: packet for node {} ejected at node {r}", p.dest()));
            false
        } else {
            true
        };
        if !ok {
            return;
        }
        // Unicast messages only: a broadcast's latency is from its creation to its last
        // delivery, which the scoreboard records ([`crate::measure::broadcasts`]).
        if !p.is_broadcast() && !p.is_relay() {
            self.latencies.record(t - p.birth);
            self.measure.delivered(t, p.birth, p.flits()); // measure:
        }
        self.counters.packets_delivered += 1;
        self.counters.last_delivery = self.counters.last_delivery.max(t);
        let m = Received { src: p.src(), kind: p.header.kind, msg: p.msg, aux: p.aux, key: p.key(), flits: p.flits(), birth: p.birth };
        self.call_program(r, t, |p, cx| p.receive(cx, &m));
        if self.packets.delivered(pid)
            && let Some(f) = self.faults.as_mut()
        {
            f.freed(pid);
        }
    }

    /// Faults: charge the broadcast branches this cycle's route computation cut.
    fn settle_faulty_routes(&mut self) {
        if let Some(f) = self.faults.as_mut() {
            f.settle_routes(&self.topo, &mut self.packets);
        }
    }

    /// Call node `r`'s program in cycle `t` (`call` picks the entry point), then queue what
    /// it sent.
    #[inline]
    fn call_program(&mut self, r: NodeId, t: u64, call: impl FnOnce(&mut dyn Program, &mut NodeCtx<'_>)) {
        let mut cx = NodeCtx {
            node: r,
            now: t,
            topo: &self.topo,
            queued: self.nics.queued(r),
            out: &mut self.step.node_out,
            scoreboard: &mut self.scoreboard,
        };
        call(&mut *self.program, &mut cx);
        if !self.step.node_out.is_empty() {
            self.flush_node_out(r, t);
        }
    }

    /// Turn what node `r`'s program asked for into queued packets and timers.
    fn flush_node_out(&mut self, r: NodeId, t: u64) {
        // By index, cleared after (cheaper than draining the usual one or two).
        for i in 0..self.step.node_out.sends.len() {
            let s = self.step.node_out.sends[i];
            let (kind, dest, span, remaining, first, reach) = match s.dest {
                Dest::Node(d) | Dest::Relay(d) => {
                    assert!(d != r, "node {r}'s program sent a packet to itself");
                    if let Some(f) = self.faults.as_mut() {
                        f.sent(1);
                        // The NIC knows the fault map: a packet whose path needs a dead
                        // part never enters the network.
                        if let Some(fault) = f.path_blocked(&self.topo, r, d) {
                            f.refused(fault);
                            self.counters.packets_sent += 1;
                            continue;
                        }
                    }
                    let first = self.topo.route_unicast(r, r, d).ports.net_ports().next().expect("unicast with no first hop");
                    (RouteKind::Unicast, d, 0, 1, first, 1)
                }
                Dest::Broadcast { span } => {
                    let reach = self.topo.broadcast_reach(span);
                    if reach == 0 {
                        continue;
                    }
                    if let Some(f) = self.faults.as_mut() {
                        f.sent(reach);
                    }
                    let net = self.topo.net_ports();
                    let ports = self.topo.route_broadcast(r, PortId(net as u8), r, span).ports;
                    let remaining = if self.part.parts > 1 {
                        Self::part_reach(&self.topo, self.own(), &mut self.part.reach_stack, (r, net), r, span)
                    } else {
                        reach as u32
                    };
                    (RouteKind::Broadcast, r, span, remaining, ports.net_ports().next().expect("broadcast with no first hop"), reach)
                }
            };
            assert!(s.flits >= 1, "node {r}'s program sent a packet of no flits");
            let relay = matches!(s.dest, Dest::Relay(_));
            let p = NewPacket { kind, dest: dest.0, span, key: s.key.min(Header::MAX_KEY), len: s.flits, msg: s.msg, aux: s.aux, relay };
            self.nics.enqueue_new(r, p, t, remaining, first);
            self.counters.packets_sent += 1;
            self.measure.generated(t, s.flits as u64 * reach); // measure:
        }
        self.step.node_out.sends.clear();
        for i in 0..self.step.node_out.wakes.len() {
            self.step.timers.push(self.step.node_out.wakes[i], r.0, PROGRAM_TIMER);
        }
        self.step.node_out.wakes.clear();
    }

    /// Was router `r` or its NIC at work this cycle, or will it be in the next (probes
    /// attached)?
    pub fn is_active(&self, r: NodeId) -> bool {
        self.routers.visited(r) || self.routers.has_work(r) || self.step.in_active[r.idx()]
    }
}
