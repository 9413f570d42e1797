//! Measurement artefact, not part of flitwave: benchmark (b)'s lean model (`lean_b.rs`, same
//! directory) rewritten so that a cycle costs in proportion to what happens in it (flit
//! moves, heads routed, grants, credits, injections) instead of routers x ports x VCs. Same
//! model, same random streams, same arbitration order: for the same arguments it prints the
//! same cycles, hops, delivered and average latency as lean_b (checked, see below).
//!
//!     rustc --edition 2024 -O docs/experiments/event_b.rs -o /tmp/event_b && /tmp/event_b 100000 2
//!
//! It also keeps, on every run, the statistics flitwave keeps (see "Statistics" below) and
//! prints them on a `stats:` line after the summary; `--cfg nostats` builds it without them,
//! for comparison.
//!
//! Arguments: cycles (default 100000), threads (default 2), and optionally the window W (1 or
//! 2, default 2 with threads, cycles between barriers). `EVENT_B_SUMS=1` adds a line with the
//! latency sum; built with `--cfg trace` that line also carries an order-independent hash of
//! every VC and switch grant (cycle, router, output, VC, head/tail), for comparison with a
//! copy of lean_b given the same two hash lines.
//!
//! How it differs from lean_b (which visits every router every cycle and re-derives RC, VA
//! requests and SA requests by scanning its VCs):
//!
//! - Event wheel. Everything that crosses a link is known two cycles ahead (link 2, credit
//!   1 + 1), so flits and credits sent in cycle t are events of cycle t + 2 in a 4-slot
//!   wheel of fixed arrays. A flit enters the downstream buffer when it becomes ready, so
//!   "front flit ready" is "buffer not empty". A head reaching the front of an idle VC is
//!   routed then and becomes a VA request the next cycle (an event); a VC granted an output
//!   VC may bid in SA the next cycle (an event). Nothing is scanned.
//! - Incremental masks. Per router and output: `want` (routed VCs waiting for an output VC),
//!   `req` (VCs that may bid: output VC held, flit buffered, credit), `outs` (outputs with
//!   requests). Per thread, u64 masks of routers (N = 64): VA to try (only when a request
//!   appeared or an output VC was released: VA can only grant then), SA requests, packets
//!   queued; plus a wheel of u64 masks for the sources' next packet times, so a source is
//!   visited only in the cycle its packet is due (same random draws in the same order).
//! - SA in two passes: decide per router (outputs with requests only, lean_b's order: NIC
//!   output, then t % 4, ...; an input port read once), then traverse the grant list, with
//!   credit and flit emission written unconditionally into the fixed arrays and counted
//!   only when real (no credit from the NIC port, no flit for an ejection).
//! - Compact state. A flit is a u32 of head, tail, destination and birth cycle mod 2^24 (no
//!   packet table, so no packet limit: lean_b 1000000 1 stops on `npk < CAP`; latency exact
//!   while below 2^24 cycles; with statistics, source and birth mod 2^18, see below). A VC keeps at most three packet descriptors (8 flits of
//!   4-flit packets) and the front flit's index, not flits: 24 B, 320 B a router, 20 KB the
//!   mesh.
//! - Threads: lean_b's split by rows, per-thread random streams and packet creation, so the
//!   results equal lean_b's for the same thread count. Since every effect across the split
//!   has a delay of 2 cycles, the threads synchronise once per window of 2 cycles, by
//!   per-thread progress counters on their own cache lines (which also carry the created
//!   and delivered counts for the drain test) and per-window mailboxes with inline arrays.
//!
//! Checked (script comparing with lean_b and a traced copy of it): cycles, hops, delivered,
//! latency sum and grant hash equal for cycles 0, 1, 7, 100, 1000, 5000, 20000, 100000 at 1,
//! 2 (W 1 and 2) and 4 threads (4 up to 5000 cycles), and at 1,000,000 cycles for 1 and 2
//! threads (1 thread against lean_b with CAP 2^24, as lean_b itself stops there).
//!
//! Measured on the 2-core build machine (2026-11-26), both built with `rustc --edition 2024
//! -O`, interleaved lean 1t, event 1t, lean 2t, event 2t, each run as `/usr/bin/time -f %e
//! /tmp/lean_b 100000 1` etc.; `%e` has two decimals, so the programs' own wall time is
//! given too. 100,000 cycles, 11 rounds; 1,000,000 cycles, 3 rounds (lean_b 1 thread with
//! CAP 2^24 there, same code otherwise):
//!
//! | run | 100k `%e` best / median | 100k wall best / median | 1M wall best / median |
//! |---|---|---|---|
//! | lean_b, 1 thread  | 0.26 / 0.26 s | 0.260 / 0.266 s | 2.638 / 2.676 s |
//! | event_b, 1 thread | 0.08 / 0.08 s | 0.084 / 0.085 s | 0.853 / 0.853 s |
//! | lean_b, 2 threads | 0.16 / 0.16 s | 0.159 / 0.164 s | 1.620 / 1.634 s |
//! | event_b, 2 threads | 0.05 / 0.06 s | 0.057 / 0.060 s | 0.591 / 0.591 s |
//!
//! So 3.1x lean_b on one thread and 2.8x on two (1.17 M cycles/s at 1 thread, 1.7 M at 2).
//! An earlier, noisier round (another load on the host) gave 0.266 / 0.086 / 0.209 / 0.077 s
//! best at 100k. One thread spends about 2,250 TSC ticks a cycle: switch allocation 1,350
//! (decide 530, traverse 820), arriving flits 330, credits 100, VC events 150, VA 145,
//! injection 110, traffic 90. Two threads: each about 1,360 ticks of work a cycle (20 % over
//! half, the cache lines crossing between the cores) plus 170 waiting.
//!
//! What paid (1 thread, 100k cycles, wall): the first event design (wheel, masks, lists,
//! Vec events) 0.148 s against lean_b's 0.27; visiting only outputs with requests 0.134;
//! fixed event arrays with writes counted instead of branched (credit from the NIC port,
//! flit of an ejection, req/outs clearing) 0.100; separate VA and SA event lists and a route
//! table 3 %; packet-descriptor VCs 1.5 %; SA split into decide and traverse 1 %. Two
//! threads, 1M cycles, best: a barrier per 2 cycles instead of per cycle (0.729 -> 0.678 s
//! with lean_b's barrier), progress counters on own cache lines instead of a shared counter
//! and padded mailboxes (0.711 -> 0.649 s; per cycle 0.708 s), per-window inline mailboxes
//! instead of per-cycle Vecs (0.920 -> 0.775 s, interleaved in a noisy hour).
//!
//! What did not: storing a flit in the downstream buffer when sent, with its ready cycle, so
//! that only flits reaching an empty VC need an event (9 of 34 arrivals a cycle): 0.134 ->
//! 0.157 s, the work done inside the branchy SA loop costs more than a tight event loop;
//! branch-free tail handling, VC push/pop and arrival handling (each 5-15 % slower: those
//! branches predict well); a branch-free SA decide over all five outputs (20 % slower); a
//! one-output fast path, a single-thread specialisation without the mailbox tests, dropping
//! the VA-grant time from the VC (no change); VCs aligned to 16 or 64 bytes (3 % slower). Not
//! tried: credits as timestamps instead of events (the credit loop is only ~4 % of a cycle).
//!
//! # Statistics
//!
//! Kept on every run (unless built with `--cfg nostats`), each thread for its own routers and
//! for the packets it creates and ejects, merged in `main` after the timed part:
//!
//! - Per input VC (all 10 of every router, the NIC port's included): the occupancy histogram
//!   (cycles with k = 0..=8 flits, occupancy taken at the end of a cycle, so every VC's bins
//!   sum to the cycles run), the maximum occupancy (the highest nonempty bin, so also taken
//!   at the end of a cycle: a flit may arrive and the front one leave within a cycle, a peak
//!   one higher within the cycle is not seen), credit-stall cycles (front flit ready,
//!   output VC held since an earlier cycle, no credit: could not bid) and arbitration-stall
//!   cycles (bid in switch allocation and lost, to another VC or because its input port was
//!   granted to another VC).
//! - Per output VC (so per link): flits sent; the NIC output's are the ejected flits.
//! - Latency (creation to the tail's ejection): an exact histogram, hence p99 and max.
//! - Scoreboard: at each tail ejection, the destination must be the ejecting router and the
//!   packet (source, birth cycle) not delivered before; at the end, missing = created -
//!   first deliveries, duplicates, misrouted (all must be 0).
//! - Per node: the longest source queue (packets, the one being injected included).
//!
//! `/tmp/event_b 100000 1` prints, after the summary line:
//!
//!     stats: latency p99 58 max 82, hist total 64026880, link flits 3420920 (+640816 ejected), stalls credit 58 arbitration 522657, max occupancy 8, max NIC queue 4, missing 0 duplicate 0 misrouted 0
//!
//! (hist total: all bins of all 640 VCs, 640 x cycles; stalls: summed over the VCs.)
//!
//! How, in the event style (no per-cycle scan):
//!
//! - The per-VC quantities are sums of signed cycle numbers (wrapping u32), kept in the VC
//!   (the same cache lines): a state that begins in cycle a and ends before cycle b adds b - a, as
//!   -a when it begins and +b when it ends; at the stop (cycle T) the states still open get
//!   +T. Occupancy: the VC keeps A[k] = cycles with more than k flits: a push from k flits
//!   does A[k] -= t, a pop to k flits A[k] += t, so one add per flit move; bin k = A[k-1] -
//!   A[k] (A[-1] = T). Bids: -t when a VC enters its output's request mask (`refresh`, only
//!   if not already in it), +(t+1) when it leaves it (traversal, `!keep`, branch-free);
//!   lost = cycles bid - flits sent from the VC, and the flits sent from a VC are derived at
//!   the end from the flits sent into it (the upstream output VC's count, or the packets
//!   created at the NIC) minus those left, so SA itself does nothing.
//! - Credit stalls have two beginnings: a VC refreshed (flit arrived, output VC granted,
//!   injection) without a credit: a mask bit in the router (`cst`) and -t; or the VC's own
//!   flit took the last credit and left a flit behind: the traversal only stores, per
//!   output VC, the cycle of its last flit (`zt`, NONE after a tail). Both end when the
//!   credit comes (credits 0 -> 1, already a branch): +t, or t - zt - 1 if the owner has a
//!   flit and no `cst` bit (it cannot have emptied in between without a refresh stall).
//! - Link flits: an increment per traversal, in the router (the same line as `zt`).
//! - Ejections are appended branch-free to a list during traversal (the tail ejections are
//!   1.6 a cycle among ~40 grants), then processed: latency histogram, misroute test,
//!   scoreboard. The flit carries its source in bits 8..14 and the birth cycle mod 2^18
//!   (latency exact below 2^18 = 262,144 cycles); the full birth is t - latency. The
//!   scoreboard (per thread, per source, 128 words of 32 births tagged with birth / 32,
//!   64 KB) is a window of 4096 cycles: a word is reset when a newer birth maps to it, a
//!   delivery older than its word is counted as `late` (inconclusive; asserted 0). A packet
//!   first delivered on two threads (then one misrouted) shows as created < first
//!   deliveries, counted as a duplicate. Sums of a hash of (source, birth) over created
//!   packets and first deliveries must be equal (no delivered packet was never created).
//! - Creation: source-queue maximum, per-node packets created and the hash.
//!
//! Checked. At the end of every run (after the timed part), asserted: each VC's bins within
//! 0..=T and summing to T (T = cycles printed), all bins = 640 T, credit stalls and bids
//! <= T, link flits = hops and ejected flits = 4 x delivered, latency histogram count =
//! delivered and its sum = the latency sum (so the mean is the printed average), created
//! = delivered, scoreboard 0 / 0 / 0 and late 0, hashes equal. `EVENT_B_CHECK=1` adds the
//! independent check: the thread scans all its VCs three times a cycle the straightforward
//! way (before VA: which VCs may bid from their len, ovc and credits, which are credit-
//! stalled; after traversal: which VCs lost a flit, and on which output, so which bidders
//! lost; end of cycle: occupancy into a histogram and the flit-cycle sum), asserts the
//! request masks and `cst` bits agree with it each cycle, and at the end compares every
//! VC's histogram, credit and arbitration stalls, every link and the flit-cycles (the
//! histograms' weighted sum) with the event values: equal for cycles 0, 1, 7, 100, 1000,
//! 20000, 100000 and 1,000,000 at 1 and 2 threads, 100, 5000 and 100000 at 2 threads with
//! W 1, 1000 and 5000 at 4 threads, and, in copies with
//! the load raised to 0.06, 0.1 and 0.14 packets/node/cycle (saturated: 10^5 credit
//! stalls), for 2000-3000 cycles at 1, 2 (W 1 and 2) and 4 threads. Copies with a fault
//! injected (a packet ejected twice, one not ejected, one at the wrong router) print
//! duplicate 1, missing 1, misrouted 1. The summary line (less the wall time and rates) and
//! the `EVENT_B_SUMS` line are the unmodified program's, with and without statistics, for
//! 1000, 20000 and 100000 cycles at 1 and 2 threads, 7 at 1 and 0 at 2, and the `--cfg
//! trace` grant hash too, for 0, 1, 7, 100, 1000, 5000, 20000 and 100000 cycles at 1, 2 (W
//! 1 and 2) and 4 threads (4 up to 5000).
//!
//! Cost, measured on the 2-core build machine (2026-11-26), interleaved: the unmodified
//! event_b (`orig`), this file with `--cfg nostats` and this file, each 1 then 2 threads,
//! run as `/usr/bin/time -f %e /tmp/event_b 100000 1` etc. (built with `rustc --edition
//! 2024 -O [--cfg nostats] docs/experiments/event_b.rs -o ...`); 11 rounds at 100,000
//! cycles, 3 at 1,000,000. The host ran about 10 % slower than for the table above (orig
//! 0.093 s against 0.084 then).
//!
//! | run | 100k `%e` best / median | 100k wall best / median | 1M wall best / median |
//! |---|---|---|---|
//! | orig, 1 thread | 0.09 / 0.09 s | 0.093 / 0.094 s | 0.919 / 0.922 s |
//! | nostats, 1 thread | 0.09 / 0.09 s | 0.093 / 0.094 s | 0.899 / 0.908 s |
//! | with statistics, 1 thread | 0.09 / 0.10 s | 0.098 / 0.100 s | 0.954 / 0.995 s |
//! | orig, 2 threads | 0.06 / 0.06 s | 0.062 / 0.068 s | 0.608 / 0.616 s |
//! | nostats, 2 threads | 0.06 / 0.06 s | 0.063 / 0.066 s | 0.608 / 0.626 s |
//! | with statistics, 2 threads | 0.06 / 0.07 s | 0.065 / 0.070 s | 0.643 / 0.646 s |
//!
//! So the statistics cost about 5-6 % on one thread (best and median, 100k and 1M) and 3-6
//! % on two (6 % at 1M), about 50 ns a cycle on one thread: 1.5 ns per flit-hop. Where (1 thread, 100k,
//! taking each part out in turn, +-1 ms): ejection processing (latency histogram,
//! scoreboard, hash; ~20 ns a tail) 2-4 ms, occupancy accounting (~80 adds a cycle) 2 ms,
//! link count and `zt` 1 ms, bids 1 ms, creation 1 ms; the check-mode branches nothing.
//!
//! What paid (1 thread, 100k, best of 5-9 interleaved): the first version cost 25 % (1
//! thread) and 18 % (2): stats in per-thread arrays beside the routers, arbitration losses
//! counted in SA decide by iterating the losers (an unpredictable branch: about half the
//! cost) and credit-stall starts tested in every traversal. Losses as bids - flits sent
//! (-4 ms); then stats inside the VC and router and credit stalls ended at the credit, the
//! traversal only storing `zt` (-4 ms): with separate arrays, cachegrind (20k cycles) had
//! shown D1 misses 29 k -> 420 k and 33 % more instructions (Vec headers, bounds checks,
//! the per-traversal work). What did not: a branch per ejection instead of the list, a
//! branch-free scoreboard instead of a branchy one, one scoreboard word with its tag
//! instead of two arrays, 64-byte-aligned VCs (64 B with statistics): no change.
//!
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

