#!/bin/bash
# Interleaved wall times of benchmark (b) for several builds or flag sets.
#
#   docs/experiments/interleave.sh ROUNDS CYCLES "label|binary|extra flags" ...
#
# Runs each spec once per round, in turn, so that a slow minute of the host falls on all of
# them; prints the best and the median of `wall_seconds` from the JSON for each. Example:
#
#   docs/experiments/interleave.sh 7 100000 "scan|target/release/flitwave|--kernel scan" \
#       "event|target/release/flitwave|--kernel event" "event2|target/release/flitwave|--threads 2"
set -euo pipefail
N=$1
C=$2
shift 2
declare -A res
json=$(mktemp)
trap 'rm -f "$json"' EXIT
for _ in $(seq "$N"); do
    for spec in "$@"; do
        IFS='|' read -r label bin extra <<<"$spec"
        # shellcheck disable=SC2086 # extra flags are split on purpose
        # The JSON goes to a file and is read after the run: a reader started alongside (a
        # pipe into python) takes a core while it starts, which costs a two-thread run 50 %.
        $bin run --topology mesh --dims 8x8 --traffic uniform --rate 0.025 --packet-flits 4 \
            --switching wh --vcs 2 --buffer-flits 8 --router realistic --cycles "$C" --quiet $extra \
            --json "$json"
        w=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['wall_seconds'])" "$json")
        res[$label]="${res[$label]:-} $w"
    done
done
for spec in "$@"; do
    IFS='|' read -r label _ _ <<<"$spec"
    echo "$label: $(echo ${res[$label]} | tr ' ' '\n' | sort -n | awk -v c="$C" \
        '{a[NR]=$1} END {printf "best %.4f s (%d cycles/s), median %.4f s", a[1], c/a[1], a[int((NR+1)/2)]}')"
done
