//! Router parameters: switching mode, pipeline delays, buffer sizes, arbitration, and the
//! `ideal` and `realistic` presets.

use serde::{Deserialize, Serialize};

/// How much of a packet must be buffered before its head may leave a router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Switching {
    /// Store-and-forward: the whole packet is in the input buffer and the downstream buffer
    /// has room for the whole packet.
    #[serde(rename = "sf")]
    StoreAndForward,
    /// Virtual cut-through: the head goes on as soon as the downstream buffer has room for
    /// the whole packet.
    #[serde(rename = "vct")]
    VirtualCutThrough,
    /// Wormhole: each flit goes on as soon as the downstream buffer has room for it.
    #[serde(rename = "wh")]
    Wormhole,
}

impl Switching {
    pub const NAMES: &'static str = "sf, vct, wh";
    pub fn parse(s: &str) -> Option<Switching> {
        match s {
            "sf" | "store-and-forward" => Some(Switching::StoreAndForward),
            "vct" | "virtual-cut-through" => Some(Switching::VirtualCutThrough),
            "wh" | "wormhole" => Some(Switching::Wormhole),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Switching::StoreAndForward => "sf",
            Switching::VirtualCutThrough => "vct",
            Switching::Wormhole => "wh",
        }
    }
}

/// The policy of every arbiter in the router (VC allocation and switch allocation, per
/// output port). Ties are always broken round-robin from the arbiter's pointer, except
/// under `fixed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArbiterPolicy {
    /// Rotating priority, starting after the last winner.
    RoundRobin,
    /// The lowest input port (then VC) always wins.
    Fixed,
    /// The packet created earliest wins.
    Oldest,
    /// The smallest header priority key wins (an algorithm imposes the order its paper
    /// prescribes), then the oldest.
    Key,
}

impl ArbiterPolicy {
    pub const NAMES: &'static str = "round-robin, fixed, oldest, key";
    pub fn parse(s: &str) -> Option<ArbiterPolicy> {
        match s {
            "round-robin" | "rr" => Some(ArbiterPolicy::RoundRobin),
            "fixed" | "fixed-priority" => Some(ArbiterPolicy::Fixed),
            "oldest" | "oldest-first" => Some(ArbiterPolicy::Oldest),
            "key" | "priority-key" => Some(ArbiterPolicy::Key),
            _ => None,
        }
    }
}

/// How a packet the router replicates (two or more branches, counting ejection) acquires its
/// output VCs and ejection channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MulticastVa {
    /// All branches in one cycle or none (a packet never holds one branch while it waits
    /// for another). A worm whose front flit must be taken by every branch before the next
    /// can follow cannot then wait inside the router on another worm that waits on it.
    Atomic,
    /// Each branch as its output frees up, like a unicast packet. Two multi-flit worms can
    /// each hold a branch the other needs and deadlock inside one router (the watchdog
    /// reports it).
    PerBranch,
}

impl MulticastVa {
    pub const NAMES: &'static str = "atomic, per-branch";
    pub fn parse(s: &str) -> Option<MulticastVa> {
        match s {
            "atomic" => Some(MulticastVa::Atomic),
            "per-branch" => Some(MulticastVa::PerBranch),
            _ => None,
        }
    }
}

/// How the crossbar replicates a multi-flit packet to its branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replication {
    /// The VC's front flit goes to every branch before the next flit may follow: one read
    /// pointer per VC. A branch whose downstream buffer is full stops every other branch.
    Sync,
    /// Each branch has its own read pointer into the input FIFO and goes on as far as the
    /// buffered flits allow; a slot is freed once every branch has read it (and the VC still
    /// reads one entry a cycle, replicated to every branch at that entry).
    Async,
}

impl Replication {
    pub const NAMES: &'static str = "sync, async";
    pub fn parse(s: &str) -> Option<Replication> {
        match s {
            "sync" | "synchronous" => Some(Replication::Sync),
            "async" | "asynchronous" => Some(Replication::Async),
            _ => None,
        }
    }
}

