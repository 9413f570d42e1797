#!/usr/bin/env bash
# BookSim 2's zero-load latency, per hop count, beside flitwave's `--router booksim`
# (docs/presets.md): Markdown tables on standard output.
#
# usage: BOOKSIM=/path/to/booksim FW_BIN=target/release/flitwave docs/experiments/booksim/zero_load.sh
#
#   BOOKSIM  BookSim 2 binary (not part of this repository: build it, see docs/presets.md)
#   FW_BIN   flitwave binary (cargo build --release)
#   OUT_DIR  where BookSim's logs and flitwave's JSON go (default: a new /tmp directory)
#
# 1. On 4x4 and 8x8 meshes with 1-, 2-, 4- and 8-flit packets at 0.0002 packets/node/cycle,
#    BookSim watches every packet (zero_load.cfg) and prints, when it retires one, its
#    source, destination, plat (creation to tail ejection) and nlat (head injection to tail
#    ejection). H is the Manhattan distance between source and destination (node id =
#    x + k*y), so a packet crosses H links and H + 1 routers. A packet alone takes the
#    least latency of its H; one that met another takes more. flitwave runs the same
#    traffic (uniform, to other nodes only) on --router booksim: its mean hop count is
#    flit_hops / (deliveries * L), and with every packet alone its mean latency is the
#    formula at that mean.
# 2. The same on an 8-node ring and a 4x4 torus, where BookSim's channels take a cycle more
#    (flitwave: booksim_torus.toml).
# 3. One hop with 8-flit packets and buffers of 1 to 8 flits (a 2-node array, each node
#    sending to the other), where credits come back too late to keep a packet moving:
#    BookSim, --router booksim, and booksim_inject2.toml (BookSim's own 2-cycle injection,
#    so 3 cycles are added back).
set -eu

: "${BOOKSIM:?BOOKSIM must point to the BookSim 2 binary}"
: "${FW_BIN:?FW_BIN must point to the flitwave binary}"
HERE=$(cd "$(dirname "$0")" && pwd)
CFG=$HERE/zero_load.cfg
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/zero_load.XXXXXX)}
mkdir -p "$OUT_DIR"
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

# Watch every packet: a watch file lists packet ids as p<id>.
python3 -c 'print("\n".join("p%d" % i for i in range(100000)))' > "$OUT_DIR/watch.lst"

# BookSim's log (argv: log, k, n, L, hop cycles) -> one JSON line: per H [packets, least
# plat, greatest plat], the packets slower than hop*H+7+(L-1) (mesh: hop = 5), and the
# averages BookSim reports. A hop of 6 means a torus (its channels have latency 2): H is
# then the shorter way round in each dimension.
BS_PARSE='
import json, re, sys
k, n, L, hop = map(int, sys.argv[2:6])
def dist(a, b):
    if hop == 5:
        return abs(a - b)
    return min((a - b) % k, (b - a) % k)
