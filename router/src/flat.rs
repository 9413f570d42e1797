//! [`Flat`]: the model's state vectors (per VC, per port, per router, per node), indexed by
//! the small ids the model computes itself, with no bounds check in a release build.
//!
//! A stage reads and writes a dozen such vectors per flit. Through `Vec`'s indexing each
//! access loads the vector's length and compares, and after any store into one vector the
//! compiler must load the others' lengths and pointers again (the store might have changed
//! them; what that costs is measured in `docs/performance.md`). A `Flat` indexes without
//! the check where the model is built for speed and checks like a `Vec` everywhere else:
//!
//! - debug and test builds (`debug_assertions`) check every index, so every test, property
//!   test included, runs with the checks;
//! - the `checked-index` feature (`cargo build --release --features checked-index`) checks
//!   them in a release build too, to run a large model with the checks;
//! - otherwise an index out of range is undefined behaviour, not a panic. Only ids the
//!   model derives from its own construction index a `Flat` (router, port, VC and channel
//!   ids, each below the size the vector was built with); what comes from outside the
//!   routers is checked where it enters, before it becomes such an id: the ids the public
//!   entry points of [`crate::Routers`] take (a NIC's channel, a probe's VC, a flit or
//!   credit from another part or an external router, the wiring) and the ports route
//!   computation returns.
//!
//! Everything else of `Vec` (length, iteration, growing) is there through `Deref`.

use std::ops::{Deref, DerefMut, Index, IndexMut};
use std::slice::SliceIndex;

/// A `Vec<T>` indexed without a bounds check in release builds (module doc).
#[derive(Clone)]
pub struct Flat<T>(Vec<T>);

impl<T> Flat<T> {
    /// An empty vector.
    pub const fn new() -> Flat<T> {
        Flat(Vec::new())
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Flat<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T> From<Vec<T>> for Flat<T> {
    fn from(v: Vec<T>) -> Flat<T> {
        Flat(v)
    }
}

impl<T> FromIterator<T> for Flat<T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Flat<T> {
        Flat(it.into_iter().collect())
    }
}

impl<T> Deref for Flat<T> {
    type Target = Vec<T>;
    #[inline(always)]
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> DerefMut for Flat<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<'a, T> IntoIterator for &'a Flat<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Flat<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

/// Whether indexing checks its bounds (module doc).
const CHECKED: bool = cfg!(any(debug_assertions, feature = "checked-index"));

impl<T, I: SliceIndex<[T]>> Index<I> for Flat<T> {
    type Output = I::Output;

    #[inline(always)]
    fn index(&self, i: I) -> &I::Output {
        if CHECKED {
            &self.0[i]
        } else {
            // SAFETY: the model indexes a `Flat` only with ids below the size it built the
            // vector with (module doc); debug builds and `checked-index` check it.
            unsafe { self.0.get_unchecked(i) }
        }
    }
}

impl<T, I: SliceIndex<[T]>> IndexMut<I> for Flat<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: I) -> &mut I::Output {
        if CHECKED {
            &mut self.0[i]
        } else {
            // SAFETY: as for `index`.
            unsafe { self.0.get_unchecked_mut(i) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Flat;

    #[test]
    fn indexes_like_a_vec() {
        let mut v: Flat<u32> = vec![1, 2, 3].into();
        v[1] += 10;
        assert_eq!(v[1], 12);
        assert_eq!(&v[1..], &[12, 3]);
        v.push(4);
        assert_eq!(v.iter().sum::<u32>(), 20);
        assert_eq!(format!("{v:?}"), "[1, 12, 3, 4]");
    }

    /// Tests build with debug assertions: an index out of range panics as a `Vec`'s does.
    #[cfg(any(debug_assertions, feature = "checked-index"))]
    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn an_index_out_of_range_panics_in_a_checked_build() {
        let v: Flat<u32> = vec![1, 2, 3].into();
        std::hint::black_box(v[3]);
    }

    #[cfg(any(debug_assertions, feature = "checked-index"))]
    #[test]
    #[should_panic(expected = "out of range")]
    fn a_range_out_of_range_panics_in_a_checked_build() {
        let v: Flat<u32> = vec![1, 2, 3].into();
        std::hint::black_box(&v[2..5]);
    }
}
