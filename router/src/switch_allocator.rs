//! Switch allocation: which flits cross the crossbar this cycle.
//!
//! Ejection channels are dedicated to the packet holding them and take one flit per cycle
//! (stage 1). Network outputs use a separable output-first allocator (stage 2): each output
//! port's arbiter grants up to `link_width` requests per cycle, each input port's crossbar
//! reads are limited to `link_width` per cycle (ejection's reads included), and each VC
//! sends at most its front flit. A flit granted to several outputs in one cycle is read once
//! and replicated by the crossbar (multicast). Outputs take turns, by cycle, at picking first.
//!
//! ```text
//!  cycle t: front flit readable, output VC held, credits ok ──► request ──► grant ──► crossbar
//! ```

use crate::flit::Flit;
use crate::ids::NodeId;
use crate::input_unit::ASYNC;
use crate::port_set::PortSet;
use crate::router::{Ejection, Routers};
use crate::stages::Filing;
use crate::vc_set::{VcBits, members};
use crate::work::{ANY, Width};

impl Routers {
    /// Switch allocation on the ejection channels of router `r` in cycle `t`, and ejection:
    /// each channel takes one flit a cycle, of a packet holding one of its VCs, chosen by
    /// its arbiter among those whose flit can go (the read counts against its input port's
    /// crossbar reads), so a channel ejects one packet's flits right after another's.
    pub(crate) fn eject<S: Width, const P: u8>(&mut self, r: usize, t: u64, ejected: &mut Vec<(NodeId, Ejection)>, credits: &mut Vec<u32>) {
        let base = r * self.npv;
        let mut chans = 0u64;
        // Unicast ejectors (holding an ejection VC, able, a flit buffered), and replicated
        // packets whose LOCAL branch holds one and may take its flit.
        let mut want = S::w(self)[r].ejbid;
        for l in members(self.mc_ej::<S, P>(r)) {
            if self.replica_may_eject(r, l, t) {
                want |= S::bit(l);
            }
        }
        if want.is_empty() {
            return;
        }
        self.log_sa_req::<S, P>(r, want);
        if want.is_single() {
            // One requester: its channel's arbiter grants it, if the crossbar can read it.
            let l = want.first();
            let ch = self.inputs.vcs[base + l].eject_ch as usize;
            self.eject_flit::<S, P>(r, l, ch, t, ejected, credits);
            return;
        }
        if self.ejv == 1 {
            // One VC a channel: each requester is its channel's only one.
            for l in members(want) {
                chans |= 1 << self.inputs.vcs[base + l].eject_ch;
            }
            while chans != 0 {
                let ch = chans.trailing_zeros() as usize;
                chans &= chans - 1;
                let l = self.outputs.ej_owner[r * self.nk + ch] as usize;
                if self.readable::<S>().contains(l) {
                    self.eject_flit::<S, P>(r, l, ch, t, ejected, credits);
                }
            }
            return;
        }
        for l in members(want) {
            let ch = self.inputs.vcs[base + l].eject_ch as usize;
            self.request::<S>(&mut chans, ch, l);
        }
        while chans != 0 {
            let ch = chans.trailing_zeros() as usize;
            chans &= chans - 1;
            let op = r * self.np + self.nnet + ch;
            let mut req = S::load(self.scratch.req[ch]);
            while let Some(l) = self.arbitrate_at::<S>(r, op, req & self.readable::<S>()) {
                req &= !S::bit(l);
                if self.eject_flit::<S, P>(r, l, ch, t, ejected, credits) {
                    break;
                }
            }
        }
    }

    /// May the LOCAL branch of the replicated packet at local VC `l` of router `r` take a
    /// flit in cycle `t`: it holds its ejection VC, past its VA delay, and (synchronous
    /// replication) the front flit, buffered, is still owed to it, or (asynchronous) the
    /// flit at its own position is buffered and no network branch further behind could move.
    #[cold]
    #[inline(never)]
    fn replica_may_eject(&self, r: usize, l: usize, t: u64) -> bool {
        let iv = r * self.npv + l;
        let (c, b) = (&self.inputs.vcs[iv], &self.inputs.branches[iv]);
        if !b.granted.contains(PortSet::LOCAL) || !c.sa_able(t) {
            return false;
        }
        if c.flags & ASYNC == 0 {
            return b.pending.contains(PortSet::LOCAL);
        }
        let k = self.branch_position(iv, PortSet::LOCAL);
        // The VC reads one entry a cycle: ejection defers to network branches further behind
        // that can move this cycle (they serve the oldest flit).
        k < c.len && self.async_able(r, l, t).1 >= k
    }

