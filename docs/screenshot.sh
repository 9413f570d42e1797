#!/usr/bin/env bash
# Reproduce docs/gtkwave-broadcast.png: a hardware-multicast broadcast on a 4×4 mesh from
# x1_y1, 4-flit wormhole packets, 2 VCs, on the realistic router, opened in GTKWave under
# Xvfb on the allocators of one router: x2_y1, which takes the packet in from x1_y1 (its
# port xm) and replicates it onward (xp, yp, ym) and to its NIC. The broadcast's `dest` is
# 0x80000003: a broadcast (bit 31) whose tree spans dimensions x and y.
# Needs Debian's gtkwave, xvfb and imagemagick (apt-get install gtkwave xvfb imagemagick).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
cargo run --release --quiet -- run --topology mesh --dims 4x4 --root 1,1 --forwarding router \
    --router realistic --switching wh --packet-flits 4 --vcs 2 --quiet \
    --vcd "$out/broadcast.vcd" --gtkw "$out/full.gtkw"
# The save file flitwave wrote shows every signal; this one shows x2_y1's allocators, with
# the translate filters flitwave wrote beside it (flit flags, VC states, port names).
r=top.x2_y1.router
{
    echo "[dumpfile] \"broadcast.vcd\""
    echo "[timestart] 0"
    echo "[size] 1600 1000"
    echo "[pos] -1 -1"
    echo "[sst_width] 1"
    echo "[signals_width] 330"
    echo "[sst_expanded] 0"
    echo "@28"
    echo "top.clk"
    echo "@800200"
    echo "-x2_y1 input xm: switch allocation (a bit per VC)"
    echo "@28"
    echo "$r.in_xm.sa_req[1:0]"
    echo "$r.in_xm.sa_gnt[1:0]"
    echo "@1000200"
    echo "-x2_y1 input xm: switch allocation (a bit per VC)"
    # The packet comes in on VC 0 (VC 1 stays idle).
    for vc in 0; do
        echo "@800200"
        echo "-x2_y1 input xm VC $vc: VC allocation"
        echo "@2022"
        echo "^2 full.state.txt"
        echo "$r.in_xm.vc$vc.state[1:0]"
        echo "@28"
        echo "$r.in_xm.vc$vc.va_req"
        echo "$r.in_xm.vc$vc.va_gnt"
        echo "@2022"
        echo "^3 full.route.txt"
        echo "$r.in_xm.vc$vc.route[2:0]"
        echo "@24"
        echo "$r.in_xm.vc$vc.out_vc"
        echo "$r.in_xm.vc$vc.occupancy[3:0]"
        echo "@1000200"
        echo "-x2_y1 input xm VC $vc: VC allocation"
    done
    for port in xp yp ym; do
        echo "@800200"
        echo "-x2_y1 output $port"
        echo "@28"
        echo "$r.out_$port.valid"
        echo "@2022"
        echo "^1 full.flags.txt"
        echo "$r.out_$port.flags[2:0]"
        echo "@24"
        echo "$r.out_$port.vc"
        echo "@22"
        echo "$r.out_$port.dest[31:0]"
        echo "@1000200"
        echo "-x2_y1 output $port"
    done
    echo "@22"
    echo "top.x2_y1.nic.eject_valid[3:0]"
} > "$out/alloc.gtkw"
cat > "$out/zoom.tcl" <<'TCL'
gtkwave::/Time/Zoom/Zoom_Full
TCL
# Opened from the dump's directory, so the window's title names the file alone.
xvfb-run -a -s "-screen 0 1600x1000x24" bash -c "
  cd '$out'
  gtkwave -S zoom.tcl alloc.gtkw >/dev/null 2>&1 &
  sleep 4
  import -window root '$PWD/docs/gtkwave-broadcast.png'
  kill %1"
echo "wrote docs/gtkwave-broadcast.png"
