//! Measurement of synthetic traffic as the field does it: statistics over a window of cycles
//! after a warm-up, a confidence interval of the mean latency by batch means, throughput
//! accepted and offered over the window, and whether the source queues grow without bound.
//!
//! # The window
//!
//! A run generates packets during cycles `[0, cycles)`; the first `warmup` of them fill the
//! empty network and are not measured. The window is `[warmup, cycles)`, of length T:
//!
//! - **Latency** (delivery cycle minus birth) is that of the packets *born* in the window,
//!   whenever they arrive: BookSim's convention, where the packets generated in the
//!   measurement phase are the ones measured and the run goes on until they have all
//!   arrived (flitwave drains the network after `cycles`, so every one of them is counted).
//! - **Accepted throughput** is the flits ejected in cycles `[warmup, cycles)`, per node
//!   and cycle; **offered** the flits of the packets generated in the window, per node and
//!   cycle (measured, so a permutation's idle nodes and the random draws are in it), a
//!   packet the routers replicate counting once per destination, as its flits are ejected.
//!
//! # Batch means
//!
//! The window is cut into B batches of equal length by birth cycle (batch i holds the
//! packets born in `[warmup + ⌈iT/B⌉, warmup + ⌈(i+1)T/B⌉)`). With m_i the mean latency of
//! batch i and s the standard deviation of the m_i, the 95 % confidence half-width of the
//! mean latency is t · s / √B, t being Student's t quantile at 0.975 with B − 1 degrees of
//! freedom. Latencies of packets born close together are correlated; means of long batches
//! are nearly independent, which the plain standard error of all packets would wrongly
//! assume of the packets themselves. B = 10 by default, within the 10 to 30 that simulation
//! texts advise: fewer batches widen the interval through t (4.30 for B = 3 against 2.26
//! for B = 10), more make each batch shorter and its mean more correlated with the next.
//! A batch in which no packet was born has no mean; then there is no interval.
//!
//! # Saturation
//!
//! Beyond saturation the network accepts less than is offered, and the difference piles up
//! in the sources' queues (the packets a node's NIC has not started sending). The queues
//! of all nodes together are sampled at the B + 1 batch boundaries, and a least-squares line
//! through the samples gives their growth over the window. The run is **saturated** when
//! more than [`SATURATION_SHARE`] (5 %) of what the window offered piled up, seen both at the
//! sources and at the sinks:
//!
//! - the fitted queue growth over the window exceeds 5 % of the packets offered in it, and
//! - accepted throughput is below 95 % of offered throughput.
//!
//! Below saturation both hold only by chance: the queues return to empty again and again,
//! so their fitted growth is a few packets, and what is accepted differs from what is
//! offered only by the packets in flight at the window's two ends. Beyond it both measure
//! the same excess: the queues grow by (offered − accepted) × nodes × T / L packets, that
//! share of what was offered. Asking for both keeps a transient from counting: a long
//! burst in a short window grows the queues but is still being accepted, and a short window
//! at light load has a few percent of its flits still in flight at its end but no growing
//! queue. Close to saturation the queues wander widely and the flag may say either; run
//! longer, with a warm-up, to tell.
//!
//! # Broadcasts
//!
//! A broadcast's latency is from its creation to the cycle its last destination has the
//! tail, whether the routers replicate one packet or the nodes re-send it along the tree;
//! the scoreboard times it ([`crate::scoreboard::Timing`]), and [`broadcasts`] gives the
//! figures of those created in the window (of every timed broadcast in a run without one),
//! with their own batch means. The packets of a broadcast are not unicast latency samples:
//! the unicast figures above are of unicast messages alone.
//!
//! # In the kernel
//!
//! The kernel calls [`Measurement::generated`] when a node's program queues a packet,
//! [`Measurement::delivered`] when a packet reaches its destination,
//! [`Measurement::ejected`] with each stepped cycle's ejected flits and
//! [`Measurement::sample_queues`] at the start of each stepped cycle (the lines marked
//! `// measure:`); a split run's parts each keep their own and [`Measurement::join`] folds
//! them. None of them changes what the fabric does.