    /// The ejection arbiter of output port `op` of router `r` picks among `want`.
    #[inline(always)]
    fn arbitrate_at<S: Width>(&self, r: usize, op: usize, want: S) -> Option<usize> {
        let base = r * self.npv;
        let inputs = &self.inputs;
        self.outputs.sa_arb[op].arbitrate(self.params.arbiter, want, |l| inputs.vcs[base + l].rank())
    }

    /// Ejection channel `ch` of router `r` takes the next flit of the packet at local VC `l`
    /// (the front flit, or for an asynchronously replicated packet the flit at its LOCAL
    /// branch's position), if the crossbar can read it; the channel's arbiter then moves on
    /// past it ([`Routers::took`]). False if it cannot.
    #[inline(always)]
    fn eject_flit<S: Width, const P: u8>(
        &mut self,
        r: usize,
        l: usize,
        ch: usize,
        t: u64,
        ejected: &mut Vec<(NodeId, Ejection)>,
        credits: &mut Vec<u32>,
    ) -> bool {
        let Some((flit, at)) = self.read_branch::<S, P>(r, l, PortSet::LOCAL) else {
            return false;
        };
        let vc = self.inputs.vcs[r * self.npv + l].eject_vc;
        ejected.push((NodeId(r as u32), Ejection { channel: ch as u8, vc, flit }));
        self.took::<S, P>(r, l, r * self.np + self.nnet + ch, PortSet::LOCAL, flit, at, t, credits);
        true
    }

    /// Switch allocation on the network ports of router `r` in cycle `t`, and crossbar
    /// traversal of the winners.
    #[inline(always)]
    pub(crate) fn allocate_switch<S: Width, const P: u8>(&mut self, r: usize, t: u64, mc_bid: S, filing: &mut Filing) {
        if (P != ANY || self.width == 1) && mc_bid.is_empty() {
            // Unicast packets over links of one flit a cycle: the crossbar reads one flit of
            // an input port a cycle (`full`: the VCs of ports read already, ejection's reads
            // in stage 1 included, as `take_read` counts them), each grant reads its VC's
            // front flit.
            let w = &S::w(self)[r];
            let mut full = S::ZERO;
            if w.s1_at == t {
                for l in members(w.s1_read) {
                    full = self.port_taken(full, l);
                }
            }
            let bids = S::w(self)[r].bid & !full;
            if bids.is_single() {
                // One bidder (or none readable): it wins its output if it has the credits.
                if !bids.is_empty() {
                    let l = bids.first();
                    if let Some(o) = self.unicast_request::<P>(r, l) {
                        self.log_sa_req::<S, P>(r, bids);
                        self.cross_unicast::<S, P>(r, l, o, t, filing);
                    }
                }
                return;
            }
            let (mut outs, mut requested, mut read) = (0u64, S::ZERO, S::ZERO);
            for l in members(bids) {
                if let Some(o) = self.unicast_request::<P>(r, l) {
                    self.request::<S>(&mut outs, o, l);
                    requested |= S::bit(l);
                }
            }
            self.log_sa_req::<S, P>(r, requested);
            for o in in_turn(outs, self.sa_start(t)) {
                let want = S::load(self.scratch.req[o]) & !full;
                let Some(l) = self.sa_winner::<S>(r, o, want) else { continue };
                full = self.port_taken(full, l);
                read |= S::bit(l);
                self.cross_unicast::<S, P>(r, l, o, t, filing);
            }
            self.lost_arbitration(r, requested & !read);
            return;
        }
        self.allocate_switch_counted::<S, P>(r, t, mc_bid, filing);
    }

