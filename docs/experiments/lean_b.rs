//! Measurement artefact, not part of flitwave: the leanest model of benchmark (b) (issue 2,
//! item 8) written to find out what any simulator could do on the build machine. BENCHMARKS.md,
//! "What a lean model of (b) does on this machine", has the numbers and how to run it:
//!
//!     rustc --edition 2024 -O docs/experiments/lean_b.rs -o /tmp/lean_b && /tmp/lean_b 100000 2
//!
//! Model: 8x8 mesh, DOR, 5 ports, 2 VCs x 8 flits, 4-flit packets, RC 1 + VA 1 cycle, link 2,
//! credit delay 1, injection latency 1, round-robin arbiters, one crossbar read per input port
//! per cycle, Bernoulli (geometric gaps) uniform traffic at 0.025 packets/node/cycle, the given
//! number of cycles, then drain. Arguments: cycles (default 100000), threads (default 2). The
//! routers are split between the threads by rows, each thread owning its routers, sources and
//! packets for the whole run; flits and credits that cross the split go through mailboxes
//! (double-buffered by cycle parity) read after one spin barrier per cycle. Random streams are
//! per thread, so results differ between thread counts (not between runs).
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
const NONE: u8 = 255;
const CAP: usize = 1 << 20;

#[derive(Clone, Copy)]
#[repr(align(64))]
struct Vc {
    flit: [u32; D],
    rdy: [u32; D],
    head: u8,
    len: u8,
    routed: bool,
    out: u8,
    ovc: u8,
    sa_ready: u32,
}
impl Default for Vc {
    fn default() -> Self {
        Vc { flit: [0; D], rdy: [0; D], head: 0, len: 0, routed: false, out: 0, ovc: NONE, sa_ready: 0 }
    }
}

