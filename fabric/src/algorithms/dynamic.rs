//! The dynamic broadcasting scheme of Varvarigos & Bertsekas (§II, §V): packets to be
//! broadcast arrive at every node as independent Poisson processes; the network runs one
//! PMNB (pmnb-2 or pmnb-3) after another, each serving the head packet of every node that
//! had one when the period began. The Dynamic Broadcasting Theorem bounds the mean delay
//! (eqs. 18–19) and gives the stability limit 1/(1 + V/(NX)).

use super::pmnb::{Engine, Timing, Variant};
use crate::program::{NodeCtx, Program, Received};
use crate::scoreboard::DestSet;
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
    /// between pieces over one link (`(0, piece length)` on the ideal router).
    pub hop: (u64, u64),
}

impl DynamicSpec {
    /// λ, broadcast requests per node per slot, from the load (eq. 17).
    pub fn lambda(&self) -> f64 {
        self.load * self.d as f64 / ((1u64 << self.d) - 1) as f64
    }
    /// X and V of the theorem for this PMNB, in slots (§V): pmnb-2 X = (N − 1)/(dN),
    /// V = 2d t_p + 2; pmnb-3 X = 1/d, V = 2d + 4d t_p.
    pub fn x_v(&self) -> (f64, f64) {
        let (d, n) = (self.d as f64, (1u64 << self.d) as f64);
        let tp = self.tp_cycles as f64 / self.flits as f64;
        match self.variant {
            Variant::Two => ((n - 1.0) / (d * n), 2.0 * d * tp + 2.0),
            _ => (1.0 / d, 2.0 * d + 4.0 * d * tp),
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
    /// The theorem's utilization λNX (eq. 17's ρ for pmnb-2; N/(N − 1) of it for pmnb-3).
    pub utilization: f64,
    /// Largest eq.-17 load the scheme is stable at: λ(NX + V) < 1.
    pub stability_limit_load: f64,
    /// The bound on the mean delay in slots, max over the theorem's range of a of
    /// W + X + aNX (eqs. 18–19); None outside the stability region.
    pub delay_bound_slots: Option<f64>,
}

pub fn theorem(s: &DynamicSpec) -> Theorem {
    let n = (1u64 << s.d) as f64;
    let (x, v) = s.x_v();
    let lambda = s.lambda();
    let rho = lambda * n * x;
    let limit = (n - 1.0) / s.d as f64 / (n * x + v);
    let slack = 1.0 - rho - lambda * v;
    let delay_bound_slots = (slack > 0.0).then(|| {
        // a lies between a_min (from M̄, the mean number served per period, and M̂, the
        // smallest integer above it) and 1/2 − 1/(2N); T is linear in a, so the larger
        // end value bounds it.
        let m_bar = lambda * n * v / (1.0 - rho);
        let a_max = 0.5 - 0.5 / n;
        let a_min = if m_bar > 1e-12 {
            let m_hat = m_bar.floor() + 1.0;
            ((m_bar + (m_hat - 1.0) * (2.0 * m_bar - m_hat)) / (2.0 * n * m_bar) - 0.5 / n).clamp(0.0, a_max)
        } else {
            0.0
        };
        let t = |a: f64| {
            let w = rho * x / (2.0 * slack) + (1.0 - rho) * v / (2.0 * slack) + (1.0 - rho * a - lambda * v) * v / slack;
            w + x + a * n * x
        };
        t(a_min).max(t(a_max))
    });
    Theorem { x_slots: x, v_slots: v, lambda, utilization: rho, stability_limit_load: limit, delay_bound_slots }
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
            [avg.unwrap() - h, avg.unwrap() + h]
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
