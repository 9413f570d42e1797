//! Output units: per output VC the input VC that owns it, the credits (free slots in the
//! downstream input VC) and the credits still on the return line; per output port the
//! arbiters. The return lines themselves are one ring of per-cycle slots for the fabric
//! ([`crate::Routers::return_credit`]).
//!
//! ```text
//!  cycle t: flit leaves downstream FIFO ──► credit readable upstream in t + 1 + credit_delay
//! ```

use crate::arbiter::Arbiter;
use crate::ids::NONE;

/// All output ports and output VCs of the fabric. Output VC `ov = op * vcs + vc`.
#[derive(Clone, Debug)]
pub struct OutputUnits {
    pub vcs: usize,
    /// Input VC (global index) holding each output VC, or [`NONE`].
    pub owner: Vec<u32>,
    /// Free slots in the downstream input VC, as the router sees them from the next cycle on
    /// (credits still on the return line are not counted).
    pub credits: Vec<u16>,
    /// Credits on the return line of each output VC, not yet visible.
    in_flight: Vec<u16>,
    /// VC-allocation and switch-allocation arbiter of each output port.
    pub va_arb: Vec<Arbiter>,
    pub sa_arb: Vec<Arbiter>,
}

impl OutputUnits {
    pub fn new(n_ports: usize, vcs: usize, depth: u16) -> OutputUnits {
        OutputUnits {
            vcs,
            owner: vec![NONE; n_ports * vcs],
            credits: vec![depth; n_ports * vcs],
            in_flight: vec![0; n_ports * vcs],
            va_arb: vec![Arbiter::default(); n_ports],
            sa_arb: vec![Arbiter::default(); n_ports],
        }
    }

    /// Bytes of state per output port (for memory estimates before building).
    pub fn bytes_per_port(vcs: usize) -> usize {
        vcs * (4 + 2 + 2) + 2 * std::mem::size_of::<Arbiter>()
    }

    /// Take output ports `ports` (owners, credits, arbiters) from `other`, a copy of these
    /// units that ran them.
    pub(crate) fn copy_ports_from(&mut self, other: &OutputUnits, ports: std::ops::Range<usize>) {
        let v = self.vcs;
        self.owner[ports.start * v..ports.end * v].copy_from_slice(&other.owner[ports.start * v..ports.end * v]);
        self.credits[ports.start * v..ports.end * v].copy_from_slice(&other.credits[ports.start * v..ports.end * v]);
        self.in_flight[ports.start * v..ports.end * v].copy_from_slice(&other.in_flight[ports.start * v..ports.end * v]);
        self.va_arb[ports.clone()].copy_from_slice(&other.va_arb[ports.clone()]);
        self.sa_arb[ports.clone()].copy_from_slice(&other.sa_arb[ports]);
    }

    /// Credits on the return line of each output VC (counted as they leave, a cycle's at once).
    #[inline(always)]
    pub(crate) fn in_flight_mut(&mut self) -> &mut [u16] {
        &mut self.in_flight
    }

    /// Credits for output VCs `ovs` come off the return line: visible now.
    #[inline(always)]
    pub(crate) fn credits_arrived(&mut self, ovs: &[u32], depth: u16) {
        for &ov in ovs {
            self.in_flight[ov as usize] -= 1;
            self.add_credit(ov as usize, depth);
        }
    }

    /// One more free slot downstream of output VC `ov`.
    #[inline(always)]
    pub(crate) fn add_credit(&mut self, ov: usize, depth: u16) {
        self.credits[ov] += 1;
        assert!(self.credits[ov] <= depth, "output VC {ov} has more credits than the downstream buffer holds");
    }

    /// Credits in flight on the return line of `op`.
    pub fn credits_in_flight(&self, op: usize) -> usize {
        self.in_flight[op * self.vcs..(op + 1) * self.vcs].iter().map(|&c| c as usize).sum()
    }

    /// The output VC of port `op` owned by input VC `iv`, if any.
    #[inline(always)]
    pub fn vc_owned_by(&self, op: usize, iv: u32) -> Option<usize> {
        let base = op * self.vcs;
        (0..self.vcs).find(|&v| self.owner[base + v] == iv)
    }
}
