#!/bin/bash
# Instructions executed by the benchmark workloads (load-independent, unlike wall time):
# valgrind's callgrind counts every instruction of the whole `flitwave run` process.
#
#   docs/experiments/icount.sh BINARY...
#
# For each binary: (a) node- and router-forwarded, (b) at 20,000 cycles, in millions, and
# per flit-hop. Needs valgrind (Debian package valgrind); each count takes about a minute.
set -euo pipefail
A="run --topology hypercube --dims 10 --algorithm mnb-sbt --switching sf --router ideal --quiet"
# One line each (a backslash joins the lines): `read` below takes the first line only.
B="run --topology mesh --dims 8x8 --traffic uniform --rate 0.025 --packet-flits 4 --switching wh \
   --vcs 2 --buffer-flits 8 --router realistic --cycles 20000 --quiet"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for bin in "$@"; do
    for w in "a node|$A" "a router|$A --forwarding router" "b|$B"; do
        IFS='|' read -r label flags <<<"$w"
        # shellcheck disable=SC2086 # the flags are split on purpose
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" $flags --json "$dir/r.json" 2>"$dir/log"
        ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$dir/log")
        python3 -c "import json,sys
h = json.load(open(sys.argv[1]))['flit_hops']; ir = int(sys.argv[2])
print('%-40s %-9s %8.1f M instructions, %6.0f per flit-hop' % (sys.argv[3], sys.argv[4], ir / 1e6, ir / h))" \
            "$dir/r.json" "$ir" "$bin" "$label"
    done
done