const K: usize = 8;
const N: usize = K * K;
const P: usize = 5;
const NET: usize = 4;
const V: usize = 2;
const D: usize = 8;
const NV: usize = P * V;
const PF: u32 = 4;
const LINK_LAT: u32 = 2;
const CREDIT_DELAY: u32 = 1;
/// A flit sent in cycle t is in the downstream buffer and ready from cycle t + ARR.
const ARR: u32 = LINK_LAT;
/// A credit sent in cycle t is counted from cycle t + CRED.
const CRED: u32 = 1 + CREDIT_DELAY;
/// Event wheel slots (more than the longest delay).
const WH: usize = 4;
/// Capacity of one wheel slot's event arrays (a cycle has at most N * NET link flits and
/// credits, and at most N * NV VC events).
const SLOT: usize = 1024;
const NONE: u8 = 255;
/// Flit: bit 0 head, bit 1 tail, bits 2..8 destination, then (with statistics) bits 8..14
/// source, and the birth cycle in the remaining bits: mod 2^18 with statistics, mod 2^24
/// without (`--cfg nostats`).
#[cfg(not(nostats))]
const BSH: u32 = 14;
#[cfg(nostats)]
const BSH: u32 = 8;
const BMASK: u32 = (1 << (32 - BSH)) - 1;
/// Generation wheel (injection gaps longer than this wrap around and are re-checked).
const GW: usize = 1024;
const _: () = assert!(ARR == 2 && CRED == 2 && N <= 64 && NV <= 16 && N * NV <= SLOT);

