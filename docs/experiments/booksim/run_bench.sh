#!/usr/bin/env bash
# Interleaved timing of BookSim 2 and flitwave on benchmark (b):
# 8x8 mesh, DOR, wormhole, 2 VCs x 8 flits, 4-flit packets,
# uniform traffic at 0.025 packets/node/cycle (0.1 flits), 100,000 cycles.
#
# usage: FW_BIN=/path/to/flitwave [FW_EXTRA="--threads 2"] [MAX_WAIT=20] ./run_bench.sh ROUNDS
#
#   FW_BIN    flitwave binary (or a wrapper script)
#   FW_EXTRA  extra flags for flitwave, e.g. "--threads 2" (split between two threads)
#   MAX_WAIT  longest wait, in seconds, for the 1-minute load average to drop
#             below IDLE_LOAD (0.5) before each run (default 20)
#   BOOKSIM   BookSim binary (default: src/booksim next to this script; BookSim 2 is
#             not part of the flitwave repository: build it and point BOOKSIM at it)
#   OUT_DIR   where logs and the results table go (default: a new /tmp directory)
#
# Each round runs BookSim on mesh88_b.cfg, then flitwave on the same setup.
# Cycles: BookSim's "Time taken is N cycles" line; flitwave's simulated_cycles
# (or completion_cycles) from its JSON. Wall time: a monotonic clock around each
# process (python3 time.monotonic), plus flitwave's own wall_seconds and
# BookSim's own "Total run time" (its timer around TrafficManager::Run()).
set -u

usage() { echo "usage: FW_BIN=/path/to/flitwave [MAX_WAIT=20] $0 ROUNDS" >&2; exit 2; }
[ $# -eq 1 ] || usage
ROUNDS=$1
case "$ROUNDS" in ''|*[!0-9]*) usage ;; esac
[ "$ROUNDS" -ge 1 ] || usage
: "${FW_BIN:?FW_BIN must point to the flitwave binary (or a wrapper)}"
[ -x "$FW_BIN" ] || { echo "FW_BIN=$FW_BIN is not executable" >&2; exit 2; }

HERE=$(cd "$(dirname "$0")" && pwd)
BOOKSIM=${BOOKSIM:-$HERE/src/booksim}
CFG=$HERE/mesh88_b.cfg
MAX_WAIT=${MAX_WAIT:-20}
IDLE_LOAD=${IDLE_LOAD:-0.5}
PAUSE=${PAUSE:-1}           # fixed pause (s) before each run, before the idle check
[ -x "$BOOKSIM" ] || { echo "BookSim binary not found: $BOOKSIM" >&2; exit 2; }
[ -f "$CFG" ] || { echo "config not found: $CFG" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/run_bench.XXXXXX)}
mkdir -p "$OUT_DIR"
RESULTS=$OUT_DIR/results.tsv
FW_JSON=$OUT_DIR/fw_bench.json

