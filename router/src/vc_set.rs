//! Sets of a router's input VCs: bit `l = port * vcs + vc`.
//!
//! Stored as [`VcSet`] (`u128`, so a router may have up to 128 input VCs); the pipeline
//! stages compute in the narrowest width that holds the router's VCs ([`VcBits`]: `u64` for
//! up to 64 input VCs, which is nearly every router, `u128` above), because 128-bit shifts,
//! scans and rotations cost several instructions each on a 64-bit machine.

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

/// A set of a router's input VCs as stored, bit `port * vcs + vc` (at most 128 per router).
pub type VcSet = u128;

/// The most input VCs (ports × VCs) one router may have: the width of a [`VcSet`].
pub const MAX_ROUTER_VCS: usize = 128;

/// The width the pipeline computes VC sets in.
pub trait VcBits:
    Copy + Eq + std::fmt::Debug + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self> + BitAndAssign + BitOrAssign
{
    const ZERO: Self;
    /// How many VCs this width holds.
    const WIDTH: usize;
    /// `{l}`.
    fn bit(l: usize) -> Self;
    /// A stored set, truncated to this width (the router has at most `WIDTH` VCs).
    fn load(s: VcSet) -> Self;
    /// Back to the stored width.
    fn store(self) -> VcSet;
    fn is_empty(self) -> bool;
    /// Exactly one member (`self` not empty).
    fn is_single(self) -> bool;
    /// The smallest member (`self` not empty).
    fn first(self) -> usize;
    /// Without its smallest member.
    fn without_first(self) -> Self;
    fn rotate_right(self, n: u32) -> Self;
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
    fn load(s: VcSet) -> Self {
        s as u64
    }
    #[inline(always)]
    fn store(self) -> VcSet {
        self as VcSet
    }
    same_for_every_width!(u64);
}

/// `1 << l` for every VC index: a table load is cheaper than a variable 128-bit shift.
static BIT128: [VcSet; MAX_ROUTER_VCS] = {
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
    fn load(s: VcSet) -> Self {
        s
    }
    #[inline(always)]
    fn store(self) -> VcSet {
        self
    }
    same_for_every_width!(u128);
}

/// `{l}` in the stored width.
#[inline(always)]
pub fn bit(l: usize) -> VcSet {
    <u128 as VcBits>::bit(l)
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
            prop_assert_eq!(<u64 as VcBits>::bit(l).store(), <u128 as VcBits>::bit(l));
            prop_assert_eq!((a & !b).store(), wa & !wb);
            prop_assert_eq!(members(a).collect::<Vec<_>>(), members(wa).collect::<Vec<_>>());
            prop_assert_eq!(<u64 as VcBits>::load(wa), a);
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
    }
}
