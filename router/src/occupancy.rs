//! Network-wide buffer occupancy of the two classes of input VCs: the network VCs (fed by
//! links) and the injection VCs (fed by the nodes' NICs). Each class's histogram is the sum
//! of its VCs' time-weighted histograms (`histogram[k]`: VC-cycles spent holding exactly k
//! flits), read at a cycle; the difference of two readings covers the cycles between them.

/// One class's summed histogram.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassOccupancy {
    /// Input VCs in the class (those of unconnected network ports left out).
    pub vcs: u64,
    /// `histogram[k]`: VC-cycles holding exactly k flits, no trailing zero.
    pub histogram: Vec<u64>,
}

impl ClassOccupancy {
    /// Add one VC's histogram entry `k`.
    #[inline]
    pub(crate) fn add(&mut self, k: usize, cycles: u64) {
        if cycles == 0 {
            return;
        }
        if self.histogram.len() <= k {
            self.histogram.resize(k + 1, 0);
        }
        self.histogram[k] += cycles;
    }

    /// Fold in another part's sum (of a fabric split between threads).
    pub fn join(&mut self, o: &ClassOccupancy) {
        self.vcs += o.vcs;
        for (k, &c) in o.histogram.iter().enumerate() {
            self.add(k, c);
        }
    }

    /// The VC-cycles between `earlier` (a reading of the same VCs) and this reading.
    pub fn since(&self, earlier: &ClassOccupancy) -> ClassOccupancy {
        let mut h: Vec<u64> = self.histogram.iter().enumerate().map(|(k, &c)| c - earlier.histogram.get(k).copied().unwrap_or(0)).collect();
        while h.last() == Some(&0) {
            h.pop();
        }
        ClassOccupancy { vcs: self.vcs, histogram: h }
    }

    /// VC-cycles in all.
    pub fn vc_cycles(&self) -> u64 {
        self.histogram.iter().sum()
    }

    /// Mean flits per VC over the VC-cycles (0 with none).
    pub fn mean(&self) -> f64 {
        let total = self.vc_cycles();
        if total == 0 {
            return 0.0;
        }
        let flits: u128 = self.histogram.iter().enumerate().map(|(k, &c)| k as u128 * c as u128).sum();
        flits as f64 / total as f64
    }

    /// The smallest k whose cumulative VC-cycles reach `q` of the total (0 with none).
    pub fn percentile(&self, q: f64) -> u64 {
        let total = self.vc_cycles();
        let need = q * total as f64;
        let mut acc = 0u64;
        for (k, &c) in self.histogram.iter().enumerate() {
            acc += c;
            if acc as f64 >= need {
                return k as u64;
            }
        }
        0
    }

    /// The most flits a VC of the class held (the top level with any cycles).
    pub fn max(&self) -> u64 {
        self.histogram.len().saturating_sub(1) as u64
    }
}

/// Both classes, read at one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortClasses {
    pub network: ClassOccupancy,
    pub injection: ClassOccupancy,
}

impl PortClasses {
    pub fn join(&mut self, o: &PortClasses) {
        self.network.join(&o.network);
        self.injection.join(&o.injection);
    }

    /// The VC-cycles between `earlier` and this reading.
    pub fn since(&self, earlier: &PortClasses) -> PortClasses {
        PortClasses { network: self.network.since(&earlier.network), injection: self.injection.since(&earlier.injection) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_the_smallest_level_reaching_the_share() {
        let c = ClassOccupancy { vcs: 2, histogram: vec![50, 30, 19, 0, 1] };
        assert_eq!(c.vc_cycles(), 100);
        assert_eq!(c.percentile(0.5), 0);
        assert_eq!(c.percentile(0.51), 1);
        assert_eq!(c.percentile(0.99), 2);
        assert_eq!(c.percentile(0.999), 4);
        assert_eq!(c.max(), 4);
        assert!((c.mean() - (30.0 + 38.0 + 4.0) / 100.0).abs() < 1e-12);
        let empty = ClassOccupancy::default();
        assert_eq!((empty.percentile(0.99), empty.max(), empty.mean()), (0, 0, 0.0));
        let later = ClassOccupancy { vcs: 2, histogram: vec![60, 30, 19, 0, 1] };
        assert_eq!(later.since(&c).histogram, vec![10]);
    }
}