/// Which injection VC a NIC channel writes a new packet into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InjectionVc {
    /// Any VC of the channel's injection port with room, round-robin from the one after the
    /// last packet's (as BookSim's sources do): a packet need not wait for the one before it
    /// to leave, so a node streams a flit a cycle once the port has as many VCs as a packet
    /// spends cycles in its pipeline.
    RoundRobin,
    /// Always VC 0: each packet waits for the one before it to leave and be routed out.
    Vc0,
}

impl InjectionVc {
    pub const NAMES: &'static str = "round-robin, vc0";

    /// The injection VC (of `vcs`) a NIC channel writes `flit` into, if one it may use has
    /// room: the flits of a packet follow its head into the channel's current VC `cur`; a
    /// head starts its packet in a VC this policy chooses. The one rule, for the model's
    /// routers and for a NIC in front of an RTL router (`fabric`'s co-simulation).
    #[inline]
    pub fn choose(self, flit_is_head: bool, cur: usize, vcs: usize, room: impl Fn(usize) -> bool) -> Option<usize> {
        if !flit_is_head || self == InjectionVc::Vc0 {
            return room(cur).then_some(cur);
        }
        debug_assert!(cur < vcs, "injection VC {cur} of {vcs}");
        (1..=vcs).map(|k| if cur + k >= vcs { cur + k - vcs } else { cur + k }).find(|&vc| room(vc))
    }
    pub fn parse(s: &str) -> Option<InjectionVc> {
        match s {
            "round-robin" | "rr" => Some(InjectionVc::RoundRobin),
            "vc0" => Some(InjectionVc::Vc0),
            _ => None,
        }
    }
}

/// Which of its free output VCs an output port offers a head first in VC allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VaPolicy {
    /// The free VCs in turn, from the one after the last granted (as a separable allocator's
    /// output-VC arbiters do): consecutive packets spread over the VCs.
    RoundRobin,
    /// The lowest-numbered free VC.
    Lowest,
    /// The free VC with the most credits (the emptiest downstream buffer), the lowest of
    /// those tied.
    MostCredits,
}

impl VaPolicy {
    pub const NAMES: &'static str = "round-robin, lowest, most-credits";
    pub fn parse(s: &str) -> Option<VaPolicy> {
        match s {
            "round-robin" | "rr" => Some(VaPolicy::RoundRobin),
            "lowest" => Some(VaPolicy::Lowest),
            "most-credits" => Some(VaPolicy::MostCredits),
            _ => None,
        }
    }
}

/// Timing of the router pipeline. All delays are in cycles.
///
/// A head flit that reaches the front of its VC in cycle `t` is routed in `t`, may win VC
/// allocation from `t + rc_delay`, and may win switch allocation `va_delay` cycles after
/// its VC was granted. A flit granted the switch in cycle `t` is readable in the next
/// router's input buffer from cycle `t + link_latency` (switch traversal plus link). The
/// credit for the buffer slot it freed reaches the upstream router `credit_delay` cycles
/// after the cycle following its departure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// Route computation stage, cycles.
    pub rc_delay: u32,
    /// VC allocation stage, cycles.
    pub va_delay: u32,
    /// Switch traversal plus link traversal, cycles (at least 1).
    pub link_latency: u32,
    /// Extra cycles for a credit to travel back upstream (0 = usable the next cycle).
    pub credit_delay: u32,
    /// Cycles from the NIC writing a flit into the injection buffer to it being usable.
    pub inject_latency: u32,
}

