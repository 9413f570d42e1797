//! What the RTL tests share (`rtl.rs`, one router against the model; `rtl_cosim.rs`, RTL
//! routers in the fabric): whether Verilator is there, the RTL's sources, and the bugs
//! seeded into copies of them.
#![allow(dead_code, reason = "each test binary uses a part of these")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The RTL sources, in rtl/.
pub const SOURCES: [&str; 3] = ["router.sv", "vc_fifo.sv", "route_compute.sv"];

pub fn rtl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl")
}

/// Is Verilator installed? If not, say so once and let the tests pass (unless
/// FLITWAVE_REQUIRE_VERILATOR is set, as `.ci/run` does after installing it).
pub fn have_verilator() -> bool {
    if testbenches::rtl::verilator_version().is_some() {
        return true;
    }
    let msg = "verilator not found: the RTL tests are skipped (install Verilator, Debian package verilator, to run them)";
    assert!(std::env::var_os("FLITWAVE_REQUIRE_VERILATOR").is_none(), "{msg}");
    // Once, past the test harness's capture of passing tests' output.
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        let _ = writeln!(std::io::stderr(), "{msg}");
    });
    false
}

/// An edit of router.sv: text found exactly once, and what replaces it.
pub type Edit = (&'static str, &'static str);

/// Bugs a designer might write, seeded into copies of router.sv: a credit returned a cycle
/// late, a switch-allocation round-robin pointer that does not advance, an output VC freed
/// when the head leaves instead of the tail.
pub const MUTANTS: [(&str, &[Edit]); 3] = [
    (
        "late-credit",
        &[
            (
                "logic [P-1:0] out_valid_d, cr_out_valid_d;",
                "logic [P-1:0] out_valid_d, cr_out_valid_d, late;\n  logic [VC_W-1:0] late_vc[P];",
            ),
            ("cr_out_valid <= cr_out_valid_d;", "late <= cr_out_valid_d;\n      cr_out_valid <= late;"),
            ("cr_out_vc[p] <= cr_out_vc_d[p];", "late_vc[p] <= cr_out_vc_d[p];\n        cr_out_vc[p] <= late_vc[p];"),
        ],
    ),
    ("stuck-sa-pointer", &[("sa_ptr_d[o] = past(w);", "sa_ptr_d[o] = sa_ptr_q[o];")]),
    (
        "vc-freed-at-head",
        &[
            ("          held_d[o][NV_W'(ovc_q[w])] = 1'b0;\n", ""),
            ("out_flit_d[o] = front[w];", "out_flit_d[o] = front[w];\n        if (front[w][F_HEAD]) held_d[o][NV_W'(ovc_q[w])] = 1'b0;"),
        ],
    ),
];

/// Write the RTL with `edits` made to router.sv into `dir`.
pub fn write_mutant(name: &str, edits: &[Edit], dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for s in SOURCES {
        let mut text = std::fs::read_to_string(rtl_dir().join(s)).unwrap();
        if s == "router.sv" {
            for (from, to) in edits {
                assert_eq!(text.matches(from).count(), 1, "{name}: {from:?} once in router.sv");
                text = text.replace(from, to);
            }
        }
        std::fs::write(dir.join(s), text).unwrap();
    }
}
