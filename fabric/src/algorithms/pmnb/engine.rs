//! One PMNB period, the same at every node: its timing and the engine that runs its phases.

use super::*;

/// The timing of one PMNB period, identical at every node.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub d: u32,
    pub variant: Variant,
    /// Cycles per prefix step (0: no prefix).
    pub tp: u64,
    /// Cycles per (mini-)packet transmission.
    pub ms: u64,
    /// Cycles per slot (a whole packet).
    pub slot: u64,
    /// Cycles a one-hop transfer takes beyond its length in flits on this router (0 on
    /// the ideal router: the papers' slot model). Every step is stretched by it, so the
    /// synchronous schedule also runs on a pipelined router.
    pub extra: u64,
    /// Cycles between back-to-back pieces over one link at the router's sustained rate
    /// (`ms` when the buffers cover the credit round trip, as on the ideal router).
    pub gap: u64,
    /// The same two for a prefix packet (a step's worth of flits, at most a slot).
    pub prefix_extra: u64,
    pub prefix_gap: u64,
    /// Cycles after a prefix packet before a piece can follow it over the same link (the
    /// link's time for the prefix packet, or, when the downstream buffer holds just one
    /// piece, until the prefix packet has left it). The packing phase starts no sooner
    /// after the last prefix step. 0: no longer than a prefix step.
    pub handover: u64,
}

impl Timing {
    /// Cycles of a prefix step on this router: `tp`, stretched by a prefix packet's extra
    /// hop latency, and at least the interval at which a link takes prefix packets.
    pub fn prefix_step(&self) -> u64 {
        (self.tp + self.prefix_extra).max(self.prefix_gap)
    }
    /// Prefix steps per period (0 without a prefix).
    pub fn scan_steps(&self) -> u32 {
        if self.tp == 0 { 0 } else { self.variant.scans() * 2 * self.d }
    }
    /// Packets per class the broadcast subphases are sized for.
    pub(super) fn per_class(&self, m: u64) -> u64 {
        if self.variant == Variant::Three { m.div_ceil(self.d as u64) } else { m }
    }
    /// Cycle of event `e` of the period starting at `p` with M = `m` (known from event
    /// scan_steps on), or None past the last.
    pub fn event(&self, p: u64, e: u32, m: u64) -> Option<u64> {
        let s = self.scan_steps();
        let d = self.d;
        // A step lasts until its packet has crossed its hop and, as the next step may send
        // over the same link, until the link takes the next packet: on the ideal router
        // with buffers that cover the credit round trip, the papers' t_p, one piece and one
        // slot.
        let tp = self.prefix_step();
        let (ms, slot) = ((self.ms + self.extra).max(self.gap), (self.slot + self.extra).max(self.gap));
        if e < s {
            return Some(p + e as u64 * tp);
        }
        // The packing's first pieces may take the links of the last prefix step.
        let r = if s == 0 { p } else { p + (s as u64 - 1) * tp + tp.max(self.handover) };
        let e = e - s;
        if e < d {
            return Some(r + e as u64 * ms);
        }
        let k = r + d as u64 * ms;
        let e = e - d;
        match self.variant {
            Variant::One => {
                let mm = ceil_log2(m);
                (e <= d - mm).then(|| k + e as u64 * slot)
            }
            _ => {
                // A subphase of T pieces: one sent every `gap` cycles, the last one a hop
                // later, and the link free for the next subphase's first (same link, next
                // class).
                let pc = self.per_class(m);
                let step = |l: u32| match subphase_steps(pc, d, l) {
                    0 => 0,
                    t => (t - 1) * self.gap + ms,
                };
                (e <= d).then(|| k + (1..=e).map(step).sum::<u64>())
            }
        }
    }
    /// The cycle the period starting at `p` ends (II and III: its last subphase's end).
    pub fn end(&self, p: u64, m: u64) -> u64 {
        self.event(p, self.scan_steps() + 2 * self.d, m).expect("II and III end after their last subphase")
    }
}

