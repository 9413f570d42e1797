//! Dilated-diagonal broadcast (`dilated-diagonal`): one-to-all broadcast on the all-port
//! wormhole 2-D torus T(X, Y) with XY routing, after the lecture notes'
//! "Dilated-diagonal-based approach", in three phases:
//! 1. one copy into every row: the ring of Y rows is split recursively into five bands of
//!    nearly equal width; the row holding the copy sends to a row in each of the other four
//!    bands, two each way: straight up and down its column, and one hop east or west then
//!    up or down (⌈log_5 Y⌉ rounds);
//! 2. each row's copy moves along its row onto the line x ≡ s·y + c (mod X) through the
//!    source (one round; idle if phase 1 left every copy on it);
//! 3. the X lines x ≡ s·y + c' (offsets c') are split recursively: every node of a band's
//!    informed line sends east and west along its row and north and south along its column
//!    to lines in the middle of the other bands. Each node's worms stay inside its band, so
//!    the worms of a round share no link.
//!
//! A move of d rows down a column shifts the offset by s·d, the same in every row only if the
//! column wraps onto the same lines, s·Y ≡ 0 (mod X): s = X/g for a common divisor g of X and
//! Y. With g = X (X divides Y, square tori among them) the lines are the diagonals and phase
//! 3 splits them five ways, ⌈log_5 X⌉ rounds. Otherwise the diagonals are dilated (slope
//! X/g): first the g lines c + s·i, five ways (a row move of s·d or a column move of d rows
//! shifts i by d; ⌈log_5 g⌉ rounds), then around each of them its s neighbouring lines, three
//! ways by row moves (⌈log_3 s⌉ rounds); g is the common divisor with the fewest rounds
//! ([`slopes`]). Bands are split as evenly as the ring allows, the informed member at the
//! same place of its band at every level ([`canonical`]); a move of exactly half a ring goes
//! the way the torus routing sends it (up on ties), or another move is used.
//!
//! Rounds: ⌈log_5 Y⌉ + 1 + min over g (⌈log_5 g⌉ + ⌈log_3 (X/g)⌉) (phase 1 four ways on 2
//! columns) against the lower bound ⌈log_5 XY⌉: on T(5^k, 5^k), 2k + 1, one more than the
//! notes' "optimal" (phase 2 is a round of its own); at most 3 more than the bound on every
//! torus up to 64×64, within the notes' "at most 5 more".

use super::Bounds;
use super::entry::{self, Algorithm, Ports};
use super::rounds::{Plan, RoundBroadcast, log_ceil, round_period};
use crate::topology::{Topology, TopologyKind};
use router::NodeId;

/// The pieces a band of `len` members is cut into, from its low end: `left` pieces below the
/// informed member's, its own, `right` above, each of ⌊len/w⌋ or ⌈len/w⌉ members (w pieces;
/// empty ones dropped). Which pieces get the extra members is chosen so that the informed
/// member has as many members above it as below, or one more above (a move of half a ring
/// goes up); on ties, the fewest far extras. Returns the sizes and the index of the informed
/// member's piece.
fn pieces(len: u32, left: u32, right: u32) -> (Vec<u32>, usize) {
    let w = (1 + left + right) as usize;
    let mid = left as usize;
    let (q, rem) = (len / w as u32, len % w as u32);
    let mut best: Option<((i64, u32), Vec<u32>)> = None;
    for mask in 0u32..1 << w {
        if mask.count_ones() != rem {
            continue;
        }
        let size: Vec<u32> = (0..w).map(|i| q + (mask >> i & 1)).collect();
        if size[mid] == 0 {
            continue;
        }
        let c = canonical(size[mid], left, right);
        let below = size[..mid].iter().sum::<u32>() + c;
        let above = len - 1 - below;
        // Prefer above − below = 1, then 0, then the rest by distance; then extras near.
        let skew = above as i64 - below as i64;
        let cost = (
            if skew == 1 {
                0
            } else if skew == 0 {
                1
            } else {
                2 * (skew - 1).abs()
            },
            (0..w).filter(|&i| mask >> i & 1 == 1).map(|i| i.abs_diff(mid) as u32).sum(),
        );
        if best.as_ref().is_none_or(|(b, _)| cost < *b) {
            best = Some((cost, size));
        }
    }
    let size = best.expect("some piece holds the informed member").1;
    let before_mid = size[..mid].iter().filter(|&&s| s == 0).count();
    let kept: Vec<u32> = size.into_iter().filter(|&s| s > 0).collect();
    (kept, mid - before_mid)
}

/// Where in a band of `len` members its informed member sits (0 = the low end).
pub fn canonical(len: u32, left: u32, right: u32) -> u32 {
    if len <= 1 {
        return 0;
    }
    let (sizes, mid) = pieces(len, left, right);
    sizes[..mid].iter().sum::<u32>() + canonical(sizes[mid], left, right)
}

