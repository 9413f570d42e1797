//! A fabric split between threads: each thread owns a range of consecutive routers with
//! everything that belongs to them (NICs, node programs, packets it created, timers, its
//! share of the scoreboard and counters) for the whole run, and only what crosses the
//! boundary passes between threads, once per round of one or two cycles:
//!
//! ```text
//!  a round, every part on its own thread:
//!    step(t) on its own routers [──► step(t + 1) if links and credits take two cycles]
//!    ──► mail for the other parts ──► barrier ──► take in the others' mail (flits and
//!    packet headers into its buffers, credits onto its return line, deliveries of its
//!    messages) ──► the next cycle, agreed by all
//! ```
//!
//! A part writes its mail into its own buffers, one set per round parity, and tells the
//! receivers at the barrier how much there is (the lengths travel in the cache line that
//! says the round is done); the receivers read it in place: copied whole into lines next
//! to the meeting's when it fits (a busy round's mostly does), else in the sender's
//! buffers (where they are is published only when that changes). A part refills a
//! parity's buffers two rounds on, when every receiver has passed the barrier in between
//! and so has read them. The receivers' read is a transfer from the sender's cache; nothing
//! else crosses between the parts' cores.
//!
//! Only for programs that allow it ([`crate::Program::splits`]: each call touches only its
//! node's state, random numbers come from a stream per node) and without probes. The
//! results are those of the whole fabric on one thread: every part runs the same global
//! cycles (the next one agreed at the barrier; a round's second cycle may be one a single
//! thread would skip, with nothing to do anywhere), a flit sent across the boundary in
//! cycle t is written into the receiver's buffer before its cycle t + 1 with the timing the
//! commit would give it (or, sent in a round's first cycle, after the receiver's t + 1: it
//! cannot be read before t + 2, and the buffer statistics are made those of a write in
//! time), a head brings a copy of its packet's header (the receiver keeps it under its own
//! packet id, translated per input VC for the flits behind it; a broadcast the routers
//! replicate gets one such copy per tree branch entering the part, each counting the
//! deliveries of its share of the tree, [`Fabric::part_reach`]), credits go onto the
//! owner's return line, and the watchdog sees movement anywhere. Each part builds the
//! whole fabric's state but touches only its own share.