/// An input VC. Its flits are the consecutive flits of at most three packets (8 flits of
/// 4-flit packets), so it keeps the packets' descriptors (flit without the head/tail bits)
/// and where the front flit is within its packet, not the flits.
#[derive(Clone, Copy)]
struct Vc {
    pk: [u32; 4],
    /// ring index of the front packet
    ph: u8,
    /// packets in the ring (the front one may have no flit buffered yet)
    np: u8,
    /// index of the front flit within the front packet
    fi: u8,
    /// flits buffered
    len: u8,
    routed: bool,
    out: u8,
    ovc: u8,
    #[cfg(not(nostats))]
    s: VcStats,
}
/// A VC's statistics, kept with it (the same cache lines), as sums of signed cycle numbers
/// (wrapping): at each change, minus the cycle a state starts in, plus the cycle it ends in.
#[cfg(not(nostats))]
#[derive(Clone, Copy, Default)]
struct VcStats {
    /// cycles with occupancy > k: -t at each rise from k, +t at each fall to k
    occ: [u32; D],
    /// cycles bid in switch allocation
    bid: u32,
    /// credit-stall cycles
    cred: u32,
}
impl Vc {
    #[inline(always)]
    fn push(&mut self, f: u32) {
        debug_assert!((self.len as usize) < D);
        if f & 1 != 0 {
            self.pk[(self.ph + self.np) as usize % 4] = f & !3;
            self.np += 1;
        }
        self.len += 1;
    }
    #[inline(always)]
    fn pop(&mut self) -> u32 {
        let fi = self.fi as u32;
        let tail = fi + 1 == PF;
        let f = self.pk[self.ph as usize % 4] | (fi == 0) as u32 | (tail as u32) << 1;
        self.len -= 1;
        if tail {
            self.fi = 0;
            self.ph = (self.ph + 1) % 4;
            self.np -= 1;
        } else {
            self.fi += 1;
        }
        f
    }
    /// descriptor of the front packet
    #[inline(always)]
    fn front(&self) -> u32 {
        self.pk[self.ph as usize % 4]
    }
}

#[derive(Clone, Copy)]
#[repr(align(64))]
struct Router {
    /// per output: VCs that bid in switch allocation (granted, ready flit, credit)
    req: [u16; P],
    /// per output: routed VCs waiting for an output VC
    want: [u16; P],
    /// per output VC (the NIC output's entries are never tested)
    credits: [u8; P * V],
    owner: [u8; P * V],
    sa_rr: [u8; P],
    va_rr: [u8; P],
    /// outputs whose VC allocation must be tried this cycle
    va_pend: u8,
    /// outputs with a nonzero req mask
    outs: u8,
    /// statistics: VCs in a credit stall that began when they were refreshed (may bid but
    /// for a credit; in the padding)
    cst: u16,
    /// statistics, per output VC: flits sent, and the cycle of the last flit sent (NONE32
    /// after a tail): a credit stall that began with this flit's credit is counted when the
    /// next credit comes
    #[cfg(not(nostats))]
    link: [u32; P * V],
    #[cfg(not(nostats))]
    zt: [u32; P * V],
    vc: [Vc; NV],
}
#[cfg(not(nostats))]
const NONE32: u32 = u32::MAX;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn route_dor(r: usize, f: u32) -> u8 {
    let d = ((f >> 2) & 63) as usize;
    let (x, y) = (r % K, r / K);
    let (dx, dy) = (d % K, d / K);
    if dx != x {
        (dx > x) as u8
    } else if dy != y {
        2 + (dy > y) as u8
    } else {
        4
    }
}
/// Dimension-order route of a flit at router r, from a table.
#[inline(always)]
fn route(rt_tab: &[[u8; N]; N], r: usize, f: u32) -> u8 {
    rt_tab[r][((f >> 2) & 63) as usize]
}
fn nbr(r: usize, p: usize) -> usize {
    match p {
        0 => r - 1,
        1 => r + 1,
        2 => r - K,
        3 => r + K,
        _ => r,
    }
}

/// Mailbox from one thread to another for one window of W cycles: flits (window cycle << 48
/// | router << 36 | vc << 32 | flit) and credits (window cycle << 15 | router << 4 | out * V
/// + vc), due ARR and CRED cycles after the cycle they were sent in. Fixed arrays, so that
/// the counts and the first entries share the cache lines the other thread reads.
const MCAP: usize = 64;
#[repr(align(128))]
struct Mail {
    na: usize,
    nc: usize,
    cred: [u16; MCAP],
    arr: [u64; MCAP],
}
impl Mail {
    fn new() -> Self {
        Mail { na: 0, nc: 0, cred: [0; MCAP], arr: [0; MCAP] }
    }
    fn cred(&mut self, e: u16) {
        assert!(self.nc < MCAP);
        self.cred[self.nc] = e;
        self.nc += 1;
    }
    fn arr(&mut self, e: u64) {
        assert!(self.na < MCAP);
        self.arr[self.na] = e;
        self.na += 1;
    }
}
struct Boxes(Vec<UnsafeCell<Mail>>);
unsafe impl Sync for Boxes {}

