//! The dynamic broadcasting scheme of Varvarigos & Bertsekas (§II, §V): packets to be
//! broadcast arrive at every node as independent Poisson processes; the network runs one
//! PMNB (pmnb-2 or pmnb-3) after another, each serving the head packet of every node that
//! had one when the period began. The Dynamic Broadcasting Theorem bounds the mean delay
//! (eqs. 18–19) and gives the stability limit 1/(1 + V/(NX)).

use super::entry::{self, Algorithm, Need, Ports, Settings};
use super::pmnb::{Engine, Timing, Variant};
use super::timing::{handover_timing, hop_timing};
use super::{Bounds, prefix};
use crate::program::{NodeCtx, Program, Received};
use crate::scoreboard::DestSet;
use crate::topology::TopologyKind;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use router::NodeId;
use serde::Serialize;
use std::collections::VecDeque;

/// A dynamic run.
#[derive(Clone, Copy, Debug)]
pub struct DynamicSpec {
    pub variant: Variant,
    pub d: u32,
    /// The hypercube utilization factor ρ = λ(N − 1)/d of eq. (17).
    pub load: f64,
    /// Arrivals are generated for cycles [0, window).
    pub window: u64,
    /// Delays are measured for arrivals from this cycle on.
    pub warmup: u64,
    pub flits: u16,
    /// A prefix step in cycles (0: ranks known).
    pub tp_cycles: u64,
    pub seed: u64,
    /// The router's one-hop latency beyond the packet length and its sustained interval
    /// between pieces over one link (`(0, piece length)` on the ideal router), and the
    /// same for a prefix packet.
    pub hop: (u64, u64),
    pub prefix_hop: (u64, u64),
    /// Cycles after a prefix packet before a piece can follow it over the same link
    /// ([`Timing::handover`]; 0: no longer than a prefix step).
    pub handover: u64,
}

impl DynamicSpec {
    /// λ, broadcast requests per node per slot, from the load (eq. 17).
    pub fn lambda(&self) -> f64 {
        self.load * self.d as f64 / ((1u64 << self.d) - 1) as f64
    }
    /// X and V of the theorem for this PMNB, in slots (§V): X = (N − 1)/(dN) for both,
    /// V = 2d t_p + 2 (pmnb-2) or 2d + 4d t_p (pmnb-3: "V should be replaced by 2d + 4dt_p
    /// throughout this section"). PMNB III fits XM + V with that X because
    /// ⌈M/d⌉ − 1 ≤ (M − 1)/d ≤ M(N − 1)/(dN) for M ≤ N. So ρ = λNX is eq. 17's load for
    /// both.
    pub fn x_v(&self) -> (f64, f64) {
        let (d, n) = (self.d as f64, (1u64 << self.d) as f64);
        let tp = self.tp_cycles as f64 / self.flits as f64;
        let x = (n - 1.0) / (d * n);
        match self.variant {
            Variant::Two => (x, 2.0 * d * tp + 2.0),
            _ => (x, 2.0 * d + 4.0 * d * tp),
        }
    }
}

/// What the theorem says for a load.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Theorem {
    pub x_slots: f64,
    pub v_slots: f64,
    /// λ per node per slot.
    pub lambda: f64,
    /// The theorem's utilization ρ = λNX (equal to eq. 17's load, X being (N − 1)/(dN)).
    pub utilization: f64,
    /// Largest eq.-17 load the scheme is stable at: λ(NX + V) < 1, i.e. 1/(1 + V/(NX)).
    pub stability_limit_load: f64,
    /// M̄ = λNV/(1 − ρ), the mean number of packets a period serves (eq. 9).
    pub mean_served_per_period: Option<f64>,
    /// The lower end of the theorem's range of a (the upper one is 1/2 − 1/(2N)).
    pub a_min: Option<f64>,
    /// W of eq. 19 at a = `a_min`: the largest mean queueing time the theorem allows.
    pub w_slots: Option<f64>,
    /// The bound on the mean delay in slots, eq. 18: W + X + min((N − 1)X/2, ρW) with W
    /// at `a_min`; None outside the stability region.
    pub delay_bound_slots: Option<f64>,
}

/// W of the theorem (eq. 19, eq. 2 with constant X and V) for a given a.
fn w_of(x: f64, v: f64, lambda: f64, rho: f64, a: f64) -> f64 {
    let slack = 1.0 - rho - lambda * v;
    rho * x / (2.0 * slack) + (1.0 - rho) * v / (2.0 * slack) + (1.0 - rho * a - lambda * v) * v / slack
}

