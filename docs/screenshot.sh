#!/usr/bin/env bash
# Reproduce docs/gtkwave-broadcast.png: a hardware-multicast broadcast on a 3-cube,
# 4-flit wormhole packets on the realistic router, opened in GTKWave under Xvfb.
# Needs Debian's gtkwave, xvfb and imagemagick (apt-get install gtkwave xvfb imagemagick).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
cargo run --release --quiet -- run --topology hypercube --dims 3 --forwarding router \
    --router realistic --switching wh --packet-flits 4 --quiet \
    --vcd "$out/broadcast.vcd" --gtkw "$out/broadcast.gtkw"
cat > "$out/zoom.tcl" <<'TCL'
gtkwave::/Time/Zoom/Zoom_Full
TCL
xvfb-run -a -s "-screen 0 1600x1000x24" bash -c "
  gtkwave -S '$out/zoom.tcl' '$out/broadcast.gtkw' >/dev/null 2>&1 &
  sleep 4
  import -window root '$PWD/docs/gtkwave-broadcast.png'
  kill %1"
echo "wrote docs/gtkwave-broadcast.png"
