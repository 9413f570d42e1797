//! The crossbar and what a flit's crossing does: the input port's reads this cycle, the
//! flit onto its link (a credit spent; replicated to every branch granted it), the output VC
//! let go after a tail, and the input buffer's slot freed once every branch has taken the
//! flit (a credit back upstream).
//!
//! ```text
//!  cycle t: granted ──► read (one entry per VC, link_width per input port) ──► link
//!           readable downstream at t + link_latency; the slot's credit upstream at t + 1 + credit_delay
//! ```

use crate::flit::Flit;
use crate::input_unit::{ASYNC, GRANTED, ROUTED};
use crate::output_unit::FREE;
use crate::port_set::PortSet;
use crate::router::{Departure, Routers};
use crate::split::REMOTE;
use crate::stages::Filing;
use crate::vc_set::VcBits;
use crate::work::{ANY, Width};

impl Routers {
    /// The VCs that could be read through the crossbar now: not popped this cycle, and read
    /// already (replication) or of an input port with reads left.
    #[inline(always)]
    pub(crate) fn readable<S: VcBits>(&self) -> S {
        let s = &self.scratch;
        !S::load(s.popped) & (S::load(s.read) | !S::load(s.port_full))
    }

    /// Read local VC `l`'s front flit through the crossbar this cycle (once per cycle; it
    /// counts against its input port's `link_width` reads). False if that is not possible.
    #[inline]
    pub(crate) fn take_read<S: VcBits, const P: u8>(&mut self, l: usize) -> bool {
        let port = self.port_of[l] as usize;
        let s = &mut self.scratch;
        if S::is_in(&s.popped, l) {
            return false;
        }
        if S::is_in(&s.read, l) {
            return true;
        }
        if S::is_in(&s.port_full, l) {
            return false;
        }
        S::insert_into(&mut s.read, l);
        if P == ANY && self.width > 1 {
            s.ports_read |= 1u64 << port;
            s.port_reads[port] += 1;
            if s.port_reads[port] < self.width {
                return true;
            }
        }
        // The port's reads are used up (one a cycle at width 1: no count to keep).
        let full = self.port_taken_at(S::load(self.scratch.port_full), port);
        full.store_into(&mut self.scratch.port_full);
        true
    }

    /// `full` (the VCs whose input port has no crossbar read left this cycle) with local VC
    /// `l`'s port added: every VC of that port.
    #[inline(always)]
    pub(crate) fn port_taken<S: VcBits>(&self, full: S, l: usize) -> S {
        self.port_taken_at(full, self.port_of[l] as usize)
    }

    /// [`Routers::port_taken`] for input port `port`.
    #[inline(always)]
    fn port_taken_at<S: VcBits>(&self, full: S, port: usize) -> S {
        full | S::load(self.port_mask[port])
    }

    /// Read FIFO position `k` of local VC `l` of router `r` (asynchronous replication)
    /// through the crossbar this cycle: a VC reads one entry a cycle, which every branch at
    /// that position may take.
    #[inline]
    pub(crate) fn take_read_at<S: VcBits>(&mut self, r: usize, l: usize, k: u16) -> bool {
        let iv = r * self.npv + l;
        if S::is_in(&self.scratch.read, l) {
            return !S::is_in(&self.scratch.popped, l) && self.inputs.read_at[iv] == k;
        }
        if !self.take_read::<S, ANY>(l) {
            return false;
        }
        self.inputs.read_at[iv] = k;
        true
    }

    /// Output `o` of router `r` was granted to local VC `l` in cycle `t`: its flit crosses
    /// (false if it cannot after all: an asynchronously replicated VC that has read another
    /// entry this cycle).
    #[inline(always)]
    pub(crate) fn cross<S: Width, const P: u8>(&mut self, r: usize, l: usize, o: usize, t: u64, filing: &mut Filing) -> bool {
        let iv = r * self.npv + l;
        if !self.inputs.vcs[iv].multicast() {
            let taken = self.take_read::<S, P>(l);
            debug_assert!(taken, "router {r}: output {o} granted to VC {l}, which cannot be read");
            self.cross_unicast::<S, P>(r, l, o, t, filing);
            return true;
        }
        let branch = PortSet::port(o);
        let Some((flit, at)) = self.read_branch::<S, P>(r, l, branch) else {
            debug_assert!(self.inputs.vcs[iv].flags & ASYNC != 0, "router {r}: output {o} granted to VC {l}, which cannot be read");
            return false;
        };
        let op = r * self.np + o;
        self.send::<P>(op, self.branch_ovc(r, l, o), flit, filing);
        self.took::<S, P>(r, l, op, branch, flit, at, t, &mut filing.credits);
        true
    }