/// The Dynamic Broadcasting Theorem (§II, proof in §III; for the hypercube eqs. 17–19):
///
///   T = W + X + aNX ≤ W + X + min((N − 1)X/2, ρW),
///
/// W = ρX/(2(1 − ρ − λV)) + (1 − ρ)V/(2(1 − ρ − λV)) + (1 − ρa − λV)V/(1 − ρ − λV),
/// a_min ≤ a ≤ 1/2 − 1/(2N), a_min = (M̄ + (M̂ − 1)(2M̄ − M̂))/(2NM̄) − 1/(2N), M̂ the smallest
/// integer above M̄.
///
/// a is not known, only its range; W falls as a grows and the bound grows with W, so the
/// bound is taken at a_min: the largest value the theorem allows. At ρ → 0 it is 1.5V + X
/// (the paper's "T ≤ 1.5V + X").
///
/// Where the paper's printed numbers differ from this (each difference only loosens the
/// paper's version, so this bound is the theorem's own):
/// - eq. 18 writes 1/d for X and (N − 1)/(2d) for (N − 1)X/2, X being (N − 1)/(dN);
/// - §V gives M̄ = ρVd/(1 − ρ), which is λ(N − 1)V/(1 − ρ): N − 1 where eq. 9, E(k) =
///   λNV/(1 − ρ), has N. Eq. 9 is exact for the scheme — the periods serve λN packets per
///   unit time, so E(M)/(V + E(M)X) = λN — and a unit test below checks it on a direct
///   simulation of periods of XM + V; it is used here;
/// - for PMNB III §V prints the stability limit 1/(1 + (2d + 4dt_p)d/N), where the
///   substitution it prescribes (V = 2d + 4dt_p throughout, X unchanged) gives
///   1/(1 + (2d + 4dt_p)d/(N − 1)); the latter follows from λ(NX + V) < 1 and is used.
pub fn theorem(s: &DynamicSpec) -> Theorem {
    let n = (1u64 << s.d) as f64;
    let (x, v) = s.x_v();
    let lambda = s.lambda();
    let rho = lambda * n * x;
    let limit = 1.0 / (1.0 + v / (n * x));
    let stable = 1.0 - rho - lambda * v > 0.0;
    let m_bar = stable.then(|| lambda * n * v / (1.0 - rho));
    let a_min = m_bar.map(|m| {
        let a_max = 0.5 - 0.5 / n;
        if m > 1e-12 {
            let m_hat = m.floor() + 1.0;
            ((m + (m_hat - 1.0) * (2.0 * m - m_hat)) / (2.0 * n * m) - 0.5 / n).clamp(0.0, a_max)
        } else {
            0.0
        }
    });
    let w = a_min.map(|a| w_of(x, v, lambda, rho, a));
    let delay_bound_slots = w.map(|w| w + x + ((n - 1.0) * x / 2.0).min(rho * w));
    Theorem {
        x_slots: x,
        v_slots: v,
        lambda,
        utilization: rho,
        stability_limit_load: limit,
        mean_served_per_period: m_bar,
        a_min,
        w_slots: w,
        delay_bound_slots,
    }
}

/// Measured delays and backlog.
#[derive(Clone, Debug, Serialize)]
pub struct DynamicResults {
    pub load: f64,
    pub pmnb: Variant,
    /// Mean delay from arrival to the end of the period that served it, in slots, over
    /// arrivals after the warm-up that were served.
    pub avg_delay_slots: Option<f64>,
    /// 95% confidence interval of the mean (batch means over 10 batches of arrival time).
    pub avg_delay_ci95: Option<[f64; 2]>,
    pub delay_p50_slots: Option<f64>,
    pub delay_p90_slots: Option<f64>,
    pub delay_p99_slots: Option<f64>,
    /// Broadcasts completed per node per slot during the arrival window.
    pub throughput: f64,
    /// Broadcast requests generated per node per slot (λ).
    pub offered: f64,
    /// Packets waiting (not yet served) at the start of a period, averaged over periods in
    /// the arrival window.
    pub mean_backlog: f64,
    /// Mean backlog over the middle and the last third of the window.
    pub backlog_middle_third: f64,
    pub backlog_last_third: f64,
    /// The backlog stays bounded: the last third's mean is within 20% (plus two packets)
    /// of the middle third's, and everything that arrived was served.
    pub stable: bool,
    pub periods: u64,
    pub arrivals: u64,
    pub served: u64,
    /// Arrived in the window but not served when the run stopped (the drain is capped at
    /// another window).
    pub unserved: u64,
    pub theorem: Theorem,
}

