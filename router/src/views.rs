//! What observers read of the routers: per-VC views for waveforms and deadlock reports,
//! buffer statistics, owners of output and ejection VCs, credits, the work and visit sets
//! probes show, and the allocators' log for probes ([`Routers::set_log`]).

use crate::flit::Flit;
use crate::ids::{NONE, NodeId};
use crate::input_unit::{Branches, VcStage};
use crate::output_unit::FREE;
use crate::port_set::PortSet;
use crate::router::{Routers, Schedule};
use crate::vc_set::{EMPTY, VcBits};
use crate::wheel::{unvcr, vcr};
use crate::work::{ANY, Width};

/// What an input VC is doing, as a waveform shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum VcActivity {
    /// No flits, no packet.
    Idle = 0,
    /// A head waits for route computation.
    Routing = 1,
    /// Routed; some branch waits for an output VC or ejection channel.
    VcAlloc = 2,
    /// Every branch holds its VC; flits compete for the switch.
    Active = 3,
}

impl VcActivity {
    pub const NAMES: [&'static str; 4] = ["IDLE", "RC", "VA", "ACTIVE"];
}

/// A VC allocation logged for probes ([`Routers::set_log`]): input VC `iv` (global index)
/// was granted VC `vc` of its router's output `port` in this cycle (a network port, or
/// `net_ports + ch` for ejection channel `ch`, whose ejection VC `vc` it got).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VaGrant {
    pub iv: u32,
    pub port: u8,
    pub vc: u8,
}

/// What the allocators did in one cycle, logged for probes ([`Routers::set_log`]): VC
/// allocation grants, switch allocation requests (router, a bit per local input VC; a router
/// may appear twice, for ejection and for the network ports) and switch grants (the input
/// VCs, global index, whose flit crossed the crossbar; a replicated flit once per branch).
#[derive(Clone, Debug, Default)]
pub struct AllocLog {
    pub va_grants: Vec<VaGrant>,
    pub sa_requests: Vec<(u32, u128)>,
    pub sa_grants: Vec<u32>,
}

impl AllocLog {
    /// Empty it for the next cycle (keeping the room).
    pub fn clear(&mut self) {
        self.va_grants.clear();
        self.sa_requests.clear();
        self.sa_grants.clear();
    }
}

/// A VC set as one `u128` (a bit per local input VC).
#[inline(always)]
pub(crate) fn wide<S: VcBits>(x: S) -> u128 {
    let mut s = EMPTY;
    x.store_into(&mut s);
    s[0] as u128 | (s[1] as u128) << 64
}

/// Input VC `l` of router `r` as seen from outside: what deadlock reports and waveforms read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcView {
    /// Flits in the FIFO or on their way into it.
    pub occupancy: u16,
    pub stage: VcStage,
    /// The front flit, once readable.
    pub front: Option<Flit>,
    pub route: PortSet,
    pub granted: PortSet,
    pub pending: PortSet,
    pub pkt_len: u16,
}

impl Routers {
    /// Log what probes read, in a stage compiled for case `P` (never in the plain cases,
    /// which run only with no probe attached: [`Routers::compiled`])?
    #[inline(always)]
    pub(crate) fn logging<const P: u8>(&self) -> bool {
        P == ANY && self.log
    }

    /// A credit for output VC [`vcr`] `x` goes on its way, visible from cycle `at`.
    #[inline(always)]
    pub(crate) fn credit_sent<const P: u8>(&mut self, x: u32, at: u64) {
        if self.logging::<P>() {
            self.log_credit_sent(x, at);
        }
    }

    // The logging itself out of line, where it costs the stages that call it (run without
    // probes) no registers or code.
    #[cold]
    #[inline(never)]
    fn log_credit_sent(&mut self, x: u32, at: u64) {
        let (r, k) = unvcr(x);
        self.in_flight[r * self.npv + k] += 1;
        self.horizon = self.horizon.max(at);
    }

    /// The credit for output VC `k` (global index) is back upstream
    /// ([`Routers::credit_arrives`]): one fewer on its way.
    #[cold]
    #[inline(never)]
    pub(crate) fn log_credit_arrives(&mut self, k: usize) {
        self.in_flight[k] -= 1;
    }

