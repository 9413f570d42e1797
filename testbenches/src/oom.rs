//! The allocator of the `flitwave` binary: the system's, except that a request the system
//! cannot meet ends the run with one line and exit 2 instead of an abort (the up-front
//! memory check is an estimate; a limit it did not foresee must still not crash).

use std::alloc::{GlobalAlloc, Layout, System};

/// [`System`], with an allocation failure turned into exit 2.
pub struct ExitOnOom;

/// Say how much could not be had, and end with exit 2. Allocates nothing: the message is
/// built on the stack and written with one `write(2)`.
#[cold]
fn out_of_memory(bytes: usize) -> ! {
    let mut buf = [0u8; 256];
    let head = b"flitwave: error: memory: out of memory allocating ";
    let tail =
        b" bytes; the run needs more than the memory limits allow (ulimit -v, ulimit -d, the cgroup, the machine): try a smaller size\n";
    let mut n = 0;
    buf[..head.len()].copy_from_slice(head);
    n += head.len();
    let mut digits = [0u8; 20];
    let (mut k, mut x) = (0, bytes);
    loop {
        digits[k] = b'0' + (x % 10) as u8;
        k += 1;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    for i in (0..k).rev() {
        buf[n] = digits[i];
        n += 1;
    }
    let t = tail.len().min(buf.len() - n);
    buf[n..n + t].copy_from_slice(&tail[..t]);
    n += t;
    // SAFETY: writes `n` initialized bytes of `buf` to standard error, then ends the
    // process without running anything that might allocate.
    unsafe {
        libc::write(2, buf.as_ptr().cast(), n);
        libc::_exit(2)
    }
}

// SAFETY: every call goes to `System` with the same arguments; only a null result (the
// system's allocation failure) is not returned but ends the process.
unsafe impl GlobalAlloc for ExitOnOom {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on to `System`.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}