per_h = {}
for line in open(sys.argv[1]):
    m = re.search(r"Retiring packet \d+ \(plat = (\d+), nlat = (\d+), frag = -?\d+, src = (\d+), dest = (\d+)\)", line)
    if m:
        plat, nlat, s, d = map(int, m.groups())
        h = sum(dist(s // k**i % k, d // k**i % k) for i in range(n))
        per_h.setdefault(h, []).append((plat, nlat))
def last(pattern):
    v = re.findall(pattern, open(sys.argv[1]).read(), re.M)
    return float(v[-1]) if v else None
print(json.dumps({
    "per_h": {h: [len(v), min(p for p, _ in v), max(p for p, _ in v)] for h, v in sorted(per_h.items())},
    "slow": sum(1 for h, v in per_h.items() for p, _ in v if p > hop * h + 7 + (L - 1)),
    "plat": last(r"^Packet latency average = ([0-9.]+) \(1 samples\)"),
    "nlat": last(r"^Network latency average = ([0-9.]+) \(1 samples\)"),
}))
'
formula() { echo $((5 * ($1 + 1) + 2 + ($2 - 1))); }   # BookSim iq, default delays: H links, L flits

echo "## Zero-load latency, BookSim 2 iq router (default delays) and flitwave --router booksim"
echo
echo "| mesh | L | BookSim packets | H seen | least plat of each H = 5(H+1)+2+(L-1) | packets that met another | BookSim mean plat | mean nlat | flitwave packets | mean H | flitwave mean latency | 5H+7+(L-1) at mean H | flitwave max (H = 2(k-1)) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for k in 4 8; do
    for L in 1 2 4 8; do
        log=$OUT_DIR/booksim_k${k}_L$L.log
        "$BOOKSIM" "$CFG" k=$k packet_size=$L "watch_file=$OUT_DIR/watch.lst" watch_out=- > "$log" || true
        bs=$(python3 -c "$BS_PARSE" "$log" "$k" 2 "$L" 5)
        json=$OUT_DIR/flitwave_k${k}_L$L.json
        "$FW_BIN" run --topology mesh --dims "${k}x$k" --traffic uniform --rate 0.0002 --cycles 100000 \
            --packet-flits "$L" --buffer-flits 8 --vcs 2 --ports one --switching wh --router booksim \
            --quiet --json "$json"
        python3 - "$k" "$L" "$json" "$bs" <<'EOF'
import json, sys
k, L = int(sys.argv[1]), int(sys.argv[2])
fw, bs = json.load(open(sys.argv[3])), json.loads(sys.argv[4])
f = lambda h: 5 * (h + 1) + 2 + (L - 1)
per_h = {int(h): v for h, v in bs["per_h"].items()}
exact = all(v[1] == f(h) for h, v in per_h.items())
n = fw["deliveries"]
mh = fw["flit_hops"] / (n * L)
print(f"| {k}x{k} | {L} | {sum(v[0] for v in per_h.values())} | {min(per_h)}..{max(per_h)} | {'yes' if exact else 'NO'} "
      f"| {bs['slow']} | {bs['plat']:.4f} | {bs['nlat']:.4f} "
      f"| {n} | {mh:.4f} | {fw['latency_avg_cycles']:.4f} | {5 * mh + 7 + L - 1:.4f} | {fw['latency_max_cycles']} ({f(2 * (k - 1))}) |")
EOF
    done
done

echo
echo "## BookSim per hop count, 8x8 mesh (packets, least and greatest plat; the formula)"
echo
echo "| H | L = 1 | L = 2 | L = 4 | L = 8 |"
echo "|---|---|---|---|---|"
for h in $(seq 0 14); do
    row="| $h |"
    for L in 1 2 4 8; do
        cell=$(python3 -c "$BS_PARSE" "$OUT_DIR/booksim_k8_L$L.log" 8 2 "$L" 5 | python3 -c "
import json, sys
v = json.load(sys.stdin)['per_h'].get('$h')
print('-' if v is None else f'{v[0]}: {v[1]}..{v[2]} ($(formula "$h" "$L"))')")
        row="$row $cell |"
    done
    echo "$row"
done

echo
echo "## Tori: BookSim's torus channels take 2 cycles; flitwave booksim_torus.toml (link_latency 4)"
echo
echo "| torus | L | BookSim packets | least plat of each H = 6(H+1)+1+(L-1) | packets that met another | flitwave packets | mean H | flitwave mean latency | 6H+7+(L-1) at mean H |"
echo "|---|---|---|---|---|---|---|---|---|"
for kn in 8x1 4x2; do
    k=${kn%x*}; n=${kn#*x}
    dims=$k; [ "$n" = 2 ] && dims=${k}x$k
    for L in 1 4; do
        log=$OUT_DIR/booksim_torus_${kn}_L$L.log
        "$BOOKSIM" "$CFG" topology=torus k=$k n=$n packet_size=$L "watch_file=$OUT_DIR/watch.lst" watch_out=- > "$log" || true
        bs=$(python3 -c "$BS_PARSE" "$log" "$k" "$n" "$L" 6)
        json=$OUT_DIR/flitwave_torus_${kn}_L$L.json
        "$FW_BIN" run --topology torus --dims "$dims" --traffic uniform --rate 0.0002 --cycles 100000 \
            --packet-flits "$L" --buffer-flits 8 --vcs 2 --ports one --switching wh --router "$HERE/booksim_torus.toml" \
            --quiet --json "$json"
        python3 - "$dims" "$L" "$json" "$bs" <<'EOF2'
import json, sys
L = int(sys.argv[2])
fw, bs = json.load(open(sys.argv[3])), json.loads(sys.argv[4])
per_h = {int(h): v for h, v in bs["per_h"].items()}
exact = all(v[1] == 6 * (h + 1) + 1 + (L - 1) for h, v in per_h.items())
n = fw["deliveries"]
mh = fw["flit_hops"] / (n * L)
print(f"| {sys.argv[1]} | {L} | {sum(v[0] for v in per_h.values())} | {'yes' if exact else 'NO'} (H {min(per_h)}..{max(per_h)}) | {bs['slow']} "
      f"| {n} | {mh:.4f} | {fw['latency_avg_cycles']:.4f} | {6 * mh + 7 + L - 1:.4f} |")
EOF2
    done
done

echo
echo "## One hop, 8-flit packets, shallow buffers (latency of a packet alone)"
echo
echo "| buffer flits | BookSim plat, least (greatest) | flitwave booksim, greatest (mean) | flitwave booksim_inject2.toml + 3, greatest (mean) | BookSim credit_delay=1 plat, least (greatest) | flitwave booksim_inject2.toml with credit_delay 2, + 3, greatest (mean) |"
echo "|---|---|---|---|---|---|"
# BookSim's credit_delay 1 (as in mesh88_b.cfg) is flitwave's 2.
printf 'preset = "booksim"\ninject_latency = 2\ncredit_delay = 2\n' > "$OUT_DIR/booksim_inject2_credit2.toml"
for B in 1 2 3 4 5 6 8; do
    row="| $B |"
    # BookSim with credit_delay 0, then flitwave with each router; the same with credit_delay 1.
    for step in booksim0 booksim "$HERE/booksim_inject2.toml" booksim1 "$OUT_DIR/booksim_inject2_credit2.toml"; do
        case $step in
        booksim0|booksim1)
            log=$OUT_DIR/booksim_1hop_B${B}_$step.log
            "$BOOKSIM" "$CFG" k=2 n=1 traffic=bitcomp packet_size=8 vc_buf_size=$B injection_rate=0.001 \
                sample_period=20000 credit_delay=${step#booksim} > "$log" || true
            row="$row $(sed -n 's/^\tminimum = \([0-9]*\)$/\1/p' "$log" | head -n1) ($(sed -n 's/^\tmaximum = \([0-9]*\)$/\1/p' "$log" | head -n1)) |"
            ;;
        *)
            json=$OUT_DIR/flitwave_1hop_B$B.json
            "$FW_BIN" run --topology linear --dims 2 --traffic bit-complement --rate 0.001 --cycles 20000 \
                --packet-flits 8 --buffer-flits "$B" --vcs 2 --ports one --switching wh --router "$step" \
                --quiet --json "$json"
            if [ "$step" = booksim ]; then plus=0; else plus=3; fi
            row="$row $(python3 -c "
import json
d = json.load(open('$json'))
print(f\"{d['latency_max_cycles'] + $plus} ({d['latency_avg_cycles'] + $plus:g})\")") |"
            ;;
        esac
    done
    echo "$row"
done
echo
echo "logs and JSON in $OUT_DIR" >&2
