//! The cycle's stages, in the order the module doc of [`crate::router`] draws them, and which
//! routers each visits: under [`Schedule::Busy`] those with work in its set, under
//! [`Schedule::All`] every router, its work registers rebuilt first ([`Routers::refresh`]).

use crate::flit::Flit;
use crate::ids::NodeId;
use crate::params::Switching;
use crate::prefetch::{PREFETCH_AHEAD, ahead, prefetch};
use crate::route_compute::RouterEnv;
use crate::router::{Ejection, Routers, Schedule};
use crate::vc_set::members;
use crate::wheel::{Slot, unvcr, vcr};
use crate::work::{ANY, EJ_DIRTY, MC_DIRTY, PLAIN, PLAIN_WH, VA_DIRTY, Width, Work};

/// A cursor some routers ahead of a stage's walk over its set of routers with work (none
/// when the fabric does not prefetch): it names the router whose state to prefetch
/// ([`crate::prefetch`]). A hint only: a bit the walk changes meanwhile changes no result.
struct Cursor {
    wi: usize,
    m: u64,
    on: bool,
}

impl Cursor {
    #[inline(always)]
    fn new(on: bool, set: &[u64], distance: usize) -> Cursor {
        let mut a = Cursor { wi: 0, m: set.first().copied().unwrap_or(0), on };
        if on {
            for _ in 0..distance {
                a.next(set);
            }
        }
        a
    }

    #[inline(always)]
    fn next(&mut self, set: &[u64]) -> Option<usize> {
        if !self.on {
            return None;
        }
        while self.m == 0 {
            self.wi += 1;
            self.m = *set.get(self.wi)?;
        }
        let r = self.wi * 64 + self.m.trailing_zeros() as usize;
        self.m &= self.m - 1;
        Some(r)
    }
}

/// What a stage's walk over its routers with work prefetches ahead of the router it is at:
/// two cursors, the work register [`PREFETCH_AHEAD`] routers further, then the input VCs the
/// stage will read (which the work register names).
struct Lookahead {
    near: Cursor,
    far: Cursor,
}

impl Lookahead {
    #[inline(always)]
    fn new(on: bool, set: &[u64]) -> Lookahead {
        Lookahead { near: Cursor::new(on, set, PREFETCH_AHEAD), far: Cursor::new(on, set, 2 * PREFETCH_AHEAD) }
    }

    /// The walk over `set` moves on by one router; `vcs` picks from a router's work register
    /// the input VCs the stage reads.
    #[inline(always)]
    fn step<S: Width>(&mut self, rs: &Routers, set: &[u64], vcs: impl Fn(&Work<S>) -> S) {
        if let Some(a) = self.far.next(set) {
            prefetch(&S::w(rs)[a]);
        }
        if let Some(a) = self.near.next(set) {
            rs.prefetch_vcs::<S>(a, vcs(&S::w(rs)[a]));
        }
    }
}

/// The slots of the delay lines a stage files into while it runs: the arrivals of the flits
/// it sends (all `link_latency` on) and the credits for the slots it frees (all
/// `1 + credit_delay` on).
pub(crate) struct Filing {
    pub arrivals: Vec<(u32, Flit)>,
    pub credits: Vec<u32>,
}

impl Routers {
    /// Rebuild router `r`'s work registers from its VCs' state in cycle `t`, every allocation
    /// to run ([`Schedule::All`]); an unrouted head at a front is routed.
    fn refresh<S: Width, E: RouterEnv>(&mut self, r: usize, t: u64, env: &E) {
        for l in 0..self.npv {
            let c = self.inputs.vcs[r * self.npv + l];
            if !c.routed() && c.len > 0 {
                self.route_front::<S, E>(r, l, t, env);
            }
        }
        let mut full = 0u64;
        for ch in 0..self.nk {
            if self.ejection_channel_full(r, ch) {
                full |= 1 << ch;
            }
        }
        let s1 = &S::w(self)[r];
        let (s1_read, s1_at) = (s1.s1_read, s1.s1_at);
        S::w_mut(self)[r] = Work { ej_full: full, s1_read, s1_at, dirty: VA_DIRTY | EJ_DIRTY | MC_DIRTY, ..Work::default() };
        if self.has_mc::<S, ANY>() {
            let m = &mut S::m_mut(self)[r];
            (m.mc_bid, m.mc_ej, m.mc_req) = (S::ZERO, S::ZERO, S::ZERO);
        }
        for l in 0..self.npv {
            let iv = r * self.npv + l;
            let c = self.inputs.vcs[iv];
            if !c.routed() {
                continue;
            }
            if !self.lacking(iv).is_empty() && c.va_may_start(t) {
                self.va_join::<S>(r, l);
            }
            self.check_bid::<S>(r, l, t);
        }
        self.set_net_work(r);
        self.set_ej_work(r);
    }

