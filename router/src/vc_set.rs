//! Sets of a router's input VCs: bit `l = port * vcs + vc`.
//!
//! Stored as [`VcSet`]: two 64-bit words, VCs 0..64 and 64..128, so a router may have up to
//! 128 input VCs; routers with at most 64 (nearly every router) never touch the second
//! word. The pipeline stages compute in the narrowest width that holds the router's VCs
//! ([`VcBits`]: `u64` for up to 64 input VCs, `u128` above), because 128-bit shifts, scans
//! and rotations cost several instructions each on a 64-bit machine, and a narrow router's
//! sets then take one word each in its registers.

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

/// A set of a router's input VCs as stored: bit `l % 64` of word `l / 64`.
pub type VcSet = [u64; 2];

/// The empty set.
pub const EMPTY: VcSet = [0; 2];

/// The most input VCs (ports × VCs) one router may have: the width of a [`VcSet`].
pub const MAX_ROUTER_VCS: usize = 128;

/// Add VC `l` to a stored set.
#[inline(always)]
pub fn insert(s: &mut VcSet, l: usize) {
    s[(l >> 6) & 1] |= 1 << (l & 63);
}

/// Remove VC `l` from a stored set.
#[inline(always)]
pub fn remove(s: &mut VcSet, l: usize) {
    s[(l >> 6) & 1] &= !(1 << (l & 63));
}

/// Is VC `l` in a stored set?
#[inline(always)]
pub fn has(s: &VcSet, l: usize) -> bool {
    s[(l >> 6) & 1] & (1 << (l & 63)) != 0
}

/// The width the pipeline computes VC sets in.
pub trait VcBits:
    Copy + Eq + std::fmt::Debug + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self> + BitAndAssign + BitOrAssign
{
    const ZERO: Self;
    /// How many VCs this width holds.
    const WIDTH: usize;
    /// `{l}`.
    fn bit(l: usize) -> Self;
    /// The set from its stored words (`hi` holds VCs 64..128: ignored by a width that does
    /// not reach them, whose router has none).
    fn from_words(lo: u64, hi: u64) -> Self;
    /// A stored set in this width.
    #[inline(always)]
    fn load(s: VcSet) -> Self {
        Self::from_words(s[0], s[1])
    }
    /// Store into `s` the words this width covers (the others stay empty).
    fn store_into(self, s: &mut VcSet);
    fn is_empty(self) -> bool;
    /// Exactly one member (`self` not empty).
    fn is_single(self) -> bool;
    /// The smallest member (`self` not empty).
    fn first(self) -> usize;
    /// Without its smallest member.
    fn without_first(self) -> Self;
    fn rotate_right(self, n: u32) -> Self;
    /// Add VC `l` (below `WIDTH`) to a stored set, touching only the words this width covers.
    fn insert_into(s: &mut VcSet, l: usize);
    /// Remove VC `l` (below `WIDTH`) from a stored set, likewise.
    fn remove_from(s: &mut VcSet, l: usize);
    /// Is VC `l` (below `WIDTH`) in a stored set?
    fn is_in(s: &VcSet, l: usize) -> bool;
    #[inline(always)]
    fn contains(self, l: usize) -> bool {
        !(self & Self::bit(l)).is_empty()
    }
}

/// The [`VcBits`] methods whose code is the same in every width.
macro_rules! same_for_every_width {
    ($t:ty) => {
        #[inline(always)]
        fn is_empty(self) -> bool {
            self == 0
        }
        #[inline(always)]
        fn is_single(self) -> bool {
            self & self.wrapping_sub(1) == 0
        }
        #[inline(always)]
        fn first(self) -> usize {
            self.trailing_zeros() as usize
        }
        #[inline(always)]
        fn without_first(self) -> Self {
            self & self.wrapping_sub(1)
        }
        #[inline(always)]
        fn rotate_right(self, n: u32) -> Self {
            <$t>::rotate_right(self, n)
        }
    };
}

impl VcBits for u64 {
    const ZERO: Self = 0;
    const WIDTH: usize = 64;
    #[inline(always)]
    fn bit(l: usize) -> Self {
        1 << (l & 63)
    }
    #[inline(always)]
    fn from_words(lo: u64, _hi: u64) -> Self {
        lo
    }
    #[inline(always)]
    fn store_into(self, s: &mut VcSet) {
        s[0] = self;
    }
    #[inline(always)]
    fn insert_into(s: &mut VcSet, l: usize) {
        s[0] |= Self::bit(l);
    }
    #[inline(always)]
    fn remove_from(s: &mut VcSet, l: usize) {
        s[0] &= !Self::bit(l);
    }
    #[inline(always)]
    fn is_in(s: &VcSet, l: usize) -> bool {
        s[0] & Self::bit(l) != 0
    }
    same_for_every_width!(u64);
}