    /// Flits in input VC `iv` (global index) or on their way into it.
    #[inline]
    pub fn occupancy_of(&self, iv: usize) -> u16 {
        self.check_ivc(iv);
        self.inputs.vcs[iv].occ
    }
    /// Flits in router `r`'s input VCs or on their way into them.
    pub fn occupancy(&self, r: usize) -> u32 {
        self.check_router(r);
        self.inputs.vcs[r * self.npv..(r + 1) * self.npv].iter().map(|c| c.occ as u32).sum()
    }
    /// Cycles input VC `iv` spent at each occupancy 0..=depth up to cycle `now`.
    pub fn occupancy_histogram(&self, iv: usize, now: u64) -> Vec<u64> {
        self.check_ivc(iv);
        self.inputs.occupancy_histogram(iv, now)
    }
    /// The occupancy histograms of routers `routers`' input VCs up to cycle `now`, summed per
    /// class (network, injection); the VCs of unconnected network ports are left out. `now`
    /// may be any cycle from the last one stepped on (nothing changes in cycles not stepped).
    pub fn class_occupancy(&self, routers: std::ops::Range<usize>, now: u64) -> crate::PortClasses {
        assert!(routers.end <= self.n, "routers {routers:?} of {}", self.n);
        let mut s = crate::PortClasses::default();
        for r in routers {
            for port in 0..self.np {
                let class = if port < self.nnet {
                    if self.up.get(r * self.np + port) == Some(&NONE) {
                        continue;
                    }
                    &mut s.network
                } else {
                    &mut s.injection
                };
                for vc in 0..self.nv {
                    class.vcs += 1;
                    self.inputs.add_histogram((r * self.np + port) * self.nv + vc, now, class);
                }
            }
        }
        s
    }
    /// The most flits input VC `iv` held at the end of a cycle up to `now`.
    pub fn held_max(&self, iv: usize, now: u64) -> u16 {
        self.check_ivc(iv);
        self.inputs.held_max(iv, now)
    }
    /// The high-water mark of input VC `iv` (a flit written and read in one cycle counts).
    pub fn max_occupancy(&self, iv: usize) -> u16 {
        self.check_ivc(iv);
        self.inputs.vcs[iv].max_len
    }
    /// Cycles input VC `iv`'s front flit could not go for lack of credits / lost switch
    /// arbitration.
    pub fn stall_credit(&self, iv: usize) -> u64 {
        self.check_ivc(iv);
        self.inputs.stall_credit[iv]
    }
    pub fn stall_arbitration(&self, iv: usize) -> u64 {
        self.check_ivc(iv);
        self.inputs.stall_arb[iv]
    }
    /// Flits sent so far on each output port (global index).
    pub fn port_flits(&self) -> &[u64] {
        &self.sent
    }

    /// The branches of the packet at VC `iv` (unicast packets have one).
    #[inline]
    pub(crate) fn branches_of(&self, iv: usize) -> Branches {
        let c = &self.inputs.vcs[iv];
        if !c.routed() {
            return Branches::default();
        }
        if c.multicast() {
            return self.inputs.branches[iv];
        }
        let route = c.unicast_route();
        Branches { route, granted: if c.granted() { route } else { PortSet::empty() }, pending: route, ..Branches::default() }
    }

    /// Input VC `iv` (global index) as seen from outside.
    pub fn vc_view(&self, iv: usize) -> VcView {
        self.check_ivc(iv);
        let c = &self.inputs.vcs[iv];
        let b = self.branches_of(iv);
        VcView {
            occupancy: c.occ,
            stage: if c.routed() { VcStage::Routed } else { VcStage::Idle },
            front: (c.len > 0).then_some(c.front),
            route: b.route,
            granted: b.granted,
            pending: b.pending,
            pkt_len: c.pkt_len,
        }
    }

    /// The flits of input VC `iv` in order (those on their way last), with `len_of` giving a
    /// packet's length.
    pub fn vc_flits(&self, iv: usize, len_of: impl Fn(crate::ids::PacketId) -> u16) -> Vec<Flit> {
        self.check_ivc(iv);
        let mut flits = self.inputs.flits(iv, &len_of);
        flits.extend(self.arriving(iv));
        flits
    }

    /// The flits on their way into input VC `iv` (on its link), first due first.
    pub fn arriving(&self, iv: usize) -> Vec<Flit> {
        let (r, l) = (iv / self.npv, iv % self.npv);
        let x = vcr(r, l);
        let mut coming: Vec<(u64, Flit)> =
            self.wheel.entries().flat_map(|(c, s)| s.arrivals.iter().filter(|a| a.0 == x).map(move |a| (c, a.1))).collect();
        coming.sort_by_key(|a| a.0);
        coming.into_iter().map(|a| a.1).collect()
    }

    /// Does the front flit of input VC `iv` wait for the rest of its packet from upstream
    /// before it may cross (a store-and-forward head at a network input whose tail is not in:
    /// [`Routers::may_cross`])?
    pub fn waits_for_tail(&self, iv: usize) -> bool {
        self.check_ivc(iv);
        let c = &self.inputs.vcs[iv];
        c.len > 0 && !self.may_cross(iv % self.npv, c)
    }