    /// Start cycle `t`: everything due by `t` happens (flits become readable, credits
    /// visible, VCs become requesters and bidders), and heads that reached the front in the
    /// previous cycle are routed.
    pub fn begin_cycle<E: RouterEnv>(&mut self, t: u64, env: &E) {
        match (self.narrow(), self.prefetch) {
            (true, false) => self.begin_cycle_in::<u64, E, false>(t, env),
            (true, true) => self.begin_cycle_in::<u64, E, true>(t, env),
            (false, false) => self.begin_cycle_in::<u128, E, false>(t, env),
            (false, true) => self.begin_cycle_in::<u128, E, true>(t, env),
        }
    }

    /// [`Routers::begin_cycle`] in width `S`, prefetching (`PF`, [`Routers::prefetch`]) or
    /// not: two copies of the same code, so that a fabric that does not prefetch runs
    /// none of it.
    fn begin_cycle_in<S: Width, E: RouterEnv, const PF: bool>(&mut self, t: u64, env: &E) {
        // Empty unless probes are attached: no call into the C library's memset, whose wide
        // vector path costs far more than its zero bytes (the cycle's 3 % in benchmark (b)).
        if !self.visited.is_empty() {
            self.visited.fill(0);
        }
        if t - self.inputs.hist_epoch >= self.inputs.hist_span {
            self.inputs.rebase_hist(t);
        }
        while let Some(c) = self.wheel.next_due(t) {
            let slot = self.wheel.take(c);
            self.take_slot::<S, E, PF>(&slot, c, env);
            self.wheel.put_back(c, slot);
        }
        if !self.rc_next.is_empty() {
            std::mem::swap(&mut self.rc_next, &mut self.rc_now);
            for i in 0..self.rc_now.len() {
                let (r, l) = unvcr(self.rc_now[i]);
                self.route_front::<S, E>(r, l, t, env);
            }
            self.rc_now.clear();
        }
        if self.schedule == Schedule::All {
            for r in self.lo as usize..self.hi as usize {
                self.refresh::<S, E>(r, t, env);
            }
        }
    }

    /// What slot `slot` of cycle `c` holds happens.
    #[inline]
    fn take_slot<S: Width, E: RouterEnv, const PF: bool>(&mut self, slot: &Slot, c: u64, env: &E) {
        let dist = if PF { PREFETCH_AHEAD } else { 0 };
        for (i, &x) in slot.credits.iter().enumerate() {
            if let Some(&y) = ahead(&slot.credits, i, dist) {
                let (r, k) = unvcr(y);
                prefetch(&self.outputs.ovs[r * self.npv + k]);
            }
            self.credit_arrives(x);
        }
        for (i, &(x, flit)) in slot.arrivals.iter().enumerate() {
            if let Some(&(y, next)) = ahead(&slot.arrivals, i, dist) {
                let (r, l) = unvcr(y);
                prefetch(&self.inputs.vcs[r * self.npv + l]);
                if next.is_head() {
                    env.prefetch(next.packet);
                }
            }
            let (r, l) = unvcr(x);
            self.arrive::<S, E>(r, l, flit, c, env);
        }
        for &x in &slot.va_joins {
            let (r, l) = unvcr(x);
            self.va_join::<S>(r, l);
        }
        for &x in &slot.sa_joins {
            let (r, l) = unvcr(x);
            self.check_bid::<S>(r, l, c);
        }
    }

    /// A flit becomes readable in input VC `l` of router `r` in cycle `t`.
    #[inline(always)]
    fn arrive<S: Width, E: RouterEnv>(&mut self, r: usize, l: usize, flit: Flit, t: u64, env: &E) {
        if self.inputs.write(r * self.npv + l, flit) {
            self.front_arrived::<S, E>(r, l, t, env);
        } else if self.switching == Switching::StoreAndForward || self.inputs.vcs[r * self.npv + l].multicast() {
            // A store-and-forward head may bid once its whole packet is in; a replicated
            // packet's branches may go on.
            self.check_bid::<S>(r, l, t);
        }
    }

