//! Arbiters: one per output port for VC allocation and one for switch allocation.
//!
//! Deciding is separate from updating priority: [`Arbiter::arbitrate`] only reads, and
//! [`Arbiter::grant_accepted`] moves the round-robin pointer once a grant is used.

use crate::params::ArbiterPolicy;

/// One request to an arbiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The requester: an input VC of this router, numbered `port * vcs + vc`.
    pub who: u16,
    /// The packet's header priority key (smaller first under [`ArbiterPolicy::Key`]).
    pub key: u32,
    /// The cycle the packet was created (earlier first under [`ArbiterPolicy::Oldest`]).
    pub birth: u64,
}

/// The state of one arbiter: a round-robin pointer over `n` requesters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Arbiter {
    pub ptr: u16,
}

impl Arbiter {
    /// The index in `reqs` of the winner among the requests for which `eligible` holds.
    /// `n` is the number of possible requesters (for the round-robin distance).
    #[inline]
    pub fn arbitrate(&self, policy: ArbiterPolicy, n: u16, reqs: &[Request], mut eligible: impl FnMut(&Request) -> bool) -> Option<usize> {
        let mut best: Option<(usize, (u64, u64, u32))> = None;
        for (i, r) in reqs.iter().enumerate() {
            if !eligible(r) {
                continue;
            }
            let rr = (r.who as u32 + n as u32 - self.ptr as u32) % n as u32;
            let rank = match policy {
                ArbiterPolicy::RoundRobin => (0, 0, rr),
                ArbiterPolicy::Fixed => (0, 0, r.who as u32),
                ArbiterPolicy::Oldest => (0, r.birth, rr),
                ArbiterPolicy::Key => (r.key as u64, r.birth, rr),
            };
            if best.is_none_or(|(_, b)| rank < b) {
                best = Some((i, rank));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Record that `winner` used its grant: round-robin priority passes to the next requester.
    #[inline]
    pub fn grant_accepted(&mut self, n: u16, winner: u16) {
        self.ptr = (winner + 1) % n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn req(who: u16, key: u32, birth: u64) -> Request {
        Request { who, key, birth }
    }

    #[test]
    fn key_then_age_then_round_robin() {
        let a = Arbiter { ptr: 2 };
        let reqs = [req(0, 5, 1), req(1, 3, 9), req(3, 3, 4), req(4, 3, 4)];
        assert_eq!(a.arbitrate(ArbiterPolicy::Key, 8, &reqs, |_| true), Some(2));
        assert_eq!(a.arbitrate(ArbiterPolicy::Oldest, 8, &reqs, |_| true), Some(0));
        assert_eq!(a.arbitrate(ArbiterPolicy::Fixed, 8, &reqs, |_| true), Some(0));
        assert_eq!(a.arbitrate(ArbiterPolicy::RoundRobin, 8, &reqs, |_| true), Some(2));
        let a = Arbiter { ptr: 4 };
        assert_eq!(a.arbitrate(ArbiterPolicy::Key, 8, &reqs, |_| true), Some(3));
    }

    #[test]
    fn no_eligible_request_no_grant() {
        let a = Arbiter::default();
        assert_eq!(a.arbitrate(ArbiterPolicy::RoundRobin, 4, &[req(1, 0, 0)], |_| false), None);
        assert_eq!(a.arbitrate(ArbiterPolicy::Key, 4, &[], |_| true), None);
    }

    proptest! {
        /// A grant is always one of the eligible requests.
        #[test]
        fn grant_is_among_requests(whos in proptest::collection::btree_set(0u16..16, 0..16),
                                   ptr in 0u16..16, pol in 0usize..4, mask in any::<u16>()) {
            let policy = [ArbiterPolicy::RoundRobin, ArbiterPolicy::Fixed, ArbiterPolicy::Oldest, ArbiterPolicy::Key][pol];
            let reqs: Vec<Request> = whos.iter().map(|&w| req(w, (w as u32 * 7) % 5, (w as u64 * 3) % 4)).collect();
            let a = Arbiter { ptr };
            let g = a.arbitrate(policy, 16, &reqs, |r| mask & (1 << r.who) != 0);
            match g {
                Some(i) => prop_assert!(mask & (1 << reqs[i].who) != 0),
                None => prop_assert!(reqs.iter().all(|r| mask & (1 << r.who) == 0)),
            }
        }

        /// Round-robin serves every persistent requester within n grants.
        #[test]
        fn round_robin_serves_everyone(whos in proptest::collection::btree_set(0u16..12, 1..12), ptr in 0u16..12) {
            let reqs: Vec<Request> = whos.iter().map(|&w| req(w, 0, 0)).collect();
            let mut a = Arbiter { ptr };
            let mut served = std::collections::BTreeSet::new();
            for _ in 0..12 {
                let i = a.arbitrate(ArbiterPolicy::RoundRobin, 12, &reqs, |_| true).unwrap();
                served.insert(reqs[i].who);
                a.grant_accepted(12, reqs[i].who);
            }
            prop_assert_eq!(served, whos);
        }
    }
}