/// One thread's published state, on its own cache line: the number of cycles it has
/// finished (the barrier: the others wait until it reaches theirs) and its packets created
/// and delivered (mod 2^32) at the end of each of the last four cycles.
#[repr(align(128))]
struct Progress {
    cycle: AtomicU64,
    created: [AtomicU32; 4],
    done: [AtomicU32; 4],
}
impl Progress {
    fn new() -> Self {
        Progress { cycle: AtomicU64::new(0), created: Default::default(), done: Default::default() }
    }
}

struct Shared {
    nt: usize,
    w: u32,
    cycles: u32,
    boxes: Boxes,
    progress: Vec<Progress>,
    check: bool,
}
impl Shared {
    /// the mailbox of `from` to `to` for the window holding cycle c
    fn mail(&self, from: usize, to: usize, c: u32) -> *mut Mail {
        self.boxes.0[(from * self.nt + to) * 2 + (c / self.w % 2) as usize].get()
    }
}

#[allow(dead_code)]
#[inline(always)]
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

/// Sets VC l's bit in its output's request mask if it may bid (granted an output VC, a
/// flit buffered, a credit); true if so.
#[inline(always)]
fn refresh(rt: &mut Router, l: usize, _tf: u32) -> bool {
    let c = &rt.vc[l];
    if c.ovc == NONE || c.len == 0 {
        return false;
    }
    let o = c.out as usize;
    if o < NET && rt.credits[o * V + c.ovc as usize] == 0 {
        // a credit stall from cycle _tf (once: the VC may be refreshed twice in a cycle)
        #[cfg(not(nostats))]
        if rt.cst & (1 << l) == 0 {
            rt.cst |= 1 << l;
            rt.vc[l].s.cred = rt.vc[l].s.cred.wrapping_sub(_tf);
        }
        return false;
    }
    // a bid from cycle _tf on, if not bidding already
    #[cfg(not(nostats))]
    {
        let new = (!rt.req[o] >> l) as u32 & 1;
        rt.vc[l].s.bid = rt.vc[l].s.bid.wrapping_sub(new.wrapping_neg() & _tf);
    }
    rt.req[o] |= 1 << l;
    rt.outs |= 1 << o;
    true
}

/// One thread's statistics, for its routers (indexed by router, or router * NV + VC, over
/// the whole mesh; the other threads' entries stay unused) and for the packets it creates
/// and ejects.
#[cfg_attr(nostats, allow(dead_code))]
#[derive(Default)]
struct Stats {
    lo: usize,
    hi: usize,
    /// Copied at the stop from the routers (`VcStats`, `link`), with the open states closed
    /// at T. Per VC: cycles with occupancy > k
    occ: Vec<[u32; D]>,
    /// per router and VC: credit-stall cycles
    cred: Vec<[u32; NV]>,
    /// per router and VC: cycles bid in switch allocation (cycles lost = cycles bid -
    /// flits sent, derived in `stats`)
    bid: Vec<[u32; NV]>,
    /// per router and output VC: flits sent (the NIC output: ejected)
    link: Vec<u32>,
    /// per node: packets created
    made: Vec<u32>,
    /// per router and VC: flits left at the end
    fin: Vec<u8>,
    /// latency histogram (cycles from creation to the tail's ejection)
    lat: Vec<u64>,
    /// per node: longest source queue (packets)
    qmax: Vec<u32>,
    /// scoreboard of the packets ejected here, per source: 128 words, each holding births
    /// with the same birth / 32 (+ 1, the tag, in the high half; 0 when unused) and a bit
    /// for each birth mod 32 delivered (in the low half): a window of 4096 cycles
    sb: Vec<u64>,
    /// first deliveries, repeated deliveries, ejected elsewhere than their destination,
    /// and deliveries older than their scoreboard word (inconclusive, must be 0)
    distinct: u64,
    dup: u64,
    misrouted: u64,
    late: u64,
    /// sums of mix(source << 32 | birth) over the packets created here / first delivered here
    hmade: u64,
    hdel: u64,
}
#[cfg_attr(nostats, allow(dead_code))]
impl Stats {
    fn new(lo: usize, hi: usize) -> Self {
        let mut s = Stats { lo, hi, ..Default::default() };
        if cfg!(not(nostats)) {
            s.occ = vec![[0; D]; N * NV];
            s.cred = vec![[0; NV]; N];
            s.bid = vec![[0; NV]; N];
            s.link = vec![0; N * NV];
            s.made = vec![0; N];
            s.fin = vec![0; N * NV];
            s.lat = vec![0; 256];
            s.qmax = vec![0; N];
            s.sb = vec![0; N * SBW];
        }
        s
    }
    /// The histogram of VC i's occupancy (cycles with k flits, k = 0..=D) over cycles 0..T.
    fn hist(&self, i: usize, tt: u32) -> [u64; D + 1] {
        let a = &self.occ[i];
        let mut h = [0u64; D + 1];
        h[0] = tt.wrapping_sub(a[0]) as u64;
        for k in 1..D {
            h[k] = a[k - 1].wrapping_sub(a[k]) as u64;
        }
        h[D] = a[D - 1] as u64;
        h
    }
    /// A tail ejected at router r in cycle t.
    #[inline(always)]
    fn eject(&mut self, r: usize, f: u32, t: u32) {
        let lat = (t.wrapping_sub(f >> BSH) & BMASK) as usize;
        if lat >= self.lat.len() {
            self.lat.resize((lat + 1).next_power_of_two(), 0);
        }
        self.lat[lat] += 1;
        self.misrouted += (((f >> 2) & 63) as usize != r) as u64;
        let src = ((f >> 8) & 63) as usize;
        // the birth cycle (exact while latencies are below 2^18)
        let b = t - lat as u32;
        let i = src * SBW + ((b >> 5) as usize & (SBW - 1));
        // tag + 1, so that 0 is an unused word
        let tg = (b >> 5) as u64 + 1;
        // (branch-free: a new tag comes every other ejection)
        let e = self.sb[i];
        let cur = e >> 32;
        // a newer word: the older births it held are not tested any more
        let newer = tg > cur;
        let late = tg < cur;
        let w = if newer { tg << 32 } else { e };
        let bit = 1u64 << (b & 31);
        let dup = w & bit != 0 && !late;
        let first = !dup && !late;
        self.sb[i] = w | (bit & (first as u64).wrapping_neg());
        self.late += late as u64;
        self.dup += dup as u64;
        self.distinct += first as u64;
        self.hdel = self.hdel.wrapping_add(mix((src as u64) << 32 | b as u64) & (first as u64).wrapping_neg());
    }
}
/// scoreboard words per source
const SBW: usize = 128;


/// Counts an arbitration loss for each VC in mask m.