/// The sends splitting the band of `len` members starting at `lo` (unwrapped positions),
/// informed at its canonical place, from `round` on: (round, from, to), parents first.
fn split(lo: i64, len: u32, left: u32, right: u32, round: u32, out: &mut Vec<(u32, i64, i64)>) {
    if len <= 1 {
        return;
    }
    let p = lo + canonical(len, left, right) as i64;
    let (sizes, mid) = pieces(len, left, right);
    let mut start = lo;
    for (i, &s) in sizes.iter().enumerate() {
        if i != mid {
            out.push((round, p, start + canonical(s, left, right) as i64));
        }
        split(start, s, left, right, round + 1, out);
        start += s as i64;
    }
}

/// Which way the torus routing takes a ring of `k` from c to c + d (d ≠ 0 mod k): up
/// (true) or down. It goes the shorter way, up on ties.
fn routed_up(d: i64, k: u32) -> bool {
    let up_dist = d.rem_euclid(k as i64);
    up_dist <= k as i64 - up_dist
}

/// How one worm leaves its sender.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Move {
    /// Along the sender's column, by the signed row difference (+ up).
    Column,
    /// One hop east (+1) or west (−1) along the row, then along that column (phase 1); or
    /// along the row by the signed difference (phase 3).
    Row(i64),
}

/// Give each of one sender's targets (signed distances) a move: at most one column move each
/// way, and each row move once (phase 1: they leave by the same link whichever way they
/// turn) or once each way (`rows_each_way`, phase 3); `way` says which way (up?) a move
/// carries a target there, None if it may not.
fn assign(targets: &[i64], moves: &[Move], rows_each_way: bool, way: impl Fn(Move, i64) -> Option<bool>) -> Option<Vec<Move>> {
    type Ok<'a> = &'a dyn Fn(Move, i64) -> Option<bool>;
    fn go(i: usize, targets: &[i64], moves: &[Move], each: bool, used: &mut Vec<(Move, bool)>, ok: Ok<'_>) -> bool {
        if i == targets.len() {
            return true;
        }
        for &m in moves {
            let Some(up) = ok(m, targets[i]) else { continue };
            let key = (m, if m == Move::Column || each { up } else { true });
            if used.contains(&key) {
                continue;
            }
            used.push(key);
            if go(i + 1, targets, moves, each, used, ok) {
                return true;
            }
            used.pop();
        }
        false
    }
    let mut used = Vec::new();
    go(0, targets, moves, rows_each_way, &mut used, &way).then(|| used.into_iter().map(|(m, _)| m).collect())
}

/// Group (round, from, to) sends by (round, from), in order.
fn by_sender(sends: &[(u32, i64, i64)]) -> Vec<((u32, i64), Vec<i64>)> {
    let mut groups: Vec<((u32, i64), Vec<i64>)> = Vec::new();
    for &(r, from, to) in sends {
        match groups.iter_mut().find(|(k, _)| *k == (r, from)) {
            Some((_, v)) => v.push(to),
            None => groups.push(((r, from), vec![to])),
        }
    }
    groups
}

/// The common divisors g of X and Y by the rounds of phase 3 with lines of slope X/g,
/// ⌈log_5 g⌉ + ⌈log_3 (X/g)⌉, fewest first (the larger g on ties).
pub fn slopes(xs: u32, ys: u32) -> Vec<u32> {
    let mut g: Vec<u32> = (1..=xs.min(ys)).filter(|&d| xs.is_multiple_of(d) && ys.is_multiple_of(d)).collect();
    g.sort_by_key(|&d| (log_ceil(5, d as u64) + log_ceil(3, (xs / d) as u64), u32::MAX - d));
    g
}

/// The plan from `root` on the 2-D torus `topo`; Err if some band could not be split (a
/// ring too small for the moves), which the tests rule out for the sizes they try.
pub fn plan(topo: &Topology, root: NodeId) -> Result<Plan, String> {
    let mut why = String::new();
    for g in slopes(topo.sizes[0], topo.sizes[1]) {
        match plan_with(topo, root, g) {
            Ok(p) => return Ok(p),
            Err(e) => why = e,
        }
    }
    Err(why)
}