use crate::kernel::Latencies;
use serde::Serialize;

/// The share of the window's offered load that, piled up at the sources and missing at the
/// sinks, makes a run saturated.
pub const SATURATION_SHARE: f64 = 0.05;

/// The measurement window `[from, to)` of a traffic run and the number of its batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Window {
    pub from: u64,
    pub to: u64,
    pub batches: u32,
}

impl Window {
    /// Batches unless asked otherwise (see the module's documentation).
    pub const DEFAULT_BATCHES: u32 = 10;

    /// Cycles in the window (at least 1).
    pub fn cycles(&self) -> u64 {
        self.to - self.from
    }

    /// The first cycle of batch `i`, `from + ⌈i × len / batches⌉`; `i = batches` gives the
    /// window's end.
    pub fn boundary(&self, i: u32) -> u64 {
        self.from + (self.cycles() as u128 * i as u128).div_ceil(self.batches as u128) as u64
    }

    fn contains(&self, t: u64) -> bool {
        (self.from..self.to).contains(&t)
    }

    /// The batch of a packet born in cycle `birth`, inside the window: the last whose
    /// boundary is at or before it (an integer is at least ⌈y⌉ exactly when it is at least y).
    fn batch_of(&self, birth: u64) -> usize {
        ((birth - self.from) as u128 * self.batches as u128 / self.cycles() as u128) as usize
    }
}

/// What the kernel saw of a traffic run's window (nothing, for a run without one).
#[derive(Clone, Debug, Default)]
pub struct Measurement {
    window: Option<Window>,
    /// Latencies of the packets born in the window.
    pub latencies: Latencies,
    /// Per batch: packets and the sum of their latencies.
    batch_packets: Vec<u64>,
    batch_sums: Vec<u128>,
    ejected_flits: u64,
    offered_flits: u64,
    offered_packets: u64,
    /// Packets queued at the sources at the batch boundaries sampled so far.
    queues: Vec<u64>,
    /// The next boundary to sample (`u64::MAX`: none).
    next_sample: u64,
    /// The buffer occupancy histograms summed per port class, read at the window's start
    /// and end (when the run reached them), and the next of the two to read.
    occupancy_from: Option<router::PortClasses>,
    occupancy_to: Option<router::PortClasses>,
    next_occupancy: u64,
}

impl Measurement {
    /// A measurement of `window`; with None, every hook does nothing.
    pub fn new(window: Option<Window>) -> Measurement {
        if let Some(w) = window {
            assert!(w.from < w.to && w.batches >= 1, "a measurement window of at least one cycle and one batch: {w:?}");
        }
        let b = window.map_or(0, |w| w.batches as usize);
        Measurement {
            window,
            batch_packets: vec![0; b],
            batch_sums: vec![0; b],
            next_sample: window.map_or(u64::MAX, |w| w.from),
            next_occupancy: window.map_or(u64::MAX, |w| w.from),
            ..Measurement::default()
        }
    }

    pub fn window(&self) -> Option<Window> {
        self.window
    }

    /// A packet was generated (queued at its source) in cycle `t`, offering `flits` flits
    /// to be ejected (its length, times its destinations for one the routers replicate).
    #[inline]
    pub fn generated(&mut self, t: u64, flits: u64) {
        if self.window.is_some_and(|w| w.contains(t)) {
            self.offered_flits += flits;
            self.offered_packets += 1;
        }
    }

    /// A packet of `flits` flits born in cycle `birth` was delivered in cycle `t`.
    #[inline]
    pub fn delivered(&mut self, t: u64, birth: u64, _flits: u16) {
        let Some(w) = self.window.filter(|w| w.contains(birth)) else { return };
        let latency = t - birth;
        self.latencies.record(latency);
        let b = w.batch_of(birth);
        self.batch_packets[b] += 1;
        self.batch_sums[b] += latency as u128;
    }

