//! SIGINT and SIGTERM during `flitwave run`: the first stops the simulation at the cycle it
//! is in (the kernel reads [`flag`] before each cycle) and the run writes everything asked
//! for, marked interrupted, and exits with [`EXIT_INTERRUPTED`]; during `flitwave sweep`,
//! the rows running finish and no more start. A second ends the process at once, removing
//! the temporary files of the outputs not yet complete (files that existed before are left
//! as they were). The other commands keep the default: the first ends them at once.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

/// Exit code of an interrupted run: 128 + SIGINT, as a shell reports Ctrl-C.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Set by the first signal; every fabric built for a run stops when it is set.
pub fn flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false))).clone()
}

/// Catch SIGINT and SIGTERM (for the rest of the process; `what_now`: what the command
/// does on the first, said on standard error): a thread waits for them, so
/// that the second can clean up before it ends the process. If they cannot be caught,
/// they keep their default action, which ends the process at once.
pub fn install(what_now: &'static str) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else { return };
    let stop = flag();
    std::thread::Builder::new()
        .name("flitwave-signals".into())
        .spawn(move || {
            let mut seen = false;
            for _ in signals.forever() {
                if seen {
                    crate::output::abandon();
                    std::process::exit(EXIT_INTERRUPTED);
                }
                seen = true;
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                eprintln!("flitwave: interrupted: {what_now} (interrupt again to stop at once)");
            }
        })
        .ok();
}