    /// Input VC `l` of router `r` was empty and has a flit at its front in cycle `t`.
    #[inline(always)]
    pub(crate) fn front_arrived<S: Width, E: RouterEnv>(&mut self, r: usize, l: usize, t: u64, env: &E) {
        if !self.inputs.vcs[r * self.npv + l].routed() {
            self.route_front::<S, E>(r, l, t, env);
        } else {
            self.check_bid::<S>(r, l, t);
        }
    }

    /// Does a stage visit just the routers with work, in id order (with no probe to tell)?
    /// Then it walks its set of them itself (a loop over the set's words, the router's
    /// evaluation inlined in it); otherwise [`Routers::visit`].
    #[inline(always)]
    fn busy_in_order(&self) -> bool {
        self.schedule == Schedule::Busy && self.order.is_none() && !self.log
    }

    /// Visit the routers a stage works on: those whose bit is set in `work` (all of them
    /// under [`Schedule::All`]), in id order or the order set, calling `each`; a router
    /// whose work is done leaves the set (`each` returns false).
    #[inline(always)]
    fn visit(&mut self, network: bool, mut each: impl FnMut(&mut Routers, usize) -> bool) {
        if self.log {
            let set = if network { &self.net_work } else { &self.ej_work };
            for (v, w) in self.visited.iter_mut().zip(set) {
                *v |= w;
            }
            if self.schedule == Schedule::All {
                self.visited.fill(!0);
            }
        }
        let mut list = std::mem::take(&mut self.visit);
        list.clear();
        let all = self.schedule == Schedule::All;
        let set = if network { &self.net_work } else { &self.ej_work };
        let wanted = |r: usize| all || set[r >> 6] & (1 << (r & 63)) != 0;
        match &self.order {
            Some(perm) => list.extend(perm.iter().copied().filter(|&r| (self.lo..self.hi).contains(&r) && wanted(r as usize))),
            None => list.extend((self.lo..self.hi).filter(|&r| wanted(r as usize))),
        }
        for &r in &list {
            let r = r as usize;
            if !each(self, r) {
                let set = if network { &mut self.net_work } else { &mut self.ej_work };
                set[r >> 6] &= !(1 << (r & 63));
            }
        }
        self.visit = list;
    }

    /// Stage 1 of cycle `t` in every router with work there: ejection-VC allocation and
    /// ejection. Ejected flits are appended to `ejected` with their router.
    pub fn eject_stage(&mut self, t: u64, ejected: &mut Vec<(NodeId, Ejection)>) {
        match (self.compiled(), self.prefetch) {
            (PLAIN_WH, false) => self.eject_stage_in::<u64, PLAIN_WH, false>(t, ejected),
            (PLAIN_WH, true) => self.eject_stage_in::<u64, PLAIN_WH, true>(t, ejected),
            (PLAIN, false) => self.eject_stage_in::<u64, PLAIN, false>(t, ejected),
            (PLAIN, true) => self.eject_stage_in::<u64, PLAIN, true>(t, ejected),
            (_, false) if self.narrow() => self.eject_stage_in::<u64, ANY, false>(t, ejected),
            (_, true) if self.narrow() => self.eject_stage_in::<u64, ANY, true>(t, ejected),
            (_, false) => self.eject_stage_in::<u128, ANY, false>(t, ejected),
            (_, true) => self.eject_stage_in::<u128, ANY, true>(t, ejected),
        }
    }

    fn eject_stage_in<S: Width, const P: u8, const PF: bool>(&mut self, t: u64, ejected: &mut Vec<(NodeId, Ejection)>) {
        let mut filing = self.open_filing(t);
        if self.busy_in_order() {
            let mut look = Lookahead::new(PF, &self.ej_work);
            for wi in 0..self.ej_work.len() {
                let mut m = self.ej_work[wi];
                while m != 0 {
                    let r = wi * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    look.step::<S>(self, &self.ej_work, |w| w.ej_req | w.ejbid);
                    if !self.eject_router::<S, P>(r, t, ejected, &mut filing.credits) {
                        self.ej_work[wi] &= !(1 << (r & 63));
                    }
                }
            }
        } else {
            self.visit(false, |rs, r| rs.eject_router::<S, P>(r, t, ejected, &mut filing.credits));
        }
        self.close_filing(t, filing);
    }

