//! A fabric split between threads: which routers this part runs, the flits and credits that
//! cross to and from the other parts, and joining the parts after the run.

use crate::flat::Flat;
use crate::flit::Flit;
use crate::ids::NodeId;
use crate::router::Routers;
use crate::wheel::vcr;
use crate::work::ANY;

/// Added to a [`vcr`] of `Routers::down` and `Routers::up` whose router is another part's
/// or external ([`vcr`]s are below 2^31: fewer than 2^24 routers).
pub(crate) const REMOTE: u32 = 1 << 31;

impl Routers {
    /// Run only routers `lo..hi` (one part of a fabric split between threads).
    pub fn set_part(&mut self, lo: usize, hi: usize) {
        assert!(lo <= hi && hi <= self.n, "part {lo}..{hi} of {} routers", self.n);
        (self.lo, self.hi) = (lo as u32, hi as u32);
        self.popped_at = vec![u64::MAX; self.inputs.vcs.len()].into();
        self.mark_remote();
    }

    /// Is router `r` another part's, or external?
    fn remote_router(&self, r: u32) -> bool {
        r < self.lo || r >= self.hi || (!self.external.is_empty() && self.external[(r >> 6) as usize] >> (r & 63) & 1 != 0)
    }

    /// Mark the neighbours in `down` and `up` that are another part's or external
    /// ([`REMOTE`]), after the wiring, the part or the external routers changed.
    pub(crate) fn mark_remote(&mut self) {
        let mark = |x: u32| {
            let y = x & !REMOTE;
            match x {
                crate::ids::NONE => x,
                _ if self.remote_router(y >> 7) => y | REMOTE,
                _ => y,
            }
        };
        let (down, up): (Flat<u32>, Flat<u32>) = (self.down.iter().map(|&x| mark(x)).collect(), self.up.iter().map(|&x| mark(x)).collect());
        (self.down, self.up) = (down, up);
    }

    /// Routers `nodes` are external from now on: routers outside the model (an RTL router
    /// co-simulated in their place) whose ports the fabric drives. The flits and credits
    /// the model's routers send them leave through `remote_flits` and `remote_credits`, as
    /// for another part's; what they send comes back through [`Routers::receive_flit`],
    /// [`Routers::receive_credit`] and [`Routers::external_departure`]. Their own state
    /// here stays empty: nothing is written into them.
    pub fn set_external(&mut self, nodes: &[u32]) {
        self.external = vec![0; self.n.div_ceil(64)];
        for &r in nodes {
            self.check_router(r as usize);
            self.external[r as usize / 64] |= 1 << (r % 64);
        }
        if self.popped_at.is_empty() {
            self.popped_at = vec![u64::MAX; self.inputs.vcs.len()].into();
        }
        self.mark_remote();
    }

    /// An external router sent `flit` on output VC `vc` of output port `op` (global index)
    /// in cycle `t`'s switch allocation: count it as the model's own departures are counted
    /// (flits per port, hops, packets over links) and log it for probes. The flit itself
    /// goes to its downstream router through [`Routers::receive_flit`].
    pub fn external_departure(&mut self, op: usize, vc: usize, flit: Flit) {
        self.check_ovc(op, vc);
        self.count_departure::<ANY>(op, vc, flit);
    }

    /// The router and local VC index (`port * vcs + vc`) of an entry of `remote_flits` or
    /// `remote_credits` (a credit's: the output port and VC it is for).
    #[inline]
    pub fn remote_target(x: u32) -> (usize, usize) {
        crate::wheel::unvcr(x)
    }

    /// Per input VC fed from another part: a flit left it in cycle `t`.
    #[inline(always)]
    pub(crate) fn popped_remote(&mut self, iv: usize, t: u64) {
        self.popped_at[iv] = t;
    }

