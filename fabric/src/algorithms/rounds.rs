//! Broadcasts built as schedules of synchronous rounds (the lecture notes' wormhole model):
//! in round r every informed node sends worms, unicast through the modelled routers, to
//! nodes it chose in advance; a construction promises that the worms of one round use
//! pairwise disjoint links, so that each arrives as fast as it would alone.
//!
//! A [`Plan`] is the construction's output: for every node, the (round, destination) of each
//! worm it sends. [`RoundBroadcast`] runs it: the source starts round 1 at cycle 0, and a
//! node sends its round-r worms at cycle (r − 1) × `period`, `period` being one cycle more
//! than a lone worm takes over the longest route ([`round_period`]). The rounds reported
//! are measured from the run (the round window each delivery falls in); a worm that arrives
//! after its round's window, or in another round than planned, fails the run.

use crate::program::{Dest, NodeCtx, Program, Received, Send};
use crate::scoreboard::{DestSet, Scoreboard};
use crate::spec::FabricSpec;
use crate::topology::Topology;
use router::NodeId;

/// Who sends to whom in which round.
#[derive(Clone, Debug)]
pub struct Plan {
    pub root: NodeId,
    /// Per node, its worms as (round, destination), in round order.
    pub sends: Vec<Vec<(u32, NodeId)>>,
}

impl Plan {
    pub fn new(nodes: usize, root: NodeId) -> Plan {
        Plan { root, sends: vec![Vec::new(); nodes] }
    }

    /// `from` sends a worm to `to` in `round` (1-based).
    pub fn add(&mut self, round: u32, from: NodeId, to: NodeId) {
        self.sends[from.idx()].push((round, to));
    }

    /// The rounds the plan takes (its last round with a worm).
    pub fn rounds(&self) -> u32 {
        self.sends.iter().flatten().map(|&(r, _)| r).max().unwrap_or(0)
    }

    /// Sort each node's worms by round.
    pub fn finish(mut self) -> Plan {
        for s in &mut self.sends {
            s.sort_by_key(|&(r, to)| (r, to.0));
        }
        self
    }

    /// The round each node is informed in (0 for the root), if the plan informs every
    /// node exactly once, each by a node informed in an earlier round; else what is wrong.
    pub fn informed_rounds(&self) -> Result<Vec<u32>, String> {
        let n = self.sends.len();
        let mut got: Vec<Option<(u32, NodeId)>> = vec![None; n];
        got[self.root.idx()] = Some((0, self.root));
        for (from, sends) in self.sends.iter().enumerate() {
            for &(r, to) in sends {
                if let Some((r0, f0)) = got[to.idx()] {
                    return Err(format!("node {} informed twice: by {} in round {r0} and by {from} in round {r}", to.0, f0.0));
                }
                got[to.idx()] = Some((r, NodeId(from as u32)));
            }
        }
        let rounds: Vec<u32> = got
            .iter()
            .enumerate()
            .map(|(i, g)| g.map(|(r, _)| r).ok_or_else(|| format!("node {i} never informed")))
            .collect::<Result<_, _>>()?;
        for (from, sends) in self.sends.iter().enumerate() {
            if let Some(&(r, _)) = sends.first()
                && r <= rounds[from]
            {
                return Err(format!("node {from} sends in round {r}, informed only in round {}", rounds[from]));
            }
        }
        Ok(rounds)
    }
}

/// ⌈log_base n⌉ for n ≥ 1: the fewest rounds in which informed nodes, each informing at
/// most base − 1 more per round, can reach n nodes.
pub fn log_ceil(base: u64, n: u64) -> u32 {
    let (mut r, mut reach) = (0, 1u64);
    while reach < n {
        reach = reach.saturating_mul(base);
        r += 1;
    }
    r
}

/// Cycles of one round on this fabric for worms of `flits` flits: one more than a lone
/// worm takes from node 0 to the node farthest from it (measured on the same fabric, so
/// start-up, copy and router pipeline included). Worms of a round use disjoint links and
/// each node receives at most one a round, so none waits for another.
pub fn round_period(spec: &FabricSpec, flits: u16) -> u64 {
    struct Lone {
        to: NodeId,
        flits: u16,
    }
    impl Program for Lone {
        fn start(&mut self, cx: &mut NodeCtx<'_>) {
            if cx.node.0 == 0 {
                cx.send(Send { dest: Dest::Node(self.to), msg: u32::MAX, aux: 0, key: 0, flits: self.flits });
            }
        }
        fn receive(&mut self, _: &mut NodeCtx<'_>, _: &Received) {}
    }
    let topo = spec.topology();
    let far = (0..topo.nodes() as u32).max_by_key(|&n| topo.distance(NodeId(0), NodeId(n))).unwrap_or(0);
    if far == 0 {
        return 1;
    }
    let mut f = crate::Fabric::new(spec, Box::new(Lone { to: NodeId(far), flits }));
    f.run();
    f.counters.last_delivery + 1
}

/// Runs a [`Plan`] round by round (the program every node runs).
pub struct RoundBroadcast {
    plan: Plan,
    period: u64,
    flits: u16,
    msg: u32,
    /// Per node, the index of its next worm in `plan.sends`.
    next: Vec<usize>,
    /// The latest round a delivery fell in.
    measured: u32,
    failures: Vec<String>,
}

impl RoundBroadcast {
    pub fn new(plan: Plan, period: u64, flits: u16) -> RoundBroadcast {
        let n = plan.sends.len();
        RoundBroadcast { plan, period: period.max(1), flits, msg: 0, next: vec![0; n], measured: 0, failures: Vec::new() }
    }

    /// Send this node's worms of the round now under way; wake for its next round.
    fn act(&mut self, cx: &mut NodeCtx<'_>) {
        let i = cx.node.idx();
        let round_now = (cx.now / self.period) as u32 + 1;
        while let Some(&(r, to)) = self.plan.sends[i].get(self.next[i]) {
            let start = (r as u64 - 1) * self.period;
            if start > cx.now {
                cx.wake_at(start);
                return;
            }
            if r != round_now {
                self.failures.push(format!("node {} sends its round-{r} worm to {} in round {round_now}", i, to.0));
            }
            cx.send(Send { dest: Dest::Relay(to), msg: self.msg, aux: r as u64, key: 0, flits: self.flits });
            self.next[i] += 1;
        }
    }
}

impl Program for RoundBroadcast {
    fn setup(&mut self, topo: &Topology, sb: &mut Scoreboard) {
        self.msg = sb.declare_timed(DestSet::Broadcast { root: self.plan.root, span: topo.full_span() }, topo, 0);
    }

    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        if cx.node == self.plan.root {
            self.act(cx);
        }
    }

    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        let round = (cx.now / self.period) as u32 + 1;
        if round as u64 != m.aux {
            self.failures.push(format!(
                "node {}: the round-{} worm from {} arrived in round {round} (cycle {}, {} cycles a round)",
                cx.node.0, m.aux, m.src.0, cx.now, self.period
            ));
        }
        self.measured = self.measured.max(round);
        self.act(cx);
    }

    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        self.act(cx);
    }

    fn report(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "rounds": self.measured,
            "construction_rounds": self.plan.rounds(),
            "round_cycles": self.period,
        }))
    }

    fn failures(&self) -> Vec<String> {
        self.failures.clone()
    }
}