    /// A stage reaches router `r` soon: a hint to load the state of its input VCs in `vcs`
    /// (the first sixteen: a 16-cube's ejection stage has that many requesters, and more
    /// hints than that at once fill the core's miss buffers).
    #[inline(always)]
    fn prefetch_vcs<S: Width>(&self, r: usize, vcs: S) {
        for l in members(vcs).take(16) {
            prefetch(&self.inputs.vcs[r * self.npv + l]);
        }
    }

    /// Stage 1 in router `r`: atomic multicast allocation, ejection-VC allocation (each only
    /// when it can grant), then ejection. True while it has work there.
    #[inline(always)]
    fn eject_router<S: Width, const P: u8>(
        &mut self,
        r: usize,
        t: u64,
        ejected: &mut Vec<(NodeId, Ejection)>,
        credits: &mut Vec<u32>,
    ) -> bool {
        self.eject_router_once::<S, P>(r, t, ejected, credits);
        let w = &S::w(self)[r];
        !(w.ejbid.is_empty() && w.dirty & (EJ_DIRTY | MC_DIRTY) == 0 && self.mc_ej::<S, P>(r).is_empty())
    }

    /// [`Routers::eject_router`]'s work.
    #[inline(always)]
    fn eject_router_once<S: Width, const P: u8>(
        &mut self,
        r: usize,
        t: u64,
        ejected: &mut Vec<(NodeId, Ejection)>,
        credits: &mut Vec<u32>,
    ) {
        let dirty = S::w(self)[r].dirty;
        if dirty & (EJ_DIRTY | MC_DIRTY) != 0 {
            S::w_mut(self)[r].dirty &= !(EJ_DIRTY | MC_DIRTY);
            if dirty & MC_DIRTY != 0 && self.has_mc::<S, P>() {
                let want = S::m(self)[r].mc_req;
                if !want.is_empty() {
                    self.allocate_multicast::<S, P>(r, t, want);
                }
            }
            if !S::w(self)[r].ej_req.is_empty() && self.free_channels::<S>(r) != 0 {
                self.allocate_ejection::<S, P>(r, t);
            }
        }
        if S::w(self)[r].ejbid.is_empty() && self.mc_ej::<S, P>(r).is_empty() {
            return;
        }
        self.clear_scratch::<S>();
        self.eject::<S, P>(r, t, ejected, credits);
        let read = S::load(self.scratch.read);
        if !read.is_empty() {
            let w = &mut S::w_mut(self)[r];
            (w.s1_read, w.s1_at) = (read, t);
            if self.has_mc::<S, P>() {
                S::m_mut(self)[r].s1_popped = S::load(self.scratch.popped);
            }
        }
    }

    /// The injection VC of channel `ch` of router `r` the NIC writes `flit` into now, if one
    /// has room: a head starts its packet in a VC chosen by [`InjectionVc`]
    /// (crate::InjectionVc), the flits behind it follow into the same VC.
    #[inline]
    fn injection_vc(&self, r: usize, ch: usize, flit: Flit) -> Option<usize> {
        let (base, cur) = (r * self.npv + (self.nnet + ch) * self.nv, self.inj_vc[r * self.nk + ch] as usize);
        let room = |vc: usize| self.inputs.vcs[base + vc].occ < self.inj_depth;
        self.params.injection.choose(flit.is_head(), cur, self.nv, room)
    }

    /// The NIC of node `r` is about to write into injection channel `ch`: a hint to load the
    /// state of the channel's VCs (up to four).
    #[inline(always)]
    pub fn prefetch_injection(&self, r: NodeId, ch: usize) {
        self.check_channel(r.idx(), ch);
        let base = r.idx() * self.npv + (self.nnet + ch) * self.nv;
        for vc in &self.inputs.vcs[base..base + self.nv.min(4)] {
            prefetch(vc);
        }
    }