/// [`plan`] with lines of slope X/g.
fn plan_with(topo: &Topology, root: NodeId, g: u32) -> Result<Plan, String> {
    let (xs, ys) = (topo.sizes[0], topo.sizes[1]);
    let (x0, y0) = (topo.coord(root, 0) as i64, topo.coord(root, 1) as i64);
    let at = |x: i64, y: i64| topo.node_at(&[x.rem_euclid(xs as i64) as u32, y.rem_euclid(ys as i64) as u32]);
    let mut plan = Plan::new(topo.nodes(), root);

    // Phase 1: rows. Row moves one hop east and west, when the ring has room for both.
    let rows: Vec<Move> = match xs {
        1 => vec![Move::Column],
        2 => vec![Move::Column, Move::Row(1)],
        _ => vec![Move::Column, Move::Row(1), Move::Row(-1)],
    };
    let (l1, r1) = (1 + (rows.len() > 2) as u32, 1 + (rows.len() > 1) as u32);
    let mut sends = Vec::new();
    split(y0 - canonical(ys, l1, r1) as i64, ys, l1, r1, 1, &mut sends);
    let mut col = vec![None; ys as usize];
    col[y0 as usize] = Some(x0);
    let mut last = 0;
    for ((r, from), targets) in by_sender(&sends) {
        let x = col[from.rem_euclid(ys as i64) as usize].expect("a band's informed row holds the copy");
        let d: Vec<i64> = targets.iter().map(|t| t - from).collect();
        // The first round's worms, from the one informed row, may go either way round the
        // ring; later a band is under half the ring and its worms stay inside it.
        let first = r == 1;
        let moves = assign(&d, &rows, false, |_, d| {
            let up = routed_up(d, ys);
            (first || up == (d > 0)).then_some(up)
        })
        .ok_or_else(|| format!("phase 1: row {from} cannot reach rows at {d:?} on T({xs},{ys})"))?;
        for (&t, m) in targets.iter().zip(moves) {
            let tx = match m {
                Move::Column => x,
                Move::Row(h) => x + h,
            };
            plan.add(r, at(x, from), at(tx, t));
            col[t.rem_euclid(ys as i64) as usize] = Some(tx);
        }
        last = last.max(r);
    }

    // Phase 2: onto the dilated diagonal x ≡ s·y + c through the source.
    let s = (xs / g) as i64;
    let c = x0 - s * y0;
    let mut aligned = false;
    let mut early = vec![false; topo.nodes()];
    for y in 0..ys as i64 {
        let x = col[y as usize].expect("phase 1 reached every row");
        early[at(x, y).idx()] = true;
        if (x - s * y - c).rem_euclid(xs as i64) != 0 {
            plan.add(last + 1, at(x, y), at(s * y + c, y));
            aligned = true;
        }
    }
    last += aligned as u32;
    // Line c + o's node in row y informs the node a row move of `dx` or a column move of
    // `dy` rows away, in every row, unless phase 1 informed it.
    let mut lines = |r: u32, o: i64, dx: i64, dy: i64| {
        for y in 0..ys as i64 {
            let x = s * y + c + o;
            let to = at(x + dx, y + dy);
            // A row's phase-1 copy off the diagonal is informed already: it then only does
            // its line's part from here on.
            if !early[to.idx()] {
                plan.add(r, at(x, y), to);
            }
        }
    };

    // Phase 3a: the g lines c + s·i, five ways: a row move of s·d or a column move of d
    // rows down shifts i by d. Row moves of the first round may go either way round (each
    // row carries one node's worm); column moves pass other nodes of the same line g rows
    // on, so they keep to the short way the numbering assumes.
    let mut sends = Vec::new();
    split(-(canonical(g, 2, 2) as i64), g, 2, 2, last + 1, &mut sends);
    let first = last + 1;
    for ((r, from), targets) in by_sender(&sends) {
        let d: Vec<i64> = targets.iter().map(|t| t - from).collect();
        let moves = assign(&d, &[Move::Row(0), Move::Column], true, |m, d| match m {
            Move::Row(_) => {
                let up = routed_up(s * d, xs);
                (r == first || up == (d > 0)).then_some(up)
            }
            Move::Column => {
                let up = routed_up(-d, ys);
                (up == (d < 0)).then_some(up)
            }
        })
        .ok_or_else(|| format!("phase 3: line {from} cannot reach lines at {d:?} on T({xs},{ys}), slope {s}"))?;
        for (&dd, m) in d.iter().zip(moves) {
            match m {
                Move::Row(_) => lines(r, s * from, s * dd, 0),
                Move::Column => lines(r, s * from, 0, -dd),
            }
        }
        last = last.max(r);
    }

    // Phase 3b: each line c + s·i, three ways along the rows over the s lines around it.
    let mut sends = Vec::new();
    split(-(canonical(s as u32, 1, 1) as i64), s as u32, 1, 1, last + 1, &mut sends);
    let first = last + 1;
    for ((r, from), targets) in by_sender(&sends) {
        let d: Vec<i64> = targets.iter().map(|t| t - from).collect();
        // Row moves of the first round may go either way round when one line sends (g = 1).
        let moves = assign(&d, &[Move::Row(0)], true, |_, d| {
            let up = routed_up(d, xs);
            (r == first && g == 1 || up == (d > 0)).then_some(up)
        })
        .ok_or_else(|| format!("phase 3: line {from} cannot reach lines at {d:?} on T({xs},{ys}), slope {s}"))?;
        for (&dd, _) in d.iter().zip(moves) {
            for i in 0..g as i64 {
                lines(r, s * i + from, dd, 0);
            }
        }
    }
    Ok(plan.finish())
}

