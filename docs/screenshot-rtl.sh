#!/usr/bin/env bash
# Reproduce docs/gtkwave-rtl-mismatch.png: a copy of rtl/router.sv with a seeded bug (the
# switch allocator's round-robin pointer never advances) at node 5 of a 4x4 mesh under
# uniform traffic, checked against the model with --rtl-compare; the waveform flitwave
# writes around the first difference, opened in GTKWave under Xvfb with the save file it
# writes beside it (model above RTL, signal by signal, a marker on the difference).
# Needs Debian's verilator, gtkwave, xvfb and imagemagick. FLITWAVE overrides the command
# (default: cargo run --release).
set -euo pipefail
cd "$(dirname "$0")/.."
flitwave=${FLITWAVE:-"cargo run --release --quiet --"}
out=$(mktemp -d)
cp rtl/*.sv "$out/"
sed -i 's/sa_ptr_d\[o\] = past(w);/sa_ptr_d[o] = sa_ptr_q[o];/' "$out/router.sv"
grep -q 'sa_ptr_d\[o\] = sa_ptr_q\[o\];' "$out/router.sv"
# Exit 1: the run stops at the difference.
$flitwave run --topology mesh --dims 4x4 --traffic uniform --rate 0.15 --cycles 3000 \
    --rtl "$out/router.sv" --rtl-nodes 5 --rtl-compare --rtl-window "$out/rtl-mismatch.vcd" || true
test -s "$out/rtl-mismatch.gtkw"
cat > "$out/zoom.tcl" <<'TCL'
gtkwave::/Time/Zoom/Zoom_Full
TCL
xvfb-run -a -s "-screen 0 1600x1000x24" bash -c "
  cd '$out'
  gtkwave -S zoom.tcl rtl-mismatch.gtkw >/dev/null 2>&1 &
  sleep 4
  import -window root '$PWD/docs/gtkwave-rtl-mismatch.png'
  kill %1"
echo "wrote docs/gtkwave-rtl-mismatch.png"