use super::placement::Placement;
use super::{Ending, Fabric};
use crate::packet::Packet;
use crate::topology::Topology;
use router::{Flit, NONE, NodeId, PacketId, PortId, PortSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// What one part sends another in a round (one or two cycles).
#[derive(Debug, Default)]
pub(crate) struct Mail {
    /// Flits into the other part's input VCs (router, local VC, flit, cycle sent).
    flits: Vec<(u32, u32, Flit, u64)>,
    /// The packet headers of the head flits among them, in their order (apart, so that a
    /// flit's entry is 24 bytes: the receiver reads what the sender wrote from another
    /// core's cache, line by line).
    headers: Vec<Packet>,
    /// Credits for the other part's output VCs (global output port, VC, cycle the slot was
    /// freed).
    credits: Vec<(u32, u8, u64)>,
    /// Deliveries of the other part's messages (message, node, cycle).
    accepts: Vec<(u32, NodeId, u64)>,
}

impl Mail {
    fn with_capacity(n: usize) -> Mail {
        Mail {
            flits: Vec::with_capacity(n),
            headers: Vec::with_capacity(n),
            credits: Vec::with_capacity(n),
            accepts: Vec::with_capacity(n),
        }
    }

    fn clear(&mut self) {
        self.flits.clear();
        self.headers.clear();
        self.credits.clear();
        self.accepts.clear();
    }
}

impl Fabric {
    /// Does this part's mail of the current round carry flits?
    fn sends_flits(&self) -> bool {
        let p = &self.part;
        p.mail[p.mail_at..p.mail_at + p.parts as usize].iter().any(|m| !m.flits.is_empty())
    }

    /// Make this fabric part `k` of `parts`: it evaluates only its routers from now on.
    fn make_part(&mut self, k: usize, parts: usize) {
        // Poisoned packets and the faults' costs live with the one packet table.
        assert!(self.faults.is_none(), "a fabric with faults runs on one thread");
        let n = self.topo.nodes() as u32;
        let p = &mut self.part;
        p.parts = parts as u32;
        p.part = k as u32;
        p.chunk = n.div_ceil(parts as u32);
        // Room for a busy round from the start, so that buffers rarely move and two never
        // share a cache line in their used parts (a receiver reads one while the sender
        // fills another of the other parity).
        p.mail = (0..2 * parts).map(|_| Mail::with_capacity(256)).collect();
        p.mail_at = 0;
        p.xlat = vec![NONE; self.routers.input_vcs()];
        (p.lo, p.hi) = ((k as u32 * p.chunk).min(n), ((k as u32 + 1) * p.chunk).min(n));
        self.routers.set_part(p.lo as usize, p.hi as usize);
        self.scoreboard.set_part(k as u32, parts as u32);
    }

    /// The routers this part owns.
    pub(super) fn own(&self) -> std::ops::Range<usize> {
        self.part.lo as usize..self.part.hi as usize
    }

    /// A flit leaves for router `r` of another part, on its local VC `l`, in cycle `t`.
    #[cold]
    #[inline(never)]
    pub(super) fn mail_flit(&mut self, r: u32, l: u32, flit: Flit, t: u64) {
        let mail = &mut self.part.mail[self.part.mail_at + (r / self.part.chunk) as usize];
        if flit.is_head() {
            mail.headers.push(*self.packets.get(flit.packet));
        }
        mail.flits.push((r, l, flit, t));
        if flit.is_tail() {
            // The packet (or, for a broadcast the routers replicate, this branch of it) has
            // left this part: one of the copy's expected deliveries here.
            self.packets.delivered(flit.packet);
        }
    }

    /// A credit for output VC `vc` of port `op` (global index) of another part's router, for
    /// a slot freed in cycle `t`.
    pub(super) fn mail_credit(&mut self, op: u32, vc: u8, t: u64) {
        let p = self.routers.ports() as u32;
        self.part.mail[self.part.mail_at + (op / p / self.part.chunk) as usize].credits.push((op, vc, t));
    }

    /// This cycle's flits and credits for other parts' routers, into the mail.
    pub(super) fn post_mail(&mut self, t: u64) {
        let flits = std::mem::take(&mut self.routers.remote_flits);
        for &(x, flit) in &flits {
            self.mail_flit(x >> 7, x & 127, flit, t);
        }
        self.routers.remote_flits = flits;
        self.routers.remote_flits.clear();
        let (p, v) = (self.routers.ports() as u32, self.routers.vcs() as u32);
        let credits = std::mem::take(&mut self.routers.remote_credits);
        for &x in &credits {
            let (r, local) = (x >> 7, x & 127);
            self.mail_credit(r * p + local / v, (local % v) as u8, t);
        }
        self.routers.remote_credits = credits;
        self.routers.remote_credits.clear();
    }

    /// Take in what another part sent in the round that ended with cycle `t` (before this
    /// part's next cycle). Flits sent in cycle `t - 1` are written late, after this part's
    /// commit of cycle `t` (rounds of two cycles: see [`Fabric::two_cycle_rounds`]).
    fn take_mail(&mut self, m: &Sent<'_>, t: u64) {
        let npv = self.routers.ports() * self.routers.vcs();
        let mut headers = m.headers.iter();
        for &(r, l, mut flit, sent) in m.flits {
            let iv = r as usize * npv + l as usize;
            if flit.is_head() {
                let mut p = *headers.next().expect("a head flit in the mail without its header");
                if p.is_broadcast() {
                    // This part's copy of a broadcast the routers replicate: the deliveries
                    // below where it enters.
                    let port = l as usize / self.routers.vcs();
                    let own = self.own();
                    p.remaining = Self::part_reach(&self.topo, own, &mut self.part.reach_stack, (NodeId(r), port), p.dest(), p.header.span);
                }
                self.part.xlat[iv] = self.packets.alloc(p).0;
            }
            flit.packet = PacketId(self.part.xlat[iv]);
            self.routers.receive_flit(r as usize, l as usize, flit, sent, t);
        }
        debug_assert!(headers.next().is_none(), "a header in the mail without its head flit");
        let (p, v) = (self.routers.ports(), self.routers.vcs());
        for &(op, vc, freed) in m.credits {
            self.routers.receive_credit(op as usize / p, op as usize % p * v + vc as usize, freed);
        }
        for &(msg, node, t) in m.accepts {
            self.scoreboard.accept(msg, node, t, &self.topo);
        }
    }

    /// What a copy of a broadcast from `root` over `span` that enters router `at` on input
    /// port `in_port` (the first injection port: from the node) still has to do in the part
    /// owning routers `own` before its packet-table slot can go: the tree's nodes below that
    /// point that the part owns each eject a copy, and each branch that leaves for another
    /// part hands the packet on ([`Fabric::mail_flit`]). A walk down the same routes the
    /// routers compute; `stack` is scratch.
    pub(super) fn part_reach(
        topo: &Topology,
        own: std::ops::Range<usize>,
        stack: &mut Vec<(NodeId, usize)>,
        (at, in_port): (NodeId, usize),
        root: NodeId,
        span: u32,
    ) -> u32 {
        stack.clear();
        stack.push((at, in_port));
        let mut n = 0u32;
        while let Some((x, ip)) = stack.pop() {
            if let Some((lo, hi, size)) = topo.broadcast_subcube(x, PortId(ip as u8), span)
                && own.contains(&(lo as usize))
                && own.contains(&(hi as usize))
            {
                // A whole hypercube subtree this part owns (ranges of ids): every node but
                // the root ejects a copy.
                n += size - (ip >= topo.net_ports()) as u32;
                continue;
            }
            let ports = topo.route_broadcast(x, PortId(ip as u8), root, span).ports;
            n += ports.contains(PortSet::LOCAL) as u32;
            for p in ports.net_ports() {
                let y = topo.neighbor(x, p).expect("a broadcast tree over a missing link");
                if own.contains(&y.idx()) {
                    stack.push((y, topo.reverse_port(p)));
                } else {
                    n += 1;
                }
            }
        }
        n
    }

    /// Hand this cycle's deliveries of other parts' messages to their mail.
    fn post_accepts(&mut self) {
        let shift = self.scoreboard.part_shift();
        for (msg, node, t) in self.scoreboard.foreign.drain(..) {
            self.part.mail[self.part.mail_at + (msg >> shift) as usize].accepts.push((msg, node, t));
        }
    }

    /// May the parts meet every other cycle? When a flit that crosses a link in cycle `t`
    /// cannot be read before `t + 2` and the credit for a slot freed in `t` cannot be used
    /// before `t + 2` either, what a part sends in the first cycle of a round can wait until
    /// the end of the second: the receiver writes those flits late ([`Routers::arrive_late`]
    /// keeps the buffer statistics exact) and nothing else could have seen them.
    ///
    /// [`Routers::arrive_late`]: router::Routers::arrive_late
    fn two_cycle_rounds(&self) -> bool {
        self.spec.pipeline.link_latency >= 2 && self.spec.pipeline.credit_delay >= 1
    }

    /// The next cycle this part needs simulated after cycle `t`, if any: the next one, while
    /// its NICs have work, a stage of its routers has, or a flit moved in `t`; else the next
    /// cycle its delay lines or timers bring something (what [`Fabric::run`] skips to on one
    /// thread). Flits waiting for nothing due ever again give `u64::MAX` too: the meeting
    /// stops the clock at the watchdog's cycle then.
    fn next_needed(&self, t: u64) -> u64 {
        if !self.step.nic_active.is_empty() || (!self.routers.is_empty() && !self.only_waiting(t + 1)) {
            return t + 1;
        }
        let due = if self.routers.is_empty() { None } else { self.routers.next_due() };
        match [due, self.step.timers.next()].into_iter().flatten().min() {
            Some(at) => at.max(t + 1),
            None => u64::MAX,
        }
    }

    /// Does this part's mail of the current round carry credits?
    fn sends_credits(&self) -> bool {
        let p = &self.part;
        p.mail[p.mail_at..p.mail_at + p.parts as usize].iter().any(|m| !m.credits.is_empty())
    }
}

/// Start loading the cache lines of `v` (written by another thread) without waiting.
#[inline]
fn prefetch<T>(v: &[T]) {
    for x in v.iter().step_by((64 / std::mem::size_of::<T>().max(1)).max(1)) {
        router::prefetch(x);
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
/// which it writes and the others spin on, holding per round parity how many rounds it has
/// finished, what it reports for the last of them and how much mail it left each other part
/// (for two parts all in one cache line: a part that arrives reads another's report and
/// mail lengths with the same line transfer that tells it the round is done). Where each
/// part's mail buffers are is published apart, written only when they move. Waiting parts
/// spin, and after a while give the core away (more threads than cores must still make
/// progress).
struct Meeting {
    slots: Vec<Slot>,
    /// Per sender, receiver and round parity: where the sender's mail buffers are.
    places: Vec<Padded<[AtomicUsize; 4]>>,
    /// Per sender, receiver and round parity: a copy of a round's mail that fits, in one
    /// run of lines (the receiver then reads consecutive lines, asked for all at once,
    /// rather than one line or more in each of four buffers, and the sender leaves the
    /// places alone).
    inline: Vec<InlineMail>,
    parts: usize,
    /// Spins before yielding: none when there are more threads than cores.
    spin: u32,
    /// A part's thread panicked: the others must not wait for it.
    poisoned: AtomicBool,
}

/// A part's slot: per round parity, the words [rounds finished, the report of the last
/// (next cycle the part needs, its flits buffered, the last cycle anything moved in it, the
/// last cycle of the round it needed simulated), then per other part the lengths of its
/// mail there (flits and headers, credits and deliveries; two `u32` to a word)].
struct Slot {
    lines: [Box<[Line]>; 2],
}

#[derive(Default)]
#[repr(align(64))]
struct Line([AtomicU64; 8]);

/// The bytes of mail a round can carry in a [`InlineMail`].
const INLINE_BYTES: usize = 1024;

/// A round's mail copied whole (flits, headers, credits, deliveries, one after another;
/// every element's size is a multiple of 8 bytes, so each section stays aligned).
#[repr(C, align(64))]
struct InlineMail(std::cell::UnsafeCell<[u64; INLINE_BYTES / 8]>);

// SAFETY: written only by its sender between rounds as [`Meeting::sent`] describes, read by
// its receiver only after the acquire that saw the sender finish the round.
unsafe impl Sync for InlineMail {}

/// In a receiver's second lengths word: the mail is in the [`InlineMail`].
const INLINE_FLAG: u64 = 1 << 63;

const ROUNDS: usize = 0;
const REPORT: usize = 1;
const LENGTHS: usize = 5;

impl Slot {
    fn new(parts: usize) -> Slot {
        let lines = (LENGTHS + 2 * (parts - 1)).div_ceil(8);
        Slot { lines: [0, 1].map(|_| (0..lines).map(|_| Line::default()).collect()) }
    }

    fn word(&self, parity: usize, i: usize) -> &AtomicU64 {
        &self.lines[parity][i / 8].0[i % 8]
    }
}

/// The mail one part left another for a round, read in place.
struct Sent<'a> {
    flits: &'a [(u32, u32, Flit, u64)],
    headers: &'a [Packet],
    credits: &'a [(u32, u8, u64)],
    accepts: &'a [(u32, NodeId, u64)],
}

impl Meeting {
    fn new(parts: usize, spin: u32) -> Meeting {
        Meeting {
            slots: (0..parts).map(|_| Slot::new(parts)).collect(),
            places: (0..2 * parts * parts).map(|_| Padded(Default::default())).collect(),
            inline: (0..2 * parts * parts).map(|_| InlineMail(std::cell::UnsafeCell::new([0; INLINE_BYTES / 8]))).collect(),
            parts,
            spin,
            poisoned: AtomicBool::new(false),
        }
    }

    /// Where receiver `to`'s lengths are among sender `from`'s words.
    fn lengths_at(from: usize, to: usize) -> usize {
        LENGTHS + 2 * if to < from { to } else { to - 1 }
    }

    fn place(&self, parity: usize, from: usize, to: usize) -> &[AtomicUsize; 4] {
        &self.places[self.pair(parity, from, to)]
    }

    /// The index of sender `from`'s mail to `to` of round parity `parity`.
    fn pair(&self, parity: usize, from: usize, to: usize) -> usize {
        (parity * self.parts + from) * self.parts + to
    }

    /// Part `k` has finished round `r`, reporting `[next cycle, flits buffered, last move,
    /// last cycle needed]`, its mail for the round in `mail` (indexed by receiver); wait for
    /// every part to finish it and return the next cycle any needs, the flits buffered in
    /// all, and the maxima of the others.
    fn meet(&self, k: usize, r: u64, report: [u64; 4], mail: &[Mail]) -> (u64, u64, u64, u64) {
        let parity = (r & 1) as usize;
        let mine = &self.slots[k];
        for (i, v) in report.into_iter().enumerate() {
            mine.word(parity, REPORT + i).store(v, Ordering::Relaxed);
        }
        for (j, m) in mail.iter().enumerate().filter(|&(j, _)| j != k) {
            let len = |v: usize| u32::try_from(v).ok().filter(|&n| n < 1 << 31).expect("more than 2^31 items of mail in a round") as u64;
            let at = Self::lengths_at(k, j);
            mine.word(parity, at).store(len(m.flits.len()) | len(m.headers.len()) << 32, Ordering::Relaxed);
            let b = len(m.credits.len()) | len(m.accepts.len()) << 32;
            let sizes = [size_of_val(&m.flits[..]), size_of_val(&m.headers[..]), size_of_val(&m.credits[..]), size_of_val(&m.accepts[..])];
            if sizes.iter().sum::<usize>() <= INLINE_BYTES {
                let base = self.inline[self.pair(parity, k, j)].0.get() as *mut u8;
                let srcs = [
                    m.flits.as_ptr() as *const u8,
                    m.headers.as_ptr() as *const u8,
                    m.credits.as_ptr() as *const u8,
                    m.accepts.as_ptr() as *const u8,
                ];
                let mut off = 0;
                for (src, n) in srcs.into_iter().zip(sizes) {
                    // SAFETY: within the area (the sizes add up to at most its length); no
                    // receiver reads it now (see [`Meeting::sent`]); the source holds `n` bytes.
                    unsafe { std::ptr::copy_nonoverlapping(src, base.add(off), n) };
                    off += n;
                }
                mine.word(parity, at + 1).store(b | INLINE_FLAG, Ordering::Relaxed);
                continue;
            }
            mine.word(parity, at + 1).store(b, Ordering::Relaxed);
            let ptrs = [m.flits.as_ptr() as usize, m.headers.as_ptr() as usize, m.credits.as_ptr() as usize, m.accepts.as_ptr() as usize];
            for (a, p) in self.place(parity, k, j).iter().zip(ptrs) {
                // Written only when a buffer moved: the line stays in the receiver's cache.
                if a.load(Ordering::Relaxed) != p {
                    a.store(p, Ordering::Relaxed);
                }
            }
        }
        mine.word(parity, ROUNDS).store(r + 1, Ordering::Release);
        let (mut next, mut buffered, mut moved, mut needed) = (u64::MAX, 0, 0, 0);
        for (j, slot) in self.slots.iter().enumerate() {
            if j != k {
                let mut spins = 0u32;
                while slot.word(parity, ROUNDS).load(Ordering::Acquire) <= r {
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
            // A part writes this parity's words again only two rounds on, after every part
            // has finished the round in between, so the report is read whole here.
            let rep = |i: usize| slot.word(parity, REPORT + i).load(Ordering::Relaxed);
            next = next.min(rep(0));
            buffered += rep(1);
            moved = moved.max(rep(2));
            needed = needed.max(rep(3));
        }
        (next, buffered, moved, needed)
    }

    /// The mail part `from` left part `to` in round `r`, once both have met after it.
    ///
    /// # Safety
    /// Call only between part `to`'s return from [`Meeting::meet`] for round `r` and its next
    /// call, and drop the result before that call: the sender wrote the buffers before it
    /// finished the round (the lengths and places are read after the acquire that saw it
    /// finish), and touches them again only in round `r + 2`, which it cannot begin before
    /// part `to` has come to the meeting of round `r + 1`.
    unsafe fn sent<'a>(&self, from: usize, to: usize, r: u64) -> Sent<'a> {
        let parity = (r & 1) as usize;
        let slot = &self.slots[from];
        let at = Self::lengths_at(from, to);
        let (a, b) = (slot.word(parity, at).load(Ordering::Relaxed), slot.word(parity, at + 1).load(Ordering::Relaxed));
        if b & INLINE_FLAG != 0 {
            let base = self.inline[self.pair(parity, from, to)].0.get() as *const u8;
            let lens = [a & 0x7fff_ffff, a >> 32, b & 0x7fff_ffff, (b >> 32) & 0x7fff_ffff].map(|n| n as usize);
            let sizes = [24, size_of::<Packet>(), 16, 16];
            debug_assert_eq!(
                [size_of::<(u32, u32, Flit, u64)>(), size_of::<(u32, u8, u64)>(), size_of::<(u32, NodeId, u64)>()],
                [sizes[0], sizes[2], sizes[3]]
            );
            let total: usize = lens.iter().zip(sizes).map(|(n, s)| n * s).sum();
            // Ask for every line at once rather than one miss after another.
            for off in (0..total).step_by(64) {
                // SAFETY: within the area.
                router::prefetch(unsafe { &*base.add(off) });
            }
            // SAFETY: the sender copied that many elements of each type there, one section
            // after another, each at a multiple of 8 bytes from the 64-byte-aligned start, and
            // leaves them unchanged until its round `r + 2` (see above).
            unsafe {
                let flits = base as *const (u32, u32, Flit, u64);
                let headers = base.add(lens[0] * sizes[0]) as *const Packet;
                let credits = base.add(lens[0] * sizes[0] + lens[1] * sizes[1]) as *const (u32, u8, u64);
                let accepts = base.add(lens[0] * sizes[0] + lens[1] * sizes[1] + lens[2] * sizes[2]) as *const (u32, NodeId, u64);
                return Sent {
                    flits: std::slice::from_raw_parts(flits, lens[0]),
                    headers: std::slice::from_raw_parts(headers, lens[1]),
                    credits: std::slice::from_raw_parts(credits, lens[2]),
                    accepts: std::slice::from_raw_parts(accepts, lens[3]),
                };
            }
        }
        let place = self.place(parity, from, to);
        // SAFETY: each place is the pointer of a live `Vec` of that element type (dangling
        // and aligned when it is empty) holding at least the length sent with it, unchanged
        // until the sender's round `r + 2` (see above).
        unsafe fn part<'b, T>(p: &AtomicUsize, len: u64) -> &'b [T] {
            let len = (len & 0x7fff_ffff) as usize;
            let s = unsafe { std::slice::from_raw_parts(p.load(Ordering::Relaxed) as *const T, len) };
            // Ask for every line at once rather than one miss after another.
            prefetch(s);
            s
        }
        unsafe {
            Sent {
                flits: part(&place[0], a),
                headers: part(&place[1], a >> 32),
                credits: part(&place[2], b),
                accepts: part(&place[3], b >> 32),
            }
        }
    }
}

/// The message of a part that stops because another part panicked.
const OTHER_PANICKED: &str = "another part of the split fabric panicked";

/// Counts the parts whose threads have stopped; when its part's thread unwinds, poisons the
/// barrier and waits for every other part to stop before the part's fabric (and with it the
/// mail buffers the others read in place) is dropped.
struct PartGuard<'a> {
    meeting: &'a Meeting,
    stopped: &'a AtomicUsize,
}

impl Drop for PartGuard<'_> {
    fn drop(&mut self) {
        let panicking = std::thread::panicking();
        if panicking {
            self.meeting.poisoned.store(true, Ordering::Release);
        }
        self.stopped.fetch_add(1, Ordering::AcqRel);
        if panicking {
            // The others stop at their next meeting at the latest.
            while self.stopped.load(Ordering::Acquire) < self.meeting.parts {
                std::thread::yield_now();
            }
        }
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
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    // Each in lines of its own: every part reads the meeting's fields every round, and part 0
    // writes the cycle for the watcher every round.
    let meeting = Padded(Meeting::new(parts, if parts <= cores { 4096 } else { 0 }));
    // For the watcher: the cycle, each part's deliveries and expected deliveries, and the
    // parts that have finished.
    let now = Padded(AtomicU64::new(0));
    let counts: Vec<Padded<[AtomicU64; 2]>> = (0..parts).map(|_| Padded([AtomicU64::new(0), AtomicU64::new(0)])).collect();
    let finished = AtomicUsize::new(0);
    let stopped = AtomicUsize::new(0);
    let caller = std::thread::current();
    let placement = Placement::for_parts(parts);
    let mut done: Vec<(Fabric, Ending, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parts)
            .map(|k| {
                let (meeting, build, stopped) = (&meeting, &build, &stopped);
                let (now, counts, finished, caller, placement) = (&now, &counts, &finished, &caller, &placement);
                std::thread::Builder::new()
                    .name(format!("flitwave-part-{k}"))
                    .spawn_scoped(s, move || {
                        // Declared before the guard, so dropped after it: another part may
                        // be reading this part's mail buffers when this thread unwinds.
                        let mut part: Option<Fabric> = None;
                        let _guard = PartGuard { meeting, stopped };
                        if let Some(p) = placement {
                            p.place(k);
                        }
                        let f = part.insert(build());
                        assert!(
                            f.probes.is_empty() && f.program.splits(),
                            "a fabric is split only for programs that allow it, without probes"
                        );
                        f.make_part(k, parts);
                        let two_cycles = f.two_cycle_rounds();
                        let (w, max_cycles) = (f.spec.watchdog_cycles, f.spec.max_cycles);
                        let mut round = 0u64;
                        // The last cycle anything moved anywhere, as of the last meeting.
                        let mut last_move = 0;
                        let ending = loop {
                            // Mail goes into the buffers of the round's parity (by rounds:
                            // the same for every part, unlike cycle numbers, which may skip),
                            // which every receiver has read by now (they came to the meeting
                            // of the round in between).
                            f.part.mail_at = (round & 1) as usize * parts;
                            for m in &mut f.part.mail[f.part.mail_at..f.part.mail_at + parts] {
                                m.clear();
                            }
                            let t = f.now;
                            f.step();
                            let mut needed = t;
                            // A second cycle unless the watchdog or the cycle limit may end
                            // the run after the first (the same decision in every part). It
                            // may be one that one thread would skip, with nothing to do in
                            // any part; then it changes nothing but the clock.
                            // Nor if nothing has moved for so long that the part might be
                            // stuck for good after the first: one thread finds that at once.
                            let certain = f.routers.still_cycles_for_certainty();
                            if two_cycles && t + 1 < max_cycles && t - last_move < w && t - last_move < certain {
                                if f.next_needed(t) == t + 1 || f.sends_flits() {
                                    needed = t + 1;
                                }
                                f.step();
                            }
                            let t = f.now - 1;
                            f.post_accepts();
                            // Flits sent need the next cycle (their receiver may have found
                            // nothing due before it takes them in); credits too, while flits
                            // are anywhere (below); deliveries only count.
                            let next = if f.sends_flits() { t + 1 } else { f.next_needed(t) };
                            let (delivered, expected) = f.scoreboard.part_counts();
                            counts[k][0].store(delivered, Ordering::Relaxed);
                            counts[k][1].store(expected, Ordering::Relaxed);
                            if k == 0 {
                                now.store(t, Ordering::Relaxed);
                            }
                            // Flits buffered, and (the high half) whether anything is due in
                            // the part's delay lines or timers: summed over the parts.
                            let pending = !f.nothing_due();
                            // Bits 48 to 55: whether the part was asked to stop
                            // ([`Fabric::stop_when`]), summed like the rest, so that every part
                            // stops in the same round; bit 56 up: whether it sends credits.
                            let flags = (f.routers.flits > 0) as u64
                                | (pending as u64) << 32
                                | (f.stop_asked() as u64) << 48
                                | (f.sends_credits() as u64) << 56;
                            let report = [next, flags, f.step.last_move, needed];
                            let (gnext, gbuf, moved, gneeded) =
                                meeting.meet(k, round, report, &f.part.mail[f.part.mail_at..f.part.mail_at + parts]);
                            for j in (0..parts).filter(|&j| j != k) {
                                // SAFETY: between this part's meeting of `round` and its next.
                                let m = unsafe { meeting.sent(j, k, round) };
                                f.take_mail(&m, t);
                            }
                            last_move = moved;
                            round += 1;
                            let (gbuf, gpending, gstop, gcredits) =
                                (gbuf & 0xffff_ffff, (gbuf >> 32) & 0xffff, (gbuf >> 48) & 0xff, gbuf >> 56);
                            if gstop > 0 {
                                break Ending::Interrupted;
                            }
                            if gbuf > 0 && (t - last_move >= w || (gpending == 0 && t - last_move >= certain)) {
                                break Ending::Deadlock;
                            }
                            // Flits somewhere, waiting in every part for nothing due before
                            // the watchdog's cycle: on to it (one thread skips there too).
                            // Credits sent to a part that found nothing due: the next cycle.
                            let gnext = match (gbuf > 0, gcredits > 0) {
                                (false, _) => gnext,
                                (true, false) => gnext.min(last_move.saturating_add(w)),
                                (true, true) => gnext.min(t + 1),
                            };
                            if gnext == u64::MAX {
                                // The clock as one thread would leave it.
                                f.now = gneeded + 1;
                                break Ending::Quiescent;
                            }
                            if gnext >= max_cycles {
                                // Stopped at the limit, not at the next timer beyond it.
                                f.now = max_cycles;
                                break Ending::CycleLimit;
                            }
                            f.now = gnext;
                        };
                        finished.fetch_add(1, Ordering::Release);
                        caller.unpark();
                        (part.take().expect("the part's fabric"), ending, last_move)
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
    for (mut p, _, _) in done {
        let own = p.own();
        f.routers.copy_routers_from(&mut p.routers, own.clone());
        f.nics.copy_nodes_from(&p.nics, own.clone());
        f.counters.join(&p.counters);
        f.latencies.join(&p.latencies);
        f.measure.join(&p.measure); // measure:
        f.packets.join_counts(&p.packets);
        f.now = f.now.max(p.now);
        f.scoreboard.join(p.scoreboard);
        f.program.join(p.program);
    }
    f.step.last_move = last_move;
    let n = f.topo.nodes();
    f.routers.set_part(0, n);
    f.counters.flit_hops = f.routers.hops;
    f.counters.link_transmissions = f.routers.tails;
    f.part = super::Part::whole(n);
    if ending == Ending::Deadlock {
        f.deadlock = Some(f.find_deadlock(f.now - 1));
    }
    (f, ending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    /// [`Fabric::part_reach`] on hypercube trees against a count from the tree's definition
    /// (Bertsekas et al. §2: a node reached across dimension i forwards on the dimensions of
    /// the span below i, so a node's parent flips the lowest bit in which it differs from the
    /// root): the nodes below the entry whose path from it stays in the part, and the edges
    /// from those to nodes outside it.
    #[test]
    fn part_reach_counts_a_copy_share_of_a_hypercube_tree() {
        let d = 5;
        let topo = Topology::new(TopologyKind::Hypercube, &[d]);
        let parent = |x: u32, root: u32| x ^ (1 << (x ^ root).trailing_zeros());
        let mut stack = Vec::new();
        for span in [0b11111u32, 0b10110, 0b00111, 0b01000] {
            for root in 0..32u32 {
                let tree: Vec<u32> = (0..32u32).filter(|x| (x ^ root) & !span == 0).collect();
                for own in [0..16, 16..32, 0..11, 11..22, 22..32, 5..27, 0..32] {
                    for &y in tree.iter().filter(|y| own.contains(&(**y as usize))) {
                        // Is z below y with every node from y to z in the part?
                        let below_within = |mut z: u32| loop {
                            if !own.contains(&(z as usize)) {
                                return false;
                            }
                            if z == y {
                                return true;
                            }
                            if z == root {
                                return false;
                            }
                            z = parent(z, root);
                        };
                        let deliveries = tree.iter().filter(|&&z| z != root && below_within(z)).count();
                        let crossings =
                            tree.iter().filter(|&&z| z != root && !own.contains(&(z as usize)) && below_within(parent(z, root))).count();
                        let in_port = if y == root { d as usize } else { (y ^ root).trailing_zeros() as usize };
                        let got = Fabric::part_reach(&topo, own.clone(), &mut stack, (NodeId(y), in_port), NodeId(root), span);
                        assert_eq!(
                            got as usize,
                            deliveries + crossings,
                            "span {span:05b} root {root} part {own:?} entry {y}: {deliveries} deliveries + {crossings} crossings"
                        );
                    }
                }
            }
        }
    }
}