    /// The output VC that the granted network branch `o` of the packet at input VC `iv`
    /// holds, if the flit that branch takes next is buffered and lacks the credits to cross
    /// ([`Routers::has_credits`]; under asynchronous replication the flit at the branch's own
    /// position).
    pub fn short_of_credits(&self, iv: usize, o: usize) -> Option<usize> {
        self.check_ivc(iv);
        self.check_net_port(o);
        let (r, l) = (iv / self.npv, iv % self.npv);
        let c = &self.inputs.vcs[iv];
        let op = r * self.np + o;
        let ovc = self.outputs.vc_owned_by(op, self.nv, l)?;
        let flit = if c.flags & crate::input_unit::ASYNC != 0 {
            self.branch_next(iv, PortSet::port(o))?.1
        } else {
            if c.len == 0 {
                return None;
            }
            c.front
        };
        (!self.has_credits::<ANY>(op * self.nv + ovc, flit.is_head(), c.pkt_len)).then_some(ovc)
    }

    /// May network branch `o` of the packet at input VC `iv` take output VC `vc` (its VC
    /// mask, a replicated branch's own class included)?
    pub fn may_take_vc(&self, iv: usize, o: usize, vc: usize) -> bool {
        self.check_ivc(iv);
        self.check_net_port(o);
        crate::vc_allocator::allows(self.vc_mask_for(iv, o), vc)
    }

    /// What input VC `iv` is doing.
    pub fn vc_activity(&self, iv: usize) -> VcActivity {
        self.check_ivc(iv);
        let c = &self.inputs.vcs[iv];
        if !c.routed() {
            return if c.occ == 0 { VcActivity::Idle } else { VcActivity::Routing };
        }
        if self.lacking(iv).is_empty() { VcActivity::Active } else { VcActivity::VcAlloc }
    }

    /// The injection VC channel `ch` of router `r` writes its current packet into (where its
    /// last flit went).
    pub fn injection_vc_in_use(&self, r: NodeId, ch: usize) -> usize {
        self.check_channel(r.idx(), ch);
        self.inj_vc[r.idx() * self.nk + ch] as usize
    }
    /// Ejection VCs per channel.
    pub fn ejection_vcs(&self) -> usize {
        self.ejv
    }
    /// The input VC (global index) holding ejection VC `vc` of channel `ch` of router `r`.
    pub fn ejection_owner(&self, r: NodeId, ch: usize, vc: usize) -> Option<usize> {
        self.check_channel(r.idx(), ch);
        assert!(vc < self.ejv, "ejection VC {vc} out of range: {}", self.ejv);
        let o = self.outputs.ej_owner[(r.idx() * self.nk + ch) * self.ejv + vc];
        (o != FREE).then(|| r.idx() * self.npv + o as usize)
    }
    /// The input VC (global index) holding output VC `vc` of network output port `op`
    /// (global index).
    pub fn output_owner(&self, op: usize, vc: usize) -> Option<usize> {
        self.check_ovc(op, vc);
        let o = self.outputs.ovs[op * self.nv + vc].owner;
        (o != FREE).then(|| op / self.np * self.npv + o as usize)
    }
    /// The output VC of port `op` held by input VC `iv` (both global), if any.
    pub fn output_vc_of(&self, op: usize, iv: usize) -> Option<usize> {
        self.check_ovc(op, 0);
        self.outputs.vc_owned_by(op, self.nv, iv % self.npv).filter(|_| iv / self.npv == op / self.np)
    }
    /// Credits of output VC `vc` of port `op` that the router sees in the next cycle.
    #[inline]
    pub fn credits(&self, op: usize, vc: usize) -> u16 {
        self.check_ovc(op, vc);
        self.outputs.ovs[op * self.nv + vc].credits
    }
    /// Credits of output VC `vc` of port `op` as the router will see them in cycle `t`.
    pub fn credits_at(&self, op: usize, vc: usize, t: u64) -> u16 {
        self.check_ovc(op, vc);
        let x = vcr(op / self.np, op % self.np * self.nv + vc);
        self.credits(op, vc) + self.wheel.credits_due(x, t) as u16
    }
    /// Credits on their way back to output port `op` (counted as they go with probes
    /// attached, [`Routers::set_log`]; otherwise looked up in the wheel).
    pub fn credits_in_flight(&self, op: usize) -> usize {
        match self.in_flight.get(op * self.nv..(op + 1) * self.nv) {
            Some(c) => c.iter().map(|&c| c as usize).sum(),
            None => {
                let lo = vcr(op / self.np, op % self.np * self.nv);
                let hi = lo + self.nv as u32;
                self.wheel.entries().map(|(_, s)| s.credits.iter().filter(|&&x| x >= lo && x < hi).count()).sum()
            }
        }
    }
    /// The latest cycle at which a credit put on a return wire since probes were attached
    /// becomes visible.
    pub fn credit_horizon(&self) -> u64 {
        self.horizon
    }
    /// The input VCs of router `r` that request VC allocation (a bit per local VC): routed,
    /// their RC delay passed, some branch without its output VC or ejection VC.
    pub fn va_requesters(&self, r: NodeId) -> u128 {
        self.check_router(r.idx());
        if self.narrow() { self.va_requesters_in::<u64>(r.idx()) } else { self.va_requesters_in::<u128>(r.idx()) }
    }
    fn va_requesters_in<S: Width>(&self, r: usize) -> u128 {
        let w = &S::w(self)[r];
        let mc = if self.has_mc::<S, ANY>() { S::m(self)[r].mc_req } else { S::ZERO };
        wide(w.va_req | w.ej_req | mc)
    }