    /// The flit branch `branch` of the packet at local VC `l` of router `r` takes next, read
    /// through the crossbar this cycle: the front flit, or under asynchronous replication the
    /// flit at the branch's own position (with that position). None if the crossbar cannot
    /// read it now.
    #[inline(always)]
    pub(crate) fn read_branch<S: Width, const P: u8>(&mut self, r: usize, l: usize, branch: PortSet) -> Option<(Flit, Option<u16>)> {
        let iv = r * self.npv + l;
        if self.inputs.vcs[iv].flags & ASYNC != 0 {
            let k = self.branch_position(iv, branch);
            if !self.take_read_at::<S>(r, l, k) {
                return None;
            }
            return Some((self.inputs.entry_in_front_packet(iv, k), Some(k)));
        }
        if !self.take_read::<S, P>(l) {
            return None;
        }
        Some((self.inputs.vcs[iv].front, None))
    }

    /// Branch `branch` of the packet at local VC `l` of router `r`, granted output port `op`
    /// (global index, an ejection channel's included), took `flit` (at FIFO position `at`
    /// under asynchronous replication) in cycle `t`: the port's arbiter moves on past it, the
    /// branch lets go of its output after the tail, and the flit leaves the FIFO once every
    /// branch has taken it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn took<S: Width, const P: u8>(
        &mut self,
        r: usize,
        l: usize,
        op: usize,
        branch: PortSet,
        flit: Flit,
        at: Option<u16>,
        t: u64,
        credits: &mut Vec<u32>,
    ) {
        self.outputs.sa_arb[op].grant_accepted(self.npv, l);
        self.log_sa_gnt::<P>(r, l);
        if self.branch_took::<S, P>(r, l, branch, flit, at) {
            self.pop_front::<S, P>(r, l, t, credits);
        }
    }

    /// The front flit of the unicast packet at local VC `l` of router `r`, granted output
    /// `o` in cycle `t` (and read through the crossbar), crosses: the output VC let go after
    /// a tail, the flit popped.
    #[inline(always)]
    pub(crate) fn cross_unicast<S: Width, const P: u8>(&mut self, r: usize, l: usize, o: usize, t: u64, filing: &mut Filing) {
        let c = &self.inputs.vcs[r * self.npv + l];
        let (flit, ovc) = (c.front, c.ovc as usize);
        let op = r * self.np + o;
        self.send::<P>(op, ovc, flit, filing);
        self.took::<S, P>(r, l, op, PortSet::port(o), flit, None, t, &mut filing.credits);
    }

    /// `flit` leaves on output VC `ovc` of output port `op` (global index): a credit spent,
    /// onto the link (another part's router takes it in after this cycle).
    #[inline(always)]
    fn send<const P: u8>(&mut self, op: usize, ovc: usize, flit: Flit, filing: &mut Filing) {
        self.outputs.ovs[op * self.nv + ovc].credits -= 1;
        let x = self.down[op];
        if x != crate::ids::NONE {
            let x = x + ovc as u32;
            if x & REMOTE != 0 {
                self.remote_flits.push((x & !REMOTE, flit));
            } else {
                filing.arrivals.push((x, flit));
            }
        }
        self.count_departure::<P>(op, ovc, flit);
    }

    /// `flit` left on output VC `ovc` of output port `op` (global index): counted (flits per
    /// port, hops, packets over links) and logged for probes.
    #[inline(always)]
    pub(crate) fn count_departure<const P: u8>(&mut self, op: usize, ovc: usize, flit: Flit) {
        self.sent[op] += 1;
        self.hops += 1;
        self.tails += flit.is_tail() as u64;
        if self.logging::<P>() {
            self.log_departure(op, ovc, flit);
        }
    }

    #[cold]
    #[inline(never)]
    fn log_departure(&mut self, op: usize, ovc: usize, flit: Flit) {
        self.departures.push(Departure { out_port: op as u32, vc: ovc as u8, flit });
    }

    /// The cycle a flit that crosses in cycle `sent` is readable downstream.
    #[inline(always)]
    pub(crate) fn arrival_due(&self, sent: u64) -> u64 {
        sent + self.link_latency
    }

    /// Router `r` lets go of output VC `ovc` of network port `port` (or, `local`, of
    /// ejection VC `ovc` of channel `port`): free from the next cycle on.
    #[inline(always)]
    pub(crate) fn release<S: Width, const P: u8>(&mut self, r: usize, local: bool, port: usize, ovc: usize) {
        if local {
            self.outputs.ej_owner[(r * self.nk + port) * self.ejv + ovc] = FREE;
            S::w_mut(self)[r].ej_full &= !(1 << port);
        } else {
            self.outputs.ovs[(r * self.np + port) * self.nv + ovc].owner = FREE;
        }
        self.freed::<S, P>(r, !local);
    }

    /// Every branch of local VC `l` of router `r` has taken its front flit in cycle `t`: pop
    /// it (its slot's credit upstream for a network port) and get the VC ready for the next
    /// flit (or, after a tail, the next packet, routed in the next cycle).
    #[inline(always)]
    pub(crate) fn pop_front<S: Width, const P: u8>(&mut self, r: usize, l: usize, t: u64, credits: &mut Vec<u32>) {
        let iv = r * self.npv + l;
        S::insert_into(&mut self.scratch.popped, l);
        self.inputs.count_out(iv, t);
        self.flits -= 1;
        let flit = self.inputs.pop(iv);
        let c = &mut self.inputs.vcs[iv];
        let tail = flit.is_tail();
        let more = c.len > 0;
        let multicast = c.multicast();
        let async_rep = c.flags & ASYNC != 0;
        if tail {
            debug_assert!(c.flags & GRANTED == 0, "router {r} VC {l}: tail left with its output still held: {c:?}");
            c.flags &= !(ROUTED | ASYNC);
        }
        if multicast {
            self.step_branches::<S>(r, l, tail, async_rep);
        }
        if tail | !more {
            let w = &mut S::w_mut(self)[r];
            w.bid &= !S::bit(l);
            w.ejbid &= !S::bit(l);
            if multicast {
                let m = &mut S::m_mut(self)[r];
                m.mc_bid &= !S::bit(l);
                m.mc_ej &= !S::bit(l);
            }
            if tail & more {
                // The next packet's head is routed in the next cycle.
                self.rc_next.push(crate::wheel::vcr(r, l));
            }
        }
        // The credit upstream, for a network port (by mail to another part's router).
        if l < self.net_vcs {
            let up = self.up[r * self.np + self.port_of[l] as usize];
            if up != crate::ids::NONE {
                let x = up + self.vc_of[l] as u32;
                if x & REMOTE != 0 {
                    self.remote_credits.push(x & !REMOTE);
                    self.popped_remote(iv, t);
                } else {
                    self.credit_sent::<P>(x, self.credit_due(t));
                    credits.push(x);
                }
            }
        }
    }

    /// The front of the replicated packet at local VC `l` of router `r` was popped: its
    /// branches owe the next flit (asynchronous replication: each moves one place nearer the
    /// front, and those now at it owe it); after the tail the packet is gone.
    #[cold]
    #[inline(never)]
    fn step_branches<S: Width>(&mut self, r: usize, l: usize, tail: bool, async_rep: bool) {
        let iv = r * self.npv + l;
        let b = self.inputs.branches[iv];
        if !async_rep {
            self.inputs.branches[iv].pending = if tail { PortSet::empty() } else { b.route };
            return;
        }
        let mut pending = PortSet::empty();
        for o in b.route.net_ports() {
            let s = self.branch_slot(iv, false, o);
            self.inputs.branch_pos[s] -= 1;
            if self.inputs.branch_pos[s] == 0 {
                pending |= PortSet::port(o);
            }
        }
        if b.route.contains(PortSet::LOCAL) {
            let s = self.branch_slot(iv, true, 0);
            self.inputs.branch_pos[s] -= 1;
            if self.inputs.branch_pos[s] == 0 {
                pending |= PortSet::LOCAL;
            }
        }
        debug_assert!(!tail || pending == b.route, "input VC {iv}: a branch went past its tail");
        self.inputs.branches[iv].pending = if tail { PortSet::empty() } else { pending };
    }
}
