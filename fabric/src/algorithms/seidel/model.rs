//! The paper's cost model (§2, Table I) and the mapping of cycles onto time.
//!
//! A message of m bytes costs `am + b` between two nodes; links are 2^ν times faster than
//! the gateway (ā = a / 2^ν); ρ is the cost of moving a byte inside a node. Table II gives
//! the Intel Delta's constants.
//!
//! The simulation's clock: a flit is `flit_bytes` bytes and the gateway (a NIC channel)
//! moves one flit per cycle, so a cycle is `a · flit_bytes` µs; the start-up `b` is
//! `round(b / cycle)` cycles. The flit is chosen per message length so that a message is
//! at most [`MAX_MESSAGE_FLITS`] flits (long messages simulate quickly) while a router hop
//! (one cycle) stays small against `b`, as on the Delta.

use super::{Alg, Fill};

/// Intel Delta (Table II): a = ā = 0.08 µs/byte (ν = 0), b = 75 µs, ρ = 0.01 µs/byte.
pub const DELTA: Costs = Costs { a: 0.08, b: 75.0, rho: 0.01 };

/// A message is split into at most this many flits.
pub const MAX_MESSAGE_FLITS: u64 = 4096;

/// The model's constants, µs and µs per byte.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Costs {
    pub a: f64,
    pub b: f64,
    pub rho: f64,
}

/// Flit size in bytes for a message of `m` bytes: the smallest power of two that keeps the
/// message within [`MAX_MESSAGE_FLITS`].
pub fn flit_bytes(m: u64) -> u64 {
    m.div_ceil(MAX_MESSAGE_FLITS).max(1).next_power_of_two()
}

/// Table I and the sections' costs, µs, for `2^d` (linear: `e = [d]`) or `2^e0 × 2^e1` nodes
/// (mesh; `e1` is the axis the simple ST broadcasts along first). Where the paper's closed
/// form disagrees with the sum of its own phase costs, the sum is used (see the comments).
pub fn table_cost(alg: Alg, linear: bool, e: &[u32], nu: u32, m: f64, c: Costs) -> f64 {
    let (a, b, rho) = (c.a, c.b, c.rho);
    let ma = m * a;
    let p = |x: i64| 2f64.powi(x as i32);
    let nu_i = nu as i64;
    if linear {
        let d = e[0] as i64;
        return match alg {
            // Eq. 2 (eq. 1 for ν = 0).
            Alg::St => (2.0 + (d - nu_i - 2) as f64 / p(nu_i)) * ma + (d + nu_i) as f64 * b,
            // Eq. 8 (eq. 7 for ν = 0).
            Alg::Bst => (2.0 + (d - nu_i - 3) as f64 / p(nu_i + 1)) * ma + (d + nu_i + 1) as f64 * b,
            // §3.5: distribute, then Σ_i [m/2^(i+1) max(a, 2^i ā) + b], then mρ.
            Alg::Rh => {
                let ex: f64 = (0..d).map(|i| m / p(i + 1) * a.max(p(i) * a / p(nu_i)) + b).sum();
                (1.0 - 1.0 / p(d)) * ma + d as f64 * b + ex + m * rho
            }
            _ => f64::NAN,
        };
    }
    let (e0, e1) = (e[0] as i64, e[1] as i64);
    let mx = e0.max(e1);
    match alg {
        // §3.2.2's five phases, summed: (1 - 2^-ν) + (d1 - ν) 2^-ν + (1 - 2^-ν) 2^-ν +
        // (d2 - ν) 2^-2ν + (1 - 2^-2ν) = 2 + (d1 - ν)/2^ν + (d2 - ν - 2)/2^2ν of ma, with d1
        // the first axis. Eq. 4 prints 3 + (d1-ν-2)/2^ν + (d2-ν-1)/2^2ν, which agrees for
        // ν = 0 only (it is (1 - 2^(1-ν) + 2^-2ν) ma higher for ν > 0).
        Alg::StSimple => {
            let (d1, d2) = (e1, e0);
            (2.0 + (d1 - nu_i) as f64 / p(nu_i) + (d2 - nu_i - 2) as f64 / p(2 * nu_i)) * ma + (d1 + d2 + 2 * nu_i) as f64 * b
        }
        // Eq. 6.
        Alg::St => (2.0 + (mx - nu_i - 2) as f64 / p(2 * nu_i + 1)) * ma + (2 * mx + 2 * nu_i + 2) as f64 * b,
        // Eq. 9 (ν = 0); for ν > 0 eq. 8 on the mesh as a linear array of 2^(d1+d2).
        Alg::BstSimple => table_cost(Alg::Bst, true, &[(e0 + e1) as u32], nu, m, c),
        // Eq. 10 / §3.4.2 (Table I).
        Alg::Bst => (2.0 + (2 * mx - 2 * nu_i - 5) as f64 / p(2 * nu_i + 3)) * ma + (2 * mx + 2 * nu_i + 3) as f64 * b,
        // §3.6's sums (d1 <= d2: the smaller side first), plus the distribute and mρ.
        Alg::Rh => {
            let (d1, d2) = (e0.min(e1), e0.max(e1));
            let abar = a / p(nu_i);
            let first: f64 = (0..2 * d1).map(|i| m / p(i + 1) * a.max(p(i / 2 - 1) * abar) + b).sum();
            let second: f64 = (2 * d1..d1 + d2).map(|i| m / p(i + 1) * a.max(p(i - d1) * abar) + b).sum();
            (1.0 - 1.0 / p(d1 + d2)) * ma + (d1 + d2) as f64 * b + first + second + m * rho
        }
    }
}

