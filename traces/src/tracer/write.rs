//! Writing value changes into the batch: timestamps and clock edges, set and pulsed
//! signals, the first timestamp's dump of every value, and closing the dump
//! ([`Tracer::finish`]).

use super::Tracer;
use crate::sink::ops;
use std::io;

impl Tracer {
    /// Start cycle `t`'s timestamp, its clock's rising edge: the dump's times are half
    /// cycles (the sink scales them), `clk` high at 2t and low at 2t + 1. The cycles since
    /// the last timestamp get their edges first.
    #[inline]
    pub(super) fn time(&mut self, t: u64) {
        if let Some(p) = self.open {
            self.clock_edges(p, t);
        }
        ops::push_time(&mut self.batch, 2 * t);
        self.open = Some(t);
        self.set(self.clk, 1);
    }

    /// The falling edge of cycle `p` (the open one) and both edges of every cycle after it
    /// and before `t`.
    #[cold]
    fn clock_edges(&mut self, p: u64, t: u64) {
        ops::push_time(&mut self.batch, 2 * p + 1);
        self.set(self.clk, 0);
        for c in p + 1..t {
            ops::push_time(&mut self.batch, 2 * c);
            self.set(self.clk, 1);
            ops::push_time(&mut self.batch, 2 * c + 1);
            self.set(self.clk, 0);
        }
    }

    /// Set signal `s` to `v` at the open timestamp.
    #[inline(always)]
    pub(super) fn set(&mut self, s: u32, v: u64) {
        let s = s as usize;
        if self.last[s] != v {
            self.last[s] = v;
            if self.emit {
                ops::push_change(&mut self.batch, s, v);
            }
        }
    }

    /// Set a signal that holds its value (not 0) for this cycle only.
    #[inline(always)]
    pub(super) fn pulse(&mut self, s: u32, v: u64) {
        debug_assert!(v != 0);
        self.set(s, v);
        self.pulsed[s as usize / 64] |= 1 << (s % 64);
        self.high_now.push(s);
    }

    /// Pulses of the previous traced cycle go low unless this cycle set them again.
    pub(super) fn lows(&mut self) {
        let high = std::mem::take(&mut self.high);
        for &s in &high {
            if self.pulsed[s as usize / 64] & 1 << (s % 64) == 0 {
                self.set(s, 0);
            }
        }
        self.high = std::mem::replace(&mut self.high_now, high);
        self.high_now.clear();
        for &s in &self.high {
            self.pulsed[s as usize / 64] &= !(1 << (s % 64));
        }
    }

    /// Every signal's value (the first timestamp's dump).
    pub(super) fn dump(&mut self) {
        // The registers' values are kept apart.
        for (p, &v) in self.ivcs.iter().zip(&self.ivc_last) {
            self.last[p.occ as usize] = (v >> 2) as u64;
            self.last[p.occ as usize + 1] = (v & 3) as u64;
        }
        for (k, p) in self.ports.iter().enumerate() {
            for v in 0..self.vcs {
                self.last[p.sig as usize + 2 * v] = self.credit_last[k * self.vcs + v] as u64;
            }
        }
        for (&s, &v) in self.nic_queue.iter().zip(&self.queue_last) {
            self.last[s as usize] = v as u64;
        }
        for (s, &v) in self.last.iter().enumerate() {
            ops::push_change(&mut self.batch, s, v);
        }
    }

    /// Write what is pending and stop tracing.
    pub(super) fn close(&mut self, end: u64) -> io::Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        if !self.started {
            // Nothing happened inside the window: dump the values at its start.
            self.emit = false;
            self.time(self.opts.from);
            self.emit = true;
            self.dump();
        } else {
            // The last traced cycle's pulses go low at the timestamp after it.
            debug_assert!(self.open.is_some_and(|p| p <= end), "timestamp {:?} after the end {end}", self.open);
            self.lows();
        }
        // The last cycle's falling edge ends the dump.
        if let Some(p) = self.open {
            ops::push_time(&mut self.batch, 2 * p + 1);
            self.set(self.clk, 0);
        }
        let sink = self.sink.as_mut().expect("tracer sink");
        sink.ops(&mut self.batch)
    }

    /// Finish the dump at the end of the run (`end` = the first cycle not simulated).
    /// An error says why the file could not be written ("No space left on device"): the
    /// writer's own when it stopped, rather than the tracer's finding that it had.
    pub fn finish(mut self, end: u64) -> io::Result<()> {
        let first = match self.error.take() {
            Some(e) => Err(e),
            None => self.close(end.min(self.opts.to.saturating_add(1))),
        };
        let sink = self.sink.take().expect("tracer sink").finish();
        sink.and(first)
    }
}