    /// `n` flits were ejected in cycle `t`.
    #[inline]
    pub fn ejected(&mut self, t: u64, n: u64) {
        if n > 0 && self.window.is_some_and(|w| w.contains(t)) {
            self.ejected_flits += n;
        }
    }

    /// The kernel is about to step cycle `t`; `queued` counts the packets waiting at the
    /// sources (called only when a batch boundary is due). Every boundary up to `t` not yet
    /// sampled gets that count: nothing is queued or started in the cycles the kernel skips.
    #[inline]
    pub fn sample_queues(&mut self, t: u64, queued: impl FnOnce() -> u64) {
        if t >= self.next_sample {
            self.take_samples(t, queued());
        }
    }

    #[cold]
    fn take_samples(&mut self, t: u64, queued: u64) {
        let w = self.window.expect("samples are due only in a window");
        while self.queues.len() <= w.batches as usize && w.boundary(self.queues.len() as u32) <= t {
            self.queues.push(queued);
        }
        self.next_sample = if self.queues.len() > w.batches as usize { u64::MAX } else { w.boundary(self.queues.len() as u32) };
    }

    /// The kernel is about to step cycle `t`; `read(at)` sums the buffer occupancy
    /// histograms of the routers up to cycle `at` (called only when the window's start or end
    /// is due: nothing changes in the cycles the kernel skips, so a reading at a boundary
    /// passed over is exact).
    #[inline]
    pub fn sample_occupancy(&mut self, t: u64, read: impl FnMut(u64) -> router::PortClasses) {
        if t >= self.next_occupancy {
            self.take_occupancy(t, read);
        }
    }

    #[cold]
    fn take_occupancy(&mut self, t: u64, mut read: impl FnMut(u64) -> router::PortClasses) {
        let w = self.window.expect("readings are due only in a window");
        if self.occupancy_from.is_none() && w.from <= t {
            self.occupancy_from = Some(read(w.from));
        }
        if self.occupancy_to.is_none() && w.to <= t {
            self.occupancy_to = Some(read(w.to));
        }
        self.next_occupancy = if self.occupancy_from.is_none() {
            w.from
        } else if self.occupancy_to.is_none() {
            w.to
        } else {
            u64::MAX
        };
    }

    /// The occupancy readings at the window's start and end, where the run reached them.
    pub fn occupancy_readings(&self) -> (Option<&router::PortClasses>, Option<&router::PortClasses>) {
        (self.occupancy_from.as_ref(), self.occupancy_to.as_ref())
    }

    /// Fold in another part's measurement (of a fabric split between threads); the parts
    /// step the same cycles, so they sampled the same boundaries.
    pub fn join(&mut self, o: &Measurement) {
        self.latencies.join(&o.latencies);
        for (a, b) in self.batch_packets.iter_mut().zip(&o.batch_packets) {
            *a += b;
        }
        for (a, b) in self.batch_sums.iter_mut().zip(&o.batch_sums) {
            *a += b;
        }
        self.ejected_flits += o.ejected_flits;
        self.offered_flits += o.offered_flits;
        self.offered_packets += o.offered_packets;
        if o.queues.len() > self.queues.len() {
            self.queues.resize(o.queues.len(), 0);
        }
        for (a, b) in self.queues.iter_mut().zip(&o.queues) {
            *a += b;
        }
        for (mine, theirs) in [(&mut self.occupancy_from, &o.occupancy_from), (&mut self.occupancy_to, &o.occupancy_to)] {
            if let Some(t) = theirs {
                mine.get_or_insert_with(Default::default).join(t);
            }
        }
    }

