//! Dilated-diagonal broadcast (`dilated-diagonal`): one-to-all broadcast on the all-port
//! wormhole 2-D torus T(X, Y) with XY routing, after the lecture notes'
//! "Dilated-diagonal-based approach", in three phases:
//! 1. one copy into every row: the ring of Y rows is split recursively into five bands of
//!    nearly equal width; the row holding the copy sends to a row in each of the other four
//!    bands, two each way: straight up and down its column, and one hop east or west then
//!    up or down (⌈log_5 Y⌉ rounds);
//! 2. each row's copy moves along its row onto the diagonal x ≡ y + c (mod X) through the
//!    source (one round);
//! 3. the diagonals (offsets x − y mod X) are split recursively into five bands; every node
//!    of a band's informed diagonal sends east and west along its row and north and south
//!    along its column to the diagonals in the middle of the other four bands (a move of d
//!    rows down shifts the diagonal by +d), ⌈log_5 X⌉ rounds. Each node's worms stay inside
//!    its band, so the 4·Y worms of a round share no link.
//!
//! A move down a column keeps to one diagonal's numbering only if the column's Y nodes wrap
//! onto the same diagonals, that is when X divides Y (the square torus among them). Otherwise
//! the "diagonals" are dilated: a column move would shift rows of one diagonal onto different
//! diagonals; this implementation then splits the diagonals three ways with the row moves
//! alone (⌈log_3 X⌉ rounds in phase 3). Bands are split as evenly as the ring allows, the
//! informed member at the same place of its band at every level ([`canonical`]); a move of
//! exactly half a ring goes the way the torus routing sends it (up on ties), or the other
//! mechanism is used.
//!
//! Rounds: ⌈log_5 Y⌉ + 1 + ⌈log_5 X⌉ (X | Y) against the lower bound ⌈log_5 XY⌉: on
//! T(5^k, 5^k), 2k + 1, one more than the notes' "optimal" (phase 2 is a round of its own).

use super::rounds::Plan;
use crate::topology::Topology;
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

/// Do columns keep diagonals (X divides Y), so that phase 3 may move along them?
pub fn column_moves(topo: &Topology) -> bool {
    topo.sizes[1].is_multiple_of(topo.sizes[0])
}

/// The plan from `root` on the 2-D torus `topo`; Err if some band could not be split (a
/// ring too small for the moves), which the tests rule out for the sizes they try.
pub fn plan(topo: &Topology, root: NodeId) -> Result<Plan, String> {
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

    // Phase 2: onto the diagonal x ≡ y + c through the source.
    let c = x0 - y0;
    let mut aligned = false;
    let mut early = vec![false; topo.nodes()];
    for y in 0..ys as i64 {
        let x = col[y as usize].expect("phase 1 reached every row");
        early[at(x, y).idx()] = true;
        if (x - y - c).rem_euclid(xs as i64) != 0 {
            plan.add(last + 1, at(x, y), at(y + c, y));
            aligned = true;
        }
    }
    last += aligned as u32;

    // Phase 3: diagonals, five ways with column moves, else three.
    let columns = column_moves(topo) && xs > 1;
    let (l3, r3) = if columns { (2, 2) } else { (1, 1) };
    let diag = if columns { vec![Move::Row(0), Move::Column] } else { vec![Move::Row(0)] };
    let mut sends = Vec::new();
    split(c - canonical(xs, l3, r3) as i64, xs, l3, r3, last + 1, &mut sends);
    for ((r, from), targets) in by_sender(&sends) {
        let d: Vec<i64> = targets.iter().map(|t| t - from).collect();
        // A row move by d shifts the diagonal by d; a column move by −d rows shifts it by d.
        // Row moves of the first round may go either way round (each row carries one node's);
        // column moves pass other nodes of the same diagonal a column further, so they keep
        // to the short way the diagonal numbering assumes.
        let first = r == last + 1;
        let moves = assign(&d, &diag, true, |m, d| match m {
            Move::Row(_) => {
                let up = routed_up(d, xs);
                (first || up == (d > 0)).then_some(up)
            }
            Move::Column => {
                let up = routed_up(-d, ys);
                (up == (d < 0)).then_some(up)
            }
        })
        .ok_or_else(|| format!("phase 3: diagonal {from} cannot reach diagonals at {d:?} on T({xs},{ys})"))?;
        for (&dd, m) in d.iter().zip(moves) {
            for y in 0..ys as i64 {
                let x = y + from;
                let to = match m {
                    Move::Row(_) => at(x + dd, y),
                    Move::Column => at(x, y - dd),
                };
                // A row's phase-1 copy off the diagonal is informed already: it then only
                // does its diagonal's part from here on.
                if !early[to.idx()] {
                    plan.add(r, at(x, y), to);
                }
            }
        }
    }
    Ok(plan.finish())
}

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
    /// ⌈log_5 Y⌉ + 1 + ⌈log_5 X⌉ rounds when X divides Y and ⌈log_5 Y⌉ + 1 + ⌈log_3 X⌉
    /// otherwise (the alignment round always needed from X = 3 on), within the notes'
    /// lower bound + 5 (at most 3 more here).
    #[test]
    fn plans_inform_every_node_once() {
        use super::super::rounds::log_ceil;
        for (xs, ys) in (2..=64).flat_map(|x| (2..=64).map(move |y| (x, y))) {
            let topo = Topology::new(TopologyKind::Torus, &[xs, ys]);
            for root in [0, topo.nodes() as u32 / 2 + xs / 3, topo.nodes() as u32 - 1] {
                let p = plan(&topo, NodeId(root)).unwrap_or_else(|e| panic!("T({xs},{ys}): {e}"));
                let got = p.informed_rounds().unwrap_or_else(|e| panic!("T({xs},{ys}) root {root}: {e}"));
                let rounds = *got.iter().max().unwrap();
                let third = log_ceil(if ys.is_multiple_of(xs) { 5 } else { 3 }, xs as u64);
                if xs >= 3 {
                    assert_eq!(rounds, log_ceil(5, ys as u64) + 1 + third, "T({xs},{ys}) root {root}");
                }
                assert!(rounds <= log_ceil(5, (xs * ys) as u64) + 3, "T({xs},{ys}) root {root}: {rounds}");
            }
        }
    }
}
