//! Where the threads of a split run start: one per CPU.
//!
//! Linux starts a new thread on (or next to) its parent's CPU and moves it only when the
//! load balancer gets to it, which, with the parts' threads busy-waiting for each other,
//! was measured to take up to ~100 ms on the build machine: every round of that time costs
//! a spin budget and a yield instead of ~5 µs (a 1,000-cycle run of benchmark (b) took
//! 60 ms instead of 3 ms, about every other time). So each part's thread first moves
//! itself onto a CPU of its own, then gives its affinity back: the thread stays where it
//! was placed (a running thread on an otherwise idle CPU is not moved), and the scheduler
//! stays free to move it later if the machine gets busy. Placement never changes a result.

/// The CPUs this process may run on, and its affinity to give back after placement.
#[cfg(target_os = "linux")]
pub(crate) struct Placement {
    mask: libc::cpu_set_t,
    cpus: Vec<usize>,
    /// The CPU of the thread that started the run: part `k` goes to the `k`-th allowed CPU
    /// from there, so that runs started on different CPUs do not all crowd the first ones.
    first: usize,
}

#[cfg(target_os = "linux")]
impl Placement {
    /// The allowed CPUs when there are at least `parts` of them (none otherwise: with more
    /// threads than CPUs there is nothing to spread).
    pub(crate) fn for_parts(parts: usize) -> Option<Placement> {
        // SAFETY: `cpu_set_t` is plain data (all zeros is the empty set); the calls get its
        // size and only write into it.
        let mask = unsafe {
            let mut mask: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut mask) != 0 {
                return None;
            }
            mask
        };
        // SAFETY: `CPU_ISSET` reads the set within its size (the index is below `CPU_SETSIZE`).
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &mask) }).collect();
        if parts < 2 || cpus.len() < parts {
            return None;
        }
        // SAFETY: no arguments; -1 on failure.
        let here = unsafe { libc::sched_getcpu() };
        let first = cpus.iter().position(|&c| c as i32 == here).unwrap_or(0);
        Some(Placement { mask, cpus, first })
    }

    /// The CPU part `k` is placed on.
    pub(crate) fn cpu_of(&self, k: usize) -> usize {
        self.cpus[(self.first + k) % self.cpus.len()]
    }

    /// Move the calling thread (part `k`'s) onto its CPU, then give it the process's
    /// affinity back. Failures are ignored: placement is only a head start.
    pub(crate) fn place(&self, k: usize) {
        // SAFETY: the sets are plain data of the size passed; `CPU_SET` writes within it.
        unsafe {
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(self.cpu_of(k), &mut one);
            let size = std::mem::size_of::<libc::cpu_set_t>();
            // Setting the calling thread's affinity migrates it before returning.
            if libc::sched_setaffinity(0, size, &one) == 0 {
                libc::sched_setaffinity(0, size, &self.mask);
            }
        }
    }
}

/// Elsewhere the scheduler places the threads.
#[cfg(not(target_os = "linux"))]
pub(crate) struct Placement;

#[cfg(not(target_os = "linux"))]
impl Placement {
    pub(crate) fn for_parts(_parts: usize) -> Option<Placement> {
        None
    }
    pub(crate) fn place(&self, _k: usize) {}
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn parts_go_to_distinct_allowed_cpus_and_the_affinity_comes_back() {
        let Some(p) = Placement::for_parts(2) else {
            return; // a one-CPU machine: nothing to place
        };
        let n = p.cpus.len();
        let cpus: Vec<usize> = (0..n).map(|k| p.cpu_of(k)).collect();
        let mut sorted = cpus.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, p.cpus, "every allowed CPU once");
        std::thread::scope(|s| {
            s.spawn(|| {
                p.place(1);
                // SAFETY: as in `for_parts`.
                let after = unsafe {
                    let mut m: libc::cpu_set_t = std::mem::zeroed();
                    assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut m), 0);
                    m
                };
                // SAFETY: as in `for_parts`.
                let allowed: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &after) }).collect();
                assert_eq!(allowed, p.cpus, "the thread's affinity is the process's again");
            });
        });
    }

    #[test]
    fn more_parts_than_cpus_are_not_placed() {
        assert!(Placement::for_parts(libc::CPU_SETSIZE as usize + 1).is_none());
        assert!(Placement::for_parts(1).is_none());
    }
}
