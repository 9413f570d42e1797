#!/usr/bin/env bash
# A profile-guided build of flitwave, for measurements (not the default build): instrument,
# train on the kernel benchmarks' workloads, rebuild with the profile.
#
# usage: [LLVM_PROFDATA=llvm-profdata-22] docs/experiments/pgo.sh [OUT_DIR]
#
# Needs an llvm-profdata of the same LLVM major version as rustc (`rustc -vV`: LLVM 22 for
# Rust 1.95; Debian's package llvm-22 has /usr/bin/llvm-profdata-22). The binary is
# OUT_DIR/use/release/flitwave (default OUT_DIR: /tmp/flitwave-pgo). Results are the same
# as the default build's; only the speed differs (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/flitwave-pgo}
PROFDATA=${LLVM_PROFDATA:-llvm-profdata-22}
command -v "$PROFDATA" >/dev/null || { echo "$PROFDATA not found (LLVM_PROFDATA=...; Debian: apt-get install llvm-22)" >&2; exit 2; }
rm -rf "$OUT/data"
RUSTFLAGS="-Cprofile-generate=$OUT/data" cargo build --release --target-dir "$OUT/gen"
GEN=$OUT/gen/release/flitwave
# Training: benchmark (b), and (a) node- and router-forwarded.
"$GEN" run --topology mesh --dims 8x8 --traffic uniform --rate 0.025 --packet-flits 4 --switching wh \
    --vcs 2 --buffer-flits 8 --router realistic --cycles 20000 --quiet --json /dev/null
"$GEN" run --topology hypercube --dims 8 --algorithm mnb-sbt --quiet --json /dev/null
"$GEN" run --topology hypercube --dims 8 --algorithm mnb-sbt --forwarding router --quiet --json /dev/null
"$PROFDATA" merge -o "$OUT/flitwave.profdata" "$OUT/data"
RUSTFLAGS="-Cprofile-use=$OUT/flitwave.profdata" cargo build --release --target-dir "$OUT/use"
echo "profile-guided build: $OUT/use/release/flitwave"