#[derive(Clone, Copy)]
struct Router {
    vc: [Vc; NV],
    credits: [u8; NET * V],
    owner: [u8; P * V],
    sa_rr: [u8; P],
    va_rr: [u8; P],
    occ: u16,
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

fn head(f: u32) -> bool {
    f & 1 != 0
}
fn tail(f: u32) -> bool {
    f & 2 != 0
}

/// Per-thread packet table, read by every thread (written only by its owner, before the
/// packet's head crosses a barrier).
struct Table {
    dest: Vec<u16>,
    birth: Vec<u32>,
}
#[derive(Clone, Copy)]
struct Tables(*const Table, usize);
unsafe impl Send for Tables {}
unsafe impl Sync for Tables {}
impl Tables {
    fn get(self) -> (*const Table, usize) {
        (self.0, self.1)
    }
}

/// Mailbox of one thread for one cycle parity: flits (dst router, dst vc, flit, cycle) and
/// credits (upstream router, out*V+vc, visible-at).
#[derive(Default)]
struct Mail {
    deps: Vec<(u16, u8, u32)>,
    creds: Vec<(u16, u8, u32)>,
}
struct Boxes(Vec<std::cell::UnsafeCell<Mail>>);
unsafe impl Sync for Boxes {}

struct Barrier {
    count: AtomicUsize,
    epoch: AtomicU64,
    n: usize,
}
impl Barrier {
    fn wait(&self, my_gen: &mut u64) {
        if self.n == 1 {
            return;
        }
        *my_gen += 1;
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.epoch.store(*my_gen, Ordering::Release);
        } else {
            while self.epoch.load(Ordering::Acquire) < *my_gen {
                std::hint::spin_loop();
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cycles: u32 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(100_000);
    let nt: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(2);
    let mut tables: Vec<Table> = (0..nt).map(|_| Table { dest: vec![0; CAP], birth: vec![0; CAP] }).collect();
    let tabs = Tables(tables.as_mut_ptr() as *const Table, nt);
    let boxes = Boxes((0..2 * nt).map(|_| std::cell::UnsafeCell::new(Mail::default())).collect());
    let barrier = Barrier { count: AtomicUsize::new(0), epoch: AtomicU64::new(0), n: nt };
    let created: Vec<AtomicU64> = (0..2 * nt).map(|_| AtomicU64::new(0)).collect();
    let done: Vec<AtomicU64> = (0..2 * nt).map(|_| AtomicU64::new(0)).collect();
    let start = Instant::now();
    let results: Vec<(u64, u64, u64, u32)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..nt)
            .map(|k| {
                let (boxes, barrier, created, done) = (&boxes, &barrier, &created, &done);
                let tabs = tabs;
                s.spawn(move || {
                    let lo = k * N / nt;
                    let hi = (k + 1) * N / nt;
                    let owner_of = |r: usize| r * nt / N;
                    let (tp0, tn) = tabs.get();
                    let tables = unsafe { std::slice::from_raw_parts(tp0, tn) };
                    let my = unsafe { &mut *(tp0.add(k) as *mut Table) };
                    let mut npk = 0usize;
                    let mut routers = vec![
                        Router { vc: [Vc::default(); NV], credits: [D as u8; NET * V], owner: [NONE; P * V], sa_rr: [0; P], va_rr: [0; P], occ: 0 };
                        hi - lo
                    ];
                    let mut srcq: Vec<VecDeque<u32>> = vec![VecDeque::new(); hi - lo];
                    let mut sent_flits = vec![0u32; hi - lo];
                    let mut next_gen = vec![0u32; hi - lo];
                    let mut rng = Rng(0x9E3779B97F4A7C15 ^ ((k as u64 + 1) * 0x1234567));
                    let ln1p = (1.0f64 - 0.025).ln();
                    let gap = |rng: &mut Rng| -> u32 { ((rng.unit().max(1e-300)).ln() / ln1p).floor() as u32 };
                    for g in next_gen.iter_mut() {
                        *g = gap(&mut rng);
                    }
                    let mut deps: Vec<(u16, u8, u32)> = Vec::new();
                    let mut credq: VecDeque<(u32, u16, u8)> = VecDeque::new();
                    let (mut hops, mut delivered, mut lat_sum, mut made) = (0u64, 0u64, 0u64, 0u64);
                    let mut ep = 0u64;
                    let mut t: u32 = 0;
                    loop {
                        if t > 0 {
                            let tp = t - 1;
                            // commit of cycle t-1: own departures, then the other parts' mail
                            let arrive = |routers: &mut Vec<Router>, nr: u16, l: u8, f: u32| {
                                let rt = &mut routers[nr as usize - lo];
                                let c = &mut rt.vc[l as usize];
                                assert!((c.len as usize) < D);
                                let slot = (c.head as usize + c.len as usize) % D;
                                c.flit[slot] = f;
                                c.rdy[slot] = tp + LINK_LAT;
                                c.len += 1;
                                rt.occ |= 1 << l;
                            };
                            for &(nr, l, f) in &deps {
                                arrive(&mut routers, nr, l, f);
                            }
                            deps.clear();
                            for j in 0..nt {
                                if j == k {
                                    continue;
                                }
                                let m = unsafe { &*boxes.0[2 * j + (tp as usize & 1)].get() };
                                for &(nr, l, f) in &m.deps {
                                    if owner_of(nr as usize) == k {
                                        arrive(&mut routers, nr, l, f);
                                    }
                                }
                                for &(r, i, when) in &m.creds {
                                    if owner_of(r as usize) == k {
                                        credq.push_back((when, r, i));
                                    }
                                }
                            }
                            while let Some(&(when, r, i)) = credq.front() {
                                if when > t {
                                    break;
                                }
                                credq.pop_front();
                                routers[r as usize - lo].credits[i as usize] += 1;
                            }
                        }
                        let mine = unsafe { &mut *boxes.0[2 * k + (t as usize & 1)].get() };
                        mine.deps.clear();
                        mine.creds.clear();
                        if t < cycles {
                            for n in lo..hi {
                                while next_gen[n - lo] <= t {
                                    let mut d = (rng.next() % (N as u64 - 1)) as usize;
                                    if d >= n {
                                        d += 1;
                                    }
                                    assert!(npk < CAP);
                                    my.dest[npk] = d as u16;
                                    my.birth[npk] = t;
                                    srcq[n - lo].push_back(((k << 20) | npk) as u32);
                                    npk += 1;
                                    made += 1;
                                    next_gen[n - lo] += 1 + gap(&mut rng);
                                }
                            }
                        }
                        let pk = |p: u32| (&tables[(p >> 20) as usize], (p & (CAP as u32 - 1)) as usize);
                        for r in lo..hi {
                            let (x, y) = (r % K, r / K);
                            let rt = &mut routers[r - lo];
                            let mut occ = rt.occ;
                            if occ != 0 {
                                let mut m = occ;
                                while m != 0 {
                                    let l = m.trailing_zeros() as usize;
                                    m &= m - 1;
                                    let c = &mut rt.vc[l];
                                    if !c.routed && c.rdy[c.head as usize] <= t {
                                        let f = c.flit[c.head as usize];
                                        debug_assert!(head(f));
                                        let (tb, i) = pk(f >> 2);
                                        let d = tb.dest[i] as usize;
                                        let (dx, dy) = (d % K, d / K);
                                        c.out = if dx != x {
                                            (dx > x) as u8
                                        } else if dy != y {
                                            2 + (dy > y) as u8
                                        } else {
                                            4
                                        };
                                        c.routed = true;
                                        c.ovc = NONE;
                                        c.sa_ready = t + 1;
                                    }
                                }
                                let mut want = [0u16; P];
                                let mut m = occ;
                                while m != 0 {
                                    let l = m.trailing_zeros() as usize;
                                    m &= m - 1;
                                    let c = &rt.vc[l];
                                    if c.routed && c.ovc == NONE && c.sa_ready <= t {
                                        want[c.out as usize] |= 1 << l;
                                    }
                                }
                                for o in 0..P {
                                    let mut w = want[o];
                                    if w == 0 {
                                        continue;
                                    }
                                    let nvc = if o == NET { 1 } else { V };
                                    for v in 0..nvc {
                                        if w == 0 {
                                            break;
                                        }
                                        if rt.owner[o * V + v] != NONE {
                                            continue;
                                        }
                                        let s = rt.va_rr[o] as u32;
                                        let hi = w & !((1u16 << s) - 1);
                                        let l = if hi != 0 { hi.trailing_zeros() } else { w.trailing_zeros() } as usize;
                                        w &= !(1 << l);
                                        rt.va_rr[o] = ((l + 1) % NV) as u8;
                                        rt.owner[o * V + v] = l as u8;
                                        let c = &mut rt.vc[l];
                                        c.ovc = v as u8;
                                        c.sa_ready = t + 1;
                                    }
                                }
                                let mut port_read = 0u8;
                                let start = (t as usize) % NET;
                                for kk in 0..P {
                                    let o = if kk == 0 { NET } else { (start + kk - 1) % NET };
                                    let mut req = 0u16;
                                    for v in 0..(if o == NET { 1 } else { V }) {
                                        let l = rt.owner[o * V + v];
                                        if l == NONE {
                                            continue;
                                        }
                                        let l = l as usize;
                                        if occ & (1 << l) == 0 || port_read & (1 << (l / V)) != 0 {
                                            continue;
                                        }
                                        let c = &rt.vc[l];
                                        if c.sa_ready > t || c.rdy[c.head as usize] > t {
                                            continue;
                                        }
                                        if o < NET && rt.credits[o * V + v] == 0 {
                                            continue;
                                        }
                                        req |= 1 << l;
                                    }
                                    if req == 0 {
                                        continue;
                                    }
                                    let s = rt.sa_rr[o] as u32;
                                    let hi = req & !((1u16 << s) - 1);
                                    let l = if hi != 0 { hi.trailing_zeros() } else { req.trailing_zeros() } as usize;
                                    rt.sa_rr[o] = ((l + 1) % NV) as u8;
                                    port_read |= 1 << (l / V);
                                    let c = &mut rt.vc[l];
                                    let f = c.flit[c.head as usize];
                                    c.head = (c.head + 1) % D as u8;
                                    c.len -= 1;
                                    if c.len == 0 {
                                        occ &= !(1 << l);
                                    }
                                    let ovc = c.ovc;
                                    if tail(f) {
                                        c.routed = false;
                                        c.ovc = NONE;
                                        rt.owner[o * V + ovc as usize] = NONE;
                                    }
                                    let port = l / V;
                                    if port < NET {
                                        let up = match port {
                                            0 => r - 1,
                                            1 => r + 1,
                                            2 => r - K,
                                            _ => r + K,
                                        };
                                        let e = (up as u16, ((port ^ 1) * V + l % V) as u8, t + 1 + CREDIT_DELAY);
                                        if owner_of(up) == k {
                                            credq.push_back((e.2, e.0, e.1));
                                        } else {
                                            mine.creds.push(e);
                                        }
                                    }
                                    if o == NET {
                                        if tail(f) {
                                            let (tb, i) = pk(f >> 2);
                                            delivered += 1;
                                            lat_sum += (t - tb.birth[i]) as u64;
                                        }
                                    } else {
                                        rt.credits[o * V + ovc as usize] -= 1;
                                        let nr = match o {
                                            0 => r - 1,
                                            1 => r + 1,
                                            2 => r - K,
                                            _ => r + K,
                                        };
                                        let e = (nr as u16, ((o ^ 1) * V + ovc as usize) as u8, f);
                                        if owner_of(nr) == k {
                                            deps.push(e);
                                        } else {
                                            mine.deps.push(e);
                                        }
                                        hops += 1;
                                    }
                                }
                            }
                            if let Some(&p) = srcq[r - lo].front() {
                                let l = NET * V;
                                let c = &mut rt.vc[l];
                                if (c.len as usize) < D {
                                    let s = sent_flits[r - lo];
                                    let f = (p << 2) | (s == 0) as u32 | ((s + 1 == PF) as u32) << 1;
                                    let slot = (c.head as usize + c.len as usize) % D;
                                    c.flit[slot] = f;
                                    c.rdy[slot] = t + 1;
                                    c.len += 1;
                                    occ |= 1 << l;
                                    if s + 1 == PF {
                                        sent_flits[r - lo] = 0;
                                        srcq[r - lo].pop_front();
                                    } else {
                                        sent_flits[r - lo] = s + 1;
                                    }
                                }
                            }
                            rt.occ = occ;
                        }
                        let par = t as usize & 1;
                        created[2 * k + par].store(made, Ordering::Relaxed);
                        done[2 * k + par].store(delivered, Ordering::Relaxed);
                        barrier.wait(&mut ep);
                        t += 1;
                        if t >= cycles {
                            let c: u64 = (0..nt).map(|j| created[2 * j + par].load(Ordering::Relaxed)).sum();
                            let d: u64 = (0..nt).map(|j| done[2 * j + par].load(Ordering::Relaxed)).sum();
                            if c == d {
                                break;
                            }
                        }
                    }
                    (hops, delivered, lat_sum, t)
                })
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
        "threads {nt} cycles {t} wall {wall:.3} s, {:.0} cycles/s, {:.2} M flit-hops/s, hops {hops}, delivered {del}, avg latency {:.2}",
        t as f64 / wall,
        hops as f64 / wall / 1e6,
        lat as f64 / del as f64
    );
    drop(tables);
}