# Runs "$@" with stdout+stderr to $OUT, stdin from /dev/null; prints
# "<elapsed seconds> <exit code>" measured with time.monotonic().
MTIME_PY='
import subprocess, sys, time
out = sys.argv[1]; cmd = sys.argv[2:]
with open(out, "wb") as f:
    t0 = time.monotonic()
    rc = subprocess.call(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
    t1 = time.monotonic()
print("%.6f %d" % (t1 - t0, rc))
'
timed() { python3 -c "$MTIME_PY" "$@"; }

# Sleep PAUSE s, then wait until the 1-min load average < IDLE_LOAD or MAX_WAIT s passed.
wait_idle() {
    sleep "$PAUSE"
    local waited=0 load
    while :; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        if python3 -c "import sys; sys.exit(0 if float('$load') < float('$IDLE_LOAD') else 1)"; then
            break
        fi
        [ "$waited" -ge "$MAX_WAIT" ] && break
        sleep 1; waited=$((waited + 1))
    done
    LAST_LOAD=$load; LAST_WAITED=$waited
}

FW_ARGS=(run --topology mesh --dims 8x8 --traffic uniform --rate 0.025 --packet-flits 4
         --switching wh --vcs 2 --buffer-flits 8 --router realistic --cycles 100000
         --quiet --json "$FW_JSON")
# shellcheck disable=SC2206 # FW_EXTRA is split into flags on purpose
FW_ARGS+=(${FW_EXTRA:-})

echo "BookSim : $BOOKSIM $CFG"
echo "flitwave: $FW_BIN ${FW_ARGS[*]}"
echo "rounds=$ROUNDS MAX_WAIT=$MAX_WAIT IDLE_LOAD=$IDLE_LOAD logs in $OUT_DIR"
printf 'round\tbs_cycles\tbs_wall\tbs_internal\tbs_latency\tbs_load\tfw_cycles\tfw_wall_json\tfw_wall_proc\tfw_latency\tfw_load\n' > "$RESULTS"

failed=0
for r in $(seq 1 "$ROUNDS"); do
    # ---- BookSim ----
    wait_idle; bs_load=$LAST_LOAD
    bs_log=$OUT_DIR/booksim_$r.log
    read -r bs_wall bs_rc < <(timed "$bs_log" "$BOOKSIM" "$CFG")
    # BookSim's main() returns -1 (exit status 255) on success, 0 on failure,
    # so judge the run by its output instead of its exit status.
    bs_cycles=$(sed -n 's/^Time taken is \([0-9][0-9]*\) cycles$/\1/p' "$bs_log" | tail -n1)
    bs_lat=$(sed -n 's/^Packet latency average = \([0-9.e+-]*\) (1 samples)$/\1/p' "$bs_log" | tail -n1)
    bs_int=$(sed -n 's/^Total run time \([0-9.e+-]*\)$/\1/p' "$bs_log" | tail -n1)
    if [ -z "$bs_cycles" ] || grep -qE '^(Simulation unstable|Average latency for class .*Aborting simulation)' "$bs_log"; then
        # (anchored: BookSim echoes the config file, whose comments mention these words)
        echo "round $r: BookSim run failed (exit $bs_rc), see $bs_log" >&2
        failed=1; bs_cycles=NA
    fi

    # ---- flitwave ----
    wait_idle; fw_load=$LAST_LOAD
    fw_log=$OUT_DIR/flitwave_$r.log
    rm -f "$FW_JSON"
    read -r fw_wall_proc fw_rc < <(timed "$fw_log" "$FW_BIN" "${FW_ARGS[@]}")
    fw_vals=NA
    if [ "$fw_rc" -eq 0 ] && [ -s "$FW_JSON" ]; then
        fw_vals=$(python3 - "$FW_JSON" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cyc = d.get("simulated_cycles") or d.get("completion_cycles")
wall = d.get("wall_seconds")
lat = d.get("latency_avg_cycles")
print(cyc, wall, lat if lat is not None else "NA")
EOF
)
        cp "$FW_JSON" "$OUT_DIR/flitwave_$r.json"
    fi
    if [ "$fw_vals" = NA ]; then
        echo "round $r: flitwave run failed (exit $fw_rc), see $fw_log" >&2
        failed=1; fw_vals="NA NA NA"
    fi
    read -r fw_cycles fw_wall_json fw_lat <<< "$fw_vals"

    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$bs_cycles" "$bs_wall" "${bs_int:-NA}" \
        "${bs_lat:-NA}" "$bs_load" "$fw_cycles" "$fw_wall_json" "$fw_wall_proc" "$fw_lat" "$fw_load" >> "$RESULTS"
    echo "round $r: BookSim $bs_cycles cycles in ${bs_wall}s (latency ${bs_lat:-NA}); flitwave $fw_cycles cycles in ${fw_wall_json}s JSON / ${fw_wall_proc}s process (latency $fw_lat)"
done

python3 - "$RESULTS" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def f(x):
    try: return float(x)
    except (TypeError, ValueError): return None
def cps(c, w):
    c, w = f(c), f(w)
    return c / w if c and w else None
series = {"bs": [], "bs_int": [], "fw": [], "fw_proc": []}
print()
print("%5s %10s %12s %12s %12s %12s %8s %8s" % ("round", "bs_cycles", "BookSim c/s", "flitwave c/s",
      "fw_proc c/s", "bs_int c/s", "bs_load", "fw_load"))
for r in rows:
    v = {"bs": cps(r["bs_cycles"], r["bs_wall"]), "bs_int": cps(r["bs_cycles"], r["bs_internal"]),
         "fw": cps(r["fw_cycles"], r["fw_wall_json"]), "fw_proc": cps(r["fw_cycles"], r["fw_wall_proc"])}
    for k, x in v.items():
        if x is not None: series[k].append(x)
    fmt = lambda x: "%12.0f" % x if x is not None else "%12s" % "NA"
    print("%5s %10s %s %s %s %s %8s %8s" % (r["round"], r["bs_cycles"], fmt(v["bs"]), fmt(v["fw"]),
          fmt(v["fw_proc"]), fmt(v["bs_int"]), r["bs_load"], r["fw_load"]))
print()
print("cycles/s = simulated cycles / wall seconds")
print("  BookSim      : cycles from 'Time taken', wall = monotonic clock around the process")
print("  flitwave     : simulated_cycles / wall_seconds from its JSON")
print("  fw_proc      : flitwave cycles / monotonic clock around its process")
print("  bs_int       : BookSim cycles / its own 'Total run time' (simulation loop only)")
print()
names = [("bs", "BookSim"), ("fw", "flitwave"), ("fw_proc", "flitwave (process)"), ("bs_int", "BookSim (internal)")]
best, med = {}, {}
for k, name in names:
    s = series[k]
    if s:
        best[k], med[k] = max(s), statistics.median(s)
        print("%-20s best %12.0f   median %12.0f   (n=%d)" % (name, best[k], med[k], len(s)))
print()
def ratio(a, b, label):
    if a in best and b in best:
        print("%-40s best/best %7.2f   median/median %7.2f" % (label, best[a] / best[b], med[a] / med[b]))
ratio("fw", "bs", "flitwave / BookSim:")
ratio("fw_proc", "bs", "flitwave / BookSim (both process wall):")
ratio("fw", "bs_int", "flitwave / BookSim (both own timers):")
EOF

echo "results table: $RESULTS"
exit $failed