    /// The NIC writes a flit into injection channel `ch` of router `r` in cycle `t`,
    /// readable from `t + inject_latency`. False when no VC it may go into has room. Heads
    /// written with no latency are routed by [`Routers::after_injection`].
    pub fn inject(&mut self, r: NodeId, ch: usize, flit: Flit, t: u64) -> bool {
        self.check_channel(r.idx(), ch);
        let Some(vc) = self.injection_vc(r.idx(), ch, flit) else {
            return false;
        };
        self.inj_vc[r.idx() * self.nk + ch] = vc as u8;
        let l = (self.nnet + ch) * self.nv + vc;
        let iv = r.idx() * self.npv + l;
        self.count_in(iv, t);
        if self.inject_latency == 0 {
            if self.inputs.write(iv, flit) {
                self.inj_front.push(vcr(r.idx(), l));
            } else if self.inputs.vcs[iv].multicast() {
                self.set_net_work(r.idx());
                self.set_ej_work(r.idx());
            }
        } else {
            let at = t + self.inject_latency;
            self.wheel.slot(at).arrivals.push((vcr(r.idx(), l), flit));
        }
        true
    }

    /// Heads written with no latency wait for [`Routers::after_injection`].
    #[inline(always)]
    pub fn injected_heads(&self) -> bool {
        !self.inj_front.is_empty()
    }

    /// After the NICs' injections of cycle `t` (all of them, or some: a head's route
    /// computation reads only its router and packet): route computation for heads that
    /// reached the front of their injection VC (stage 2's route computation), and atomic
    /// allocation for the replicated packets among them that may take their branches at once.
    pub fn after_injection<E: RouterEnv>(&mut self, t: u64, env: &E) {
        if self.narrow() { self.after_injection_in::<u64, E>(t, env) } else { self.after_injection_in::<u128, E>(t, env) }
    }

    fn after_injection_in<S: Width, E: RouterEnv>(&mut self, t: u64, env: &E) {
        let dist = if self.prefetch { PREFETCH_AHEAD } else { 0 };
        for i in 0..self.inj_front.len() {
            // Written a whole pass over the NICs ago (when the fabric routes the heads after
            // every NIC's injection): the VC's state two heads ahead, the packet of the head
            // one ahead.
            if let Some(&y) = ahead(&self.inj_front, i, 2 * dist) {
                let (r, l) = unvcr(y);
                prefetch(&self.inputs.vcs[r * self.npv + l]);
            }
            if let Some(&y) = ahead(&self.inj_front, i, dist) {
                let (r, l) = unvcr(y);
                env.prefetch(self.inputs.vcs[r * self.npv + l].front.packet);
            }
            let (r, l) = unvcr(self.inj_front[i]);
            self.front_arrived::<S, E>(r, l, t, env);
            // A replicated packet that may take its branches at once tries in this stage.
            let iv = r * self.npv + l;
            let c = self.inputs.vcs[iv];
            if c.multicast() && self.waits_atomic(&c, &self.inputs.branches[iv]) && c.va_may_start(t) {
                let m = &mut S::m_mut(self)[r];
                if m.new_at != t {
                    (m.new_at, m.mc_new) = (t, S::ZERO);
                }
                m.mc_new |= S::bit(l);
                self.set_net_work(r);
            }
        }
        self.inj_front.clear();
    }

    /// Stage 2 of cycle `t` in every router with work there: VC allocation, and switch
    /// allocation with crossbar traversal (flits onto their links, credits for the slots
    /// they free back upstream).
    pub fn network_stage(&mut self, t: u64) {
        let (filing, sent_from) = self.network_walk(t);
        // The flits sent this cycle are counted in their downstream buffers once every router
        // has popped its own (a slot's occupancy goes down before it goes up within a cycle).
        let dist = if self.prefetch { PREFETCH_AHEAD } else { 0 };
        for i in sent_from..filing.arrivals.len() {
            if let Some(&(y, _)) = ahead(&filing.arrivals, i, dist) {
                let (r, l) = unvcr(y);
                prefetch(&self.inputs.vcs[r * self.npv + l]);
            }
            let (r, l) = unvcr(filing.arrivals[i].0);
            self.count_in(r * self.npv + l, t);
        }
        self.close_filing(t, filing);
    }

    /// May stage 2 of a cycle end with its flits' arrivals ([`Routers::network_stage_arriving`])?
    /// With links of one cycle (a flit sent in `t` is readable in `t + 1`, and nothing else
    /// happens to its buffer in between) and the routers walked in id order. The fabric adds
    /// its own conditions: no probes to see a buffer at the end of a cycle, nothing between
    /// the cycles that a route computation reads may change (no faults to apply).
    pub fn arrive_early_on(&self) -> bool {
        self.link_latency == 1 && self.busy_in_order()
    }