pub struct Dynamic {
    spec: DynamicSpec,
    engine: Engine,
    n: usize,
    /// Mean inter-arrival time in cycles.
    mean_gap: f64,
    rng: Vec<ChaCha8Rng>,
    next_arrival: Vec<f64>,
    queue: Vec<VecDeque<f64>>,
    head: Vec<f64>,
    /// The next period's active set, messages and head arrivals, set up at its first
    /// cycle; each node takes its own when it starts the period (after ending the last).
    next_active: Vec<bool>,
    next_msg: Vec<u32>,
    next_head: Vec<f64>,
    /// The period whose active set was taken (the testbench's bookkeeping: arrivals and
    /// the scoreboard's messages for a period are set up once, for every node alike).
    begun: Option<u64>,
    stopped: bool,
    delays: Vec<(f64, f64)>,
    backlog: Vec<(u64, u64)>,
    periods: u64,
    arrivals: u64,
    served_in_window: u64,
    served: u64,
    failures: Vec<String>,
}

impl Dynamic {
    pub fn new(spec: DynamicSpec) -> Dynamic {
        let n = 1usize << spec.d;
        let pieces = spec.variant.pieces(spec.d) as u64;
        let t = Timing {
            d: spec.d,
            variant: spec.variant,
            tp: spec.tp_cycles,
            ms: spec.flits as u64 / pieces,
            slot: spec.flits as u64,
            extra: spec.hop.0,
            gap: spec.hop.1,
            prefix_extra: spec.prefix_hop.0,
            prefix_gap: spec.prefix_hop.1,
            handover: spec.handover,
        };
        let lambda = spec.lambda();
        let mean_gap = if lambda > 0.0 { spec.flits as f64 / lambda } else { f64::INFINITY };
        let rng: Vec<ChaCha8Rng> = (0..n)
            .map(|x| {
                let mut r = ChaCha8Rng::seed_from_u64(spec.seed);
                r.set_stream(x as u64);
                r
            })
            .collect();
        let mut d = Dynamic {
            spec,
            engine: Engine::new(t, spec.flits),
            n,
            mean_gap,
            rng,
            next_arrival: vec![0.0; n],
            queue: vec![VecDeque::new(); n],
            head: vec![0.0; n],
            next_active: vec![false; n],
            next_msg: vec![0; n],
            next_head: vec![0.0; n],
            begun: None,
            stopped: false,
            delays: Vec::new(),
            backlog: Vec::new(),
            periods: 0,
            arrivals: 0,
            served_in_window: 0,
            served: 0,
            failures: Vec::new(),
        };
        for x in 0..n {
            d.next_arrival[x] = d.gap(x);
        }
        d
    }

    fn gap(&mut self, x: usize) -> f64 {
        let u: f64 = self.rng[x].random();
        -(1.0 - u).ln() * self.mean_gap
    }

    /// The period starting at cycle `p`: take every node's head packet (arrived before
    /// p), declare its broadcast, or stop once the window and the capped drain are over.
    fn take_active_set(&mut self, cx: &mut NodeCtx<'_>) {
        let p = cx.now;
        let until = (p as f64).min(self.spec.window as f64);
        let mut waiting = 0;
        for x in 0..self.n {
            while self.next_arrival[x] < until {
                let a = self.next_arrival[x];
                self.queue[x].push_back(a);
                self.arrivals += 1;
                self.next_arrival[x] = a + self.gap(x);
            }
            waiting += self.queue[x].len() as u64;
        }
        if p < self.spec.window {
            self.backlog.push((p, waiting));
        }
        self.stopped = p >= self.spec.window && (waiting == 0 || p >= 2 * self.spec.window);
        if self.stopped {
            return;
        }
        self.periods += 1;
        let pieces = self.spec.variant.pieces(self.spec.d);
        for x in 0..self.n {
            let act = !self.queue[x].is_empty();
            self.next_active[x] = act;
            if act {
                self.next_head[x] = self.queue[x].pop_front().unwrap();
                let dest = DestSet::Broadcast { root: NodeId(x as u32), span: cx.topo.full_span() };
                self.next_msg[x] = cx.declare(dest);
                for _ in 1..pieces {
                    cx.declare(dest);
                }
            }
        }
        if self.engine.t.tp == 0 {
            self.engine.known_ranks(&self.next_active);
        }
    }

