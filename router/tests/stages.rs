//! Per-stage tests of one router, driven cycle by cycle without a fabric: flits are written
//! into input buffers by hand, departures are read from the routers' log.

use ::router::*;
use std::collections::HashMap;

/// Routes and lengths by packet id.
#[derive(Default)]
struct Env {
    routes: HashMap<u32, (PortSet, u16, u32, u64)>,
}

impl RouterEnv for Env {
    fn route(&self, _at: NodeId, _in_port: PortId, p: PacketId) -> (RouteDecision, PacketMeta) {
        let (ports, len, key, birth) = self.routes[&p.0];
        (RouteDecision::new(ports, 0xffff), PacketMeta { len, key, birth })
    }
}

fn params(switching: Switching, pipeline: Pipeline, vcs: u8, buffer: u16) -> RouterParams {
    RouterParams {
        switching,
        pipeline,
        arbiter: ArbiterPolicy::Key,
        multicast_va: MulticastVa::Atomic,
        replication: Replication::Sync,
        injection: InjectionVc::RoundRobin,
        ejection_vcs: vcs,
        va_policy: VaPolicy::RoundRobin,
        vcs,
        buffer_flits: buffer,
        inject_buffer_flits: buffer,
        net_ports: 4,
        nic_channels: 2,
        link_width: 1,
    }
}

/// A departure as (output port, VC, packet, flit sequence number).
type Dep = (usize, u8, u32, u16);
/// An ejection as (channel, packet, flit sequence number).
type Ej = (u8, u32, u16);

/// The routers' clock runs one cycle ahead of the bench's (a flit readable in the bench's
/// cycle 0 must be on its way before the routers' first cycle).
const AHEAD: u64 = 1;

/// One router under test. Network input ports 0..4, injection channels 4..6.
struct Bench {
    r: Routers,
    env: Env,
    /// The next cycle, counted from 0.
    t: u64,
    /// Flits the NIC writes in the next cycle: (channel, flit).
    injections: Vec<(usize, Flit)>,
}

impl Bench {
    fn new(p: RouterParams) -> Bench {
        let mut r = Routers::new(p, 1);
        r.set_log(true);
        Bench { r, env: Env::default(), t: 0, injections: Vec::new() }
    }
    fn packet(&mut self, id: u32, ports: PortSet, len: u16, key: u32) {
        self.env.routes.insert(id, (ports, len, key, id as u64));
    }
    /// Write flit `seq` of packet `id` into network input `port`, VC `vc`, readable from `ready`.
    fn arrive(&mut self, port: usize, vc: usize, id: u32, seq: u16, len: u16, ready: u64) {
        let iv = self.r.ivc_index(NodeId(0), port, vc);
        self.r.arrive_by_hand(iv, Flit::of(PacketId(id), seq, len), ready + AHEAD - 1, ready + AHEAD);
    }
    /// A credit for output VC `vc` of output `op`, visible from cycle `at`.
    fn credit(&mut self, op: usize, vc: usize, at: u64) {
        self.r.credit_by_hand(op, vc, at + AHEAD);
    }
    /// Simulate one cycle; returns (departures as (out port, vc, packet, seq), ejections).
    fn cycle(&mut self) -> (Vec<Dep>, Vec<Ej>) {
        let t = self.t + AHEAD;
        self.r.begin_cycle(t, &self.env);
        let mut ejected = Vec::new();
        self.r.eject_stage(t, &mut ejected);
        for (ch, f) in std::mem::take(&mut self.injections) {
            assert!(self.r.inject(NodeId(0), ch, f, t), "injection channel {ch} full");
        }
        self.r.after_injection(t, &self.env);
        self.r.network_stage(t);
        self.r.end_cycle(t);
        let deps = self.r.departures.iter().map(|d| (d.out_port as usize, d.vc, d.flit.packet.0, d.flit.seq)).collect();
        let ejs = ejected.iter().map(|(_, e)| (e.channel, e.flit.packet.0, e.flit.seq)).collect();
        self.r.departures.clear();
        self.t += 1;
        (deps, ejs)
    }
    /// Is every output VC and ejection channel free?
    fn all_free(&self) -> bool {
        (0..self.r.ports()).all(|op| (0..self.r.vcs()).all(|vc| self.r.output_owner(op, vc).is_none()))
    }
}

#[test]
fn ideal_router_forwards_in_the_cycle_a_flit_becomes_readable() {
    let mut b = Bench::new(params(Switching::StoreAndForward, Pipeline::IDEAL, 1, 2));
    b.packet(1, PortSet::port(2), 1, 0);
    b.arrive(0, 0, 1, 0, 1, 3);
    for _ in 0..3 {
        assert_eq!(b.cycle().0, vec![]);
    }
    assert_eq!(b.cycle().0, vec![(2, 0, 1, 0)]);
    assert_eq!(b.r.occupancy(0), 0);
}