/// `EVENT_B_CHECK=1`: the statistics recomputed the straightforward way, scanning every VC
/// of the thread's routers every cycle: before VC allocation (which VCs may bid, which are
/// in a credit stall: state as in switch allocation), after traversal (which VCs sent a
/// flit, and on which output) and at the end of the cycle (occupancy).
struct Check {
    len: Vec<u8>,
    out: Vec<u8>,
    bid: Vec<bool>,
    hist: Vec<[u64; D + 1]>,
    cred: Vec<u64>,
    arb: Vec<u64>,
    link: Vec<u64>,
    flit_cycles: u64,
    cycles: u64,
}
impl Check {
    fn new() -> Self {
        Check {
            len: vec![0; N * NV],
            out: vec![0; N * NV],
            bid: vec![false; N * NV],
            hist: vec![[0; D + 1]; N * NV],
            cred: vec![0; N * NV],
            arb: vec![0; N * NV],
            link: vec![0; N * P],
            flit_cycles: 0,
            cycles: 0,
        }
    }
    #[inline(never)]
    fn pre(&mut self, rs: &[Router], lo: usize, hi: usize) {
        for r in lo..hi {
            let rt = &rs[r];
            for l in 0..NV {
                let c = &rt.vc[l];
                let i = r * NV + l;
                self.len[i] = c.len;
                self.out[i] = c.out;
                // front flit ready and output VC held (granted in an earlier cycle: VA of
                // this cycle has not run yet)
                let ready = c.len > 0 && c.ovc != NONE;
                let o = c.out as usize;
                let credit = ready && (o == NET || rt.credits[o * V + c.ovc as usize] > 0);
                self.bid[i] = ready && credit;
                let stall = ready && !credit;
                self.cred[i] += stall as u64;
                // the event model's masks agree
                assert_eq!(rt.req[o] >> l & 1 != 0, ready && credit, "req r {r} l {l}");
                assert!(rt.cst >> l & 1 == 0 || stall, "cst r {r} l {l}");
            }
        }
    }
    #[inline(never)]
    fn post(&mut self, rs: &[Router], lo: usize, hi: usize) {
        for r in lo..hi {
            for l in 0..NV {
                let i = r * NV + l;
                let sent = self.len[i] - rs[r].vc[l].len;
                assert!(sent <= 1 && (sent == 0 || self.bid[i]));
                if sent == 1 {
                    self.link[r * P + self.out[i] as usize] += 1;
                } else if self.bid[i] {
                    self.arb[i] += 1;
                }
            }
        }
    }
    #[inline(never)]
    fn end(&mut self, rs: &[Router], lo: usize, hi: usize) {
        for r in lo..hi {
            for l in 0..NV {
                let n = rs[r].vc[l].len;
                self.hist[r * NV + l][n as usize] += 1;
                self.flit_cycles += n as u64;
            }
        }
        self.cycles += 1;
    }
}

/// Events due in one cycle: flits arriving (router << 36 | vc << 32 | flit), credits
/// (router << 4 | out * V + vc), and the two kinds of VC events (router << 4 | vc).
struct Slot {
    arr: [u64; SLOT],
    cred: [u16; SLOT],
    /// router << 4 | vc: routed heads that may request an output VC from this cycle
    va: [u16; SLOT],
    /// router << 4 | vc: VCs granted an output VC in the cycle before
    sa: [u16; SLOT],
    na: usize,
    nc: usize,
    nva: usize,
    nsa: usize,
}

#[cfg_attr(nostats, allow(dead_code))]
struct Out {
    hops: u64,
    delivered: u64,
    lat_sum: u64,
    cycles: u32,
    trace: u64,
    made: u64,
    st: Stats,
    chk: Option<Check>,
}

