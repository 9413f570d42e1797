//! Output units: per output VC the credits (free slots in the downstream input VC, as this
//! router sees them) and the input VC that holds it; per output port its VC-allocation and
//! switch-allocation arbiters. An ejection channel is an output port whose VC 0 says which
//! packet holds the channel.
//!
//! ```text
//!  cycle t: flit crosses ──► credits - 1
//!  cycle t: slot freed downstream ──► credit visible upstream in t + 1 + credit_delay
//! ```

use crate::arbiter::Arbiter;

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
}

impl OutputUnits {
    pub fn new(n_ports: usize, vcs: usize, depth: u16) -> OutputUnits {
        OutputUnits {
            ovs: vec![Ov { credits: depth, owner: FREE }; n_ports * vcs],
            va_arb: vec![Arbiter::default(); n_ports],
            sa_arb: vec![Arbiter::default(); n_ports],
        }
    }

    /// Bytes of state per output port (for memory estimates before building).
    pub fn bytes_per_port(vcs: usize) -> usize {
        vcs * std::mem::size_of::<Ov>() + 2 * std::mem::size_of::<Arbiter>() + 8
    }

    /// The output VC of port `op` held by local input VC `l`, if any.
    #[inline]
    pub fn vc_owned_by(&self, op: usize, vcs: usize, l: usize) -> Option<usize> {
        (0..vcs).find(|&v| self.ovs[op * vcs + v].owner as usize == l)
    }

    /// Take output ports `ports` from `other`, a copy of these units that ran them.
    pub fn copy_ports_from(&mut self, other: &OutputUnits, ports: std::ops::Range<usize>, vcs: usize) {
        let ovs = ports.start * vcs..ports.end * vcs;
        self.ovs[ovs.clone()].copy_from_slice(&other.ovs[ovs]);
        self.va_arb[ports.clone()].copy_from_slice(&other.va_arb[ports.clone()]);
        self.sa_arb[ports.clone()].copy_from_slice(&other.sa_arb[ports]);
    }
}