    /// Log a VC allocation for probes.
    #[inline(always)]
    pub(crate) fn log_va<const P: u8>(&mut self, r: usize, l: usize, port: usize, vc: usize) {
        if self.logging::<P>() {
            self.logged_va(r, l, port, vc);
        }
    }
    #[cold]
    #[inline(never)]
    fn logged_va(&mut self, r: usize, l: usize, port: usize, vc: usize) {
        self.allocs.va_grants.push(VaGrant { iv: (r * self.npv + l) as u32, port: port as u8, vc: vc as u8 });
    }
    /// Log switch-allocation requests `req` of router `r` for probes.
    #[inline(always)]
    pub(crate) fn log_sa_req<S: VcBits, const P: u8>(&mut self, r: usize, req: S) {
        if self.logging::<P>() && !req.is_empty() {
            self.logged_sa_req(r, wide(req));
        }
    }
    #[cold]
    #[inline(never)]
    fn logged_sa_req(&mut self, r: usize, req: u128) {
        self.allocs.sa_requests.push((r as u32, req));
    }
    /// Log a switch grant (local VC `l` of router `r`) for probes.
    #[inline(always)]
    pub(crate) fn log_sa_gnt<const P: u8>(&mut self, r: usize, l: usize) {
        if self.logging::<P>() {
            self.logged_sa_gnt(r, l);
        }
    }
    #[cold]
    #[inline(never)]
    fn logged_sa_gnt(&mut self, r: usize, l: usize) {
        self.allocs.sa_grants.push((r * self.npv + l) as u32);
    }

    /// Could router `r`'s state differ from the last cycle: does it hold flits, or have
    /// credits coming back?
    pub fn may_change(&self, r: NodeId) -> bool {
        self.occupancy(r.idx()) > 0 || (0..self.np).any(|o| self.credits_in_flight(r.idx() * self.np + o) > 0)
    }
    /// Does router `r` have work registered for its next stages?
    pub fn has_work(&self, r: NodeId) -> bool {
        self.check_router(r.idx());
        let i = r.idx();
        (self.net_work[i >> 6] | self.ej_work[i >> 6]) & (1 << (i & 63)) != 0
    }
    /// Was router `r` visited by a stage this cycle (probes attached: [`Routers::set_log`])?
    pub fn visited(&self, r: NodeId) -> bool {
        let i = r.idx();
        self.visited.get(i >> 6).is_some_and(|w| w & (1 << (i & 63)) != 0)
    }
    /// The next cycle at which the delay lines make anything true (a flit readable, a credit
    /// visible, a VC joining an allocation), if any: after the cycle last begun.
    pub fn next_due(&self) -> Option<u64> {
        self.wheel.next_pending()
    }
    /// Has no stage work for the next cycle: no router in a stage's set, no head to route?
    /// Then nothing changes in the routers until [`Routers::next_due`]. Never under
    /// [`Schedule::All`], which visits every router every cycle (and so stays the reference
    /// that the busy schedule's skipping is tested against).
    pub fn stages_idle(&self) -> bool {
        self.schedule == Schedule::Busy
            && self.rc_next.is_empty()
            && self.net_work.iter().all(|&w| w == 0)
            && self.ej_work.iter().all(|&w| w == 0)
    }
    /// How many cycles in a row in which no flit moves prove, with nothing due in the delay
    /// lines, that none ever will: each such cycle can at most grant VCs whose flits then
    /// wait for credits that are not coming, a VC of each output port a cycle.
    pub fn still_cycles_for_certainty(&self) -> u64 {
        16 + 2 * self.npv as u64
    }
    /// Is there nothing at all in the routers (no flit buffered or on its way)?
    pub fn is_empty(&self) -> bool {
        self.flits == 0
    }
}
