#!/bin/bash
# Interleaved wall times of one workload for several builds or flag sets.
#
#   docs/experiments/interleave.sh ROUNDS CYCLES "label|binary|extra flags" ...
#
# Runs each spec once per round, in turn, so that a slow minute of the host falls on all of
# them; prints, for each, the best and the median of `wall_seconds` from the JSON and the
# rates they give in simulated cycles and flit-hops per second. The workload is benchmark
# (b) for CYCLES cycles, or the flags in WORKLOAD (CYCLES is then ignored). Examples:
#
#   docs/experiments/interleave.sh 7 100000 "new|target/release/flitwave|" \
#       "new2|target/release/flitwave|--threads 2" "old|$OLD/flitwave|"
#   WORKLOAD="--topology hypercube --dims 10 --algorithm mnb-sbt" \
#       docs/experiments/interleave.sh 7 0 "node|target/release/flitwave|" \
#       "router|target/release/flitwave|--forwarding router"
set -euo pipefail
N=$1
C=$2
shift 2
WORKLOAD=${WORKLOAD:-"--topology mesh --dims 8x8 --traffic uniform --rate 0.025 --packet-flits 4
    --switching wh --vcs 2 --buffer-flits 8 --router realistic --cycles $C"}
declare -A res
json=$(mktemp)
trap 'rm -f "$json"' EXIT
for _ in $(seq "$N"); do
    for spec in "$@"; do
        IFS='|' read -r label bin extra <<<"$spec"
        # The JSON goes to a file and is read after the run: a reader started alongside (a
        # pipe into python) takes a core while it starts, which costs a two-thread run 50 %.
        # shellcheck disable=SC2086 # the workload and extra flags are split on purpose
        $bin run $WORKLOAD --quiet $extra --json "$json"
        # wall seconds, simulated cycles, flit-hops (the same in every round: runs are deterministic)
        w=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
print('%s,%s,%s' % (d['wall_seconds'], d['simulated_cycles'], d['flit_hops']))" "$json")
        res[$label]="${res[$label]:-} $w"
    done
done
for spec in "$@"; do
    IFS='|' read -r label _ _ <<<"$spec"
    echo "$label: $(echo ${res[$label]} | tr ' ' '\n' | sort -t, -k1,1g | awk -F, \
        '{w[NR]=$1; c=$2; h=$3} END {m=w[int((NR+1)/2)];
         printf "best %.4f s (%.0f cycles/s, %.2f M flit-hops/s), median %.4f s (%.0f cycles/s, %.2f M flit-hops/s), n=%d",
                w[1], c/w[1], h/w[1]/1e6, m, c/m, h/m/1e6, NR}')"
done