impl Pipeline {
    /// The papers' slot model: a one-flit packet received in cycle `t` can leave in `t + 1`.
    /// One cycle per hop; zero-load latency H + (L − 1) cycles (wormhole, cut-through).
    pub const IDEAL: Pipeline = Pipeline { rc_delay: 0, va_delay: 0, link_latency: 1, credit_delay: 0, inject_latency: 0 };
    /// A four-stage router whose last stage is switch and link traversal together: route
    /// computation, VC allocation and switch allocation a cycle each, then a flit granted the
    /// switch in cycle `t` is readable downstream in `t + 2`. Four cycles per hop, a credit
    /// usable upstream two cycles after its slot is freed, a cycle from the NIC to the
    /// injection buffer; zero-load latency 4H + 3 + (L − 1) cycles (wormhole, cut-through).
    /// One cycle per hop faster than [`Pipeline::BOOKSIM`].
    pub const REALISTIC: Pipeline = Pipeline { rc_delay: 1, va_delay: 1, link_latency: 2, credit_delay: 1, inject_latency: 1 };
    /// BookSim 2's input-queued router (`router = iq`) with its default delays
    /// (`routing_delay`, `vc_alloc_delay`, `sw_alloc_delay` and `st_final_delay` 1,
    /// `st_prepare_delay` 0, `credit_delay` 0, channel latency 1), measured in
    /// `docs/presets.md`:
    ///
    /// - a head received in cycle `t` is routed in `t`, allocated a VC in `t + 1`, the switch
    ///   in `t + 2`, crosses it in `t + 3` and is received downstream in `t + 5` (a BookSim
    ///   channel of latency 1 delivers in the second cycle after the one it was written in):
    ///   `rc_delay` 1, `va_delay` 1, `link_latency` 3;
    /// - a flit leaving an input buffer in its switch-allocation cycle `t` sends its credit
    ///   back on a channel of latency 1, usable upstream in `t + 2`: `credit_delay` 1;
    /// - BookSim ejects through a whole router pass and a channel, 5 cycles after the head
    ///   reaches the destination router, where this model ejects after route computation and
    ///   VC allocation (2 cycles); the 3 cycles more are added to the injection, whose
    ///   channel takes 2: `inject_latency` 5.
    ///
    /// Zero-load latency 5H + 7 + (L − 1) = 5(H + 1) + 2 + (L − 1) cycles for H links, from
    /// creation to the tail's ejection, as BookSim's `plat` counts it. The 3 cycles moved to
    /// the injection also lengthen the injection buffer's credit loop: with buffers of 3 flits
    /// or fewer a packet longer than the buffer takes longer than on BookSim (an 8-flit
    /// packet over one hop: 1, 2 and 6 cycles more with 3-, 2- and 1-flit buffers).
    pub const BOOKSIM: Pipeline = Pipeline { rc_delay: 1, va_delay: 1, link_latency: 3, credit_delay: 1, inject_latency: 5 };

    /// The presets by name (`--router NAME`, `preset = "NAME"` in a router file), each with
    /// what it is.
    pub const PRESETS: [(&'static str, Pipeline, &'static str); 3] = [
        ("ideal", Pipeline::IDEAL, "the papers' slot model: a 1-flit packet received in cycle t leaves in t+1"),
        (
            "realistic",
            Pipeline::REALISTIC,
            "RC, VA and SA a cycle each, then switch and link traversal in one cycle; one cycle per hop less than booksim",
        ),
        (
            "booksim",
            Pipeline::BOOKSIM,
            "BookSim 2's iq router with its default delays (RC, VA, SA, ST a cycle each, channel latency 1); same zero-load latency",
        ),
    ];
    pub const PRESET_NAMES: &'static str = "ideal, realistic, booksim";

    /// The preset called `name`.
    pub fn preset(name: &str) -> Option<Pipeline> {
        Pipeline::PRESETS.iter().find(|(n, _, _)| *n == name).map(|&(_, p, _)| p)
    }

    /// Zero-load cycles a head flit spends per hop (from readable in one buffer to readable
    /// in the next).
    pub fn hop_cycles(&self) -> u32 {
        self.rc_delay + self.va_delay + self.link_latency
    }

