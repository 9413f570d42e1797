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
use crate::params::VaPolicy;

/// No owner: an output VC or ejection channel held by no input VC.
pub(crate) const FREE: u8 = u8::MAX;

/// An output VC: free slots downstream as this router sees them, and the local input VC
/// holding it ([`FREE`] if none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ov {
    pub credits: u16,
    pub owner: u8,
}

/// All output ports and output VCs of the fabric. Output VC `ov = op * vcs + vc`.
#[derive(Clone, Debug)]
pub(crate) struct OutputUnits {
    pub ovs: Vec<Ov>,
    /// VC-allocation and switch-allocation arbiter of each output port.
    pub va_arb: Vec<Arbiter>,
    pub sa_arb: Vec<Arbiter>,
    /// Per output port, the VC its round-robin offer of free VCs starts at.
    pub vc_next: Vec<u8>,
    /// Per ejection channel (`router * channels + channel`) and its VC, the local input VC
    /// holding it ([`FREE`] if none).
    pub ej_owner: Vec<u8>,
    pub ejv: usize,
}

impl OutputUnits {
    pub fn new(n_ports: usize, vcs: usize, depth: u16, channels: usize, ejv: usize) -> OutputUnits {
        OutputUnits {
            ovs: vec![Ov { credits: depth, owner: FREE }; n_ports * vcs],
            va_arb: vec![Arbiter::default(); n_ports],
            sa_arb: vec![Arbiter::default(); n_ports],
            vc_next: vec![0; n_ports],
            ej_owner: vec![FREE; channels * ejv],
            ejv,
        }
    }

    /// The order output port `op` (of `vcs` VCs, credits in `ovs` unless an ejection port)
    /// offers its VCs in under `policy`, into `order`.
    #[inline]
    pub fn offer_order(&self, policy: VaPolicy, op: usize, vcs: usize, credits: bool, order: &mut [u8; 16]) {
        let first = if policy == VaPolicy::RoundRobin { self.vc_next[op] as usize } else { 0 };
        for (k, o) in order.iter_mut().enumerate().take(vcs) {
            let vc = first + k;
            *o = (if vc >= vcs { vc - vcs } else { vc }) as u8;
        }
        if policy == VaPolicy::MostCredits && credits {
            // Stable: ties keep the lowest VC first.
            order[..vcs].sort_by_key(|&vc| std::cmp::Reverse(self.ovs[op * vcs + vc as usize].credits));
        }
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