#[test]
fn realistic_pipeline_adds_rc_and_va_stages() {
    let p = Pipeline::REALISTIC;
    let mut b = Bench::new(params(Switching::Wormhole, p, 1, 4));
    b.packet(1, PortSet::port(1), 2, 0);
    b.arrive(0, 0, 1, 0, 2, 0);
    b.arrive(0, 0, 1, 1, 2, 1);
    let mut when = Vec::new();
    for _ in 0..10 {
        let t = b.t;
        for d in b.cycle().0 {
            when.push((t, d.3));
        }
    }
    let head = (p.rc_delay + p.va_delay) as u64;
    assert_eq!(when, vec![(head, 0), (head + 1, 1)]);
}

#[test]
fn multicast_replicates_one_read_to_every_branch_and_ejects_a_copy() {
    let mut b = Bench::new(params(Switching::Wormhole, Pipeline::IDEAL, 1, 4));
    let branches = PortSet::port(0) | PortSet::port(2) | PortSet::port(3) | PortSet::LOCAL;
    b.packet(9, branches, 2, 0);
    b.arrive(1, 0, 9, 0, 2, 0);
    b.arrive(1, 0, 9, 1, 2, 0);
    let (d0, e0) = b.cycle();
    assert_eq!(d0.tap_sort(), vec![(0, 0, 9, 0), (2, 0, 9, 0), (3, 0, 9, 0)]);
    assert_eq!(e0, vec![(0, 9, 0)]);
    let (d1, e1) = b.cycle();
    assert_eq!(d1.tap_sort(), vec![(0, 0, 9, 1), (2, 0, 9, 1), (3, 0, 9, 1)]);
    assert_eq!(e1, vec![(0, 9, 1)]);
    assert_eq!(b.r.occupancy(0), 0);
    // Every output VC and the ejection channel are free again.
    assert!(b.all_free());
}

/// A replicated 2-flit packet M (outputs 1 and 2) arrives while a worm U holds output 2's
/// only VC (its tail comes at cycle 5); a one-flit packet N for output 1 arrives after M.
/// Atomic: M takes neither output until both are free, so N crosses output 1 at once and M
/// leaves on both outputs together. Per branch: M holds output 1 from cycle 1 while it waits
/// for output 2, and N waits behind it.
#[test]
fn atomic_multicast_takes_every_branch_in_one_cycle_or_none() {
    let run = |mva: MulticastVa| {
        let mut p = params(Switching::Wormhole, Pipeline::IDEAL, 1, 4);
        p.multicast_va = mva;
        let mut b = Bench::new(p);
        b.packet(1, PortSet::port(2), 2, 0);
        b.packet(2, PortSet::port(1) | PortSet::port(2), 2, 0);
        b.packet(3, PortSet::port(1), 1, 0);
        b.arrive(0, 0, 1, 0, 2, 0);
        b.arrive(0, 0, 1, 1, 2, 5);
        b.arrive(1, 0, 2, 0, 2, 1);
        b.arrive(1, 0, 2, 1, 2, 1);
        b.arrive(3, 0, 3, 0, 1, 2);
        let mut when = Vec::new();
        for _ in 0..12 {
            let t = b.t;
            for (o, _, id, seq) in b.cycle().0.tap_sort() {
                when.push((t, o, id, seq));
            }
        }
        assert_eq!(b.r.occupancy(0), 0);
        when
    };
    let atomic = vec![(0, 2, 1, 0), (2, 1, 3, 0), (5, 2, 1, 1), (6, 1, 2, 0), (6, 2, 2, 0), (7, 1, 2, 1), (7, 2, 2, 1)];
    assert_eq!(run(MulticastVa::Atomic), atomic);
    let per_branch = vec![(0, 2, 1, 0), (1, 1, 2, 0), (5, 2, 1, 1), (6, 2, 2, 0), (7, 1, 2, 1), (7, 2, 2, 1), (8, 1, 3, 0)];
    assert_eq!(run(MulticastVa::PerBranch), per_branch);
}