    fn period_start(&mut self, cx: &mut NodeCtx<'_>) {
        let p = cx.now;
        if self.begun != Some(p) {
            self.begun = Some(p);
            self.take_active_set(cx);
        }
        if !self.stopped {
            let u = cx.node.idx();
            self.engine.active[u] = self.next_active[u];
            self.engine.msg_base[u] = self.next_msg[u];
            self.head[u] = self.next_head[u];
            self.engine.begin(cx, p);
            if self.engine.over(cx.node.0) {
                self.period_end(cx);
            }
        }
    }

    /// Node u's period ended: it has every piece of the period, and its own packet is done.
    fn period_end(&mut self, cx: &mut NodeCtx<'_>) {
        let u = cx.node.0 as usize;
        let pieces = self.spec.variant.pieces(self.spec.d);
        let m = self.engine.m[u] as u32;
        let expect = pieces * m.saturating_sub(self.engine.active[u] as u32);
        if self.engine.got[u] != expect && self.failures.len() < 10 {
            self.failures.push(format!(
                "cycle {}: node {u} had {} of the {expect} pieces of its period when the period ended",
                cx.now, self.engine.got[u]
            ));
        }
        if self.engine.active[u] {
            let a = self.head[u];
            self.served += 1;
            if a < self.spec.window as f64 {
                self.served_in_window += (cx.now <= self.spec.window) as u64;
                if a >= self.spec.warmup as f64 {
                    self.delays.push((a, (cx.now as f64 - a) / self.spec.flits as f64));
                }
            }
        }
        self.period_start(cx);
    }

    pub fn results(&self) -> DynamicResults {
        let slot = self.spec.flits as f64;
        let mut ds: Vec<f64> = self.delays.iter().map(|&(_, d)| d).collect();
        ds.sort_by(f64::total_cmp);
        let q = |p: f64| (!ds.is_empty()).then(|| ds[((ds.len() - 1) as f64 * p).round() as usize]);
        let avg = (!ds.is_empty()).then(|| ds.iter().sum::<f64>() / ds.len() as f64);
        // Batch means: 10 batches by arrival time.
        let (w0, w1) = (self.spec.warmup as f64, self.spec.window as f64);
        let mut sums = [(0.0f64, 0u64); 10];
        for &(a, d) in &self.delays {
            let b = (((a - w0) / (w1 - w0)) * 10.0).floor().clamp(0.0, 9.0) as usize;
            sums[b].0 += d;
            sums[b].1 += 1;
        }
        let means: Vec<f64> = sums.iter().filter(|s| s.1 > 0).map(|s| s.0 / s.1 as f64).collect();
        let ci = (means.len() >= 2).then(|| {
            let k = means.len() as f64;
            let mu = means.iter().sum::<f64>() / k;
            let var = means.iter().map(|m| (m - mu).powi(2)).sum::<f64>() / (k - 1.0);
            // Student t, 97.5% quantile, for k − 1 degrees of freedom (k ≤ 10).
            let t = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262][means.len() - 2];
            let h = t * (var / k).sqrt();
            // A delay is never negative: with few batches (an unstable run serves few
            // requests) the symmetric interval would reach below 0; cut it there.
            [(avg.unwrap() - h).max(0.0), avg.unwrap() + h]
        });
        let third = |lo: f64, hi: f64| {
            let v: Vec<u64> = self.backlog.iter().filter(|&&(p, _)| (p as f64) >= lo && (p as f64) < hi).map(|&(_, b)| b).collect();
            if v.is_empty() { 0.0 } else { v.iter().sum::<u64>() as f64 / v.len() as f64 }
        };
        let mean_backlog = third(0.0, w1);
        let (mid, last) = (third(w1 / 3.0, 2.0 * w1 / 3.0), third(2.0 * w1 / 3.0, w1));
        let unserved = self.arrivals - self.served;
        let slots = w1 / slot;
        DynamicResults {
            load: self.spec.load,
            pmnb: self.spec.variant,
            avg_delay_slots: avg,
            avg_delay_ci95: ci,
            delay_p50_slots: q(0.5),
            delay_p90_slots: q(0.9),
            delay_p99_slots: q(0.99),
            throughput: self.served_in_window as f64 / (self.n as f64 * slots),
            offered: self.spec.lambda(),
            mean_backlog,
            backlog_middle_third: mid,
            backlog_last_third: last,
            stable: last <= 1.2 * mid + 2.0 && unserved == 0,
            periods: self.periods,
            arrivals: self.arrivals,
            served: self.served,
            unserved,
            theorem: theorem(&self.spec),
        }
    }
}