    /// A flit another part sent in cycle `sent` into input VC `l` of this part's router `r`
    /// (its packet id already this part's), taken in after this part's cycle `now` (`sent`,
    /// or `sent + 1` when the parts meet every other cycle: the flit cannot be read before
    /// `sent + 2`, and the statistics are made those of a write in time).
    pub fn receive_flit(&mut self, r: usize, l: usize, flit: Flit, sent: u64, now: u64) {
        self.check_local(r, l, "local VC");
        let iv = r * self.npv + l;
        if sent == now {
            self.count_in(iv, sent);
        } else {
            debug_assert!(sent + 1 == now && self.link_latency >= 2, "a flit of cycle {sent} taken in after cycle {now}");
            // (No pops are recorded outside a split or co-simulated fabric.)
            self.inputs.count_up_late(iv, sent + 1, self.popped_at.get(iv) == Some(&now));
            self.flits += 1;
        }
        let at = self.arrival_due(sent);
        self.wheel.slot(at).arrivals.push((vcr(r, l), flit));
    }

    /// A credit for output VC `k` (`port * vcs + vc`) of this part's router `r`, for a slot
    /// another part freed in cycle `freed`.
    pub fn receive_credit(&mut self, r: usize, k: usize, freed: u64) {
        self.check_local(r, k, "output VC");
        self.post_credit(vcr(r, k), self.credit_due(freed));
    }

    /// Take routers `routers` (all their state, flits and credits on their way included)
    /// from `theirs`, a copy of this fabric's routers that ran them while these did not (the
    /// parts of a fabric split between threads, joined after the run).
    pub fn copy_routers_from(&mut self, theirs: &mut Routers, routers: std::ops::Range<usize>) {
        // Everything copied has the same size on both sides (release builds copy without a
        // bounds check, `flat.rs`).
        let shape = |x: &Routers| {
            let (i, o) = (&x.inputs, &x.outputs);
            [x.n, x.np, x.nv, x.nk, x.ejv, i.vcs.len(), i.ring.len(), i.hist_hi.len(), o.ovs.len(), o.ej_owner.len()]
        };
        assert!(
            routers.start <= routers.end && routers.end <= self.n && shape(theirs) == shape(self),
            "routers {routers:?} of a fabric shaped {:?} from one shaped {:?}",
            shape(self),
            shape(theirs)
        );
        let (npv, np) = (self.npv, self.np);
        let epoch = self.inputs.hist_epoch.max(theirs.inputs.hist_epoch);
        for x in [&mut self.inputs, &mut theirs.inputs] {
            if x.hist_epoch != epoch {
                x.rebase_hist(epoch);
            }
        }
        self.inputs.copy_vcs_from(&theirs.inputs, routers.start * npv..routers.end * npv);
        self.outputs.copy_ports_from(
            &theirs.outputs,
            routers.start * np..routers.end * np,
            self.nv,
            routers.start * self.nk..routers.end * self.nk,
        );
        let inj = routers.start * self.nk..routers.end * self.nk;
        self.inj_vc[inj.clone()].copy_from_slice(&theirs.inj_vc[inj]);
        self.mc_arb[routers.clone()].copy_from_slice(&theirs.mc_arb[routers.clone()]);
        for op in routers.start * np..routers.end * np {
            self.sent[op] = theirs.sent[op];
        }
        let own = (routers.start as u32)..(routers.end as u32);
        self.wheel.join(&theirs.wheel, |x| own.contains(&(x >> 7)));
        self.flits = self.inputs.vcs.iter().map(|c| c.occ as u64).sum();
        if self.narrow() {
            self.w64[routers.clone()].copy_from_slice(&theirs.w64[routers.clone()]);
            if !theirs.m64.is_empty() {
                self.start_multicast();
                self.m64[routers.clone()].copy_from_slice(&theirs.m64[routers.clone()]);
            }
        } else {
            self.w128[routers.clone()].copy_from_slice(&theirs.w128[routers.clone()]);
            if !theirs.m128.is_empty() {
                self.start_multicast();
                self.m128[routers.clone()].copy_from_slice(&theirs.m128[routers.clone()]);
            }
        }
        for r in routers {
            if theirs.has_work(NodeId(r as u32)) {
                self.set_net_work(r);
                self.set_ej_work(r);
            }
        }
        self.hops += theirs.hops;
        self.tails += theirs.tails;
    }
}