/// What happens in a PMNB period at every node: the scans, the packing, the broadcast.
/// Packets are named by their origin; `msg_base[origin] + piece` is the scoreboard message
/// of a piece.
pub struct Engine {
    pub t: Timing,
    pub(super) n: usize,
    pub(super) flits: u16,
    /// Length of a prefix packet.
    pub(super) prefix_flits: u16,
    pub(super) scan: Scan,
    /// Scan for the class computation of pmnb-3 (one class, natural order).
    pub(super) class_scan: Option<Scan>,
    pub active: Vec<bool>,
    pub msg_base: Vec<u32>,
    /// Period start and M as each node knows them.
    pub start: Vec<u64>,
    pub m: Vec<u64>,
    /// Next event of each node.
    pub(super) ev: Vec<u32>,
    /// Per (node, class) during packing: origin + 1 of the packet held, target rank.
    pub(super) pack: Vec<(u32, u32)>,
    /// Per node: the origins of the pieces held for the broadcast phase, the k-th piece of
    /// class c at `k * classes + c` (`NONE` past a class's count), so that a node's next
    /// piece of every class is in one place; and per (node, class) how many it holds.
    pub(super) held: Vec<Vec<u32>>,
    pub(super) held_len: Vec<u32>,
    /// Broadcast subphase under way at each node: the subphase, how many of each class's
    /// pieces it sends (those held when it began; per (node, class)), the next to send, and the cycle of the
    /// next send. The node feeds its NIC one piece per class and (mini-)slot, as the
    /// schedule needs, rather than queueing the whole subphase at once.
    pub(super) sub: Vec<u32>,
    pub(super) sub_len: Vec<u32>,
    pub(super) cursor: Vec<u32>,
    pub(super) next_send: Vec<u64>,
    /// pmnb-1 phase 4: the subcube's multinode broadcast tree.
    pub(super) mnb: Option<MnbTree>,
    /// Per node: pieces received this period (checked at the period's end).
    pub got: Vec<u32>,
    /// Packing packets that did not arrive one (mini-)slot after they were sent, or met
    /// another of their class at a node: the paths of §IV-A are disjoint, so always 0.
    pub collisions: u64,
    /// Prefix packets that arrived after their step ended: always 0 when the schedule
    /// holds (the step outlasts a prefix packet's hop).
    pub late_prefix: u64,
}

impl Engine {
    /// `t.tp` is a prefix step in cycles; packets are `flits` long.
    pub fn new(t: Timing, flits: u16) -> Engine {
        let d = t.d;
        let n = 1usize << d;
        let classes = t.variant.classes(d);
        Engine {
            t,
            n,
            flits,
            prefix_flits: prefix::packet_flits(t.tp, flits),
            scan: Scan::new(d, classes, (SCAN_UP, SCAN_DOWN)),
            class_scan: (t.variant == Variant::Three).then(|| Scan::new(d, 1, (CLASS_UP, CLASS_DOWN))),
            active: vec![false; n],
            msg_base: vec![0; n],
            start: vec![0; n],
            m: vec![0; n],
            ev: vec![0; n],
            pack: vec![(0, 0); classes as usize * n],
            held: vec![Vec::new(); n],
            held_len: vec![0; classes as usize * n],
            sub: vec![0; n],
            sub_len: vec![0; classes as usize * n],
            cursor: vec![0; n],
            next_send: vec![u64::MAX; n],
            mnb: None,
            got: vec![0; n],
            collisions: 0,
            late_prefix: 0,
        }
    }

    pub(super) fn piece_flits(&self) -> u16 {
        (self.flits as u32 / self.t.variant.pieces(self.t.d)) as u16
    }

    /// t_p = 0: the ranks of the period starting now, with active set `active`, are
    /// known everywhere at once.
    pub fn known_ranks(&mut self, active: &[bool]) {
        let d = self.t.d;
        match self.class_scan.as_mut() {
            Some(cs) => {
                for u in 0..self.n as u32 {
                    cs.set_input(0, u, active[u as usize]);
                }
                cs.oracle();
                for u in 0..self.n as u32 {
                    let r = cs.rank(0, u);
                    for c in 0..d {
                        self.scan.set_input(c, u, active[u as usize] && r % d == c);
                    }
                }
            }
            None => {
                for u in 0..self.n as u32 {
                    for c in 0..self.scan.classes {
                        self.scan.set_input(c, u, active[u as usize]);
                    }
                }
            }
        }
        self.scan.oracle();
    }

