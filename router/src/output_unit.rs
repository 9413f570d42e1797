//! Output units: per output VC the input VC that owns it and the credits (free slots in the
//! downstream input VC); per output port the credit return line and the arbiters.
//!
//! ```text
//!  cycle t: flit leaves downstream FIFO ──► credit readable upstream in t + 1 + credit_delay
//! ```

use crate::arbiter::Arbiter;
use crate::ids::NONE;

/// A credit on its way back upstream, packed in one word: the cycle it becomes usable
/// (above bit 8; cycles stay below 2^48) and the output VC it is for (the low 8 bits).
#[derive(Clone, Copy, Debug, Default)]
pub struct CreditReturn(u64);

impl CreditReturn {
    #[inline(always)]
    fn new(ready: u64, vc: u8) -> CreditReturn {
        debug_assert!(ready < 1 << 56, "credit ready at cycle {ready}: beyond the packed range");
        CreditReturn(ready << 8 | vc as u64)
    }
    #[inline(always)]
    pub fn ready(self) -> u64 {
        self.0 >> 8
    }
    #[inline(always)]
    pub fn vc(self) -> u8 {
        self.0 as u8
    }
}

/// All output ports and output VCs of the fabric. Output VC `ov = op * vcs + vc`.
#[derive(Clone, Debug)]
pub struct OutputUnits {
    pub vcs: usize,
    /// Input VC (global index) holding each output VC, or [`NONE`].
    pub owner: Vec<u32>,
    /// Free slots in the downstream input VC.
    pub credits: Vec<u16>,
    /// Credit return line per output port: a FIFO of credits in flight (ordered by `ready`).
    ring: Vec<CreditReturn>,
    ring_head: Vec<u16>,
    ring_len: Vec<u16>,
    ring_cap: usize,
    /// VC-allocation and switch-allocation arbiter of each output port.
    pub va_arb: Vec<Arbiter>,
    pub sa_arb: Vec<Arbiter>,
}

impl OutputUnits {
    pub fn new(n_ports: usize, vcs: usize, depth: u16) -> OutputUnits {
        let ring_cap = vcs * depth as usize;
        OutputUnits {
            vcs,
            owner: vec![NONE; n_ports * vcs],
            credits: vec![depth; n_ports * vcs],
            ring: vec![CreditReturn::default(); n_ports * ring_cap],
            ring_head: vec![0; n_ports],
            ring_len: vec![0; n_ports],
            ring_cap,
            va_arb: vec![Arbiter::default(); n_ports],
            sa_arb: vec![Arbiter::default(); n_ports],
        }
    }

    /// Bytes of state per output port (for memory estimates before building).
    pub fn bytes_per_port(vcs: usize, depth: u16) -> usize {
        vcs * (4 + 2 + std::mem::size_of::<CreditReturn>() * depth as usize) + 2 + 2 + 4
    }

    /// A credit for `vc` of output port `op`, usable from cycle `ready`.
    #[inline]
    pub fn return_credit(&mut self, op: usize, vc: u8, ready: u64) {
        let len = self.ring_len[op] as usize;
        assert!(len < self.ring_cap, "credit line of output port {op} overflows: more credits than buffer slots");
        let mut slot = self.ring_head[op] as usize + len;
        if slot >= self.ring_cap {
            slot -= self.ring_cap;
        }
        self.ring[op * self.ring_cap + slot] = CreditReturn::new(ready, vc);
        self.ring_len[op] += 1;
    }

    /// Take in the credits of output port `op` that have arrived by cycle `t`.
    #[inline]
    pub fn absorb_credits(&mut self, op: usize, t: u64, depth: u16) {
        while self.ring_len[op] > 0 {
            let h = self.ring_head[op] as usize;
            let c = self.ring[op * self.ring_cap + h];
            if c.ready() > t {
                break;
            }
            let ov = op * self.vcs + c.vc() as usize;
            self.credits[ov] += 1;
            assert!(self.credits[ov] <= depth, "output VC {ov} has more credits than the downstream buffer holds");
            self.ring_head[op] = if h + 1 == self.ring_cap { 0 } else { (h + 1) as u16 };
            self.ring_len[op] -= 1;
        }
    }

    /// Credits of output VC `vc` of port `op` as the router will see them in cycle `t`:
    /// those taken in plus those on the return line that have arrived by then.
    pub fn credits_at(&self, op: usize, vc: usize, t: u64) -> u16 {
        let mut c = self.credits[op * self.vcs + vc];
        let (h, len) = (self.ring_head[op] as usize, self.ring_len[op] as usize);
        for k in 0..len {
            let mut slot = h + k;
            if slot >= self.ring_cap {
                slot -= self.ring_cap;
            }
            let r = self.ring[op * self.ring_cap + slot];
            if r.ready() > t {
                break;
            }
            if r.vc() as usize == vc {
                c += 1;
            }
        }
        c
    }

    /// Credits in flight on the return line of `op`.
    pub fn credits_in_flight(&self, op: usize) -> usize {
        self.ring_len[op] as usize
    }

    /// The output VC of port `op` owned by input VC `iv`, if any.
    #[inline(always)]
    pub fn vc_owned_by(&self, op: usize, iv: u32) -> Option<usize> {
        let base = op * self.vcs;
        (0..self.vcs).find(|&v| self.owner[base + v] == iv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_arrive_when_ready() {
        let mut o = OutputUnits::new(2, 2, 4);
        o.credits[2 + 1] = 2;
        o.return_credit(1, 1, 5);
        o.return_credit(1, 1, 6);
        o.absorb_credits(1, 4, 4);
        assert_eq!(o.credits[3], 2);
        o.absorb_credits(1, 5, 4);
        assert_eq!(o.credits[3], 3);
        o.absorb_credits(1, 9, 4);
        assert_eq!(o.credits[3], 4);
        assert_eq!(o.credits_in_flight(1), 0);
    }
}