/// A replicated 3-flit packet M (outputs 1 and 2) whose output 2 has no credits (four
/// one-flit packets took them) until three come back at cycle 8. Synchronous replication:
/// only M's head crosses output 1 before cycle 8, then each flit leaves on both outputs.
/// Asynchronous: output 1 takes all three flits at once, output 2 follows from cycle 8, and
/// M's three buffer slots stay taken until output 2 has read them.
#[test]
fn asynchronous_replication_lets_a_branch_run_ahead_of_a_stalled_one() {
    let run = |rep: Replication| {
        let mut p = params(Switching::Wormhole, Pipeline::IDEAL, 1, 4);
        p.replication = rep;
        let mut b = Bench::new(p);
        for u in 1..=4 {
            b.packet(u, PortSet::port(2), 1, 0);
            b.arrive(1, 0, u, 0, 1, u as u64 - 1);
        }
        b.packet(9, PortSet::port(1) | PortSet::port(2), 3, 0);
        for seq in 0..3 {
            b.arrive(0, 0, 9, seq, 3, 4);
        }
        for _ in 0..3 {
            b.credit(2, 0, 8);
        }
        let (mut when, mut held) = (Vec::new(), Vec::new());
        for _ in 0..12 {
            let t = b.t;
            for (o, _, id, seq) in b.cycle().0.tap_sort() {
                if id == 9 {
                    when.push((t, o, seq));
                }
            }
            held.push(b.r.occupancy_of(b.r.ivc_index(NodeId(0), 0, 0)));
        }
        assert_eq!(b.r.occupancy(0), 0);
        (when, held)
    };
    let (when, _) = run(Replication::Sync);
    assert_eq!(when, vec![(4, 1, 0), (8, 2, 0), (9, 1, 1), (9, 2, 1), (10, 1, 2), (10, 2, 2)]);
    let (when, held) = run(Replication::Async);
    assert_eq!(when, vec![(4, 1, 0), (5, 1, 1), (6, 1, 2), (8, 2, 0), (9, 2, 1), (10, 2, 2)]);
    // Flits of M buffered at the end of each cycle (all three written at the start): after
    // output 1 has read them all (cycle 6) each slot is freed only when output 2 reads it.
    assert_eq!(held, vec![3, 3, 3, 3, 3, 3, 3, 3, 2, 1, 0, 0]);
}

trait TapSort {
    fn tap_sort(self) -> Self;
}
impl TapSort for Vec<(usize, u8, u32, u16)> {
    fn tap_sort(mut self) -> Self {
        self.sort();
        self
    }
}

#[test]
fn a_branch_without_credit_holds_the_flit_until_its_credit_returns() {
    let mut b = Bench::new(params(Switching::Wormhole, Pipeline::IDEAL, 1, 4));
    b.r.set_credits_by_hand(2, 0, 0); // output port 2, VC 0: downstream full
    b.packet(5, PortSet::port(1) | PortSet::port(2), 1, 0);
    b.arrive(0, 0, 5, 0, 1, 0);
    assert_eq!(b.cycle().0, vec![(1, 0, 5, 0)]);
    assert_eq!(b.r.occupancy(0), 1, "the flit stays until every branch has it");
    assert_eq!(b.cycle().0, vec![]);
    b.credit(2, 0, 3);
    assert_eq!(b.cycle().0, vec![]);
    assert_eq!(b.cycle().0, vec![(2, 0, 5, 0)]);
    assert_eq!(b.r.occupancy(0), 0);
}

#[test]
fn one_vc_serves_one_packet_at_a_time_and_the_key_picks_the_next() {
    let mut b = Bench::new(params(Switching::Wormhole, Pipeline::IDEAL, 1, 4));
    b.packet(1, PortSet::port(3), 2, 7);
    b.packet(2, PortSet::port(3), 2, 1);
    // Both heads arrive together; packet 2 has the smaller key.
    for s in 0..2 {
        b.arrive(0, 0, 1, s, 2, 0);
        b.arrive(1, 0, 2, s, 2, 0);
    }
    let order: Vec<(u32, u16)> = (0..4).flat_map(|_| b.cycle().0).map(|d| (d.2, d.3)).collect();
    assert_eq!(order, vec![(2, 0), (2, 1), (1, 0), (1, 1)]);
}

#[test]
fn virtual_cut_through_head_waits_for_room_for_the_whole_packet() {
    for (sw, expect_at) in [(Switching::Wormhole, 0), (Switching::VirtualCutThrough, 2)] {
        let mut b = Bench::new(params(sw, Pipeline::IDEAL, 1, 4));
        b.r.set_credits_by_hand(1, 0, 1);
        b.credit(1, 0, 1);
        b.credit(1, 0, 2);
        b.packet(4, PortSet::port(1), 3, 0);
        for s in 0..3 {
            b.arrive(0, 0, 4, s, 3, 0);
        }
        let first = (0..6).find(|_| !b.cycle().0.is_empty()).unwrap();
        assert_eq!(first as u64, expect_at, "{sw:?}");
    }
}

