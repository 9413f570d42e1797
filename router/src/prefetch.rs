//! Software prefetch for fabrics larger than the caches: a loop over this cycle's work asks
//! for the state of the item a few places ahead, so that its cache misses overlap with the
//! work on the items before it. A hint only: what is computed never depends on it.

/// How many items ahead of the one being worked on a loop prefetches.
pub const PREFETCH_AHEAD: usize = 4;

/// Fabrics of more routers than this prefetch (the state of smaller ones stays in the
/// caches from one cycle to the next).
pub const PREFETCH_FROM: usize = 128;

/// Hint the CPU to load `x`'s cache line (x86-64; a no-op elsewhere).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not change memory.
    unsafe {
        std::arch::x86_64::_mm_prefetch(x as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// The item `distance` places after item `i` of `list` a loop prefetches for, if any
/// (`distance` 0: the loop does not prefetch).
#[inline(always)]
pub fn ahead<T>(list: &[T], i: usize, distance: usize) -> Option<&T> {
    if distance == 0 { None } else { list.get(i + distance) }
}