pub const DILATED_DIAGONAL: Algorithm = Algorithm {
    ports: Ports::All(entry::SIMULTANEOUS),
    rooted: true,
    shape: Some(|topo| match topo.ndims() {
        2 => plan(topo, NodeId(0)).map(|_| ()),
        _ => Err("dilated-diagonal runs on 2-D tori, like 25x25".to_string()),
    }),
    rounds: true,
    ..Algorithm::new(
        "dilated-diagonal",
        &[TopologyKind::Torus],
        "one-to-all broadcast lecture notes, 'Dilated-diagonal-based approach' (rows in five bands, align to the diagonal, diagonal bands; XY routing)",
        "all-port wormhole broadcast from --root on 2-D tori T(X,Y) in synchronous rounds: ceil(log5 Y) + 1 + ceil(log5 X) when X divides Y, dilated diagonals of slope X/g otherwise (g a common divisor); reports rounds and lower_bound_rounds ceil(log5 XY)",
        |i| {
            let l = i.spec.packet_flits;
            let plan = plan(&i.spec.topology(), i.root).expect("shape validated");
            (Box::new(RoundBroadcast::new(plan, round_period(i.spec, l), l)), Bounds::default())
        },
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    /// A band of 5^k splits into five of 5^(k−1), the informed member in the middle one at
    /// the middle: ⌈log_w len⌉ levels for w = 5 and 3, for every length.
    #[test]
    fn bands_split_evenly() {
        for len in 1..=200u32 {
            for (l, r, w) in [(2, 2, 5u64), (1, 1, 3), (1, 2, 4)] {
                let mut out = Vec::new();
                split(0, len, l, r, 1, &mut out);
                let rounds = out.iter().map(|s| s.0).max().unwrap_or(0);
                assert_eq!(rounds, super::super::rounds::log_ceil(w, len as u64), "len {len} split {l}+{r}");
                let mut hit: Vec<i64> = out.iter().map(|s| s.2).collect();
                hit.push(canonical(len, l, r) as i64);
                hit.sort_unstable();
                assert_eq!(hit, (0..len as i64).collect::<Vec<_>>(), "len {len}: every member once");
            }
        }
        assert_eq!(canonical(25, 2, 2), 12);
    }

    /// Plans on tori of every shape from 2×2 to 64×64 inform every node once, in
    /// ⌈log_5 Y⌉ + 1 + min over common divisors g of X and Y of ⌈log_5 g⌉ + ⌈log_3 (X/g)⌉
    /// rounds (the alignment round idle when phase 1 left every copy on the line: lines of
    /// slope X are columns, which column moves keep to), within the notes' lower
    /// bound + 5 (at most 3 more here).
    #[test]
    fn plans_inform_every_node_once() {
        for (xs, ys) in (2..=64).flat_map(|x| (2..=64).map(move |y| (x, y))) {
            let topo = Topology::new(TopologyKind::Torus, &[xs, ys]);
            for root in [0, topo.nodes() as u32 / 2 + xs / 3, topo.nodes() as u32 - 1] {
                let p = plan(&topo, NodeId(root)).unwrap_or_else(|e| panic!("T({xs},{ys}): {e}"));
                let got = p.informed_rounds().unwrap_or_else(|e| panic!("T({xs},{ys}) root {root}: {e}"));
                let rounds = *got.iter().max().unwrap();
                // Lines of slope X/g for a common divisor g: ⌈log_5 g⌉ + ⌈log_3 (X/g)⌉.
                let third = (1..=xs)
                    .filter(|&g| xs % g == 0 && ys % g == 0)
                    .map(|g| log_ceil(5, g as u64) + log_ceil(3, (xs / g) as u64))
                    .min()
                    .unwrap();
                // The alignment round is idle when phase 1 left every copy on the line.
                // Phase 1 four ways on 2 columns (one hop east or west is the same link).
                let base = log_ceil(if xs >= 3 { 5 } else { 4 }, ys as u64) + third;
                assert!(rounds == base + 1 || rounds == base, "T({xs},{ys}) root {root}: {rounds}, {base} without alignment");
                assert!(rounds <= log_ceil(5, (xs * ys) as u64) + 3, "T({xs},{ys}) root {root}: {rounds}");
            }
        }
    }
}