    /// Zero-load latency of a packet of `flits` flits (L) crossing `hops` ≥ 1 links (H) alone
    /// in the network: cycles from the cycle it is handed to its source NIC (its creation) to
    /// the cycle its tail is ejected at the destination, as a run's `latency_avg_cycles`
    /// counts them, with no NIC start-up or copy cost and buffers of at least L flits.
    ///
    /// The head is readable in the source router's injection buffer `inject_latency` cycles
    /// after creation, spends [`Pipeline::hop_cycles`] per hop, and at the destination is
    /// routed and given an ejection channel (`rc_delay + va_delay`); the other L − 1 flits
    /// follow a cycle apart. Under store-and-forward a head waits in each of the H − 1
    /// routers between the source's and the destination's until its tail is readable, L − 1
    /// cycles after it, overlapping route computation and VC allocation (not at the
    /// injection port, where the NIC holds the whole packet, nor at ejection).
    pub fn zero_load_latency(&self, switching: Switching, hops: u64, flits: u64) -> u64 {
        assert!(hops >= 1 && flits >= 1, "a packet crosses at least one link and has at least one flit");
        let (rc_va, link) = ((self.rc_delay + self.va_delay) as u64, self.link_latency as u64);
        let per_hop = match switching {
            Switching::StoreAndForward => rc_va.max(flits - 1) + link,
            Switching::VirtualCutThrough | Switching::Wormhole => rc_va + link,
        };
        self.inject_latency as u64 + (rc_va + link) + (hops - 1) * per_hop + rc_va + (flits - 1)
    }

    /// [`Pipeline::zero_load_latency`] as a formula in H (links crossed) and L (flits).
    pub fn zero_load_formula(&self, switching: Switching) -> String {
        let (rc_va, link, inj) = (self.rc_delay + self.va_delay, self.link_latency, self.inject_latency);
        let sum = |terms: &[String]| terms.iter().filter(|t| !t.is_empty() && *t != "0").cloned().collect::<Vec<_>>().join(" + ");
        match switching {
            Switching::VirtualCutThrough | Switching::Wormhole => {
                let h = if self.hop_cycles() == 1 { "H".to_string() } else { format!("{}H", self.hop_cycles()) };
                sum(&[h, (inj + rc_va).to_string(), "(L-1)".into()])
            }
            // Every hop waits for the tail: H(L - 1 + link) in all.
            Switching::StoreAndForward if rc_va == 0 => {
                let h = if link == 1 { "HL".to_string() } else { format!("H(L-1 + {link})") };
                sum(&[inj.to_string(), h])
            }
            Switching::StoreAndForward => {
                sum(&[(inj + 2 * rc_va + link).to_string(), format!("(H-1)(max({rc_va}, L-1) + {link})"), "(L-1)".into()])
            }
        }
    }
}

/// Everything a router needs to know about itself. Validated by the fabric builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouterParams {
    pub switching: Switching,
    pub pipeline: Pipeline,
    pub arbiter: ArbiterPolicy,
    /// Virtual channels per port.
    pub vcs: u8,
    /// Depth of each network input VC FIFO (fed by a link), flits: the credits of the
    /// upstream router's output VCs.
    pub buffer_flits: u16,
    /// Depth of each injection VC FIFO (the input ports fed by the node's NIC), flits.
    pub inject_buffer_flits: u16,
    /// Network ports (links to other routers).
    pub net_ports: u8,
    /// NIC channels: injection input ports and ejection output ports (the port model).
    pub nic_channels: u8,
    /// Flits a link carries per cycle (2^ν); also the crossbar's input speedup. Each VC still
    /// moves at most one flit per cycle, so up to 2^ν worms share a link at full speed.
    pub link_width: u8,
    /// VC allocation of multi-flit packets the router replicates (one-flit packets are
    /// allocated branch by branch in either mode: a branch releases its VC as the flit
    /// crosses, so it never waits on another branch while holding one).
    pub multicast_va: MulticastVa,
    /// Replication of multi-flit packets to their branches.
    pub replication: Replication,
    /// Which injection VC a NIC channel starts a new packet in.
    pub injection: InjectionVc,
    /// VCs of each ejection port: packets holding one each share the port a flit a cycle,
    /// so a sink takes one packet's flits right after another's.
    pub ejection_vcs: u8,
    /// Which free output VC a head is offered first in VC allocation.
    pub va_policy: VaPolicy,
}