    /// Node u begins a period at cycle `p` (its `active` flag set). Runs what is due now.
    pub fn begin(&mut self, cx: &mut NodeCtx<'_>, p: u64) {
        let u = cx.node.0 as usize;
        self.start[u] = p;
        self.ev[u] = 0;
        self.got[u] = 0;
        self.clear_held(u);
        self.next_send[u] = u64::MAX;
        if self.t.tp > 0 {
            let act = self.active[u];
            match self.class_scan.as_mut() {
                Some(cs) => cs.set_input(0, u as u32, act),
                None => {
                    for c in 0..self.scan.classes {
                        self.scan.set_input(c, u as u32, act);
                    }
                }
            }
        }
        self.run_due(cx);
    }

    /// Run every event of node u due by now and set a timer for the next; returns true
    /// when the period is over at this node.
    pub fn run_due(&mut self, cx: &mut NodeCtx<'_>) -> bool {
        let u = cx.node.0 as usize;
        loop {
            if self.next_send[u] <= cx.now {
                self.paced_send(cx);
            }
            let e = self.ev[u];
            match self.t.event(self.start[u], e, self.m[u]) {
                None => return true,
                Some(at) if at > cx.now => {
                    cx.wake_at(at.min(self.next_send[u]));
                    return false;
                }
                Some(_) => {
                    self.ev[u] += 1;
                    self.event(cx, e);
                }
            }
        }
    }

    /// Is node u's period over (for II and III: has the end event run)?
    pub fn over(&self, u: u32) -> bool {
        self.t.event(self.start[u as usize], self.ev[u as usize], self.m[u as usize]).is_none()
    }

    pub(super) fn event(&mut self, cx: &mut NodeCtx<'_>, e: u32) {
        let d = self.t.d;
        let u = cx.node.0;
        let s = self.t.scan_steps();
        if e < s {
            let k = e % (2 * d);
            match self.class_scan.as_mut() {
                Some(cs) if e < 2 * d => cs.step(cx, k, self.prefix_flits),
                Some(cs) if k == 0 => {
                    // pmnb-3: the class computation is done; class c counts only its packets.
                    let r = cs.rank(0, u);
                    let act = self.active[u as usize];
                    for c in 0..d {
                        self.scan.set_input(c, u, act && r % d == c);
                    }
                    self.scan.step(cx, k, self.prefix_flits);
                }
                _ => self.scan.step(cx, k, self.prefix_flits),
            }
            return;
        }
        let e = e - s;
        if e == 0 {
            self.ranks_known(cx);
        }
        if e < d {
            self.pack_step(cx, e);
            return;
        }
        let e = e - d;
        match self.t.variant {
            Variant::One if e < d - ceil_log2(self.m[u as usize]) => self.snb_step(cx, e),
            Variant::One => self.mnb_start(cx),
            _ if e < d => self.spread(cx, e + 1),
            _ => {}
        }
    }

    /// After the scans: M, this node's class and rank, its packet placed for packing.
    pub(super) fn ranks_known(&mut self, cx: &mut NodeCtx<'_>) {
        let u = cx.node.0;
        let total = match &self.class_scan {
            Some(cs) => cs.total(0, u),
            None => self.scan.total(0, u),
        };
        self.m[u as usize] = total as u64;
        if self.t.variant == Variant::One && total > 1 && self.mnb.as_ref().is_none_or(|t| t.d != ceil_log2(total as u64)) {
            self.mnb = Some(MnbTree::new(ceil_log2(total as u64)));
        }
        if !self.active[u as usize] {
            return;
        }
        for c in 0..self.scan.classes {
            if self.scan.a[self.scan.at(c, u)] == 1 {
                let r = self.scan.rank(c, u);
                let i = self.at(u, c);
                self.pack[i] = (u + 1, r);
            }
        }
    }

    /// Packing step i: a packet of class c at virtual node v crosses virtual dimension i
    /// when bit i of v XOR (its rank) is one.
    pub(super) fn pack_step(&mut self, cx: &mut NodeCtx<'_>, i: u32) {
        let d = self.t.d;
        let u = cx.node.0;
        for c in 0..self.scan.classes {
            let idx = self.at(u, c);
            let (o1, r) = self.pack[idx];
            if o1 == 0 {
                continue;
            }
            let v = rotr(u, c, d);
            if (v ^ r) >> i & 1 == 1 {
                self.pack[idx] = (0, 0);
                let to = u ^ (1 << ((i + c) % d));
                let msg = self.piece_msg(c, o1 - 1);
                let a = aux(PACK, c, r, o1 - 1);
                cx.send(Send { dest: Dest::Node(NodeId(to)), msg, aux: a, key: 0, flits: self.piece_flits() });
            } else if i == d - 1 {
                // Packed where it belongs: hold it for the broadcast.
                self.pack[idx] = (0, 0);
                self.packed(u, c, o1 - 1);
            }
        }
    }

