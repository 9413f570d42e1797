//! A fabric split between threads: each thread owns a range of consecutive routers with
//! everything that belongs to them (NICs, node programs, packets it created, timers, its
//! share of the scoreboard and counters) for the whole run, and only what crosses the
//! boundary passes between threads, once per cycle:
//!
//! ```text
//!  cycle t, every part on its own thread:
//!    take in the mail of cycle t-1 (flits and packet headers into its buffers, credits onto
//!    its return line, deliveries of its messages) ──► step(t) on its own routers
//!    ──► mail for the other parts ──► barrier ──► the next cycle, agreed by all
//! ```
//!
//! Only for programs that allow it ([`crate::Program::splits`]: each call touches only its
//! node's state, random numbers come from a stream per node) and without probes. The
//! results are those of the whole fabric on one thread: every part runs the same global
//! cycles (the next one agreed at the barrier), a flit sent across the boundary in cycle t
//! is written into the receiver's buffer before its cycle t + 1 with the timing the
//! commit would give it, a head brings a copy of its packet's header (the receiver keeps it
//! under its own packet id, translated per input VC for the flits behind it), credits go
//! onto the owner's return line, and the watchdog sees movement anywhere. Each part builds
//! the whole fabric's state but touches only its own share.

use super::{Ending, Fabric};
use crate::packet::Packet;
use router::{Flit, NONE, NodeId, PacketId};
use std::cmp::Reverse;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// What one part sends another in a cycle.
#[derive(Debug, Default)]
pub(crate) struct Mail {
    /// Flits into the other part's input VCs (router, local VC, flit), with the packet's
    /// header when the flit is a head.
    flits: Vec<(u32, u32, Flit, Option<Packet>)>,
    /// Credits for the other part's output VCs (global output port, VC).
    credits: Vec<(u32, u8)>,
    /// Deliveries of the other part's messages (message, node, cycle).
    accepts: Vec<(u32, NodeId, u64)>,
}

impl Fabric {
    /// Make this fabric part `k` of `parts`: it evaluates only its routers from now on.
    fn make_part(&mut self, k: usize, parts: usize) {
        let n = self.topo.nodes() as u32;
        self.parts = parts as u32;
        self.part = k as u32;
        self.chunk = n.div_ceil(parts as u32);
        self.mail = (0..parts).map(|_| Mail::default()).collect();
        self.xlat = vec![NONE; self.routers.inputs.ctl.len()];
        (self.lo, self.hi) = ((k as u32 * self.chunk).min(n), ((k as u32 + 1) * self.chunk).min(n));
        let own = self.own();
        self.active.retain(|&r| own.contains(&(r as usize)));
        for (r, a) in self.in_active.iter_mut().enumerate() {
            *a = own.contains(&r);
        }
        self.scoreboard.set_part(k as u32);
    }

    /// The routers this part owns.
    fn own(&self) -> std::ops::Range<usize> {
        self.lo as usize..self.hi as usize
    }

    /// A flit leaves for router `r` of another part, on its local VC `l`.
    #[cold]
    #[inline(never)]
    pub(super) fn mail_flit(&mut self, r: u32, l: u32, flit: Flit) {
        let header = flit.is_head().then(|| *self.packets.get(flit.packet));
        // A broadcast replicated by the routers would be delivered in several parts.
        assert!(!header.is_some_and(|p| p.is_broadcast()), "a router-forwarded broadcast crossed between parts of a split fabric");
        self.mail[(r / self.chunk) as usize].flits.push((r, l, flit, header));
        if flit.is_tail() {
            // The packet has left this part: its copy here is done.
            self.packets.delivered(flit.packet);
        }
    }

    /// The commit's credits for the slots freed in cycle `t`, on a split fabric: onto this
    /// part's return lines, or into the mail of the part that owns the upstream port.
    #[inline(never)]
    pub(super) fn credits_split(&mut self, t: u64) {
        let p = self.routers.ports() as u32;
        let own = self.lo * p..self.hi * p;
        for f in self.outbox.freed.drain(..) {
            let op = self.up[f.in_port as usize];
            if own.contains(&op) {
                self.routers.credit_freed(op as usize, f.vc, t);
            } else {
                self.mail[(op / p / self.chunk) as usize].credits.push((op, f.vc));
            }
        }
    }