    /// [`Routers::allocate_switch`] with replicated packets or links of several flits a
    /// cycle: the crossbar's reads are counted per input port.
    #[inline(never)]
    fn allocate_switch_counted<S: Width, const P: u8>(&mut self, r: usize, t: u64, mc_bid: S, filing: &mut Filing) {
        self.scratch_from_stage1::<S, P>(r, t);
        let v = self.nv;
        let base = r * self.npv;
        let pbase = r * self.np;
        let width = self.width;
        let mut outs = 0u64;
        let mut requested = S::ZERO;
        let candidates = (S::w(self)[r].bid | mc_bid) & self.readable::<S>();
        for l in members(candidates) {
            let iv = base + l;
            let c = &self.inputs.vcs[iv];
            if !c.multicast() {
                // A bidder: holds its output VC, able, a flit buffered that may cross.
                if let Some(o) = self.unicast_request::<P>(r, l) {
                    self.request::<S>(&mut outs, o, l);
                    requested |= S::bit(l);
                }
                continue;
            }
            if !c.sa_able(t) {
                continue;
            }
            if c.flags & ASYNC != 0 {
                let (able, _, starved) = self.async_able(r, l, t);
                if starved {
                    self.inputs.stall_credit[iv] += 1;
                }
                if able != 0 {
                    requested |= S::bit(l);
                }
                for o in crate::port_set::bits(able) {
                    self.request::<S>(&mut outs, o, l);
                }
                continue;
            }
            let b = self.inputs.branches[iv];
            let branches = b.pending.intersection(b.granted).network();
            if branches.is_empty() || !self.may_cross(l, c) {
                continue;
            }
            let (head, pkt_len) = (c.front.is_head(), c.pkt_len);
            let mut starved = false;
            for o in branches.net_ports() {
                let op = pbase + o;
                let ovc = self.branch_ovc(r, l, o);
                if !self.has_credits::<P>(op * v + ovc, head, pkt_len) {
                    starved = true;
                    continue;
                }
                self.request::<S>(&mut outs, o, l);
                requested |= S::bit(l);
            }
            if starved {
                self.inputs.stall_credit[iv] += 1;
            }
        }
        if outs == 0 {
            return;
        }
        self.log_sa_req::<S, P>(r, requested);
        for o in in_turn(outs, self.sa_start(t)) {
            let mut grants = 0;
            while grants < width {
                let req = S::load(self.scratch.req[o]);
                let Some(l) = self.sa_winner::<S>(r, o, req & self.readable::<S>()) else { break };
                (req & !S::bit(l)).store_into(&mut self.scratch.req[o]);
                if self.cross::<S, P>(r, l, o, t, filing) {
                    grants += 1;
                }
            }
        }
        let read = S::load(self.scratch.read);
        self.lost_arbitration(r, requested & !read);
    }

    /// The output whose switch allocation local VC `l` of router `r` (a unicast bidder)
    /// requests, if the downstream buffer has room for its flit: one credit for a worm's
    /// flit, a whole packet's for a cut-through or store-and-forward head (else a stall for
    /// lack of credits is counted).
    #[inline(always)]
    fn unicast_request<const P: u8>(&mut self, r: usize, l: usize) -> Option<usize> {
        let iv = r * self.npv + l;
        let c = &self.inputs.vcs[iv];
        let o = c.out as usize;
        if !self.has_credits::<P>((r * self.np + o) * self.nv + c.ovc as usize, c.front.is_head(), c.pkt_len) {
            self.inputs.stall_credit[iv] += 1;
            return None;
        }
        Some(o)
    }

    /// The winner of output `o` of router `r` among the requesters `want`, by its arbiter.
    #[inline(always)]
    fn sa_winner<S: Width>(&self, r: usize, o: usize, want: S) -> Option<usize> {
        let base = r * self.npv;
        let inputs = &self.inputs;
        self.outputs.sa_arb[r * self.np + o].arbitrate(self.params.arbiter, want, |l| inputs.vcs[base + l].rank())
    }

    /// The network output that picks first in switch allocation in cycle `t`: outputs take
    /// turns, by cycle.
    #[inline(always)]
    fn sa_start(&mut self, t: u64) -> u32 {
        if self.sa_cycle != t {
            self.sa_cycle = t;
            self.sa_first = (t % self.nnet as u64) as u32;
        }
        self.sa_first
    }

    /// Requesters `lost` of router `r` got no output this cycle: they lost arbitration (or
    /// crossbar bandwidth).
    #[inline(always)]
    fn lost_arbitration<S: VcBits>(&mut self, r: usize, lost: S) {
        for l in members(lost) {
            self.inputs.stall_arb[r * self.npv + l] += 1;
        }
    }

    /// The network branches of the asynchronously replicated packet at local VC `l` of router
    /// `r` that can take their next flit in cycle `t` (readable, credits for it) and are
    /// furthest behind: their ports, their position (`u16::MAX` if none), and whether a
    /// branch lacked credits.
    pub(crate) fn async_able(&self, r: usize, l: usize, t: u64) -> (u64, u16, bool) {
        let iv = r * self.npv + l;
        let v = self.nv;
        let pbase = r * self.np;
        let c = &self.inputs.vcs[iv];
        let (mut able, mut lowest, mut starved) = (0u64, u16::MAX, false);
        if !c.sa_able(t) {
            return (able, lowest, starved);
        }
        for o in self.inputs.branches[iv].granted.net_ports() {
            let Some((k, flit)) = self.branch_next(iv, PortSet::port(o)) else {
                continue;
            };
            if flit.is_head() && !self.may_cross(l, c) {
                continue;
            }
            let ovc = self.branch_ovc(r, l, o);
            if !self.has_credits::<ANY>((pbase + o) * v + ovc, flit.is_head(), c.pkt_len) {
                starved = true;
                continue;
            }
            if k < lowest {
                lowest = k;
                able = 0;
            }
            if k == lowest {
                able |= 1 << o;
            }
        }
        (able, lowest, starved)
    }