#[test]
fn store_and_forward_head_waits_for_its_tail() {
    let mut b = Bench::new(params(Switching::StoreAndForward, Pipeline::IDEAL, 1, 4));
    b.packet(4, PortSet::port(1), 3, 0);
    for s in 0..3 {
        b.arrive(0, 0, 4, s, 3, s as u64 * 2);
    }
    let first = (0..10).find(|_| !b.cycle().0.is_empty()).unwrap();
    assert_eq!(first, 4, "head leaves when the tail (readable at 4) is in");
}

#[test]
fn injection_port_is_exempt_from_store_and_forward() {
    let mut b = Bench::new(params(Switching::StoreAndForward, Pipeline::IDEAL, 1, 4));
    b.packet(4, PortSet::port(1), 3, 0);
    b.injections.push((0, Flit::of(PacketId(4), 0, 3)));
    assert_eq!(b.cycle().0, vec![(1, 0, 4, 0)], "the NIC holds the whole packet");
}

#[test]
fn ejection_channels_limit_receptions_per_cycle() {
    // One ejection channel (one-port): two packets arriving together are received one after the other.
    let mut p = params(Switching::StoreAndForward, Pipeline::IDEAL, 1, 2);
    p.nic_channels = 1;
    let mut b = Bench::new(p);
    b.packet(1, PortSet::LOCAL, 1, 0);
    b.packet(2, PortSet::LOCAL, 1, 0);
    b.arrive(0, 0, 1, 0, 1, 0);
    b.arrive(3, 0, 2, 0, 1, 0);
    let (_, e0) = b.cycle();
    let (_, e1) = b.cycle();
    assert_eq!(e0.len(), 1);
    assert_eq!(e1.len(), 1);
    assert_ne!(e0[0].1, e1[0].1);
}

#[test]
fn wide_links_carry_several_worms_per_cycle_but_one_flit_per_vc() {
    let mut p = params(Switching::Wormhole, Pipeline::IDEAL, 2, 4);
    p.link_width = 2;
    let mut b = Bench::new(p);
    b.packet(1, PortSet::port(2), 2, 0);
    b.packet(2, PortSet::port(2), 2, 0);
    for s in 0..2 {
        b.arrive(0, 0, 1, s, 2, 0);
        b.arrive(1, 0, 2, s, 2, 0);
    }
    let (d0, _) = b.cycle();
    let (d1, _) = b.cycle();
    assert_eq!(d0.len(), 2, "two worms share the 2-wide link: {d0:?}");
    assert_eq!(d1.len(), 2);
    let vcs: std::collections::BTreeSet<u8> = d0.iter().map(|d| d.1).collect();
    assert_eq!(vcs.len(), 2, "each worm holds its own output VC");
}

/// Regression (found by the broadcast property test): a multicast packet whose network
/// branch lags behind its ejection must not be granted an ejection channel again after
/// its tail was ejected.
#[test]
fn ejected_tail_is_not_ejected_again_while_a_branch_lags() {
    let mut b = Bench::new(params(Switching::Wormhole, Pipeline::IDEAL, 1, 4));
    b.r.set_credits_by_hand(1, 0, 0);
    b.packet(3, PortSet::port(1) | PortSet::LOCAL, 2, 0);
    b.arrive(0, 0, 3, 0, 2, 0);
    b.arrive(0, 0, 3, 1, 2, 0);
    let mut ejected = Vec::new();
    let mut sent = Vec::new();
    for t in 0..8 {
        if t == 2 {
            // Room for the head at cycle 3, for the tail only at cycle 6: the tail is
            // ejected at 4 while its network branch waits.
            b.credit(1, 0, 3);
            b.credit(1, 0, 6);
        }
        let (d, e) = b.cycle();
        ejected.extend(e);
        sent.extend(d);
    }
    assert_eq!(ejected, vec![(0, 3, 0), (0, 3, 1)], "each flit is ejected exactly once");
    assert_eq!(sent, vec![(1, 0, 3, 0), (1, 0, 3, 1)]);
    let mut more = Vec::new();
    for _ in 0..3 {
        more.extend(b.cycle().1);
    }
    assert!(more.is_empty());
    assert_eq!(b.r.occupancy(0), 0);
    assert!(b.all_free());
}