    /// The figures of the window on a fabric of `nodes` nodes, the boundaries the run did
    /// not reach taking `final_queued`, the packets queued at its end; None without a window.
    pub fn summary(&self, nodes: u64, final_queued: u64) -> Option<Summary> {
        let w = self.window?;
        let per_node_cycle = |flits: u64| flits as f64 / (nodes as f64 * w.cycles() as f64);
        let batches: Vec<Batch> = (0..w.batches)
            .map(|i| {
                let (n, sum) = (self.batch_packets[i as usize], self.batch_sums[i as usize]);
                Batch { from: w.boundary(i), to: w.boundary(i + 1), packets: n, latency_avg_cycles: (n > 0).then(|| sum as f64 / n as f64) }
            })
            .collect();
        let means: Option<Vec<f64>> = batches.iter().map(|b| b.latency_avg_cycles).collect();
        let mut queues = self.queues.clone();
        queues.resize(w.batches as usize + 1, final_queued);
        let at: Vec<u64> = (0..=w.batches).map(|i| w.boundary(i)).collect();
        let growth = fitted_growth(&at, &queues) * w.cycles() as f64;
        let (accepted, offered) = (per_node_cycle(self.ejected_flits), per_node_cycle(self.offered_flits));
        let saturated = self.offered_packets > 0
            && growth > SATURATION_SHARE * self.offered_packets as f64
            && accepted < (1.0 - SATURATION_SHARE) * offered;
        Some(Summary {
            window: w,
            accepted_flits_per_node_cycle: accepted,
            offered_flits_per_node_cycle: offered,
            offered_packets: self.offered_packets,
            latency_ci95_cycles: means.and_then(|m| ci95_half_width(&m)),
            batches,
            source_queue_packets: queues,
            source_queue_growth_packets: growth,
            saturated,
        })
    }
}

/// The figures of a fabric's window after its run (a split run's joined fabric included):
/// [`Measurement::summary`] with the fabric's nodes and the packets left at its sources.
/// A run stopped inside its window (the cycle limit, an interrupt) offered and accepted
/// its flits in the cycles of the window it ran: the rates are per those cycles.
pub fn summary(f: &crate::Fabric) -> Option<Summary> {
    let nodes = f.topo.nodes() as u32;
    let queued = (0..nodes).map(|n| f.nics.queued(router::NodeId(n)) as u64).sum();
    let mut s = f.measure.summary(nodes as u64, queued)?;
    let ran = f.end().min(s.window.to).saturating_sub(s.window.from);
    if ran < s.window.cycles() {
        let k = s.window.cycles() as f64 / ran.max(1) as f64;
        s.accepted_flits_per_node_cycle *= k;
        s.offered_flits_per_node_cycle *= k;
    }
    Some(s)
}

/// The latency of the broadcasts the scoreboard timed: of those created in the window,
/// with a 95 % confidence half-width by batch means over its batches, or of every timed
/// broadcast in a run without a window (no interval). Only broadcasts every destination
/// received count (`completed`); None when no broadcast was timed (in the window).
pub fn broadcasts(timings: &[crate::scoreboard::Timing], window: Option<Window>) -> Option<BroadcastSummary> {
    let mut latencies = Latencies::default();
    let b = window.map_or(0, |w| w.batches as usize);
    let (mut packets, mut sums) = (vec![0u64; b], vec![0u128; b]);
    let mut created = 0;
    for t in timings {
        if let Some(w) = window {
            if !w.contains(t.birth) {
                continue;
            }
            created += 1;
            if let Some(l) = t.latency() {
                let i = w.batch_of(t.birth);
                packets[i] += 1;
                sums[i] += l as u128;
                latencies.record(l);
            }
        } else {
            created += 1;
            if let Some(l) = t.latency() {
                latencies.record(l);
            }
        }
    }
    if created == 0 {
        return None;
    }
    let means: Option<Vec<f64>> = packets.iter().zip(&sums).map(|(&n, &s)| (n > 0).then(|| s as f64 / n as f64)).collect();
    let ci95 = if window.is_some() { means.and_then(|m| ci95_half_width(&m)) } else { None };
    Some(BroadcastSummary { created, completed: latencies.count, latencies, latency_ci95_cycles: ci95 })
}

