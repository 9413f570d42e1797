//! Arbiters: one per output port for VC allocation and one for switch allocation.
//!
//! Requests are a set of the router's input VCs (bit `port * vcs + vc`). Deciding is
//! separate from updating priority: [`Arbiter::arbitrate`] only reads, and
//! [`Arbiter::grant_accepted`] moves the round-robin pointer once a grant is used.

use crate::params::ArbiterPolicy;
use crate::vc_set::VcBits;
pub use crate::vc_set::VcSet;

/// The state of one arbiter: a round-robin pointer over the router's input VCs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Arbiter {
    pub ptr: u8,
}

impl Arbiter {
    /// The winner among `requests` (non-empty for a grant). `rank(vc)` gives a requester's
    /// (priority key, creation cycle) for the key and age policies; ties go to the first
    /// requester at or after the round-robin pointer.
    #[inline]
    pub fn arbitrate<S: VcBits>(&self, policy: ArbiterPolicy, requests: S, mut rank: impl FnMut(usize) -> (u32, u64)) -> Option<usize> {
        if requests.is_empty() {
            return None;
        }
        if requests.is_single() {
            // A single requester wins under every policy.
            return Some(requests.first());
        }
        let rotated = requests.rotate_right(self.ptr as u32);
        let first = |m: S| (m.first() + self.ptr as usize) % S::WIDTH;
        match policy {
            ArbiterPolicy::Fixed => Some(requests.first()),
            ArbiterPolicy::RoundRobin => Some(first(rotated)),
            ArbiterPolicy::Oldest | ArbiterPolicy::Key => {
                let mut best: Option<(usize, (u32, u64))> = None;
                let mut m = rotated;
                while !m.is_empty() {
                    let who = first(m);
                    m = m.without_first();
                    let (key, birth) = rank(who);
                    let r = if policy == ArbiterPolicy::Key { (key, birth) } else { (0, birth) };
                    if best.is_none_or(|(_, b)| r < b) {
                        best = Some((who, r));
                    }
                }
                best.map(|(w, _)| w)
            }
        }
    }

    /// Record that `winner` used its grant: round-robin priority passes to the next VC.
    #[inline]
    pub fn grant_accepted(&mut self, n: usize, winner: usize) {
        let next = winner + 1;
        self.ptr = if next >= n { 0 } else { next as u8 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn set(who: &[usize]) -> u128 {
        who.iter().fold(0, |m, &w| m | 1 << w)
    }
    fn rank(w: usize) -> (u32, u64) {
        // keys: 0→5, 1→3, 3→3, 4→3; births: 0→1, 1→9, 3→4, 4→4
        match w {
            0 => (5, 1),
            1 => (3, 9),
            3 | 4 => (3, 4),
            _ => (9, 9),
        }
    }

    #[test]
    fn key_then_age_then_round_robin() {
        let reqs = set(&[0, 1, 3, 4]);
        let a = Arbiter { ptr: 2 };
        assert_eq!(a.arbitrate(ArbiterPolicy::Key, reqs, rank), Some(3));
        assert_eq!(a.arbitrate(ArbiterPolicy::Oldest, reqs, rank), Some(0));
        assert_eq!(a.arbitrate(ArbiterPolicy::Fixed, reqs, rank), Some(0));
        assert_eq!(a.arbitrate(ArbiterPolicy::RoundRobin, reqs, rank), Some(3));
        let a = Arbiter { ptr: 4 };
        assert_eq!(a.arbitrate(ArbiterPolicy::Key, reqs, rank), Some(4));
        assert_eq!(a.arbitrate(ArbiterPolicy::RoundRobin, reqs, rank), Some(4));
        let a = Arbiter { ptr: 5 };
        assert_eq!(a.arbitrate(ArbiterPolicy::RoundRobin, reqs, rank), Some(0), "wraps around");
    }

    #[test]
    fn no_request_no_grant() {
        for p in [ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key] {
            assert_eq!(Arbiter::default().arbitrate(p, 0u128, rank), None);
            assert_eq!(Arbiter::default().arbitrate(p, 0u64, rank), None);
        }
    }

    proptest! {
        /// A grant is always one of the requests.
        #[test]
        fn grant_is_among_requests(reqs in any::<u128>(), ptr in 0u8..128, pol in 0usize..4) {
            let policy = [ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key][pol];
            let a = Arbiter { ptr };
            match a.arbitrate(policy, reqs, |w| ((w as u32 * 7) % 5, (w as u64 * 3) % 4)) {
                Some(w) => prop_assert!(reqs & (1 << w) != 0),
                None => prop_assert_eq!(reqs, 0),
            }
        }

        /// Computing in 64 bits picks the same winner as in 128 (routers of up to 64 VCs).
        #[test]
        fn widths_pick_the_same_winner(reqs in any::<u64>(), ptr in 0u8..64, pol in 0usize..4) {
            let policy = [ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key][pol];
            let a = Arbiter { ptr };
            let rank = |w: usize| ((w as u32 * 7) % 5, (w as u64 * 3) % 4);
            prop_assert_eq!(a.arbitrate(policy, reqs, rank), a.arbitrate(policy, reqs as u128, rank));
        }

        /// Round-robin serves every persistent requester within n grants.
        #[test]
        fn round_robin_serves_everyone(reqs in 1u128..(1 << 12), ptr in 0u8..12) {
            let mut a = Arbiter { ptr };
            let mut served = 0u128;
            for _ in 0..12 {
                let w = a.arbitrate(ArbiterPolicy::RoundRobin, reqs, |_| (0, 0)).unwrap();
                served |= 1 << w;
                a.grant_accepted(12, w);
            }
            prop_assert_eq!(served, reqs);
        }
    }
}
