//! Shared by the tests: a program that sends packets planned in advance.

use fabric::*;
use router::NodeId;
use std::sync::{Arc, Mutex};

/// A delivered packet: source, destination, creation cycle, delivery cycle, and its number
/// among its source's packets.
pub type Delivery = (u32, u32, u64, u64, u64);

/// Sends the scheduled packets, each from its source at its cycle, and records every
/// delivery.
pub struct Scheduled {
    /// Per node, the packets it sends: (cycle, destination), ascending by cycle.
    pub sends: Vec<Vec<(u64, u32)>>,
    pub next: Vec<usize>,
    pub flits: u16,
    pub got: Arc<Mutex<Vec<Delivery>>>,
}

impl Scheduled {
    /// Send node `n`'s packets due now, then set a timer for its next one.
    fn send_due(&mut self, cx: &mut NodeCtx<'_>) {
        let n = cx.node.idx();
        while let Some(&(at, d)) = self.sends[n].get(self.next[n]) {
            if at > cx.now {
                cx.wake_at(at);
                break;
            }
            assert_eq!(at, cx.now, "node {n}: packet for cycle {at} sent in cycle {}", cx.now);
            let msg = cx.declare(DestSet::One(NodeId(d)));
            cx.send(Send { dest: Dest::Node(NodeId(d)), msg, aux: self.next[n] as u64, key: 0, flits: self.flits });
            self.next[n] += 1;
        }
    }
}

impl Program for Scheduled {
    fn start(&mut self, cx: &mut NodeCtx<'_>) {
        self.send_due(cx);
    }
    fn timer(&mut self, cx: &mut NodeCtx<'_>) {
        self.send_due(cx);
    }
    fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        cx.accept(m.msg);
        self.got.lock().unwrap().push((m.src.0, cx.node.0, m.birth, cx.now, m.aux));
    }
}