impl RouterParams {
    /// Input ports = output ports = network ports + NIC channels.
    #[inline(always)]
    pub fn ports(&self) -> usize {
        self.net_ports as usize + self.nic_channels as usize
    }

    /// The deepest input VC of either class: the storage each input VC has.
    #[inline(always)]
    pub fn deepest_buffer(&self) -> u16 {
        self.buffer_flits.max(self.inject_buffer_flits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each preset's formula, written out by hand (BookSim's as measured: 5(H + 1) + 2 +
    /// (L − 1)), against the general one.
    #[test]
    fn preset_formulas() {
        let (wh, vct, sf) = (Switching::Wormhole, Switching::VirtualCutThrough, Switching::StoreAndForward);
        for h in 1..=20u64 {
            for l in 1..=12u64 {
                for s in [wh, vct] {
                    assert_eq!(Pipeline::IDEAL.zero_load_latency(s, h, l), h + (l - 1));
                    assert_eq!(Pipeline::REALISTIC.zero_load_latency(s, h, l), 4 * h + 3 + (l - 1));
                    assert_eq!(Pipeline::BOOKSIM.zero_load_latency(s, h, l), 5 * (h + 1) + 2 + (l - 1));
                }
                assert_eq!(Pipeline::IDEAL.zero_load_latency(sf, h, l), h * l);
                assert_eq!(Pipeline::REALISTIC.zero_load_latency(sf, h, l), 7 + (h - 1) * (l.saturating_sub(1).max(2) + 2) + (l - 1));
                assert_eq!(Pipeline::BOOKSIM.zero_load_latency(sf, h, l), 12 + (h - 1) * ((l - 1).max(2) + 3) + (l - 1));
            }
        }
        assert_eq!(Pipeline::IDEAL.zero_load_formula(wh), "H + (L-1)");
        assert_eq!(Pipeline::IDEAL.zero_load_formula(sf), "HL");
        assert_eq!(Pipeline::REALISTIC.zero_load_formula(vct), "4H + 3 + (L-1)");
        assert_eq!(Pipeline::REALISTIC.zero_load_formula(sf), "7 + (H-1)(max(2, L-1) + 2) + (L-1)");
        assert_eq!(Pipeline::BOOKSIM.zero_load_formula(wh), "5H + 7 + (L-1)");
        assert_eq!(Pipeline::BOOKSIM.zero_load_formula(sf), "12 + (H-1)(max(2, L-1) + 3) + (L-1)");
        let slow = Pipeline { rc_delay: 0, va_delay: 0, link_latency: 3, credit_delay: 0, inject_latency: 2 };
        assert_eq!(slow.zero_load_formula(sf), "2 + H(L-1 + 3)");
        assert_eq!(slow.zero_load_latency(sf, 4, 5), 2 + 4 * (4 + 3));
    }

    #[test]
    fn presets_by_name() {
        assert_eq!(Pipeline::preset("booksim"), Some(Pipeline::BOOKSIM));
        assert_eq!(Pipeline::preset("realistic"), Some(Pipeline::REALISTIC));
        assert_eq!(Pipeline::preset("ideal"), Some(Pipeline::IDEAL));
        assert_eq!(Pipeline::preset("iq"), None);
        let names: Vec<&str> = Pipeline::PRESETS.iter().map(|p| p.0).collect();
        assert_eq!(names.join(", "), Pipeline::PRESET_NAMES);
    }
}