impl Program for Dynamic {
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        self.period_start(cx);
    }
    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        if self.engine.run_due(cx) {
            self.period_end(cx);
        }
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        self.engine.receive(cx, m);
    }
    fn report(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.results()).ok()
    }
    fn failures(&self) -> Vec<String> {
        let mut f = self.failures.clone();
        f.extend(self.engine.failures());
        f
    }
}

/// The PMNB each period runs without `--pmnb`.
pub const DEFAULT_PMNB: Variant = Variant::Two;

/// The settings of `dynamic`.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct DynamicConfig {
    /// The PMNB each period runs: pmnb-2 or pmnb-3.
    pub pmnb: Variant,
    /// The hypercube utilization factor ρ = λ(N − 1)/d (eq. 17).
    pub load: f64,
    /// Broadcast requests per node per slot.
    pub lambda: f64,
    /// Arrivals during [0, cycles); the periods under way then finish, and the backlog
    /// drains for at most as long again.
    pub cycles: u64,
    /// Delays are averaged over arrivals from this cycle on (a tenth of the window).
    pub warmup_cycles: u64,
    pub tp: f64,
    /// Cycles of a step (t_p × packet-flits, at most 1000 × 65535).
    pub tp_cycles: u32,
}

pub const DYNAMIC: Algorithm = Algorithm {
    ports: Ports::All(entry::SIMULTANEOUS),
    settings: Settings::Dynamic,
    memory: Some(|_, i, max_cycles| {
        let c = i.dynamic.expect("dynamic settings resolved");
        let nodes = i.nodes();
        let d = i.spec.sizes[0]; // the hypercube's dimension
        let pieces = c.pmnb.pieces(d) as u128;
        let slots = c.cycles.min(max_cycles) as f64 / i.spec.packet_flits as f64;
        let packets = (c.lambda * nodes as f64 * slots).ceil() as u128;
        // Measured (docs/performance.md): besides each piece's record, about 6.7 KiB per
        // node of periods' state and queued copies, and 3.5 KiB more per node for each unit
        // of rho / (1 - rho), as queues grow with the load (taken at rho = 0.8 beyond it,
        // where how long they grow depends on the run's length: a short run at rho = 0.95
        // holds less).
        let rho = c.load.min(0.8);
        let queueing = (rho / (1.0 - rho) * 3600.0) as u128;
        Ok(Need {
            field: "cycles",
            value: c.cycles.to_string(),
            what: format!("about {packets} broadcasts over {} slots on {nodes} nodes", slots.round()),
            bytes: packets * pieces * (entry::RECORD_BYTES + entry::bitset_bytes(i.spec)) + nodes * (6_900 + queueing),
        })
    }),
    ..Algorithm::new(
        "dynamic",
        &[TopologyKind::Hypercube],
        "Varvarigos & Bertsekas, sec. II (dynamic broadcasting scheme and theorem), sec. V (hypercube: eqs. 17-19, stability limit)",
        "Poisson broadcast requests at --load rho (eq. 17) for --cycles, served by repeated PMNBs (--pmnb pmnb-2|pmnb-3); mean delay, CI, percentiles, backlog, stability, the theorem's bound",
        |i| {
            let c = i.dynamic.expect("dynamic settings resolved");
            let (d, l) = (i.d(), i.spec.packet_flits);
            let piece = l / c.pmnb.pieces(d) as u16;
            let prefix_flits = prefix::packet_flits(c.tp_cycles as u64, l);
            let spec = DynamicSpec {
                variant: c.pmnb,
                d,
                load: c.load,
                window: c.cycles,
                warmup: c.warmup_cycles,
                flits: l,
                tp_cycles: c.tp_cycles as u64,
                seed: i.seed,
                hop: hop_timing(i.spec, piece),
                prefix_hop: hop_timing(i.spec, prefix_flits),
                handover: handover_timing(i.spec, prefix_flits, piece),
            };
            (Box::new(Dynamic::new(spec)), Bounds::default())
        },
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    /// System "b" of §III-B reduced to what the theorem assumes: N queues with Poisson
    /// arrivals of rate λ each; periods one after another, each serving the head of every
    /// queue that is non-empty at its start and lasting exactly V + MX; a packet's delay
    /// ends with its period. Returns the mean delay and the mean M per period, over the
    /// periods after the first tenth.
    fn periods(n: usize, x: f64, v: f64, lambda: f64, count: usize, seed: u64) -> (f64, f64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let exp = |rng: &mut ChaCha8Rng| -> f64 {
            let u: f64 = rng.random();
            -(1.0 - u).ln() / lambda
        };
        let mut next: Vec<f64> = (0..n).map(|_| exp(&mut rng)).collect();
        let mut queue: Vec<VecDeque<f64>> = vec![VecDeque::new(); n];
        let (mut t, mut delay, mut served, mut m_sum, mut m_count) = (0.0, 0.0, 0u64, 0u64, 0u64);
        for p in 0..count {
            let mut heads = Vec::new();
            for u in 0..n {
                while next[u] < t {
                    queue[u].push_back(next[u]);
                    next[u] += exp(&mut rng);
                }
                if let Some(a) = queue[u].pop_front() {
                    heads.push(a);
                }
            }
            let end = t + v + heads.len() as f64 * x;
            if p >= count / 10 {
                delay += heads.iter().map(|a| end - a).sum::<f64>();
                served += heads.len() as u64;
                m_sum += heads.len() as u64;
                m_count += 1;
            }
            t = end;
        }
        (delay / served as f64, m_sum as f64 / m_count as f64)
    }

    fn spec(variant: Variant, d: u32, load: f64, tp: u64) -> DynamicSpec {
        DynamicSpec {
            variant,
            d,
            load,
            window: 1,
            warmup: 0,
            flits: 1,
            tp_cycles: tp,
            seed: 0,
            hop: (0, 1),
            prefix_hop: (0, 1),
            handover: 0,
        }
    }

    /// The bound holds on the scheme it is derived for (periods of exactly XM + V), and
    /// eq. 9's mean number served per period, λNV/(1 − ρ), is what those periods serve.
    #[test]
    fn bound_holds_on_ideal_periods_and_eq9_is_exact() {
        for (variant, d, tp) in
            [(Variant::Two, 3, 0), (Variant::Two, 6, 0), (Variant::Three, 3, 0), (Variant::Two, 6, 1), (Variant::Three, 6, 1)]
        {
            let limit = theorem(&spec(variant, d, 0.0, tp)).stability_limit_load;
            for frac in [0.05, 0.3, 0.6, 0.85] {
                let th = theorem(&spec(variant, d, limit * frac, tp));
                let n = 1usize << d;
                let (delay, m) = periods(n, th.x_slots, th.v_slots, th.lambda, 300_000, 11 + d as u64);
                let ctx = format!("{variant:?} d={d} tp={tp} load={:.3}", limit * frac);
                let bound = th.delay_bound_slots.unwrap();
                assert!(delay <= bound, "{ctx}: mean delay {delay} above the bound {bound}");
                let eq9 = th.mean_served_per_period.unwrap();
                assert!((m - eq9).abs() <= 0.02 * eq9, "{ctx}: {m} served per period, eq. 9 says {eq9}");
                // §V's M̄ = ρVd/(1 − ρ) misses by N/(N − 1): visible at N = 8.
                let sec5 = limit * frac * th.v_slots * d as f64 / (1.0 - limit * frac);
                if n == 8 && frac >= 0.3 {
                    assert!((m - eq9).abs() < (m - sec5).abs(), "{ctx}: {m} closer to §V's {sec5} than to eq. 9's {eq9}");
                }
            }
        }
    }

    /// At ρ → 0 the bound is 1.5V + X (the paper, after eq. 12 and in §V: 3dt_p + 3 + 1/d
    /// rounds X up to 1/d).
    #[test]
    fn light_load_bound_is_one_and_a_half_v_plus_x() {
        for d in 3..=10u32 {
            for tp in 0..=3u64 {
                for variant in [Variant::Two, Variant::Three] {
                    let th = theorem(&spec(variant, d, 1e-9, tp));
                    let (df, n, tpf) = (d as f64, (1u64 << d) as f64, tp as f64);
                    let v = if variant == Variant::Two { 2.0 * df * tpf + 2.0 } else { 2.0 * df + 4.0 * df * tpf };
                    let expect = 1.5 * v + (n - 1.0) / (df * n);
                    assert!((th.delay_bound_slots.unwrap() - expect).abs() < 1e-6, "{variant:?} d={d} tp={tp}");
                }
            }
        }
    }
}
