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
use crate::input_unit::{ASYNC, LOCAL_OUT};
use crate::params::Switching;
use crate::port_set::PortSet;
use crate::router::{Ejection, Filing, Routers, Width};
use crate::vc_set::{VcBits, members};

impl Routers {
    /// Each ejection channel of router `r` takes the front flit of the packet holding it
    /// (one flit a cycle; the read counts against its input port's crossbar reads).
    pub(crate) fn eject<S: Width>(&mut self, r: usize, t: u64, ejected: &mut Vec<(NodeId, Ejection)>, credits: &mut Vec<u32>) {
        let (v, net) = (self.nv, self.nnet);
        let base = r * self.npv;
        let mut owned = S::w(self)[r].ej_owned;
        while owned != 0 {
            let ch = owned.trailing_zeros() as usize;
            owned &= owned - 1;
            let l = self.outputs.ovs[(r * self.np + net + ch) * v].owner as usize;
            let iv = base + l;
            let c = &self.inputs.vcs[iv];
            if c.out == LOCAL_OUT {
                // Unicast: an ejector (holding the channel, able, a flit buffered).
                if !S::w(self)[r].ejbid.contains(l) || !self.take_read::<S>(l) {
                    continue;
                }
            } else if c.flags & ASYNC != 0 {
                self.eject_async::<S>(r, l, ch, t, ejected, credits);
                continue;
            } else {
                let b = &self.inputs.branches[iv];
                if !b.pending.contains(PortSet::LOCAL) || c.sa_ready > t || c.len == 0 || !self.take_read::<S>(l) {
                    continue;
                }
            }
            let flit = self.inputs.vcs[iv].front;
            ejected.push((NodeId(r as u32), Ejection { channel: ch as u8, flit }));
            let done = self.branch_took::<S>(r, l, PortSet::LOCAL, flit, None);
            if done {
                self.pop_front::<S>(r, l, t, credits);
            }
        }
    }

    /// Ejection channel `ch` takes the next flit of the asynchronously replicated packet at
    /// local VC `l` of router `r` that holds it, from the LOCAL branch's own position.
    #[cold]
    #[inline(never)]
    fn eject_async<S: Width>(
        &mut self,
        r: usize,
        l: usize,
        ch: usize,
        t: u64,
        ejected: &mut Vec<(NodeId, Ejection)>,
        credits: &mut Vec<u32>,
    ) {
        let iv = r * self.npv + l;
        let c = self.inputs.vcs[iv];
        if c.sa_ready > t || !self.inputs.branches[iv].granted.contains(PortSet::LOCAL) {
            return;
        }
        let k = self.inputs.branch_pos[self.branch_slot(iv, true, 0)];
        if k >= c.len {
            return;
        }
        // The VC reads one entry a cycle: ejection defers to network branches further behind
        // that can move this cycle (they serve the oldest flit).
        let (_, behind, _) = self.async_able(r, l, t);
        if behind < k || !self.take_read_at::<S>(r, l, k) {
            return;
        }
        let flit = self.inputs.entry_in_front_packet(iv, k);
        ejected.push((NodeId(r as u32), Ejection { channel: ch as u8, flit }));
        if self.branch_took::<S>(r, l, PortSet::LOCAL, flit, Some(k)) {
            self.pop_front::<S>(r, l, t, credits);
        }
    }

