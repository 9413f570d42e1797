//! The run loop: [`Fabric::run`] steps cycles until nothing is left to do, a deadlock, the
//! cycle limit or a stop from outside ([`Ending`]), skipping stretches in which nothing can
//! happen, and calls a watcher now and then ([`Fabric::run_watched`]).

use super::Fabric;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Nothing left to do.
    Quiescent,
    /// The watchdog found a deadlock.
    Deadlock,
    /// `max_cycles` reached with work left.
    CycleLimit,
    /// Stopped from outside ([`Fabric::stop_when`]) with work left, at the cycle reached.
    Interrupted,
    /// An external router differed from the model's fed the same inputs, or failed
    /// ([`Fabric::external_stop`]).
    RtlStopped,
}

/// Who watches a run ([`Fabric::run_watched`]), and when it is next called.
pub(crate) struct Watch<W> {
    watch: Option<(Duration, W)>,
    next: Option<Instant>,
    steps: u32,
    gap: u32,
    checked: Instant,
}

impl<W: FnMut(&Fabric)> Watch<W> {
    fn new(watch: Option<(Duration, W)>) -> Watch<W> {
        let next = watch.as_ref().and_then(|(every, _)| Instant::now().checked_add(*every));
        Watch { watch, next, steps: 0, gap: 1, checked: Instant::now() }
    }

    /// A cycle was stepped: call the watcher if its time has come. The clock is read about
    /// every 10 ms: every `gap` steps, from the last gap's pace.
    #[inline]
    pub(crate) fn stepped(&mut self, f: &Fabric) {
        let (Some((every, w)), Some(at)) = (self.watch.as_mut(), self.next) else { return };
        self.steps += 1;
        if self.steps >= self.gap {
            let now = Instant::now();
            let per_step = (now - self.checked).as_nanos() / self.steps as u128;
            self.gap = (10_000_000 / per_step.max(1)).clamp(1, 4096) as u32;
            (self.steps, self.checked) = (0, now);
            if now >= at {
                w(f);
                self.next = now.checked_add(*every);
            }
        }
    }
}

impl Fabric {
    /// Run until nothing is left to do, a deadlock, or `max_cycles`.
    pub fn run(&mut self) -> Ending {
        self.run_loop(None::<(Duration, fn(&Fabric))>)
    }

    /// [`Fabric::run`], calling `watch` with the fabric about every `every` of wall-clock
    /// time (the clock is read about every 10 ms), e.g. to show progress. Watching never
    /// changes a result.
    pub fn run_watched(&mut self, every: Duration, watch: impl FnMut(&Fabric)) -> Ending {
        self.run_loop(Some((every, watch)))
    }

    /// Is nothing happening: no flit in the routers, no NIC with work (cycle 0 always runs:
    /// the programs start)?
    fn idle(&self) -> bool {
        self.now > 0 && self.routers.is_empty() && self.step.nic_active.is_empty() && self.rtl.as_ref().is_none_or(|c| c.idle())
    }

    /// Stop [`Fabric::run`] before the next cycle once `flag` is set (by a signal handler,
    /// say): it then returns [`Ending::Interrupted`], the fabric as of the cycle reached.
    pub fn stop_when(&mut self, flag: Arc<AtomicBool>) {
        self.stop = Some(flag);
    }

    /// Has [`Fabric::stop_when`]'s flag been set?
    #[inline]
    pub(crate) fn stop_asked(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn run_loop<W: FnMut(&Fabric)>(&mut self, watch: Option<(Duration, W)>) -> Ending {
        let mut watch = Watch::new(watch);
        loop {
            if self.deadlock.is_some() {
                return Ending::Deadlock;
            }
            // One relaxed load a cycle: next to a cycle's work, nothing.
            if self.stop_asked() {
                return Ending::Interrupted;
            }
            if self.rtl.as_ref().is_some_and(|c| c.stops(self.now)) {
                return Ending::RtlStopped;
            }
            // Skip cycles in which nothing can happen; with probes attached, not while
            // credits are still coming back (a waveform shows when they arrive).
            let credits_due = !self.probes.is_empty() && self.now <= self.routers.credit_horizon();
            let idle = self.idle();
            if idle && !credits_due {
                match self.step.timers.next() {
                    None => return Ending::Quiescent,
                    // Not past the cycle limit: a run stopped there has simulated to it.
                    Some(t) => self.now = self.now.max(t.min(self.spec.max_cycles)),
                }
            } else if self.still() {
                // Flits wait in the routers for their delays and nothing else goes on: on to
                // the next cycle anything is due, or to the watchdog's.
                let fault = self.faults.as_ref().and_then(|f| f.next_due());
                let due = [self.routers.next_due(), self.step.timers.next(), fault].into_iter().flatten().min();
                let watchdog = self.step.last_move.saturating_add(self.spec.watchdog_cycles);
                self.now = self.now.max(due.unwrap_or(u64::MAX).min(watchdog).min(self.spec.max_cycles));
            }
            // Without probes the run would end here: the cycles after it only show credits
            // coming back, and do not count as simulated.
            if !self.idle() || !self.step.timers.is_empty() {
                self.step.probe_tail_from = None;
            } else if self.step.probe_tail_from.is_none() {
                self.step.probe_tail_from = Some(self.now);
            }
            if self.now >= self.spec.max_cycles {
                return if self.step.probe_tail_from.is_some() { Ending::Quiescent } else { Ending::CycleLimit };
            }
            self.step();
            watch.stepped(self);
        }
    }

    /// Flits are in the routers but no stage, NIC or probe has anything to do until the
    /// delay lines or the timers bring something (one thread: a split fabric's parts agree
    /// on their skips at their meeting, each from [`Fabric::only_waiting`]).
    fn still(&self) -> bool {
        self.only_waiting(self.now) && self.part.parts == 1 && self.probes.is_empty()
    }

    /// Before cycle `next`: nothing moved in the cycle before it, and no NIC, timer or router
    /// stage has work, so nothing changes until the delay lines or the timers bring
    /// something.
    pub(crate) fn only_waiting(&self, next: u64) -> bool {
        // The cheap test first: under load, a move.
        self.step.last_move + 1 < next
            && self.step.nic_active.is_empty()
            && self.step.fired_list.is_empty()
            && self.routers.stages_idle()
            && self.rtl.as_ref().is_none_or(|c| c.idle())
    }

    /// Can nothing in this part ever move again: flits in the routers, none moved for
    /// [`Routers::still_cycles_for_certainty`] cycles up to `t`, and nothing due in the
    /// delay lines or the timers? (NICs that still stream wait for room only a move makes.)
    pub(crate) fn stuck_for_good(&self, t: u64, last_move: u64) -> bool {
        // An external router's state is not the model's to judge: only the watchdog's time.
        self.rtl.is_none() && !self.routers.is_empty() && t - last_move >= self.routers.still_cycles_for_certainty() && self.nothing_due()
    }

    /// Is nothing due in this part's delay lines or timers?
    pub(crate) fn nothing_due(&self) -> bool {
        self.step.timers.is_empty() && self.routers.next_due().is_none()
    }

    /// Is there still work (packets queued, flits buffered, timers)?
    pub fn busy(&self) -> bool {
        !self.idle() || !self.step.timers.is_empty()
    }

    /// The cycles the run simulated: `now`, less the cycles it went on only for probes to
    /// see the last credits come back (results never depend on whether a run is traced).
    pub fn end(&self) -> u64 {
        self.step.probe_tail_from.unwrap_or(self.now)
    }
}