#[test]
fn credits_on_their_way_become_visible_at_their_cycle() {
    let mut b = Bench::new(params(Switching::Wormhole, Pipeline::REALISTIC, 2, 4));
    let op = 3;
    b.r.set_credits_by_hand(op, 1, 0);
    b.credit(op, 1, 5);
    b.credit(op, 1, 7);
    b.credit(op, 1, 6);
    b.credit(op, 1, 500);
    assert_eq!(b.r.credits_in_flight(op), 4);
    assert!(b.r.may_change(NodeId(0)));
    let at = |c: u64| c + AHEAD;
    assert_eq!((b.r.credits_at(op, 1, at(4)), b.r.credits_at(op, 1, at(6)), b.r.credits_at(op, 0, at(9))), (0, 2, 4));
    assert_eq!(b.r.credits_at(op, 1, at(499)), 3);
    assert_eq!(b.r.credit_horizon(), at(500));
    let mut seen = Vec::new();
    while b.t < 501 {
        // After cycle t (and its end), the router sees the credits due in t + 1.
        let t = b.t;
        b.cycle();
        seen.push((t, b.r.credits(op, 1)));
    }
    assert_eq!(seen[3], (3, 0));
    assert_eq!(seen[4], (4, 1));
    assert_eq!(seen[5], (5, 2));
    assert_eq!(seen[6], (6, 3));
    assert_eq!(seen[498], (498, 3));
    assert_eq!(seen[499], (499, 4));
    assert_eq!(b.r.credits_in_flight(op), 0);
}

/// What one cycle sent: departures (sorted) and ejections.
type Cycle = (Vec<Dep>, Vec<Ej>);

/// A packet offered to the router under test: input port (0..4 network, 4..6 the injection
/// channels), input VC (network ports), outputs (bit o for network port o, bit 4 for
/// ejection: several make a multicast), length.
type Offer = (usize, usize, usize, u16);

/// Run `offers` (packet `i` has key `i`) through one router with `vcs` VCs per port,
/// computing VC sets in width `S`: flits are written into their VC in order as room allows,
/// credits come back two cycles after a departure. Returns every cycle's departures (sorted)
/// and ejections, and the cycle the router emptied.
///
/// Every cycle it checks atomic multicast allocation (when the parameters ask for it): a
/// replicated multi-flit packet that holds any output VC holds one on every branch it has
/// not finished.
fn offered_run(vcs: u8, pipeline: Pipeline, offers: &[Offer]) -> (Vec<Cycle>, u64) {
    offered_run_with(vcs, pipeline, Replication::Sync, offers)
}

/// [`offered_run`] with replication `rep`. After the run it checks that every branch of every
/// packet (output port or ejection) took each of its flits once, in order.
fn offered_run_with(vcs: u8, pipeline: Pipeline, rep: Replication, offers: &[Offer]) -> (Vec<Cycle>, u64) {
    let mut p = params(Switching::Wormhole, pipeline, vcs, 3);
    p.replication = rep;
    offered_run_from(p, Schedule::Busy, offers, &[])
}

/// [`offered_run_with`] with parameters `p` (their arbiter is replaced by the key policy),
/// under `schedule`, packet `i` offered from cycle `not_before[i]` (if given).
fn offered_run_from(p: RouterParams, schedule: Schedule, offers: &[Offer], not_before: &[u64]) -> (Vec<Cycle>, u64) {
    offered_run_in(p, ArbiterPolicy::Key, schedule, false, offers, not_before)
}