    /// Take in what another part sent in cycle `tp` (before this part's cycle `tp + 1`).
    fn take_mail(&mut self, m: &mut Mail, tp: u64) {
        let lat = self.spec.pipeline.link_latency as u64;
        let npv = self.routers.ports() * self.routers.vcs();
        for (r, l, mut flit, header) in m.flits.drain(..) {
            let iv = r as usize * npv + l as usize;
            if let Some(p) = header {
                self.xlat[iv] = self.packets.alloc(p).0;
            }
            flit.packet = PacketId(self.xlat[iv]);
            self.routers.arrive_at(r as usize, l as usize, flit, tp, tp + lat);
            self.activate(r as usize);
        }
        for (op, vc) in m.credits.drain(..) {
            self.routers.credit_freed(op as usize, vc, tp);
        }
        for (msg, node, t) in m.accepts.drain(..) {
            self.scoreboard.accept(msg, node, t, &self.topo);
        }
    }

    /// Hand this cycle's deliveries of other parts' messages to their mail.
    fn post_accepts(&mut self) {
        let shift = crate::scoreboard::PART_SHIFT;
        for (msg, node, t) in self.scoreboard.foreign.drain(..) {
            self.mail[(msg >> shift) as usize].accepts.push((msg, node, t));
        }
    }

    /// The next cycle this part needs simulated, if any.
    fn next_needed(&self, t: u64) -> u64 {
        if !self.active.is_empty() {
            return t + 1;
        }
        match self.timers.peek() {
            Some(&Reverse((at, _, _))) => at.max(t + 1),
            None => u64::MAX,
        }
    }
}

/// A value alone in its cache lines (two, for adjacent-line prefetch), so that parts
/// writing their own entries do not slow each other.
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Where the parts meet at the end of every round (a barrier): each part has its own slot,
/// which it writes and the others spin on, holding how many rounds it has finished and,
/// by the round's parity, what it reports for it. Waiting parts spin, and after a while give
/// the core away (more threads than cores must still make progress).
struct Meeting {
    slots: Vec<Padded<Slot>>,
    /// Spins before yielding: none when there are more threads than cores.
    spin: u32,
    /// A part's thread panicked: the others must not wait for it.
    poisoned: AtomicBool,
}

#[derive(Default)]
struct Slot {
    rounds: AtomicU64,
    /// Per round parity: the next cycle this part needs, its flits buffered, whether
    /// anything moved in it.
    report: [[AtomicU64; 3]; 2],
}

/// The message of a part that stops because another part panicked.
const OTHER_PANICKED: &str = "another part of the split fabric panicked";

/// Poisons the barrier when its part's thread unwinds.
struct PoisonOnPanic<'a>(&'a AtomicBool);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