/// What [`broadcasts`] measured.
#[derive(Clone, Debug)]
pub struct BroadcastSummary {
    /// Broadcasts created (in the window), and those every destination received.
    pub created: u64,
    pub completed: u64,
    /// Creation to last delivery, of the completed ones.
    pub latencies: Latencies,
    pub latency_ci95_cycles: Option<f64>,
}

/// One batch of the window: the packets born in cycles `[from, to)` and their mean latency.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Batch {
    pub from: u64,
    pub to: u64,
    pub packets: u64,
    pub latency_avg_cycles: Option<f64>,
}

/// What a traffic run's window measured ([`Measurement::summary`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub window: Window,
    /// Flits ejected in the window, per node and cycle.
    pub accepted_flits_per_node_cycle: f64,
    /// Flits of the packets generated in the window, per node and cycle.
    pub offered_flits_per_node_cycle: f64,
    pub offered_packets: u64,
    pub batches: Vec<Batch>,
    /// The 95 % confidence half-width of the mean latency by batch means; None when a batch
    /// has no packet.
    pub latency_ci95_cycles: Option<f64>,
    /// Packets queued at the sources at each batch boundary (B + 1 samples).
    pub source_queue_packets: Vec<u64>,
    /// Their growth over the window, by the least-squares line through the samples.
    pub source_queue_growth_packets: f64,
    pub saturated: bool,
}

