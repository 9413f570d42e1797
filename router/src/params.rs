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
    pub const IDEAL: Pipeline = Pipeline { rc_delay: 0, va_delay: 0, link_latency: 1, credit_delay: 0, inject_latency: 0 };
    /// A four-stage router (RC, VA, SA, ST) with a one-cycle link and credit return,
    /// like BookSim 2's input-queued router with its default delays.
    pub const REALISTIC: Pipeline = Pipeline { rc_delay: 1, va_delay: 1, link_latency: 2, credit_delay: 1, inject_latency: 1 };

    /// Zero-load cycles a head flit spends per hop (from readable in one buffer to readable
    /// in the next).
    pub fn hop_cycles(&self) -> u32 {
        self.rc_delay + self.va_delay + self.link_latency
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
    /// Depth of each input VC FIFO, flits.
    pub buffer_flits: u16,
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
}

impl RouterParams {
    /// Input ports = output ports = network ports + NIC channels.
    #[inline(always)]
    pub fn ports(&self) -> usize {
        self.net_ports as usize + self.nic_channels as usize
    }
}