    pub(super) fn packed(&mut self, u: u32, c: u32, origin: u32) {
        self.hold(u as usize, c, origin);
    }

    /// Index of (node u, class c) in the per-(node, class) vectors.
    #[inline]
    pub(super) fn at(&self, u: u32, c: u32) -> usize {
        u as usize * self.scan.classes as usize + c as usize
    }

    /// Node u holds one more piece of class c.
    #[inline]
    pub(super) fn hold(&mut self, u: usize, c: u32, origin: u32) {
        let classes = self.scan.classes as usize;
        let i = u * classes + c as usize;
        let at = self.held_len[i] as usize * classes + c as usize;
        self.held_len[i] += 1;
        let row = &mut self.held[u];
        if at >= row.len() {
            row.resize(at - c as usize + classes, NONE);
        }
        row[at] = origin;
    }

    /// Node u's timer fires soon: a hint to load the pieces its next paced send reads (each
    /// node's are a block of their own, far from the last node's).
    #[inline]
    pub(super) fn prefetch_timer(&self, u: usize) {
        let i = self.cursor[u] as usize * self.scan.classes as usize;
        if let Some(p) = self.held[u].get(i) {
            router::prefetch(p);
        }
    }

    /// Node u's k-th piece of class c.
    #[inline]
    pub(super) fn held_at(&self, u: usize, c: u32, k: u32) -> u32 {
        self.held[u][k as usize * self.scan.classes as usize + c as usize]
    }

    pub(super) fn clear_held(&mut self, u: usize) {
        self.held[u].clear();
        let classes = self.scan.classes as usize;
        self.held_len[u * classes..(u + 1) * classes].fill(0);
    }

    pub(super) fn piece_msg(&self, c: u32, origin: u32) -> u32 {
        if self.t.variant.pieces(self.t.d) > 1 { self.msg_base[origin as usize] + c } else { self.msg_base[origin as usize] }
    }

    /// Broadcast subphase l (II, III): every node sends everything it holds of class c
    /// across virtual dimension d − l.
    pub(super) fn spread(&mut self, cx: &mut NodeCtx<'_>, l: u32) {
        let u = cx.node.0 as usize;
        self.sub[u] = l;
        self.cursor[u] = 0;
        let classes = self.scan.classes as usize;
        self.sub_len[u * classes..(u + 1) * classes].copy_from_slice(&self.held_len[u * classes..(u + 1) * classes]);
        self.next_send[u] = cx.now;
        self.paced_send(cx);
    }

    /// The next piece of each class in the subphase under way.
    pub(super) fn paced_send(&mut self, cx: &mut NodeCtx<'_>) {
        let d = self.t.d;
        let u = cx.node.0 as usize;
        let (l, k) = (self.sub[u], self.cursor[u]);
        let flits = self.piece_flits();
        let mut more = false;
        for c in 0..self.scan.classes {
            let i = self.at(u as u32, c);
            if k < self.sub_len[i] {
                let origin = self.held_at(u, c, k);
                let to = cx.node.0 ^ (1 << ((d - l + c) % d));
                let a = aux(SPREAD, c, l, origin);
                cx.send(Send { dest: Dest::Node(NodeId(to)), msg: self.piece_msg(c, origin), aux: a, key: 0, flits });
                more |= k + 1 < self.sub_len[i];
            }
        }
        self.cursor[u] += 1;
        self.next_send[u] = if more { cx.now + self.t.gap } else { u64::MAX };
        if !more && l == d {
            self.clear_held(u);
            self.held[u] = Vec::new();
        }
    }

    /// pmnb-1 phase 3, step i: holders of a packet send it across dimension m + i.
    pub(super) fn snb_step(&mut self, cx: &mut NodeCtx<'_>, i: u32) {
        let u = cx.node.0 as usize;
        let mm = ceil_log2(self.m[u]);
        for k in 0..self.held_len[u] {
            let origin = self.held_at(u, 0, k);
            let to = cx.node.0 ^ (1 << (mm + i));
            let a = aux(SUBCUBE_SNB, 0, 0, origin);
            cx.send(Send { dest: Dest::Node(NodeId(to)), msg: self.msg_base[origin as usize], aux: a, key: 0, flits: self.flits });
        }
    }