    /// [`Routers::network_stage`], then what [`Routers::begin_cycle`] of `t + 1` would do
    /// with the flits it sent (written into their buffers, heads that reach a front routed
    /// by `env` as in `t + 1`), each right after it is counted in its buffer: the buffer's
    /// state is read once for both, not once at the end of this cycle and again, out of the
    /// caches in a large fabric, at the start of the next. The same results as the stage and
    /// the next cycle's arrivals ([`Routers::arrive_early_on`]).
    pub fn network_stage_arriving<E: RouterEnv>(&mut self, t: u64, env: &E) {
        debug_assert!(self.arrive_early_on());
        let (filing, sent_from) = self.network_walk(t);
        if self.narrow() {
            self.arrive_sent::<u64, E>(t, filing, sent_from, env);
        } else {
            self.arrive_sent::<u128, E>(t, filing, sent_from, env);
        }
    }

    /// The flits `filing.arrivals[sent_from..]` sent in cycle `t` over links of one cycle:
    /// counted in their buffers, then arrived as in `t + 1`, and out of the delay line. A
    /// large fabric prefetches a buffer and its router's work registers (which the flit's
    /// route computation or bid sets) 2 × [`PREFETCH_AHEAD`] flits ahead, a head's packet
    /// [`PREFETCH_AHEAD`].
    fn arrive_sent<S: Width, E: RouterEnv>(&mut self, t: u64, mut filing: Filing, sent_from: usize, env: &E) {
        let dist = if self.prefetch { PREFETCH_AHEAD } else { 0 };
        for i in sent_from..filing.arrivals.len() {
            if let Some(&(y, _)) = ahead(&filing.arrivals, i, 2 * dist) {
                let (r, l) = unvcr(y);
                prefetch(&self.inputs.vcs[r * self.npv + l]);
                prefetch(&S::w(self)[r]);
            }
            if let Some(&(_, next)) = ahead(&filing.arrivals, i, dist)
                && next.is_head()
            {
                env.prefetch(next.packet);
            }
            let (x, flit) = filing.arrivals[i];
            let (r, l) = unvcr(x);
            self.count_in(r * self.npv + l, t);
            self.arrive::<S, E>(r, l, flit, t + 1, env);
        }
        filing.arrivals.truncate(sent_from);
        self.close_filing(t, filing);
    }

    /// Stage 2's evaluation of its routers in cycle `t`: the delay-line slots it filed into,
    /// still open, and where its flits start among their arrivals.
    fn network_walk(&mut self, t: u64) -> (Filing, usize) {
        match (self.compiled(), self.prefetch) {
            (PLAIN_WH, false) => self.network_stage_in::<u64, PLAIN_WH, false>(t),
            (PLAIN_WH, true) => self.network_stage_in::<u64, PLAIN_WH, true>(t),
            (PLAIN, false) => self.network_stage_in::<u64, PLAIN, false>(t),
            (PLAIN, true) => self.network_stage_in::<u64, PLAIN, true>(t),
            (_, false) if self.narrow() => self.network_stage_in::<u64, ANY, false>(t),
            (_, true) if self.narrow() => self.network_stage_in::<u64, ANY, true>(t),
            (_, false) => self.network_stage_in::<u128, ANY, false>(t),
            (_, true) => self.network_stage_in::<u128, ANY, true>(t),
        }
    }

    fn network_stage_in<S: Width, const P: u8, const PF: bool>(&mut self, t: u64) -> (Filing, usize) {
        let mut filing = self.open_filing(t);
        let sent_from = filing.arrivals.len();
        if self.busy_in_order() {
            let mut look = Lookahead::new(PF, &self.net_work);
            for wi in 0..self.net_work.len() {
                let mut m = self.net_work[wi];
                while m != 0 {
                    let r = wi * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    look.step::<S>(self, &self.net_work, |w| w.va_req | w.bid);
                    if !self.network_router::<S, P>(r, t, &mut filing) {
                        self.net_work[wi] &= !(1 << (r & 63));
                    }
                }
            }
        } else {
            self.visit(true, |rs, r| rs.network_router::<S, P>(r, t, &mut filing));
        }
        (filing, sent_from)
    }

