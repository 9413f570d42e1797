//! Output units: per output VC the credits (free slots in the downstream input VC, as this
//! router sees them) and the input VC that holds it; per output port its VC-allocation and
//! switch-allocation arbiters and where its round-robin offer of free VCs starts. An
//! ejection channel is an output port with `ejection_vcs` VCs of its own (the NIC's
//! reassembly buffers), each held by one packet at a time.
//!
//! ```text
//!  cycle t: flit crosses ──► credits - 1
//!  cycle t: slot freed downstream ──► credit visible upstream in t + 1 + credit_delay
//! ```

use crate::arbiter::Arbiter;
use crate::flat::Flat;
use crate::params::{Switching, VaPolicy};
use crate::router::Routers;
use crate::wheel::unvcr;
use crate::work::{ANY, PLAIN_WH};

/// No owner: an output VC or ejection channel held by no input VC.
pub(crate) const FREE: u8 = u8::MAX;

/// An output VC: free slots downstream as this router sees them, and the local input VC
/// holding it ([`FREE`] if none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ov {
    pub credits: u16,
    pub owner: u8,
}

/// The `k`-th VC of a port of `vcs` VCs, counting round the port from VC `first`.
#[inline(always)]
pub(crate) fn round_from(first: usize, k: usize, vcs: usize) -> usize {
    let vc = first + k;
    if vc >= vcs { vc - vcs } else { vc }
}

/// All output ports and output VCs of the fabric. Output VC `ov = op * vcs + vc`.
#[derive(Clone, Debug)]
pub(crate) struct OutputUnits {
    pub ovs: Flat<Ov>,
    /// VC-allocation and switch-allocation arbiter of each output port.
    pub va_arb: Flat<Arbiter>,
    pub sa_arb: Flat<Arbiter>,
    /// Per output port, the VC its round-robin offer of free VCs starts at.
    pub vc_next: Flat<u8>,
    /// Per ejection channel (`router * channels + channel`) and its VC, the local input VC
    /// holding it ([`FREE`] if none).
    pub ej_owner: Flat<u8>,
    pub ejv: usize,
}

impl OutputUnits {
    pub fn new(n_ports: usize, vcs: usize, depth: u16, channels: usize, ejv: usize) -> OutputUnits {
        OutputUnits {
            ovs: vec![Ov { credits: depth, owner: FREE }; n_ports * vcs].into(),
            va_arb: vec![Arbiter::default(); n_ports].into(),
            sa_arb: vec![Arbiter::default(); n_ports].into(),
            vc_next: vec![0; n_ports].into(),
            ej_owner: vec![FREE; channels * ejv].into(),
            ejv,
        }
    }

    /// The order output port `op` (of `vcs` VCs, at most 16) offers its VCs in under `policy`,
    /// into `order`: from the one after the last granted (round-robin), from the lowest
    /// (lowest), or by credits, most first and the lowest of those tied first (most-credits,
    /// when `credits`: the port's credits are in `ovs`; otherwise as lowest).
    #[inline]
    pub fn offer_order(&self, policy: VaPolicy, op: usize, vcs: usize, credits: bool, order: &mut [u8; 16]) {
        let first = self.first_offered(policy, op);
        for (k, o) in order.iter_mut().enumerate().take(vcs) {
            *o = round_from(first, k, vcs) as u8;
        }
        if policy == VaPolicy::MostCredits && credits {
            // Stable: ties keep the lowest VC first.
            order[..vcs].sort_by_key(|&vc| std::cmp::Reverse(self.ovs[op * vcs + vc as usize].credits));
        }
    }

    /// The VC output port `op` offers first under `policy`, before any order by credits: the
    /// one after the last granted (round-robin), else the lowest. The others follow round
    /// the port ([`round_from`]).
    #[inline(always)]
    pub fn first_offered(&self, policy: VaPolicy, op: usize) -> usize {
        if policy == VaPolicy::RoundRobin { self.vc_next[op] as usize } else { 0 }
    }