/// The model's cost of `alg` on physical sides `sizes` with a fill (§5): virtual nodes cost
/// what the next powers of two cost; companions cost the previous powers of two plus the
/// companions' step(s): ma + b on a line, min(2(ma+b), 3(ma/2+b)) when companions lie in
/// both dimensions (a 2 × 2 ST or BST), ma + b when in one.
pub fn model_cost(alg: Alg, linear: bool, sizes: &[u32], fill: Fill, nu: u32, m: f64, c: Costs) -> f64 {
    let lg = |n: u32| match fill {
        Fill::Virtual => n.next_power_of_two().trailing_zeros(),
        _ => 31 - n.leading_zeros(),
    };
    let e: Vec<u32> = sizes.iter().map(|&n| lg(n)).collect();
    let base = table_cost(alg, linear, &e, nu, m, c);
    if fill != Fill::Companions {
        return base;
    }
    let with: Vec<bool> = sizes.iter().map(|n| !n.is_power_of_two()).collect();
    let ma = m * c.a;
    match with.iter().filter(|&&x| x).count() {
        0 => base,
        1 => base + ma + c.b,
        _ => base + companions_2x2(m, c).1,
    }
}

/// The 2 × 2 companion step: (use the BST?, its cost).
pub fn companions_2x2(m: f64, c: Costs) -> (bool, f64) {
    let st = 2.0 * (m * c.a + c.b);
    let bst = 3.0 * (m * c.a / 2.0 + c.b);
    (bst < st, st.min(bst))
}

/// Which algorithms §5 lets use virtual nodes: the linear ST and BST and the simple mesh
/// ST and BST, with ν = 0.
pub fn virtual_allowed(alg: Alg, linear: bool, nu: u32) -> bool {
    nu == 0 && if linear { matches!(alg, Alg::St | Alg::Bst) } else { matches!(alg, Alg::StSimple | Alg::BstSimple) }
}

/// Sizes an algorithm needs (log2 of the logical sides): None if fine, else what is allowed.
pub fn size_limits(alg: Alg, linear: bool, e: &[u32], nu: u32) -> Option<String> {
    let emin = *e.iter().min().unwrap();
    let need = match (linear, alg) {
        (true, Alg::St) => (emin >= nu).then_some(()).ok_or(format!("2^nu <= n (nu = {nu})")),
        (true, Alg::Bst) => (emin > nu).then_some(()).ok_or(format!("2^(nu+1) <= n (nu = {nu})")),
        (_, Alg::Rh) => {
            (e.iter().sum::<u32>() <= 12).then_some(()).ok_or("at most 4096 nodes (a piece per node, tracked per node)".to_string())
        }
        (false, Alg::StSimple) => (emin >= nu).then_some(()).ok_or(format!("sides of at least 2^nu = {}", 1 << nu)),
        // The mesh as one linear array for the linear BST (2^(nu+1) <= nodes), whose first
        // side carries 2^nu worms at once.
        (false, Alg::BstSimple) => (e[0] >= nu && e.iter().sum::<u32>() > nu).then_some(()).ok_or(format!(
            "a first side of at least 2^nu = {} and at least 2^(nu+1) = {} nodes",
            1 << nu,
            2 << nu
        )),
        (false, Alg::St) => (emin > nu).then_some(()).ok_or(format!("sides of at least 2^(nu+1) = {}", 2 << nu)),
        (false, Alg::Bst) => (emin > nu + 1).then_some(()).ok_or(format!("sides of at least 2^(nu+2) = {}", 4 << nu)),
        (true, _) => Err("a mesh".to_string()),
    };
    need.err()
}
