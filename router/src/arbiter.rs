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
    /// requester at or after the round-robin pointer. That is [`Arbiter::pick`] among
    /// [`best_ranked`]: an allocator that grants several times over a shrinking set of
    /// requesters may keep the best-ranked set between its grants.
    #[inline]
    pub fn arbitrate<S: VcBits>(&self, policy: ArbiterPolicy, requests: S, rank: impl FnMut(usize) -> (u32, u64)) -> Option<usize> {
        if requests.is_empty() {
            return None;
        }
        if requests.is_single() {
            // A single requester wins under every policy.
            return Some(requests.first());
        }
        self.nearest(policy, best_ranked(policy, requests, rank))
    }

    /// The winner among `best`, requesters of the best rank ([`best_ranked`]): the lowest
    /// under the fixed policy, else the first at or after the round-robin pointer.
    #[inline]
    pub fn pick<S: VcBits>(&self, policy: ArbiterPolicy, best: S) -> Option<usize> {
        if best.is_empty() {
            return None;
        }
        if best.is_single() {
            return Some(best.first());
        }
        self.nearest(policy, best)
    }

    /// [`Arbiter::pick`] among a non-empty `best`.
    #[inline(always)]
    fn nearest<S: VcBits>(&self, policy: ArbiterPolicy, best: S) -> Option<usize> {
        if policy == ArbiterPolicy::Fixed {
            return Some(best.first());
        }
        Some((best.rotate_right(self.ptr as u32).first() + self.ptr as usize) % S::WIDTH)
    }

    /// Record that `winner` used its grant: round-robin priority passes to the next VC.
    #[inline]
    pub fn grant_accepted(&mut self, n: usize, winner: usize) {
        let next = winner + 1;
        self.ptr = if next >= n { 0 } else { next as u8 };
    }
}

/// The requesters of `requests` with the best rank under `policy`: the least (priority key,
/// creation cycle) under the key policy, the least creation cycle under the age policy, all
/// of them under the round-robin and fixed policies (which rank no one).
#[inline]
pub fn best_ranked<S: VcBits>(policy: ArbiterPolicy, requests: S, mut rank: impl FnMut(usize) -> (u32, u64)) -> S {
    match policy {
        ArbiterPolicy::Fixed | ArbiterPolicy::RoundRobin => requests,
        ArbiterPolicy::Oldest | ArbiterPolicy::Key => {
            let mut best = (u32::MAX, u64::MAX);
            let mut set = S::ZERO;
            let mut m = requests;
            while !m.is_empty() {
                let who = m.first();
                m = m.without_first();
                let (key, birth) = rank(who);
                let r = if policy == ArbiterPolicy::Key { (key, birth) } else { (0, birth) };
                match r.cmp(&best) {
                    std::cmp::Ordering::Less => (best, set) = (r, S::bit(who)),
                    std::cmp::Ordering::Equal => set |= S::bit(who),
                    std::cmp::Ordering::Greater => {}
                }
            }
            set
        }
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

        /// The winner is the requester of least rank (key and creation cycle under the key
        /// policy, creation cycle under the age policy, none under the others), ties to the
        /// nearest at or after the pointer (the lowest under the fixed policy): computed here
        /// from the rule, not from the arbiter's code.
        #[test]
        fn the_winner_is_the_least_ranked_then_the_nearest(reqs in 1u64..(1 << 16), ptr in 0u8..16, pol in 0usize..4) {
            let policy = [ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key][pol];
            let rank = |w: usize| ((w as u32 * 7) % 3, (w as u64 * 5) % 4);
            let order = |w: usize| {
                let (key, birth) = rank(w);
                let distance = if policy == ArbiterPolicy::Fixed { w } else { (w + 64 - ptr as usize) % 64 };
                match policy {
                    ArbiterPolicy::Key => (key as u64, birth, distance),
                    ArbiterPolicy::Oldest => (0, birth, distance),
                    _ => (0, 0, distance),
                }
            };
            let expected = (0..16).filter(|w| reqs & 1 << w != 0).min_by_key(|&w| order(w));
            prop_assert_eq!(Arbiter { ptr }.arbitrate(policy, reqs, rank), expected);
        }

        /// Arbiters that grant one after another from a shrinking set of requesters (an
        /// allocator's channels) may keep the best-ranked set between grants: each picks
        /// what it would pick among all that are left.
        #[test]
        fn the_best_ranked_set_may_be_kept_between_grants(reqs in 1u64..(1 << 16), ptrs in proptest::collection::vec(0u8..16, 1..8), pol in 0usize..4) {
            let policy = [ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key][pol];
            let rank = |w: usize| ((w as u32 * 7) % 3, (w as u64 * 5) % 4);
            let (mut left, mut best) = (reqs, 0u64);
            for ptr in ptrs {
                let a = Arbiter { ptr };
                best &= left;
                if best == 0 {
                    best = best_ranked(policy, left, rank);
                }
                let got = a.pick(policy, best);
                prop_assert_eq!(got, a.arbitrate(policy, left, rank));
                let Some(w) = got else { break };
                left &= !(1 << w);
            }
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