    /// pmnb-1 phase 4: the packet of rank r at node w·2^m + r starts the subcube's
    /// multinode broadcast (Bertsekas et al. §2), keyed by the slot of each link.
    pub(super) fn mnb_start(&mut self, cx: &mut NodeCtx<'_>) {
        let u = cx.node.0 as usize;
        if self.held_len[u] > 0 {
            let origin = self.held_at(u, 0, 0);
            self.mnb_forward(cx, origin, cx.node.0 & ((1 << ceil_log2(self.m[u])) - 1));
        }
        self.clear_held(u);
    }

    pub(super) fn mnb_forward(&self, cx: &mut NodeCtx<'_>, origin: u32, root_low: u32) {
        let Some(tree) = self.mnb.as_ref() else { return };
        let z = cx.node.0;
        let mask = (1u32 << tree.d) - 1;
        let x = (z & mask) ^ root_low;
        for &y in &tree.children[x as usize] {
            let to = (z & !mask) | (root_low ^ y);
            let a = aux(SUBCUBE_MNB, 0, root_low, origin);
            cx.send(Send {
                dest: Dest::Node(NodeId(to)),
                msg: self.msg_base[origin as usize],
                aux: a,
                key: tree.slot[y as usize],
                flits: self.flits,
            });
        }
    }

    /// A packet arrived at node z.
    pub fn receive(&mut self, cx: &mut NodeCtx<'_>, m: &Received) {
        let z = cx.node.0;
        let a = m.aux;
        match aux_kind(a) {
            SCAN_UP | SCAN_DOWN | CLASS_UP | CLASS_DOWN => {
                // Sent at the start of a step, it must be in before the next one reads it.
                if cx.now - m.birth > self.t.prefix_step() {
                    self.late_prefix += 1;
                }
                match aux_kind(a) {
                    SCAN_UP | SCAN_DOWN => self.scan.receive(z, m.src.0, a),
                    _ => self.class_scan.as_mut().expect("pmnb-3 only").receive(z, m.src.0, a),
                }
            }
            PACK => {
                let c = aux_class(a);
                let origin = aux_high(a);
                let idx = self.at(z, c);
                if self.pack[idx].0 != 0 || cx.now - m.birth != self.t.ms + self.t.extra {
                    self.collisions += 1;
                }
                let r = aux_value(a);
                let v = rotr(z, c, self.t.d);
                if v == r {
                    // Arrived: this node is the packet's intermediate destination.
                    self.accept(cx, origin, m.msg);
                    self.packed(z, c, origin);
                } else {
                    self.pack[idx] = (origin + 1, r);
                }
            }
            SPREAD => {
                let (c, origin) = (aux_class(a), aux_high(a));
                self.accept(cx, origin, m.msg);
                if aux_value(a) < self.t.d {
                    self.hold(z as usize, c, origin);
                }
            }
            SUBCUBE_SNB => {
                let origin = aux_high(a);
                self.accept(cx, origin, m.msg);
                self.hold(z as usize, 0, origin);
            }
            SUBCUBE_MNB => {
                let origin = aux_high(a);
                self.accept(cx, origin, m.msg);
                self.mnb_forward(cx, origin, aux_value(a));
            }
            k => unreachable!("PMNB packet of kind {k}"),
        }
    }

    /// The schedule's broken promises, for [`Program::failures`].
    pub fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        if self.collisions > 0 {
            f.push(format!("{} packing packets were delayed or met another: the packing paths were not disjoint", self.collisions));
        }
        if self.late_prefix > 0 {
            f.push(format!(
                "{} prefix packets arrived after their step of {} cycles had ended: the ranks and M read from them were stale",
                self.late_prefix,
                self.t.prefix_step()
            ));
        }
        f
    }

    pub(super) fn accept(&mut self, cx: &mut NodeCtx<'_>, origin: u32, msg: u32) {
        if origin != cx.node.0 {
            cx.accept(msg);
            self.got[cx.node.0 as usize] += 1;
        }
    }
}