/// [`offered_run_from`] under arbiter `arbiter`, the router's multicast state allocated
/// before the first cycle if `mc_state`.
fn offered_run_in(
    mut p: RouterParams,
    arbiter: ArbiterPolicy,
    schedule: Schedule,
    mc_state: bool,
    offers: &[Offer],
    not_before: &[u64],
) -> (Vec<Cycle>, u64) {
    let vcs = p.vcs;
    p.arbiter = arbiter;
    // Branches each input VC's front packet has finished (sent its tail on).
    let mut finished = vec![PortSet::empty(); 6 * vcs as usize];
    let mut b = Bench::new(p);
    b.r.set_schedule(schedule);
    if mc_state {
        b.r.start_multicast_by_hand();
    }
    // Pending flits per (input port, VC), in order.
    let mut pending: Vec<std::collections::VecDeque<Flit>> = vec![Default::default(); 6 * vcs as usize];
    for (i, &(port, vc, out, len)) in offers.iter().enumerate() {
        let mut ports = if out & 16 != 0 { PortSet::LOCAL } else { PortSet::empty() };
        for o in (0..4).filter(|o| out & 1 << o != 0) {
            ports |= PortSet::port(o);
        }
        b.packet(i as u32, ports, len, i as u32);
        let q = &mut pending[port * vcs as usize + if port >= 4 { 0 } else { vc }];
        q.extend((0..len).map(|s| Flit::of(PacketId(i as u32), s, len)));
    }
    let depth = p.buffer_flits;
    let mut trace = Vec::new();
    while b.t < 400 {
        for (k, q) in pending.iter_mut().enumerate() {
            let (port, vc) = (k / vcs as usize, k % vcs as usize);
            let Some(&f) = q.front() else { continue };
            if not_before.get(f.packet.0 as usize).is_some_and(|&at| b.t < at) {
                continue;
            }
            let iv = b.r.ivc_index(NodeId(0), port, vc);
            if port >= 4 {
                // A head may start in any VC of the port with room, the flits behind it follow.
                let room = |vc: usize| b.r.occupancy_of(b.r.ivc_index(NodeId(0), port, vc)) < depth;
                let has_room = if f.is_head() { (0..vcs as usize).any(room) } else { room(b.r.injection_vc_in_use(NodeId(0), port - 4)) };
                if has_room && !b.injections.iter().any(|i| i.0 == port - 4) {
                    b.injections.push((port - 4, f));
                    q.pop_front();
                }
            } else if b.r.occupancy_of(iv) < depth {
                // Sent in the previous cycle, readable in this one.
                b.arrive(port, vc, f.packet.0, f.seq, f.len_hint(), b.t);
                q.pop_front();
            }
        }
        let (deps, ejs) = b.cycle();
        let t = b.t - 1;
        // The network input VC packet `id` was offered on (the NIC picks the VC of an
        // injection channel: those packets are not checked).
        let vc_of = |id: u32| {
            let (port, vc, _, _) = offers[id as usize];
            (port < 4).then(|| b.r.ivc_index(NodeId(0), port, vc))
        };
        let len_of = |id: u32| offers[id as usize].3;
        for &(_, id, seq) in &ejs {
            if seq + 1 == len_of(id)
                && let Some(iv) = vc_of(id)
            {
                finished[iv] |= PortSet::LOCAL;
            }
        }
        for &(o, _, id, seq) in &deps {
            if seq + 1 == len_of(id)
                && let Some(iv) = vc_of(id)
            {
                finished[iv] |= PortSet::port(o);
            }
        }
        for (iv, done) in finished.iter_mut().enumerate().take(4 * vcs as usize) {
            let c = b.r.vc_view(iv);
            if p.multicast_va == MulticastVa::Atomic && c.route.bits().count_ones() >= 2 && c.pkt_len > 1 && !c.granted.is_empty() {
                assert_eq!(c.granted, c.route.difference(*done), "cycle {t}: input VC {iv} holds some of its branches");
            }
            if c.route.is_empty() {
                *done = PortSet::empty();
            }
        }
        let mut deps: Vec<Dep> = deps;
        deps.sort();
        for &(op, vc, _, _) in &deps {
            b.credit(op, vc as usize, t + 2);
        }
        trace.push((deps, ejs));
        if b.r.occupancy(0) == 0 && pending.iter().all(|q| q.is_empty()) && b.injections.is_empty() {
            break;
        }
    }
    // Per packet and branch (output port, or 4 for ejection), the flits taken, in order.
    let mut taken: HashMap<(u32, usize), Vec<u16>> = HashMap::new();
    for (deps, ejs) in &trace {
        for &(o, _, id, seq) in deps {
            taken.entry((id, o)).or_default().push(seq);
        }
        for &(_, id, seq) in ejs {
            taken.entry((id, 4)).or_default().push(seq);
        }
    }
    if b.t < 400 {
        for (i, &(_, _, out, len)) in offers.iter().enumerate() {
            for o in (0..5).filter(|o| out & (if *o == 4 { 16 } else { 1 << o }) != 0) {
                assert_eq!(taken.get(&(i as u32, o)), Some(&(0..len).collect::<Vec<_>>()), "packet {i} branch {o}");
            }
        }
    }
    (trace, b.t)
}

trait LenHint {
    /// The packet's length, from the flit's own fields where they tell it (a tail), else
    /// longer than its sequence number (enough for `Flit::of` to keep its flags).
    fn len_hint(&self) -> u16;
}
impl LenHint for Flit {
    fn len_hint(&self) -> u16 {
        if self.is_tail() { self.seq + 1 } else { self.seq + 2 }
    }
}

/// [`Pipeline::REALISTIC`] with VC allocation taking two cycles and route computation none.
const SLOW_VA: Pipeline = Pipeline { rc_delay: 0, va_delay: 2, ..Pipeline::REALISTIC };