/// `1 << l` for every VC index: a table load is cheaper than a variable 128-bit shift.
static BIT128: [u128; MAX_ROUTER_VCS] = {
    let mut t = [0; MAX_ROUTER_VCS];
    let mut l = 0;
    while l < MAX_ROUTER_VCS {
        t[l] = 1 << l;
        l += 1;
    }
    t
};

impl VcBits for u128 {
    const ZERO: Self = 0;
    const WIDTH: usize = 128;
    #[inline(always)]
    fn bit(l: usize) -> Self {
        BIT128[l & (MAX_ROUTER_VCS - 1)]
    }
    #[inline(always)]
    fn from_words(lo: u64, hi: u64) -> Self {
        lo as u128 | (hi as u128) << 64
    }
    #[inline(always)]
    fn store_into(self, s: &mut VcSet) {
        *s = [self as u64, (self >> 64) as u64];
    }
    #[inline(always)]
    fn insert_into(s: &mut VcSet, l: usize) {
        insert(s, l);
    }
    #[inline(always)]
    fn remove_from(s: &mut VcSet, l: usize) {
        remove(s, l);
    }
    #[inline(always)]
    fn is_in(s: &VcSet, l: usize) -> bool {
        has(s, l)
    }
    same_for_every_width!(u128);
}

/// The members of a set in ascending order.
#[inline(always)]
pub fn members<S: VcBits>(mut s: S) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if s.is_empty() {
            None
        } else {
            let l = s.first();
            s = s.without_first();
            Some(l)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Both widths agree on every operation for sets of up to 64 VCs.
        #[test]
        fn widths_agree(a in any::<u64>(), b in any::<u64>(), l in 0usize..64, n in 0u32..64) {
            let (wa, wb) = (a as u128, b as u128);
            prop_assert_eq!(<u64 as VcBits>::bit(l) as u128, <u128 as VcBits>::bit(l));
            prop_assert_eq!((a & !b) as u128, wa & !wb);
            prop_assert_eq!(members(a).collect::<Vec<_>>(), members(wa).collect::<Vec<_>>());
            prop_assert_eq!(<u64 as VcBits>::load([a, b]), a);
            if a != 0 {
                prop_assert_eq!(a.is_single(), wa.is_single());
                prop_assert_eq!(a.first(), wa.first());
                // Rotation: the first member at or after `n`, wrapping, is the same VC.
                let n = n % 64;
                let r64 = (VcBits::rotate_right(a, n).first() + n as usize) % 64;
                let r128 = (VcBits::rotate_right(wa, n).first() + n as usize) % 128;
                prop_assert_eq!(r64, r128);
            }
        }

        /// A stored set: its words, the bit operations on it and the wide width agree with a
        /// `u128`, for all 128 VCs.
        #[test]
        fn stored_sets_are_u128(ops in proptest::collection::vec((proptest::bool::ANY, 0usize..128), 0..40)) {
            let (mut s, mut w) = (EMPTY, 0u128);
            for (add, l) in ops {
                if add {
                    insert(&mut s, l);
                    w |= 1 << l;
                } else {
                    remove(&mut s, l);
                    w &= !(1 << l);
                }
                prop_assert_eq!(has(&s, l), add);
                prop_assert_eq!(<u128 as VcBits>::is_in(&s, l), add);
                if l < 64 {
                    let mut n = [s[0], 0];
                    if add { <u64 as VcBits>::insert_into(&mut n, l) } else { <u64 as VcBits>::remove_from(&mut n, l) }
                    prop_assert_eq!(n, [s[0], 0]);
                    prop_assert_eq!(<u64 as VcBits>::is_in(&n, l), add);
                }
                prop_assert_eq!(<u128 as VcBits>::load(s), w);
                let mut back = EMPTY;
                w.store_into(&mut back);
                prop_assert_eq!(back, s);
                prop_assert_eq!(<u64 as VcBits>::load(s), w as u64);
            }
        }
    }
}