    /// Output port `op` granted its VC `vc` (of `vcs`): the round-robin offer goes on after it.
    #[inline(always)]
    pub fn vc_granted(&mut self, op: usize, vc: usize, vcs: usize) {
        self.vc_next[op] = if vc + 1 >= vcs { 0 } else { vc as u8 + 1 };
    }

    /// Bytes of state per output port (for memory estimates before building).
    pub fn bytes_per_port(vcs: usize) -> usize {
        vcs * std::mem::size_of::<Ov>() + 2 * std::mem::size_of::<Arbiter>() + 1 + 8 + 16
    }

    /// The output VC of port `op` held by local input VC `l`, if any.
    #[inline]
    pub fn vc_owned_by(&self, op: usize, vcs: usize, l: usize) -> Option<usize> {
        (0..vcs).find(|&v| self.ovs[op * vcs + v].owner as usize == l)
    }

    /// Take output ports `ports` from `other`, a copy of these units that ran them.
    pub fn copy_ports_from(&mut self, other: &OutputUnits, ports: std::ops::Range<usize>, vcs: usize, channels: std::ops::Range<usize>) {
        let ovs = ports.start * vcs..ports.end * vcs;
        self.ovs[ovs.clone()].copy_from_slice(&other.ovs[ovs]);
        self.va_arb[ports.clone()].copy_from_slice(&other.va_arb[ports.clone()]);
        self.sa_arb[ports.clone()].copy_from_slice(&other.sa_arb[ports.clone()]);
        self.vc_next[ports.clone()].copy_from_slice(&other.vc_next[ports]);
        let ej = channels.start * self.ejv..channels.end * self.ejv;
        self.ej_owner[ej.clone()].copy_from_slice(&other.ej_owner[ej]);
    }
}

/// The credit loop, as each router keeps it: what a flit needs to cross, when a credit sent
/// upstream is due, and its arrival there.
impl Routers {
    /// May a flit cross onto output VC `ov` (global index: `port * vcs + vc`), as far as the
    /// downstream buffer goes? A worm's flit, or any flit after the head, needs one credit; a
    /// cut-through or store-and-forward head (`head`) the whole packet's (`pkt_len`).
    #[inline(always)]
    pub(crate) fn has_credits<const P: u8>(&self, ov: usize, head: bool, pkt_len: u16) -> bool {
        let need = if P != PLAIN_WH && head && self.switching != Switching::Wormhole { pkt_len } else { 1 };
        self.outputs.ovs[ov].credits >= need
    }

    /// The output VC of network port `o` held by the granted branch of the packet at local VC
    /// `l` of router `r`.
    #[inline]
    pub(crate) fn branch_ovc(&self, r: usize, l: usize, o: usize) -> usize {
        self.outputs.vc_owned_by(r * self.np + o, self.nv, l).expect("granted branch without an output VC")
    }

    /// The cycle from which the credit for a buffer slot freed in cycle `freed` is visible
    /// upstream.
    #[inline(always)]
    pub(crate) fn credit_due(&self, freed: u64) -> u64 {
        freed + 1 + self.credit_delay
    }

    /// The credit for output VC [`vcr`](crate::wheel::vcr) `x` (router, `port * vcs + vc`)
    /// is back: one more free slot downstream, as this router sees it.
    #[inline(always)]
    pub(crate) fn credit_arrives(&mut self, x: u32) {
        let (r, k) = unvcr(x);
        if self.logging::<ANY>() {
            self.log_credit_arrives(r * self.npv + k);
        }
        let o = &mut self.outputs.ovs[r * self.npv + k];
        o.credits += 1;
        debug_assert!(o.credits <= self.depth, "output VC {k} of router {r} has more credits than the downstream buffer holds");
    }

    /// The credit for output VC `x` ([`vcr`](crate::wheel::vcr)), due in cycle `at`, goes
    /// onto its return line.
    #[inline(always)]
    pub(crate) fn post_credit(&mut self, x: u32, at: u64) {
        self.credit_sent::<ANY>(x, at);
        self.wheel.slot(at).credits.push(x);
    }
}