fn offers(vcs: usize) -> impl Strategy<Value = Vec<Offer>> {
    proptest::collection::vec((0usize..6, 0..vcs, 1usize..32, 1u16..5), 1..14)
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Asynchronous replication: the offered packets drain, each branch takes every flit once
    /// and in order, and no replicated packet holds only some of its branches.
    #[test]
    fn asynchronous_replication_delivers_every_flit_on_every_branch(offers in offers(8), realistic in proptest::bool::ANY) {
        let pipe = if realistic { Pipeline::REALISTIC } else { Pipeline::IDEAL };
        let run = offered_run_with(8, pipe, Replication::Async, &offers);
        prop_assert!(run.1 < 400, "the offered packets drain");
    }

    /// A VC allocation delay of two cycles: the packets drain with either replication.
    #[test]
    fn a_slow_vc_allocation_drains(offers in offers(8), asynchronous in proptest::bool::ANY) {
        let rep = if asynchronous { Replication::Async } else { Replication::Sync };
        let run = offered_run_with(8, SLOW_VA, rep, &offers);
        prop_assert!(run.1 < 400, "the offered packets drain");
    }

    /// A router with more than 64 input VCs (16 VCs on 6 ports: the injection channels are VCs
    /// 64 and 80, beyond 64-bit sets) moves packets that use only the first 8 VCs of each port
    /// exactly as the same router with 8 VCs does (priority by key, so the VC numbering
    /// cannot decide an arbitration), as long as no output needs a ninth VC.
    #[test]
    fn a_wide_router_runs_like_a_narrow_one(offers in offers(8), realistic in proptest::bool::ANY) {
        let mut per_output = [0; 5];
        for o in &offers {
            for (k, n) in per_output.iter_mut().enumerate() {
                *n += (o.2 >> k) & 1;
            }
        }
        prop_assume!(per_output.iter().all(|&n| n <= 8));
        prop_assume!(offers.iter().filter(|o| o.0 >= 4).count() > 0);
        let pipe = if realistic { Pipeline::REALISTIC } else { Pipeline::IDEAL };
        let wide = Routers::new(params(Switching::Wormhole, pipe, 16, 3), 1);
        prop_assert!(!wide.narrow());
        let narrow = offered_run(8, pipe, &offers);
        prop_assert!(narrow.1 < 400, "the offered packets drain");
        prop_assert_eq!(narrow, offered_run(16, pipe, &offers));
    }

    /// Routers of one VC a port that replicate no packet allocate the VCs of their network
    /// outputs by a shorter path than routers with the state of replicated packets: the
    /// cycles are the same, under every arbiter, with packets offered apart and together.
    #[test]
    fn one_vc_allocation_without_replication_is_the_general_one(
        offers in proptest::collection::vec((0usize..6, 0usize..5, 1u16..5), 1..14),
        policy in 0usize..4,
        realistic in proptest::bool::ANY,
        gaps in proptest::collection::vec(0u64..4, 14),
    ) {
        let arbiter = [ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key][policy];
        let pipe = if realistic { Pipeline::REALISTIC } else { Pipeline::IDEAL };
        let p = params(Switching::Wormhole, pipe, 1, 3);
        // Unicast only: one network output (bit o) or ejection (bit 4) each.
        let offers: Vec<Offer> = offers.into_iter().map(|(port, o, len)| (port, 0, 1 << o, len)).collect();
        let not_before: Vec<u64> = gaps.iter().scan(0, |at, g| { *at += g; Some(*at) }).collect();
        let short = offered_run_in(p, arbiter, Schedule::Busy, false, &offers, &not_before);
        prop_assert!(short.1 < 400, "the offered packets drain");
        prop_assert_eq!(short, offered_run_in(p, arbiter, Schedule::Busy, true, &offers, &not_before));
    }

    /// Allocations run only when they can grant and stages visit only routers with work:
    /// the cycles are those of the same router with every stage run every cycle
    /// ([`Schedule::All`]), for any pipeline delays, replication and multicast allocation.
    #[test]
    fn stages_that_wait_run_like_stages_that_run_every_cycle(
        offers in offers(4),
        vcs in 1u8..5,
        delays in (0u32..4, 0u32..4, 1u32..4, 0u32..3, 0u32..3),
        asynchronous in proptest::bool::ANY,
        atomic in proptest::bool::ANY,
        width in 1u8..=2,
        gaps in proptest::collection::vec(0u64..12, 14),
    ) {
        let (rc_delay, va_delay, link_latency, credit_delay, inject_latency) = delays;
        let pipe = Pipeline { rc_delay, va_delay, link_latency, credit_delay, inject_latency };
        let mut p = params(Switching::Wormhole, pipe, vcs, 3);
        p.replication = if asynchronous { Replication::Async } else { Replication::Sync };
        p.multicast_va = if atomic { MulticastVa::Atomic } else { MulticastVa::PerBranch };
        p.link_width = width;
        let offers: Vec<Offer> = offers.into_iter().map(|(port, vc, out, len)| (port, vc % vcs as usize, out, len)).collect();
        // Packets offered apart, so that heads also reach empty VCs.
        let not_before: Vec<u64> = gaps.iter().scan(0, |at, g| { *at += g; Some(*at) }).collect();
        let busy = offered_run_from(p, Schedule::Busy, &offers, &not_before);
        prop_assert_eq!(busy, offered_run_from(p, Schedule::All, &offers, &not_before));
    }
}

