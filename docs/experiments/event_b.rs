//! Measurement artefact, not part of flitwave: benchmark (b)'s lean model (`lean_b.rs`, same
//! directory) rewritten so that a cycle costs in proportion to what happens in it (flit
//! moves, heads routed, grants, credits, injections) instead of routers x ports x VCs. Same
//! model, same random streams, same arbitration order: for the same arguments it prints the
//! same cycles, hops, delivered and average latency as lean_b (checked, see below).
//!
//!     rustc --edition 2024 -O docs/experiments/event_b.rs -o /tmp/event_b && /tmp/event_b 100000 2
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
//!   while below 2^24 cycles). A VC keeps at most three packet descriptors (8 flits of
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
/// Flit: bit 0 head, bit 1 tail, bits 2..8 destination, bits 8..32 birth cycle mod 2^24.
const BMASK: u32 = (1 << 24) - 1;
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
    vc: [Vc; NV],
}

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
fn refresh(rt: &mut Router, l: usize) -> bool {
    let c = &rt.vc[l];
    if c.ovc == NONE || c.len == 0 {
        return false;
    }
    let o = c.out as usize;
    if o < NET && rt.credits[o * V + c.ovc as usize] == 0 {
        return false;
    }
    rt.req[o] |= 1 << l;
    rt.outs |= 1 << o;
    true
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

fn run(k: usize, sh: &Shared) -> (u64, u64, u64, u32, u64) {
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
    let empty = Vc { pk: [0; 4], ph: 0, np: 0, fi: 0, len: 0, routed: false, out: 0, ovc: NONE };
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
                if l != NONE && refresh(rt, l as usize) {
                    sa_act |= 1 << r;
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
            if was == 0 {
                if !c.routed {
                    c.routed = true;
                    c.out = route(&rt_tab, r, f);
                    s1.va[s1.nva] = (r << 4 | l) as u16;
                    s1.nva += 1;
                } else if refresh(rt, l) {
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
            if refresh(&mut rs[r], l) {
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
                    srcq[n].push_back(((d as u32) << 2) | ((t & BMASK) << 8));
                    made += 1;
                    next_gen[n] += 1 + gap(&mut rng);
                }
                gw[next_gen[n] as usize & (GW - 1)] |= 1 << n;
                inj |= 1 << n;
            }
            gw[gs] |= keep;
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
                lat_sum += ej.wrapping_neg() & (t.wrapping_sub(f >> 8) & BMASK) as u64;
                let q = rt.req[o] & !(((!keep) as u16) << l);
                rt.req[o] = q;
                rt.outs &= !(((q == 0) as u8) << o);
                sa_act &= !(((rt.outs == 0) as u64) << r);
            }
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
                if was == 0 {
                    if !c.routed {
                        // routed in the next cycle, VA from t + 2
                        c.routed = true;
                        c.out = route(&rt_tab, r, f);
                        s2.va[s2.nva] = (r << 4 | l) as u16;
                        s2.nva += 1;
                    } else if refresh(rt, l) {
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
                return (hops, delivered, lat_sum, s, trace);
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
    };
    let start = Instant::now();
    let results: Vec<(u64, u64, u64, u32, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..nt)
            .map(|k| {
                let sh = &sh;
                s.spawn(move || run(k, sh))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = start.elapsed().as_secs_f64();
    let hops: u64 = results.iter().map(|r| r.0).sum();
    let del: u64 = results.iter().map(|r| r.1).sum();
    let lat: u64 = results.iter().map(|r| r.2).sum();
    let t = results[0].3;
    println!(
        "event_b threads {nt} cycles {t} wall {wall:.3} s, {:.0} cycles/s, {:.2} M flit-hops/s, hops {hops}, delivered {del}, avg latency {:.2}",
        t as f64 / wall,
        hops as f64 / wall / 1e6,
        lat as f64 / del as f64
    );
    if std::env::var_os("EVENT_B_SUMS").is_some() {
        let tr = results.iter().fold(0u64, |a, r| a.wrapping_add(r.4));
        println!("sums: cycles {t} hops {hops} delivered {del} latency_sum {lat} trace {tr:016x}");
    }
}