    /// Stage 2 in router `r`. True while it has work there.
    #[inline(always)]
    fn network_router<S: Width, const P: u8>(&mut self, r: usize, t: u64, filing: &mut Filing) -> bool {
        if self.has_mc::<S, P>() {
            let m = S::m(self)[r];
            if m.new_at == t && !m.mc_new.is_empty() {
                S::m_mut(self)[r].mc_new = S::ZERO;
                self.allocate_multicast::<S, P>(r, t, m.mc_new);
            }
        }
        if S::w(self)[r].dirty & VA_DIRTY != 0 {
            S::w_mut(self)[r].dirty &= !VA_DIRTY;
            if !S::w(self)[r].va_req.is_empty() {
                self.allocate_network_vcs::<S, P>(r, t);
            }
        }
        let mc_bid = self.mc_bid::<S, P>(r);
        if !(S::w(self)[r].bid | mc_bid).is_empty() {
            self.allocate_switch::<S, P>(r, t, mc_bid, filing);
        }
        let w = &S::w(self)[r];
        !(w.bid.is_empty() && w.dirty & VA_DIRTY == 0 && self.mc_bid::<S, P>(r).is_empty())
    }

    /// The end of cycle `t`: with probes attached ([`Routers::set_log`]), credits due in
    /// `t + 1` become visible now (what the routers will see then, and what a probe reads);
    /// otherwise at the start of the next cycle stepped.
    pub fn end_cycle(&mut self, t: u64) {
        if !self.log {
            return;
        }
        let at = t + 1;
        if self.wheel.has_far() {
            self.wheel.pull_far(at);
        }
        let slot = self.wheel.slot(at);
        if slot.credits.is_empty() {
            return;
        }
        let credits = std::mem::take(&mut slot.credits);
        for &x in &credits {
            self.credit_arrives(x);
        }
        let mut credits = credits;
        credits.clear();
        self.wheel.slot(at).credits = credits;
    }

    /// Take the delay-line slots a stage of cycle `t` files into for its duration.
    #[inline]
    fn open_filing(&mut self, t: u64) -> Filing {
        let (a, c) = (self.arrival_due(t), self.credit_due(t));
        let arrivals = if a - self.wheel.done <= self.wheel.mask { std::mem::take(&mut self.wheel.slot(a).arrivals) } else { Vec::new() };
        let credits = if c - self.wheel.done <= self.wheel.mask { std::mem::take(&mut self.wheel.slot(c).credits) } else { Vec::new() };
        Filing { arrivals, credits }
    }

    #[inline]
    fn close_filing(&mut self, t: u64, f: Filing) {
        let (a, c) = (self.arrival_due(t), self.credit_due(t));
        if a - self.wheel.done <= self.wheel.mask {
            self.wheel.slot(a).arrivals = f.arrivals;
        } else {
            self.wheel.slot(a).arrivals.extend(f.arrivals);
        }
        if c - self.wheel.done <= self.wheel.mask {
            self.wheel.slot(c).credits = f.credits;
        } else {
            self.wheel.slot(c).credits.extend(f.credits);
        }
    }

    /// Clear what the crossbar has read (a new router's stage).
    #[inline(always)]
    pub(crate) fn clear_scratch<S: Width>(&mut self) {
        let s = &mut self.scratch;
        let mut pr = s.ports_read;
        while pr != 0 {
            s.port_reads[pr.trailing_zeros() as usize] = 0;
            pr &= pr - 1;
        }
        s.ports_read = 0;
        S::ZERO.store_into(&mut s.read);
        S::ZERO.store_into(&mut s.popped);
        S::ZERO.store_into(&mut s.port_full);
    }

    /// Stage 2 starts where stage 1 left router `r`'s crossbar in cycle `t`: what ejection
    /// read counts against the input ports' reads.
    #[inline(always)]
    pub(crate) fn scratch_from_stage1<S: Width, const P: u8>(&mut self, r: usize, t: u64) {
        self.clear_scratch::<S>();
        let w = S::w(self)[r];
        if w.s1_at != t || w.s1_read.is_empty() {
            return;
        }
        let popped = if self.has_mc::<S, P>() { S::m(self)[r].s1_popped } else { S::ZERO };
        for l in members(w.s1_read) {
            self.take_read::<S, P>(l);
        }
        popped.store_into(&mut self.scratch.popped);
    }
}