fn run(k: usize, sh: &Shared) -> Out {
    let nt = sh.nt;
    let w = sh.w;
    let cycles = sh.cycles;
    let lo = k * N / nt;
    let hi = (k + 1) * N / nt;
    let mut owner_tab = [0u8; N];
    for j in 0..nt {
        for r in j * N / nt..(j + 1) * N / nt {
            owner_tab[r] = j as u8;
        }
    }
    // neighbour through each port (itself for the NIC port) and whether this thread owns it
    let mut nb = [[0u8; 8]; N];
    let mut remote = [0u8; N];
    for r in 0..N {
        for p in 0..P {
            let (x, y) = (r % K, r / K);
            let exists = match p {
                0 => x > 0,
                1 => x + 1 < K,
                2 => y > 0,
                3 => y + 1 < K,
                _ => true,
            };
            if exists {
                let n = nbr(r, p);
                nb[r][p] = n as u8;
                if !(lo..hi).contains(&n) {
                    remote[r] |= 1 << p;
                }
            }
        }
    }
    let mut rt_tab = [[0u8; N]; N];
    for r in 0..N {
        for d in 0..N {
            rt_tab[r][d] = route_dor(r, (d as u32) << 2);
        }
    }
    let empty = Vc {
        pk: [0; 4],
        ph: 0,
        np: 0,
        fi: 0,
        len: 0,
        routed: false,
        out: 0,
        ovc: NONE,
        #[cfg(not(nostats))]
        s: VcStats::default(),
    };
    let mut rs = vec![
        Router {
            req: [0; P],
            want: [0; P],
            credits: [D as u8; P * V],
            owner: [NONE; P * V],
            sa_rr: [0; P],
            va_rr: [0; P],
            va_pend: 0,
            outs: 0,
            cst: 0,
            #[cfg(not(nostats))]
            link: [0; P * V],
            #[cfg(not(nostats))]
            zt: [NONE32; P * V],
            vc: [empty; NV],
        };
        N
    ];
    let mut rng = Rng(0x9E3779B97F4A7C15 ^ ((k as u64 + 1) * 0x1234567));
    let ln1p = (1.0f64 - 0.025).ln();
    let gap = |rng: &mut Rng| -> u32 { ((rng.unit().max(1e-300)).ln() / ln1p).floor() as u32 };
    let mut next_gen = [0u32; N];
    let mut gw = vec![0u64; GW];
    for n in lo..hi {
        next_gen[n] = gap(&mut rng);
        gw[next_gen[n] as usize & (GW - 1)] |= 1 << n;
    }
    let mut srcq: Vec<VecDeque<u32>> = (0..N).map(|_| VecDeque::new()).collect();
    let mut sent = [0u32; N];
    let (mut inj, mut sa_act, mut va_act) = (0u64, 0u64, 0u64);
    let mut wheel: Vec<Slot> = (0..WH)
        .map(|_| Slot { arr: [0; SLOT], cred: [0; SLOT], va: [0; SLOT], sa: [0; SLOT], na: 0, nc: 0, nva: 0, nsa: 0 })
        .collect();
    let (mut hops, mut delivered, mut lat_sum, mut made) = (0u64, 0u64, 0u64, 0u64);
    let mut trace = 0u64;
    let _ = &mut trace;
    let mut grants = [0u16; N * P];
    #[cfg_attr(nostats, allow(unused_mut))]
    let mut st = Stats::new(lo, hi);
    #[cfg(not(nostats))]
    let (mut ejl, mut nej) = ([0u64; N + 1], 0usize);
    let mut chk = if cfg!(not(nostats)) && sh.check { Some(Check::new()) } else { None };
    let mut t: u32 = 0;
    loop {
        if nt > 1 {
            if t > 0 && t % w == 0 {
                // the last window's mail: cycle c = t - w + tag, due at c + 2 = t + tag
                for j in 0..nt {
                    if j == k {
                        continue;
                    }
                    let m = unsafe { &*sh.mail(j, k, t - w) };
                    for &e in &m.arr[..m.na] {
                        let s = &mut wheel[(t as usize + (e >> 48) as usize + ARR as usize - w as usize) % WH];
                        s.arr[s.na] = e & ((1 << 48) - 1);
                        s.na += 1;
                    }
                    for &e in &m.cred[..m.nc] {
                        let s = &mut wheel[(t as usize + (e >> 15) as usize + CRED as usize - w as usize) % WH];
                        s.cred[s.nc] = e & 0x7fff;
                        s.nc += 1;
                    }
                }
            }
            if t % w == 0 {
                for j in 0..nt {
                    if j != k {
                        let m = unsafe { &mut *sh.mail(k, j, t) };
                        m.na = 0;
                        m.nc = 0;
                    }
                }
            }
        }
        let slot = t as usize % WH;
        let (s0, s1, s2) = {
            let (a, b) = wheel.split_at_mut(slot);
            let (cur, rest) = b.split_first_mut().unwrap();
            // slots for t + 1 and t + 2
            let (n1, n2): (*mut Slot, *mut Slot) = if rest.len() >= 2 {
                (&mut rest[0], &mut rest[1])
            } else if rest.len() == 1 {
                (&mut rest[0], &mut a[0])
            } else {
                (&mut a[0], &mut a[1])
            };
            (cur, unsafe { &mut *n1 }, unsafe { &mut *n2 })
        };
        // credits due now
        for &e in &s0.cred[..s0.nc] {
            let (r, i) = ((e >> 4) as usize, (e & 15) as usize);
            let rt = &mut rs[r];
            rt.credits[i] += 1;
            if rt.credits[i] == 1 {
                let l = rt.owner[i];
                if l != NONE {
                    // the end of a credit stall
                    #[cfg(not(nostats))]
                    {
                        let lu = l as usize;
                        if rt.cst & (1 << l) != 0 {
                            rt.cst &= !(1 << l);
                            rt.vc[lu].s.cred = rt.vc[lu].s.cred.wrapping_add(t);
                        } else if rt.zt[i] != NONE32 && rt.vc[lu].len != 0 {
                            // out of credits since its last flit, sent in cycle zt, left it
                            // with a flit (it cannot have been empty since: the flit that
                            // filled it would have started a refresh stall)
                            rt.vc[lu].s.cred = rt.vc[lu].s.cred.wrapping_add(t - rt.zt[i] - 1);
                        }
                    }
                    if refresh(rt, l as usize, t) {
                        sa_act |= 1 << r;
                    }
                }
            }
        }
        s0.nc = 0;
        // flits due now
        for &e in &s0.arr[..s0.na] {
            let (r, l, f) = ((e >> 36) as usize, ((e >> 32) & 15) as usize, e as u32);
            let rt = &mut rs[r];
            let c = &mut rt.vc[l];
            let was = c.len;
            c.push(f);
            #[cfg(not(nostats))]
            {
                let a = &mut c.s.occ[was as usize & (D - 1)];
                *a = a.wrapping_sub(t);
            }
            if was == 0 {
                if !c.routed {
                    c.routed = true;
                    c.out = route(&rt_tab, r, f);
                    s1.va[s1.nva] = (r << 4 | l) as u16;
                    s1.nva += 1;
                } else if refresh(rt, l, t) {
                    sa_act |= 1 << r;
                }
            }
        }
        s0.na = 0;
        // VCs that may request an output VC, or bid in switch allocation, from now on
        for &e in &s0.va[..s0.nva] {
            let (r, l) = ((e >> 4) as usize, (e & 15) as usize);
            let rt = &mut rs[r];
            let o = rt.vc[l].out;
            rt.want[o as usize] |= 1 << l;
            rt.va_pend |= 1 << o;
            va_act |= 1 << r;
        }
        s0.nva = 0;
        for &e in &s0.sa[..s0.nsa] {
            let (r, l) = ((e >> 4) as usize, (e & 15) as usize);
            if refresh(&mut rs[r], l, t) {
                sa_act |= 1 << r;
            }
        }
        s0.nsa = 0;
        // traffic
        if t < cycles {
            let gs = t as usize & (GW - 1);
            let mut m = gw[gs];
            gw[gs] = 0;
            let mut keep = 0u64;
            while m != 0 {
                let n = m.trailing_zeros() as usize;
                m &= m - 1;
                if next_gen[n] != t {
                    keep |= 1 << n;
                    continue;
                }
                while next_gen[n] <= t {
                    let mut d = (rng.next() % (N as u64 - 1)) as usize;
                    if d >= n {
                        d += 1;
                    }
                    #[cfg(nostats)]
                    srcq[n].push_back(((d as u32) << 2) | ((t & BMASK) << BSH));
                    #[cfg(not(nostats))]
                    {
                        srcq[n].push_back(((d as u32) << 2) | (n as u32) << 8 | ((t & BMASK) << BSH));
                        st.qmax[n] = st.qmax[n].max(srcq[n].len() as u32);
                        st.made[n] += 1;
                        st.hmade = st.hmade.wrapping_add(mix((n as u64) << 32 | t as u64));
                    }
                    made += 1;
                    next_gen[n] += 1 + gap(&mut rng);
                }
                gw[next_gen[n] as usize & (GW - 1)] |= 1 << n;
                inj |= 1 << n;
            }
            gw[gs] |= keep;
        }
        if let Some(c) = &mut chk {
            c.pre(&rs, lo, hi);
        }
        // VC allocation
        let mut m = va_act;
        va_act = 0;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            let rt = &mut rs[r];
            let mut pend = rt.va_pend;
            rt.va_pend = 0;
            while pend != 0 {
                let o = pend.trailing_zeros() as usize;
                pend &= pend - 1;
                let mut wm = rt.want[o];
                if wm == 0 {
                    continue;
                }
                let nvc = if o == NET { 1 } else { V };
                for v in 0..nvc {
                    if wm == 0 {
                        break;
                    }
                    if rt.owner[o * V + v] != NONE {
                        continue;
                    }
                    let s = rt.va_rr[o] as u32;
                    let h = wm & !((1u16 << s) - 1);
                    let l = if h != 0 { h.trailing_zeros() } else { wm.trailing_zeros() } as usize;
                    wm &= !(1 << l);
                    rt.va_rr[o] = ((l + 1) % NV) as u8;
                    rt.owner[o * V + v] = l as u8;
                    rt.vc[l].ovc = v as u8;
                    s1.sa[s1.nsa] = (r << 4 | l) as u16;
                    s1.nsa += 1;
                    #[cfg(trace)]
                    {
                        trace = trace.wrapping_add(mix(((t as u64) << 32) | ((r as u64) << 16) | ((o as u64) << 8) | ((v as u64) << 4) | l as u64 | 1 << 63));
                    }
                }
                rt.want[o] = wm;
            }
        }
        // switch allocation and traversal
        let start = t as usize % NET;
        let mut ng = 0;
        let mut m = sa_act;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            let rt = &mut rs[r];
            let mut blocked = 0u16;
            let m4 = (rt.outs & 15) as u32;
            // bit 0: the NIC output, bit j > 0: output (start + j - 1) % NET
            let mut seq = (rt.outs >> NET) as u32 | (((m4 >> start) | (m4 << (NET - start))) & 15) << 1;
            while seq != 0 {
                let j = seq.trailing_zeros() as usize;
                seq &= seq - 1;
                let o = if j == 0 { NET } else { (start + j - 1) % NET };
                let req = rt.req[o] & !blocked;
                if req == 0 {
                    continue;
                }
                let s = rt.sa_rr[o] as u32;
                let h = req & !((1u16 << s) - 1);
                let l = if h != 0 { h.trailing_zeros() } else { req.trailing_zeros() } as usize;
                rt.sa_rr[o] = ((l + 1) % NV) as u8;
                blocked |= 3 << (l / V * V);
                grants[ng] = (r << 8 | o << 4 | l) as u16;
                ng += 1;
            }
        }
        // traversal of the granted flits
        for &g in &grants[..ng] {
            let (r, o, l) = ((g >> 8) as usize, ((g >> 4) & 15) as usize, (g & 15) as usize);
            let port = l / V;
            let rt = &mut rs[r];
            {
                let c = &mut rt.vc[l];
                let f = c.pop();
                #[cfg(not(nostats))]
                {
                    let a = &mut c.s.occ[c.len as usize & (D - 1)];
                    *a = a.wrapping_add(t);
                }
                let ovc = c.ovc as usize;
                let tail = f & 2 != 0;
                let mut keep = c.len != 0 && !tail;
                #[cfg(trace)]
                {
                    trace = trace.wrapping_add(mix(((t as u64) << 32) | ((r as u64) << 16) | ((o as u64) << 8) | ((ovc as u64) << 4) | l as u64 | ((f as u64 & 3) << 40)));
                }
                if tail {
                    c.ovc = NONE;
                    if c.len != 0 {
                        // the next packet's head: routed in the next cycle, VA from t + 2
                        c.out = route(&rt_tab, r, c.front());
                        s2.va[s2.nva] = (r << 4 | l) as u16;
                        s2.nva += 1;
                    } else {
                        c.routed = false;
                    }
                    rt.owner[o * V + ovc] = NONE;
                    if rt.want[o] != 0 {
                        rt.va_pend |= 1 << o;
                        va_act |= 1 << r;
                    }
                }
                // credit to the upstream router (none for the NIC input port)
                let up = nb[r][port] as u16;
                let ce = up << 4 | ((port ^ 1) * V + l % V) as u16;
                if remote[r] & (1 << port) == 0 {
                    s2.cred[s2.nc % SLOT] = ce;
                    s2.nc += (port < NET) as usize;
                } else {
                    unsafe { (*sh.mail(k, owner_of(&owner_tab, up as usize), t)).cred(ce | ((t % w) as u16) << 15) };
                }
                // to the next router, or ejected
                let net = o < NET;
                let cc = &mut rt.credits[o * V + ovc];
                *cc = cc.wrapping_sub(net as u8);
                keep &= *cc != 0 || !net;
                #[cfg(not(nostats))]
                {
                    rt.link[o * V + ovc] += 1;
                    rt.zt[o * V + ovc] = if tail { NONE32 } else { t };
                }
                let nr = nb[r][o] as u64;
                let ae = nr << 36 | (((o ^ 1) * V + ovc) as u64) << 32 | f as u64;
                if remote[r] & (1 << o) == 0 {
                    s2.arr[s2.na % SLOT] = ae;
                    s2.na += net as usize;
                } else {
                    unsafe { (*sh.mail(k, owner_of(&owner_tab, nr as usize), t)).arr(ae | ((t % w) as u64) << 48) };
                }
                hops += net as u64;
                let ej = (!net & tail) as u64;
                delivered += ej;
                lat_sum += ej.wrapping_neg() & (t.wrapping_sub(f >> BSH) & BMASK) as u64;
                #[cfg(not(nostats))]
                {
                    ejl[nej] = (r as u64) << 32 | f as u64;
                    nej += ej as usize;
                }
                // the end of a bid (the last in this cycle)
                #[cfg(not(nostats))]
                {
                    let b = &mut rt.vc[l].s.bid;
                    *b = b.wrapping_add(((!keep) as u32).wrapping_neg() & (t + 1));
                }
                let q = rt.req[o] & !(((!keep) as u16) << l);
                rt.req[o] = q;
                rt.outs &= !(((q == 0) as u8) << o);
                sa_act &= !(((rt.outs == 0) as u64) << r);
            }
        }
        #[cfg(not(nostats))]
        {
            for &e in &ejl[..nej] {
                st.eject((e >> 32) as usize, e as u32, t);
            }
            nej = 0;
        }
        if let Some(c) = &mut chk {
            c.post(&rs, lo, hi);
        }
        // injection
        let mut m = inj;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            let rt = &mut rs[r];
            let l = NET * V;
            let c = &mut rt.vc[l];
            if (c.len as usize) < D {
                let q = &mut srcq[r];
                let s = sent[r];
                let f = *q.front().unwrap() | (s == 0) as u32 | ((s + 1 == PF) as u32) << 1;
                let was = c.len;
                c.push(f);
                #[cfg(not(nostats))]
                {
                    let a = &mut c.s.occ[was as usize & (D - 1)];
                    *a = a.wrapping_sub(t);
                }
                if was == 0 {
                    if !c.routed {
                        // routed in the next cycle, VA from t + 2
                        c.routed = true;
                        c.out = route(&rt_tab, r, f);
                        s2.va[s2.nva] = (r << 4 | l) as u16;
                        s2.nva += 1;
                    } else if refresh(rt, l, t + 1) {
                        sa_act |= 1 << r;
                    }
                }
                if s + 1 == PF {
                    sent[r] = 0;
                    q.pop_front();
                    if q.is_empty() {
                        inj &= !(1 << r);
                    }
                } else {
                    sent[r] = s + 1;
                }
            }
        }
        if let Some(c) = &mut chk {
            c.end(&rs, lo, hi);
        }
        let cs = (t % 4) as usize;
        let me = &sh.progress[k];
        me.created[cs].store(made as u32, Ordering::Relaxed);
        me.done[cs].store(delivered as u32, Ordering::Relaxed);
        if (t + 1) % w == 0 {
            if nt > 1 {
                me.cycle.store(t as u64 + 1, Ordering::Release);
                for j in 0..nt {
                    if j != k {
                        while sh.progress[j].cycle.load(Ordering::Acquire) < t as u64 + 1 {
                            std::hint::spin_loop();
                        }
                    }
                }
            }
            let mut stop = None;
            for c in t + 1 - w..=t {
                if c + 1 >= cycles {
                    let cs = (c % 4) as usize;
                    // (wrapping u32 sums: equal exactly when the true counts are, below 2^32)
                    let a = sh.progress.iter().fold(0u32, |a, p| a.wrapping_add(p.created[cs].load(Ordering::Relaxed)));
                    let b = sh.progress.iter().fold(0u32, |a, p| a.wrapping_add(p.done[cs].load(Ordering::Relaxed)));
                    if a == b {
                        stop = Some(c + 1);
                        break;
                    }
                }
            }
            if let Some(s) = stop {
                // flush the statistics at cycle s (cycles after s, at most one, change
                // nothing: the network is empty and creation over)
                #[cfg(not(nostats))]
                for r in lo..hi {
                    let rt = &mut rs[r];
                    for i in 0..NET * V {
                        let l = rt.owner[i];
                        if l != NONE && rt.credits[i] == 0 && rt.cst & (1 << l) == 0 && rt.zt[i] != NONE32 && rt.vc[l as usize].len != 0 {
                            rt.vc[l as usize].s.cred = rt.vc[l as usize].s.cred.wrapping_add(s - rt.zt[i] - 1);
                        }
                    }
                    for l in 0..NV {
                        let c = &rt.vc[l];
                        let mut a = c.s.occ;
                        for k in 0..c.len as usize {
                            a[k] = a[k].wrapping_add(s);
                        }
                        st.occ[r * NV + l] = a;
                        st.cred[r][l] = c.s.cred.wrapping_add(if rt.cst & (1 << l) != 0 { s } else { 0 });
                        st.bid[r][l] = c.s.bid.wrapping_add(if rt.req[c.out as usize] & (1 << l) != 0 { s } else { 0 });
                        st.fin[r * NV + l] = c.len;
                    }
                    st.link[r * NV..(r + 1) * NV].copy_from_slice(&rt.link);
                }
                if let Some(c) = &mut chk {
                    // the cycles scanned after s
                    for _ in s..t + 1 {
                        for r in lo..hi {
                            for l in 0..NV {
                                assert_eq!(rs[r].vc[l].len, 0);
                                c.hist[r * NV + l][0] -= 1;
                            }
                        }
                        c.cycles -= 1;
                    }
                }
                return Out { hops, delivered, lat_sum, cycles: s, trace, made, st, chk };
            }
        }
        t += 1;
    }
}

