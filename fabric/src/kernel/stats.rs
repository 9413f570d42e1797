//! The always-on statistics of a run: its [`Counters`] and the packet [`Latencies`].

use serde::Serialize;
use std::collections::BTreeMap;

/// Always-on counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    /// Flits that crossed a router-to-router link.
    pub flit_hops: u64,
    /// Packets that crossed a router-to-router link (counted at their tail flit).
    pub link_transmissions: u64,
    pub flits_injected: u64,
    pub flits_ejected: u64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    /// Cycle of the last delivery.
    pub last_delivery: u64,
}

/// Packet latencies (delivery cycle minus birth), exact, in a histogram: one counter per
/// latency below [`Latencies::DENSE`] cycles, and above it only the latencies that occurred
/// (a packet that waited a billion cycles for its start-up cost must not cost gigabytes).
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    pub hist: Vec<u64>,
    pub far: BTreeMap<u64, u64>,
    pub count: u64,
    pub sum: u128,
}

impl Counters {
    /// Fold in another part's counters (of a fabric split between threads).
    pub fn join(&mut self, o: &Counters) {
        self.flit_hops += o.flit_hops;
        self.link_transmissions += o.link_transmissions;
        self.flits_injected += o.flits_injected;
        self.flits_ejected += o.flits_ejected;
        self.packets_sent += o.packets_sent;
        self.packets_delivered += o.packets_delivered;
        self.last_delivery = self.last_delivery.max(o.last_delivery);
    }
}

impl Latencies {
    /// Fold in another part's latencies.
    pub fn join(&mut self, o: &Latencies) {
        if o.hist.len() > self.hist.len() {
            self.hist.resize(o.hist.len(), 0);
        }
        for (a, b) in self.hist.iter_mut().zip(&o.hist) {
            *a += b;
        }
        for (&l, &c) in &o.far {
            *self.far.entry(l).or_default() += c;
        }
        self.count += o.count;
        self.sum += o.sum;
    }

    /// Latencies below this many cycles have a counter each.
    pub const DENSE: u64 = 1 << 16;

    pub(crate) fn record(&mut self, l: u64) {
        if l < Self::DENSE {
            let i = l as usize;
            if i >= self.hist.len() {
                self.hist.resize((i + 1).next_power_of_two(), 0);
            }
            self.hist[i] += 1;
        } else {
            *self.far.entry(l).or_default() += 1;
        }
        self.count += 1;
        self.sum += l as u128;
    }
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
    /// The smallest latency at or below which a fraction `q` of packets fall.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let target = ((q * self.count as f64).ceil() as u64).max(1);
        let mut acc = 0;
        let dense = self.hist.iter().enumerate().map(|(l, &c)| (l as u64, c));
        for (l, c) in dense.chain(self.far.iter().map(|(&l, &c)| (l, c))) {
            acc += c;
            if acc >= target {
                return Some(l);
            }
        }
        None
    }
    pub fn max(&self) -> Option<u64> {
        self.far.keys().next_back().copied().or_else(|| self.hist.iter().rposition(|&c| c > 0).map(|l| l as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::Latencies;

    /// Quantiles, maximum and mean are those of the sorted latencies, on both sides of the
    /// dense range, also after joining two halves; a huge latency costs no memory.
    #[test]
    fn latencies_are_exact_and_small() {
        let mut all: Vec<u64> = (0..3000u64).map(|i| (i * 7919) % 1000).collect();
        all.extend([Latencies::DENSE - 1, Latencies::DENSE, Latencies::DENSE + 5, 1 << 40, 1 << 40, 3 << 33]);
        let (mut a, mut b) = (Latencies::default(), Latencies::default());
        for (i, &l) in all.iter().enumerate() {
            if i % 3 == 0 { b.record(l) } else { a.record(l) }
        }
        a.join(&b);
        all.sort();
        for q in [0.0, 0.01, 0.5, 0.99, 0.999, 0.9995, 1.0] {
            let k = ((q * all.len() as f64).ceil() as usize).max(1);
            assert_eq!(a.quantile(q), Some(all[k - 1]), "q = {q}");
        }
        assert_eq!(a.max(), Some(1 << 40));
        assert_eq!(a.count, all.len() as u64);
        assert_eq!(a.sum, all.iter().map(|&l| l as u128).sum::<u128>());
        assert!(a.hist.len() as u64 <= Latencies::DENSE && a.far.len() == 4, "{} {}", a.hist.len(), a.far.len());
    }
}