/// The slope of the least-squares line through the points (`xs[i]`, `ys[i]`), per unit of x
/// (0 when all x are equal).
pub fn fitted_growth(xs: &[u64], ys: &[u64]) -> f64 {
    let n = xs.len() as f64;
    let mx = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
    let my = ys.iter().map(|&y| y as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (&x, &y) in xs.iter().zip(ys) {
        let dx = x as f64 - mx;
        sxy += dx * (y as f64 - my);
        sxx += dx * dx;
    }
    if sxx > 0.0 { sxy / sxx } else { 0.0 }
}

/// The 95 % confidence half-width of the mean of `means` (batch means, at least two):
/// t(0.975, B − 1) · s / √B.
pub fn ci95_half_width(means: &[f64]) -> Option<f64> {
    let b = means.len();
    if b < 2 {
        return None;
    }
    let m = means.iter().sum::<f64>() / b as f64;
    let var = means.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (b - 1) as f64;
    Some(t_975(b as u32 - 1) * (var / b as f64).sqrt())
}

/// P(|T| < t) for Student's t with `df` ≥ 1 degrees of freedom, by the exact finite sums of
/// Abramowitz and Stegun 26.7.3–4 (θ = atan(t/√df)).
fn t_central(t: f64, df: u32) -> f64 {
    let theta = (t / (df as f64).sqrt()).atan();
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df % 2 == 1 {
        // (2/π)(θ + sin θ (cos θ + 2/3 cos³θ + … + (2·4…(df−3))/(1·3…(df−2)) cos^(df−2) θ))
        let mut sum = 0.0;
        if df > 1 {
            let (mut term, mut k) = (c, 1);
            sum = term;
            while 2 * k + 2 < df {
                term *= c2 * (2 * k) as f64 / (2 * k + 1) as f64;
                sum += term;
                k += 1;
            }
        }
        2.0 / std::f64::consts::PI * (theta + s * sum)
    } else {
        // sin θ (1 + 1/2 cos²θ + (1·3)/(2·4) cos⁴θ + … + (1·3…(df−3))/(2·4…(df−2)) cos^(df−2) θ)
        let (mut term, mut sum, mut k) = (1.0, 1.0, 1);
        while 2 * k < df {
            term *= c2 * (2 * k - 1) as f64 / (2 * k) as f64;
            sum += term;
            k += 1;
        }
        s * sum
    }
}

/// Student's t quantile at 0.975 with `df` ≥ 1 degrees of freedom (the factor of a 95 %
/// two-sided interval), by bisection on [`t_central`].
pub fn t_975(df: u32) -> f64 {
    assert!(df >= 1, "Student's t needs a degree of freedom");
    let (mut lo, mut hi) = (0.0f64, 1.0e3);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if t_central(mid, df) < 0.95 { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Dest, NodeCtx, Program, Received, Send};
    use crate::spec::FabricSpec;
    use crate::{Fabric, TopologyKind};
    use router::NodeId;

    /// The t factors against the printed tables (Abramowitz and Stegun table 26.10).
    #[test]
    fn measure_t_quantiles_match_the_tables() {
        for (df, t) in
            [(1, 12.706205), (2, 4.302653), (3, 3.182446), (4, 2.776445), (9, 2.262157), (19, 2.093024), (29, 2.045230), (99, 1.984217)]
        {
            assert!((t_975(df) - t).abs() < 2e-6, "df {df}: {} against {t}", t_975(df));
        }
    }

    /// A measurement of `window` fed the (birth, latency) pairs, alternately into two parts
    /// joined at the end when `split`.
    fn fed(window: Window, packets: &[(u64, u64)], split: bool) -> Measurement {
        let (mut a, mut b) = (Measurement::new(Some(window)), Measurement::new(Some(window)));
        for (i, &(birth, lat)) in packets.iter().enumerate() {
            let m = if split && i % 2 == 1 { &mut b } else { &mut a };
            m.generated(birth, 2);
            m.delivered(birth + lat, birth, 2);
        }
        a.join(&b);
        a
    }

    /// Batch means and the interval on a hand-made latency sequence, against the means and
    /// the standard deviation worked out here from the definition; packets born outside the
    /// window do not count, wherever they are delivered; the same after a split.
    #[test]
    fn measure_batch_means_by_hand() {
        // Window [100, 200) in 4 batches: [100, 125), [125, 150), [150, 175), [175, 200).
        let w = Window { from: 100, to: 200, batches: 4 };
        let packets = [
            (50, 900), // born in the warm-up, delivered inside the window: not measured
            (99, 7),
            (100, 10),
            (124, 14),
            (125, 20),
            (130, 22),
            (149, 24),
            (150, 11),
            (174, 13),
            (175, 30),
            (199, 50),   // the last cycle of the window
            (200, 1000), // born after the window: not measured
        ];
        let means = [12.0, 22.0, 12.0, 40.0];
        let grand = (12.0 + 22.0 + 12.0 + 40.0) / 4.0; // 21.5
        let s2 = [12.0f64, 22.0, 12.0, 40.0].iter().map(|m| (m - grand) * (m - grand)).sum::<f64>() / 3.0;
        let half = 3.182446 * (s2 / 4.0).sqrt();
        for split in [false, true] {
            let m = fed(w, &packets, split);
            let s = m.summary(4, 0).unwrap();
            let got: Vec<f64> = s.batches.iter().map(|b| b.latency_avg_cycles.unwrap()).collect();
            assert_eq!(got, means);
            assert_eq!(s.batches.iter().map(|b| b.packets).collect::<Vec<_>>(), [2, 3, 2, 2]);
            assert_eq!(s.batches.iter().map(|b| (b.from, b.to)).collect::<Vec<_>>(), [(100, 125), (125, 150), (150, 175), (175, 200)]);
            assert!((s.latency_ci95_cycles.unwrap() - half).abs() < 1e-5, "{:?} against {half}", s.latency_ci95_cycles);
            assert_eq!(m.latencies.count, 9);
            assert_eq!(m.latencies.mean(), Some((10 + 14 + 20 + 22 + 24 + 11 + 13 + 30 + 50) as f64 / 9.0));
            assert_eq!(m.latencies.max(), Some(50));
            // 9 packets of 2 flits offered in the window, on 4 nodes over 100 cycles.
            assert_eq!((s.offered_packets, s.offered_flits_per_node_cycle), (9, 18.0 / 400.0));
        }
    }

    /// Broadcast latency: of the broadcasts created in the window that every destination
    /// received, with batch means over the window's batches by creation cycle; without a
    /// window, of every timed broadcast and with no interval; none timed, no figures.
    #[test]
    fn measure_broadcasts_by_creation() {
        use crate::scoreboard::Timing;
        let done = |birth: u64, lat: u64| Timing { birth, last: birth + lat, got: 3, need: 3 };
        let w = Window { from: 100, to: 200, batches: 2 };
        let timings = [
            done(50, 500), // created in the warm-up
            done(100, 10),
            done(149, 30),
            Timing { birth: 120, last: 130, got: 2, need: 3 }, // one destination missing
            done(150, 40),
            done(199, 60),
            done(200, 7), // after the window
        ];
        let b = broadcasts(&timings, Some(w)).unwrap();
        assert_eq!((b.created, b.completed), (5, 4));
        assert_eq!(b.latencies.mean(), Some(35.0));
        assert_eq!(b.latencies.max(), Some(60));
        // Batch means 20 and 50: s² = 450, half-width t(0.975, 1) × √(450 / 2) = 12.706 × 15.
        assert!((b.latency_ci95_cycles.unwrap() - 12.706205 * 15.0).abs() < 1e-4, "{:?}", b.latency_ci95_cycles);
        let all = broadcasts(&timings, None).unwrap();
        assert_eq!((all.created, all.completed, all.latency_ci95_cycles), (7, 6, None));
        assert!(broadcasts(&[], Some(w)).is_none());
        assert!(broadcasts(&[done(10, 1)], Some(w)).is_none());
    }

    /// A window that does not divide evenly: the batches cover it without gap or overlap,
    /// and every packet born in it lands in the batch whose cycles hold its birth.
    #[test]
    fn measure_uneven_batches_cover_the_window() {
        for (from, to, batches) in [(0, 7, 3), (5, 1000, 7), (3, 5, 10), (0, 1, 1)] {
            let w = Window { from, to, batches };
            assert_eq!((w.boundary(0), w.boundary(batches)), (from, to));
            for t in from..to {
                let b = w.batch_of(t) as u32;
                assert!(w.boundary(b) <= t && t < w.boundary(b + 1), "{w:?}: cycle {t} in batch {b}");
            }
        }
    }

    /// An empty batch has no mean and leaves no interval (no division by zero); so do too
    /// few batches.
    #[test]
    fn measure_empty_batch_means_no_interval() {
        let w = Window { from: 0, to: 40, batches: 4 };
        let m = fed(w, &[(1, 5), (11, 6), (35, 7)], false);
        let s = m.summary(1, 0).unwrap();
        assert_eq!(s.batches[2].latency_avg_cycles, None);
        assert_eq!(s.batches[2].packets, 0);
        assert_eq!(s.latency_ci95_cycles, None);
        assert_eq!(ci95_half_width(&[3.0]), None);
        assert_eq!(Measurement::new(None).summary(4, 0), None);
    }

    /// Queue samples: taken at the boundaries as the kernel reaches them (skipped cycles
    /// included), the rest from the run's end; the saturation rule on made-up runs.
    #[test]
    fn measure_saturation_rule() {
        let w = Window { from: 100, to: 1100, batches: 10 };
        // A run whose queues grow by 50 packets every 100 cycles, offering 1000 packets of
        // which 40 % are accepted.
        let run = |growth: u64, accepted_flits: u64, offered: u64, stepped: &mut dyn Iterator<Item = u64>| {
            let mut m = Measurement::new(Some(w));
            for t in stepped {
                m.sample_queues(t, || t.saturating_sub(100) / 100 * growth);
            }
            for i in 0..offered {
                m.generated(100 + i % 1000, 1);
            }
            m.ejected(500, accepted_flits);
            m
        };
        let m = run(50, 400, 1000, &mut (0..2000));
        assert_eq!(m.queues, (0..=10).map(|i| i * 50).collect::<Vec<_>>());
        let s = m.summary(1, 0).unwrap();
        assert!((s.source_queue_growth_packets - 500.0).abs() < 1e-6, "{}", s.source_queue_growth_packets);
        assert!(s.saturated);
        // Skipped cycles: a sample taken late has the value of its boundary (the queues do
        // not change while nothing happens); the unreached boundaries take the end's value.
        let mut m = Measurement::new(Some(w));
        for t in [0, 99, 350, 351, 720] {
            m.sample_queues(t, || t);
        }
        assert_eq!(m.queues, [350, 350, 350, 720, 720, 720, 720]);
        let s = m.summary(1, 0).unwrap();
        assert_eq!(s.source_queue_packets, [350, 350, 350, 720, 720, 720, 720, 0, 0, 0, 0]);
        assert!(!s.saturated);
        // Flat queues: not saturated, whatever the sinks say.
        assert!(!run(0, 400, 1000, &mut (0..2000)).summary(1, 0).unwrap().saturated);
        // Growing queues that the sinks still keep up with (a burst): not saturated.
        assert!(!run(50, 990, 1000, &mut (0..2000)).summary(1, 0).unwrap().saturated);
        // Growth below 5 % of the offered packets: not saturated.
        assert!(!run(4, 400, 1000, &mut (0..2000)).summary(1, 0).unwrap().saturated);
        // Nothing offered: not saturated.
        assert!(!run(50, 0, 0, &mut (0..2000)).summary(1, 0).unwrap().saturated);
    }

    /// Node 0 sends node 1 a burst of packets at cycle 0, which wait behind each other at
    /// its NIC, then a lone packet every 20 cycles from cycle `quiet_from` to 400.
    struct SlowStart {
        burst: u64,
        quiet_from: u64,
    }
    impl Program for SlowStart {
        fn start(&mut self, cx: &mut NodeCtx<'_>) {
            if cx.node.0 == 0 {
                for _ in 0..self.burst {
                    cx.send(Send { dest: Dest::Node(NodeId(1)), msg: u32::MAX, aux: 0, key: 0, flits: 1 });
                }
                cx.wake_at(self.quiet_from);
            }
        }
        fn timer(&mut self, cx: &mut NodeCtx<'_>) {
            cx.send(Send { dest: Dest::Node(NodeId(1)), msg: u32::MAX, aux: 0, key: 0, flits: 1 });
            if cx.now + 20 < 400 {
                cx.wake_at(cx.now + 20);
            }
        }
        fn receive(&mut self, _: &mut NodeCtx<'_>, _: &Received) {}
    }

    /// A warm-up leaves out the packets born before it: with slow early packets the whole
    /// run's latencies are long, the window's are those of a lone packet, under either
    /// schedule.
    #[test]
    fn measure_warmup_leaves_out_slow_early_packets() {
        let mut spec = FabricSpec::ideal(TopologyKind::Hypercube, &[1]);
        spec.measure = Some(Window { from: 200, to: 400, batches: 5 });
        let lone = {
            let mut f = Fabric::new(&spec, Box::new(SlowStart { burst: 0, quiet_from: 200 }));
            f.run();
            assert_eq!(f.latencies.quantile(0.0), f.latencies.max());
            f.latencies.max().unwrap()
        };
        for kernel in [crate::Schedule::Busy, crate::Schedule::All] {
            spec.schedule = kernel;
            let mut f = Fabric::new(&spec, Box::new(SlowStart { burst: 100, quiet_from: 200 }));
            f.run();
            assert!(f.latencies.max().unwrap() >= 99, "the burst's last packet waits behind the others: {:?}", f.latencies.max());
            let m = &f.measure;
            assert_eq!(m.latencies.count, 10, "{kernel:?}: the packets born at 200, 220, ..., 380");
            assert_eq!((m.latencies.quantile(0.0), m.latencies.max()), (Some(lone), Some(lone)), "{kernel:?}");
            let s = m.summary(2, 0).unwrap();
            assert_eq!(s.latency_ci95_cycles, Some(0.0));
            assert_eq!((s.offered_packets, s.offered_flits_per_node_cycle), (10, 10.0 / 400.0));
            assert_eq!(s.accepted_flits_per_node_cycle, 10.0 / 400.0, "{kernel:?}");
            assert!(!s.saturated);
        }
    }
}