#[inline(always)]
fn owner_of(tab: &[u8; N], r: usize) -> usize {
    tab[r] as usize
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cycles: u32 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(100_000);
    let nt: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(2);
    let w: u32 = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(if nt > 1 { 2 } else { 1 });
    assert!(nt >= 1 && nt <= N && (w == 1 || w == 2));
    let sh = Shared {
        nt,
        w,
        cycles,
        boxes: Boxes((0..nt * nt * 2).map(|_| UnsafeCell::new(Mail::new())).collect()),
        progress: (0..nt).map(|_| Progress::new()).collect(),
        check: std::env::var("EVENT_B_CHECK").is_ok_and(|v| v == "1"),
    };
    let start = Instant::now();
    let results: Vec<Out> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..nt)
            .map(|k| {
                let sh = &sh;
                s.spawn(move || run(k, sh))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = start.elapsed().as_secs_f64();
    let hops: u64 = results.iter().map(|r| r.hops).sum();
    let del: u64 = results.iter().map(|r| r.delivered).sum();
    let lat: u64 = results.iter().map(|r| r.lat_sum).sum();
    let t = results[0].cycles;
    println!(
        "event_b threads {nt} cycles {t} wall {wall:.3} s, {:.0} cycles/s, {:.2} M flit-hops/s, hops {hops}, delivered {del}, avg latency {:.2}",
        t as f64 / wall,
        hops as f64 / wall / 1e6,
        lat as f64 / del as f64
    );
    if std::env::var_os("EVENT_B_SUMS").is_some() {
        let tr = results.iter().fold(0u64, |a, r| a.wrapping_add(r.trace));
        println!("sums: cycles {t} hops {hops} delivered {del} latency_sum {lat} trace {tr:016x}");
    }
    #[cfg(not(nostats))]
    stats(&results, t, hops, del, lat);
}

/// Merges the threads' statistics, checks them and prints the stats line.
#[cfg(not(nostats))]
fn stats(res: &[Out], t: u32, hops: u64, del: u64, lat_sum: u64) {
    let tt = t as u64;
    let (mut hist_total, mut flit_cycles, mut occ_max) = (0u64, 0u64, 0usize);
    let (mut cred, mut arb, mut link_net, mut link_ej, mut qmax) = (0u64, 0u64, 0u64, 0u64, 0u32);
    let mut lh: Vec<u64> = Vec::new();
    let (mut made, mut distinct, mut dup, mut misrouted, mut late, mut hm, mut hd) = (0u64, 0, 0, 0, 0, 0u64, 0u64);
    // the owners' per-output-VC flits, per-node packets and final occupancies, over the mesh
    let (mut link, mut made_n, mut fin) = (vec![0u64; N * NV], vec![0u64; N], vec![0u64; N * NV]);
    for o in res {
        let s = &o.st;
        for r in s.lo..s.hi {
            for i in r * NV..(r + 1) * NV {
                link[i] = s.link[i] as u64;
                fin[i] = s.fin[i] as u64;
            }
            made_n[r] = s.made[r] as u64;
        }
    }
    // flits that left VC l of router r: flits sent into it, less those left at the end
    // (into a network VC: by the upstream router's output VC; into the NIC VC: the packets
    // created there, all injected once the run has drained, as it has at the stop)
    let sent_from = |r: usize, l: usize| -> u64 {
        let (p, v) = (l / V, l % V);
        let into = if p < NET {
            let (x, y) = (r % K, r / K);
            let exists = [x > 0, x + 1 < K, y > 0, y + 1 < K][p];
            if exists { link[nbr(r, p) * NV + (p ^ 1) * V + v] } else { 0 }
        } else if v == 0 {
            made_n[r] * PF as u64
        } else {
            0
        };
        into - fin[r * NV + l]
    };
    for o in res {
        let s = &o.st;
        assert_eq!(o.cycles, t);
        for r in s.lo..s.hi {
            for l in 0..NV {
                let h = s.hist(r * NV + l, t);
                // each bin within 0..=T (no wrap) and the bins summing to T
                assert!(h.iter().all(|&x| x <= tt), "hist r {r} l {l}: {h:?}");
                assert_eq!(h.iter().sum::<u64>(), tt, "hist r {r} l {l}: {h:?}");
                hist_total += h.iter().sum::<u64>();
                flit_cycles += h.iter().enumerate().map(|(k, &x)| k as u64 * x).sum::<u64>();
                if let Some(k) = (0..=D).rev().find(|&k| h[k] > 0) {
                    occ_max = occ_max.max(k);
                }
                assert!(s.cred[r][l] <= t);
                cred += s.cred[r][l] as u64;
                assert!(s.bid[r][l] <= t);
                let lost = s.bid[r][l] as u64 - sent_from(r, l);
                arb += lost;
                if let Some(c) = &o.chk {
                    let i = r * NV + l;
                    assert_eq!(h, c.hist[i], "check hist r {r} l {l}");
                    assert_eq!(s.cred[r][l] as u64, c.cred[i], "check credit stalls r {r} l {l}");
                    assert_eq!(lost, c.arb[i], "check arbitration stalls r {r} l {l}");
                }
            }
            for p in 0..P {
                let x = link[r * NV + p * V] + link[r * NV + p * V + 1];
                if p < NET { link_net += x } else { link_ej += x }
                if let Some(c) = &o.chk {
                    assert_eq!(x, c.link[r * P + p], "check link r {r} p {p}");
                }
            }
            qmax = qmax.max(s.qmax[r]);
        }
        if let Some(c) = &o.chk {
            assert_eq!(c.cycles, tt);
            let fc: u64 = (s.lo * NV..s.hi * NV).map(|i| s.hist(i, t).iter().enumerate().map(|(k, &x)| k as u64 * x).sum::<u64>()).sum();
            assert_eq!(fc, c.flit_cycles, "check flit-cycles");
        }
        if lh.len() < s.lat.len() {
            lh.resize(s.lat.len(), 0);
        }
        for (a, &b) in lh.iter_mut().zip(&s.lat) {
            *a += b;
        }
        made += o.made;
        assert_eq!(o.made, (s.lo..s.hi).map(|r| made_n[r]).sum::<u64>());
        distinct += s.distinct;
        dup += s.dup;
        misrouted += s.misrouted;
        late += s.late;
        hm = hm.wrapping_add(s.hmade);
        hd = hd.wrapping_add(s.hdel);
    }
    // packets first delivered on two threads (possible only if misrouted) count as duplicates
    let missing = made.saturating_sub(distinct);
    dup += distinct.saturating_sub(made);
    let n: u64 = lh.iter().sum();
    let lsum: u64 = lh.iter().enumerate().map(|(k, &x)| k as u64 * x).sum();
    let lmax = (0..lh.len()).rev().find(|&k| lh[k] > 0).unwrap_or(0);
    let (mut p99, mut acc) = (0, 0u64);
    for (k, &x) in lh.iter().enumerate() {
        acc += x;
        if acc * 100 >= n * 99 {
            p99 = k;
            break;
        }
    }
    println!(
        "stats: latency p99 {p99} max {lmax}, hist total {hist_total}, link flits {link_net} (+{link_ej} ejected), stalls credit {cred} arbitration {arb}, max occupancy {occ_max}, max NIC queue {qmax}, missing {missing} duplicate {dup} misrouted {misrouted}"
    );
    assert_eq!(hist_total, tt * (N * NV) as u64);
    assert_eq!(link_net, hops);
    assert_eq!(link_ej, del * PF as u64);
    assert_eq!(n, del);
    assert_eq!(lsum, lat_sum);
    assert_eq!(made, del);
    assert!(missing == 0 && dup == 0 && misrouted == 0 && late == 0, "scoreboard: missing {missing} duplicate {dup} misrouted {misrouted} late {late}");
    assert_eq!(hm, hd, "scoreboard: delivered set differs from created set");
    let _ = flit_cycles;
    if res[0].chk.is_some() {
        println!("check: ok (per-cycle scan agrees: histograms, flit-cycles {flit_cycles}, stalls, links)");
    }
}