    /// Switch allocation on the network ports of router `r` in cycle `t`, and crossbar
    /// traversal of the winners.
    pub(crate) fn allocate_switch<S: Width>(&mut self, r: usize, t: u64, filing: &mut Filing) {
        self.scratch_from_stage1::<S>(r, t);
        let v = self.nv;
        let base = r * self.npv;
        let pbase = r * self.np;
        let width = self.width;
        let policy = self.params.arbiter;
        let mut outs = 0u64;
        let mut requested = S::ZERO;
        let candidates = (S::w(self)[r].bid | self.mcast::<S>(r)) & self.readable::<S>();
        for l in members(candidates) {
            let iv = base + l;
            let c = self.inputs.vcs[iv];
            if !c.multicast() {
                // A bidder: holds its output VC, able, a flit buffered that may cross.
                let o = c.out as usize;
                let need = if c.front.is_head() && self.switching != Switching::Wormhole { c.pkt_len } else { 1 };
                if self.outputs.ovs[(pbase + o) * v + c.ovc as usize].credits < need {
                    self.inputs.stall_credit[iv] += 1;
                } else {
                    self.request::<S>(&mut outs, o, l);
                    requested |= S::bit(l);
                }
                continue;
            }
            if c.sa_ready > t || c.len == 0 {
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
            if branches.is_empty() || !self.may_cross(l, &c) {
                continue;
            }
            let need = if c.front.is_head() && self.switching != Switching::Wormhole { c.pkt_len } else { 1 };
            let mut starved = false;
            for o in branches.net_ports() {
                let op = pbase + o;
                let ovc = self.outputs.vc_owned_by(op, v, l).expect("granted branch without an output VC");
                if self.outputs.ovs[op * v + ovc].credits < need {
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
        // Outputs take turns, by cycle, at picking first.
        if self.sa_cycle != t {
            self.sa_cycle = t;
            self.sa_first = (t % self.nnet as u64) as u32;
        }
        let start = self.sa_first;
        let mut rest = outs.rotate_right(start);
        while rest != 0 {
            let o = (rest.trailing_zeros() + start) as usize & 63;
            rest &= rest - 1;
            let op = pbase + o;
            let mut grants = 0;
            while grants < width {
                let req = S::load(self.scratch.req[o]);
                let want = req & self.readable::<S>();
                if want.is_empty() {
                    break;
                }
                let inputs = &self.inputs;
                let Some(l) = self.outputs.sa_arb[op].arbitrate(policy, want, |l| inputs.rank[base + l]) else {
                    break;
                };
                (req & !S::bit(l)).store_into(&mut self.scratch.req[o]);
                if self.cross::<S>(r, l, o, t, filing) {
                    grants += 1;
                }
            }
        }
        // Requesters that got no output this cycle lost arbitration (or crossbar bandwidth).
        for l in members(requested & !S::load(self.scratch.read)) {
            self.inputs.stall_arb[base + l] += 1;
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
        if c.sa_ready > t {
            return (able, lowest, starved);
        }
        for o in self.inputs.branches[iv].granted.net_ports() {
            let k = self.inputs.branch_pos[self.branch_slot(iv, false, o)];
            if k >= c.len {
                continue;
            }
            let flit = self.inputs.entry_in_front_packet(iv, k);
            if flit.is_head() && !self.may_cross(l, c) {
                continue;
            }
            let need = if flit.is_head() && self.switching != Switching::Wormhole { c.pkt_len } else { 1 };
            let op = pbase + o;
            let ovc = self.outputs.vc_owned_by(op, v, l).expect("granted branch without an output VC");
            if self.outputs.ovs[op * v + ovc].credits < need {
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
    pub(crate) fn branch_took<S: Width>(&mut self, r: usize, l: usize, branch: PortSet, flit: Flit, at: Option<u16>) -> bool {
        let iv = r * self.npv + l;
        let c = &mut self.inputs.vcs[iv];
        let local = branch == PortSet::LOCAL;
        if !c.multicast() {
            if flit.is_tail() {
                c.flags &= !crate::input_unit::GRANTED;
                let (port, ovc) = (if local { c.eject_ch as usize } else { c.out as usize }, c.ovc as usize);
                self.release::<S>(r, local, port, ovc);
            }
            return true;
        }
        if let Some(k) = at {
            let slot = self.branch_slot(iv, local, branch.network().bits().trailing_zeros() as usize);
            self.inputs.branch_pos[slot] += 1;
            if flit.is_tail() {
                self.release_branch::<S>(r, l, branch);
            }
            if k != 0 {
                return false;
            }
        } else if flit.is_tail() {
            self.release_branch::<S>(r, l, branch);
        }
        let b = &mut self.inputs.branches[iv];
        b.pending.remove(branch);
        b.pending.is_empty()
    }

    /// Branch `branch` of the replicated packet at local VC `l` of router `r` has sent its
    /// tail: it lets go of its output VC or channel.
    #[cold]
    #[inline(never)]
    fn release_branch<S: Width>(&mut self, r: usize, l: usize, branch: PortSet) {
        let iv = r * self.npv + l;
        self.inputs.branches[iv].granted.remove(branch);
        if branch == PortSet::LOCAL {
            let ch = self.inputs.vcs[iv].eject_ch as usize;
            self.release::<S>(r, true, ch, 0);
        } else {
            let o = branch.bits().trailing_zeros() as usize;
            let ovc = self.outputs.vc_owned_by(r * self.np + o, self.nv, l).expect("granted branch without an output VC");
            self.release::<S>(r, false, o, ovc);
        }
    }
}