impl Meeting {
    /// Part `k` has finished round `r`, reporting `[next cycle, flits buffered, moved]`; wait
    /// for every part to finish it and return the next cycle any needs, the flits buffered
    /// in all and whether anything moved anywhere.
    fn meet(&self, k: usize, r: u64, report: [u64; 3]) -> (u64, u64, bool) {
        let parity = (r & 1) as usize;
        let mine = &self.slots[k];
        for (a, v) in mine.report[parity].iter().zip(report) {
            a.store(v, Ordering::Relaxed);
        }
        mine.rounds.store(r + 1, Ordering::Release);
        let (mut next, mut buffered, mut moved) = (u64::MAX, 0, false);
        for (j, slot) in self.slots.iter().enumerate() {
            if j != k {
                let mut spins = 0u32;
                while slot.rounds.load(Ordering::Acquire) <= r {
                    if self.poisoned.load(Ordering::Acquire) {
                        panic!("{OTHER_PANICKED}");
                    }
                    if spins < self.spin {
                        spins += 1;
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
            // A part writes this parity's report again only two rounds on, after every
            // part has finished the round in between, so it is read whole here.
            let rep = &slot.report[parity];
            next = next.min(rep[0].load(Ordering::Relaxed));
            buffered += rep[1].load(Ordering::Relaxed);
            moved |= rep[2].load(Ordering::Relaxed) != 0;
        }
        (next, buffered, moved)
    }
}

/// How far a split run has got, for a progress display: the cycle being simulated, and the
/// deliveries made and expected so far (as [`crate::Scoreboard::counts`] gives them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub now: u64,
    pub deliveries: u64,
    pub expected: u64,
}

/// Run a fabric split into `parts` parts, one thread each (`build()` makes a whole fabric;
/// each thread builds its own and keeps its share), and join the parts into one fabric to
/// report on (counters, statistics, scoreboard, final router state); it is not to be run
/// further. Results are those of the whole fabric run on one thread.
pub fn run_split(parts: usize, build: impl Fn() -> Fabric + Sync) -> (Fabric, Ending) {
    run_split_watched(parts, build, Duration::MAX, |_| {})
}

/// [`run_split`], calling `watch` on the calling thread about every `every` while the parts
/// run (watching never changes a result).
pub fn run_split_watched(
    parts: usize,
    build: impl Fn() -> Fabric + Sync,
    every: Duration,
    mut watch: impl FnMut(Progress),
) -> (Fabric, Ending) {
    // Mailboxes by the parity of the round (cycles simulated so far: the same for every
    // part, unlike cycle numbers, which may skip), sender and receiver.
    let boxes: Vec<Padded<Mutex<Mail>>> = (0..2 * parts * parts).map(|_| Padded(Mutex::new(Mail::default()))).collect();
    let mb = |parity: u64, from: usize, to: usize| (parity as usize * parts + from) * parts + to;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let meeting = Meeting {
        slots: (0..parts).map(|_| Padded(Slot::default())).collect(),
        spin: if parts <= cores { 4096 } else { 0 },
        poisoned: AtomicBool::new(false),
    };
    // For the watcher: the cycle, each part's deliveries and expected deliveries, and the
    // parts that have finished.
    let now = AtomicU64::new(0);
    let counts: Vec<Padded<[AtomicU64; 2]>> = (0..parts).map(|_| Padded([AtomicU64::new(0), AtomicU64::new(0)])).collect();
    let finished = AtomicUsize::new(0);
    let caller = std::thread::current();
    let mut done: Vec<(Fabric, Ending, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parts)
            .map(|k| {
                let (boxes, meeting, build) = (&boxes, &meeting, &build);
                let (now, counts, finished, caller) = (&now, &counts, &finished, &caller);
                std::thread::Builder::new()
                    .name(format!("flitwave-part-{k}"))
                    .spawn_scoped(s, move || {
                        let _poison = PoisonOnPanic(&meeting.poisoned);
                        let mut f = build();
                        assert!(
                            f.probes.is_empty() && f.program.splits(),
                            "a fabric is split only for programs that allow it, without probes"
                        );
                        f.make_part(k, parts);
                        let mut prev: Option<u64> = None;
                        let mut round = 0u64;
                        let mut last_move = 0;
                        let ending = loop {
                            let t = f.now;
                            if let Some(tp) = prev {
                                for j in (0..parts).filter(|&j| j != k) {
                                    let mut m =
                                        boxes[mb(round.wrapping_sub(1) & 1, j, k)].lock().unwrap_or_else(|_| panic!("{OTHER_PANICKED}"));
                                    f.take_mail(&mut m, tp);
                                }
                            }
                            f.step();
                            f.post_accepts();
                            // Flits sent need the next cycle; credits and deliveries are taken
                            // in whenever the receiver next runs (or at the end).
                            let mut sent = false;
                            for j in (0..parts).filter(|&j| j != k) {
                                sent |= !f.mail[j].flits.is_empty();
                                std::mem::swap(
                                    &mut f.mail[j],
                                    &mut *boxes[mb(round & 1, k, j)].lock().unwrap_or_else(|_| panic!("{OTHER_PANICKED}")),
                                );
                            }
                            let next = if sent { t + 1 } else { f.next_needed(t) };
                            let (delivered, expected) = f.scoreboard.part_counts();
                            counts[k][0].store(delivered, Ordering::Relaxed);
                            counts[k][1].store(expected, Ordering::Relaxed);
                            if k == 0 {
                                now.store(t, Ordering::Relaxed);
                            }
                            let (gnext, gbuf, moved) = meeting.meet(k, round, [next, f.routers.buffered, (f.last_move == t) as u64]);
                            if moved {
                                last_move = t;
                            }
                            prev = Some(t);
                            round += 1;
                            if gbuf > 0 && t - last_move >= f.spec.watchdog_cycles {
                                break Ending::Deadlock;
                            }
                            if gnext == u64::MAX {
                                break Ending::Quiescent;
                            }
                            if gnext >= f.spec.max_cycles {
                                f.now = gnext;
                                break Ending::CycleLimit;
                            }
                            f.now = gnext;
                        };
                        // What the others sent in the last cycle.
                        let t = prev.expect("at least one cycle");
                        for j in (0..parts).filter(|&j| j != k) {
                            let mut m = boxes[mb(round.wrapping_sub(1) & 1, j, k)].lock().unwrap_or_else(|_| panic!("{OTHER_PANICKED}"));
                            f.take_mail(&mut m, t);
                        }
                        finished.fetch_add(1, Ordering::Release);
                        caller.unpark();
                        (f, ending, last_move)
                    })
                    .expect("cannot start a simulation thread")
            })
            .collect();
        if every != Duration::MAX {
            while finished.load(Ordering::Acquire) < parts && handles.iter().all(|h| !h.is_finished()) {
                std::thread::park_timeout(every);
                let (deliveries, expected) =
                    counts.iter().fold((0, 0), |(d, e), c| (d + c[0].load(Ordering::Relaxed), e + c[1].load(Ordering::Relaxed)));
                watch(Progress { now: now.load(Ordering::Relaxed), deliveries, expected });
            }
        }
        let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        // Re-raise the panic that stopped the run, not the others' reaction to it.
        let is_echo = |e: &Box<dyn std::any::Any + Send>| e.downcast_ref::<String>().is_some_and(|m| m == OTHER_PANICKED);
        if let Some(i) =
            results.iter().position(|r| r.as_ref().is_err_and(|e| !is_echo(e))).or_else(|| results.iter().position(|r| r.is_err()))
        {
            let Some(Err(e)) = results.into_iter().nth(i) else { unreachable!() };
            std::panic::resume_unwind(e);
        }
        results.into_iter().map(|r| r.unwrap_or_else(|_| unreachable!())).collect()
    });
    let (mut f, ending, last_move) = done.remove(0);
    let np = f.routers.ports();
    for (p, _, _) in done {
        let own = p.own();
        f.routers.copy_routers_from(&p.routers, own.clone());
        f.nics.copy_nodes_from(&p.nics, own.clone());
        for op in own.start * np..own.end * np {
            f.links[op].flits = p.links[op].flits;
        }
        f.counters.join(&p.counters);
        f.latencies.join(&p.latencies);
        f.packets.join_counts(&p.packets);
        f.now = f.now.max(p.now);
        f.scoreboard.join(p.scoreboard);
        f.program.join(p.program);
    }
    f.last_move = last_move;
    (f.part, f.parts, f.chunk, f.lo, f.hi) = (0, 1, f.topo.nodes() as u32, 0, f.topo.nodes() as u32);
    f.mail.clear();
    f.xlat = Vec::new();
    if ending == Ending::Deadlock {
        f.deadlock = Some(f.find_deadlock(f.now - 1));
    }
    (f, ending)
}