// ---- The public entry points check their ids ----
//
// Release builds index the routers' state without a bounds check (`router/src/flat.rs`), so
// each entry point checks the ids it is given, and route computation the ports a topology
// returns. Tests build with the vectors' own checks too, whose message is another: each
// test below fails if its entry point's check is gone.

/// A wormhole router of one VC a port, buffers of four flits.
fn entry_bench() -> Bench {
    Bench::new(params(Switching::Wormhole, Pipeline::IDEAL, 1, 4))
}

#[test]
#[should_panic(expected = "router 1 NIC channel 0 out of range: 1 routers of 2 channels")]
fn injection_into_a_router_that_does_not_exist_is_refused() {
    let mut b = entry_bench();
    b.r.inject(NodeId(1), 0, Flit::of(PacketId(1), 0, 1), 0);
}

#[test]
#[should_panic(expected = "router 0 NIC channel 2 out of range: 1 routers of 2 channels")]
fn injection_on_a_channel_that_does_not_exist_is_refused() {
    let mut b = entry_bench();
    b.r.inject(NodeId(0), 2, Flit::of(PacketId(1), 0, 1), 0);
}

#[test]
#[should_panic(expected = "route computation returned ports")]
fn a_route_to_a_port_the_router_does_not_have_is_refused() {
    let mut b = entry_bench();
    // Network ports 0..4 only: port 5 is beyond them (and beyond the router's six ports'
    // VCs in the last router's output state).
    b.packet(1, PortSet::port(5), 1, 0);
    b.arrive(0, 0, 1, 0, 1, 0);
    b.cycle();
}

#[test]
#[should_panic(expected = "input VC 12 out of range: 12 input VCs")]
fn a_view_of_an_input_vc_that_does_not_exist_is_refused() {
    let b = Bench::new(params(Switching::Wormhole, Pipeline::IDEAL, 2, 4));
    b.r.vc_view(12);
}

#[test]
#[should_panic(expected = "output port 6 VC 0 out of range: 6 ports of 1 VCs")]
fn a_credit_for_an_output_that_does_not_exist_is_refused() {
    let mut b = entry_bench();
    b.r.credit_by_hand(6, 0, 1);
}

#[test]
#[should_panic(expected = "wiring names port 6 of 6")]
fn wiring_to_a_port_that_does_not_exist_is_refused() {
    let mut b = entry_bench();
    let up = vec![NONE; 6];
    let mut down = vec![NONE; 6];
    down[0] = 6;
    b.r.connect(&down, &up);
}

#[test]
#[should_panic(expected = "router 1 out of range: 1 routers")]
fn a_flit_from_another_part_for_a_router_that_does_not_exist_is_refused() {
    let mut b = entry_bench();
    b.r.receive_flit(1, 0, Flit::of(PacketId(1), 0, 1), 0, 0);
}

#[test]
#[should_panic(expected = "output VC 6 out of range: 6 a router")]
fn a_credit_from_another_part_for_a_vc_that_does_not_exist_is_refused() {
    let mut b = entry_bench();
    b.r.receive_credit(0, 6, 0);
}

#[test]
#[should_panic(expected = "part 0..2 of 1 routers")]
fn a_part_beyond_the_routers_is_refused() {
    let mut b = entry_bench();
    b.r.set_part(0, 2);
}

#[test]
#[should_panic(expected = "1 to 16 VCs a port and an ejection channel")]
fn routers_without_a_vc_are_refused() {
    Routers::new(params(Switching::Wormhole, Pipeline::IDEAL, 0, 4), 1);
}

#[test]
#[should_panic(expected = "input VC 0 overrun")]
fn a_flit_from_another_part_into_a_full_vc_is_refused() {
    // Links and credits of two cycles: a flit sent in cycle 0 is taken in after cycle 1.
    let mut b = Bench::new(params(Switching::Wormhole, Pipeline::REALISTIC, 1, 1));
    b.r.set_part(0, 1);
    b.r.receive_flit(0, 0, Flit::of(PacketId(1), 0, 2), 0, 1);
    b.r.receive_flit(0, 0, Flit::of(PacketId(1), 1, 2), 0, 1);
}