    /// Local VC `l` requests output `o` this cycle.
    #[inline(always)]
    fn request<S: VcBits>(&mut self, outs: &mut u64, o: usize, l: usize) {
        if *outs & (1 << o) == 0 {
            *outs |= 1 << o;
            S::ZERO.store_into(&mut self.scratch.req[o]);
        }
        S::insert_into(&mut self.scratch.req[o], l);
    }

    /// Branch `branch` of the packet at local VC `l` of router `r` took `flit` (at FIFO
    /// position `at` for an asynchronously replicated packet): the branch lets go of its
    /// output VC or channel after the tail. True when every branch has taken the front flit,
    /// which may leave.
    #[inline(always)]
    pub(crate) fn branch_took<S: Width, const P: u8>(&mut self, r: usize, l: usize, branch: PortSet, flit: Flit, at: Option<u16>) -> bool {
        let iv = r * self.npv + l;
        let c = &mut self.inputs.vcs[iv];
        if !c.multicast() {
            if flit.is_tail() {
                c.flags &= !crate::input_unit::GRANTED;
                let local = branch == PortSet::LOCAL;
                let (port, ovc) = if local { (c.eject_ch as usize, c.eject_vc as usize) } else { (c.out as usize, c.ovc as usize) };
                self.release::<S, P>(r, local, port, ovc);
            }
            return true;
        }
        self.replica_took::<S, P>(r, l, branch, flit, at)
    }

    /// [`Routers::branch_took`] for a packet the router replicates.
    #[cold]
    #[inline(never)]
    fn replica_took<S: Width, const P: u8>(&mut self, r: usize, l: usize, branch: PortSet, flit: Flit, at: Option<u16>) -> bool {
        let iv = r * self.npv + l;
        if let Some(k) = at {
            let slot = self.branch_slot_of(iv, branch);
            self.inputs.branch_pos[slot] += 1;
            if flit.is_tail() {
                self.release_branch::<S, P>(r, l, branch);
            }
            if k != 0 {
                return false;
            }
        } else if flit.is_tail() {
            self.release_branch::<S, P>(r, l, branch);
        }
        let b = &mut self.inputs.branches[iv];
        b.pending.remove(branch);
        b.pending.is_empty()
    }

    /// Branch `branch` of the replicated packet at local VC `l` of router `r` has sent its
    /// tail: it lets go of its output VC or channel. The packet leaves the ejectors when
    /// that was its LOCAL branch, the bidders when no network branch holds a VC any more
    /// (what they are kept for: [`McWork`](crate::work::McWork)).
    #[cold]
    #[inline(never)]
    fn release_branch<S: Width, const P: u8>(&mut self, r: usize, l: usize, branch: PortSet) {
        let iv = r * self.npv + l;
        let granted = &mut self.inputs.branches[iv].granted;
        granted.remove(branch);
        let network_held = !granted.network().is_empty();
        if branch == PortSet::LOCAL {
            S::m_mut(self)[r].mc_ej &= !S::bit(l);
            let (ch, evc) = (self.inputs.vcs[iv].eject_ch as usize, self.inputs.vcs[iv].eject_vc as usize);
            self.release::<S, P>(r, true, ch, evc);
        } else {
            if !network_held {
                S::m_mut(self)[r].mc_bid &= !S::bit(l);
            }
            let o = branch.bits().trailing_zeros() as usize;
            let ovc = self.branch_ovc(r, l, o);
            self.release::<S, P>(r, false, o, ovc);
        }
    }
}

/// The output ports in `outs` (a bit each) in the order they pick their switch-allocation
/// winners this cycle: from port `start` ([`Routers::sa_start`]) on, round the ports.
#[inline(always)]
fn in_turn(outs: u64, start: u32) -> impl Iterator<Item = usize> {
    let mut rest = outs.rotate_right(start);
    std::iter::from_fn(move || {
        if rest == 0 {
            return None;
        }
        let o = (rest.trailing_zeros() + start) as usize & 63;
        rest &= rest - 1;
        Some(o)
    })
}
