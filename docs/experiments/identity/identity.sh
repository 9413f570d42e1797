#!/usr/bin/env bash
# Runs every scenario of scenarios.txt with two flitwave binaries and compares what they
# report: the JSON result without `wall_seconds`, the exit code, and for scenarios without
# --threads a VCD of the run (byte for byte, after its $date line). For kernel work that
# must not change a result: e.g. the build at a commit against the build after a change.
#
# With NO_VCD=1 no scenario writes a VCD (a run without probes may take other paths in the
# kernel than a traced one, so check both). A_ARGS and B_ARGS are flags added to every run
# of BIN_A and BIN_B: `A_ARGS="--kernel scan" B_ARGS="--kernel auto" NO_VCD=1 ... BIN BIN`
# compares the two kernels in one build. Which kernel ran (`kernel`, `config.kernel`) is
# not compared.
#
# A scenario's `@HERE@` stands for this directory (router files kept next to the list).
#
# usage: [NO_VCD=1] docs/experiments/identity/identity.sh BIN_A BIN_B [OUT_DIR]
set -u
[ $# -ge 2 ] || { echo "usage: $0 BIN_A BIN_B [OUT_DIR]" >&2; exit 2; }
A=$(realpath "$1"); B=$(realpath "$2")
OUT=${3:-$(mktemp -d /tmp/identity.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }
for bin in "$A" "$B"; do [ -x "$bin" ] || { echo "not executable: $bin" >&2; exit 2; }; done
mkdir -p "$OUT/a" "$OUT/b"
differ=0; n=0
run_one() { # BIN EXTRA DIR NAME ARGS...
    local bin=$1 extra=$2 dir=$3 name=$4; shift 4
    local vcd=()
    # Relative paths, run inside the output directory: the JSON's config names them.
    case "${NO_VCD:-} $* " in 1*) ;; *" --threads "*) ;; *) vcd=(--vcd "$name.vcd") ;; esac
    # shellcheck disable=SC2086
    (cd "$dir" && "$bin" run "$@" "${vcd[@]}" $extra --quiet --json "$name.json" >/dev/null 2>"$name.err"; echo $? > "$name.rc")
    python3 - "$dir/$name.json" <<'PY'
import json, sys
p = sys.argv[1]
try:
    d = json.load(open(p))
except (OSError, ValueError):
    sys.exit(0)
d.pop("wall_seconds", None)
d.pop("kernel", None)
d.get("config", {}).pop("kernel", None)
d.get("config", {}).pop("schedule", None)
json.dump(d, open(p, "w"), indent=1, sort_keys=True)
PY
    [ -f "$dir/$name.vcd" ] && sed -i '/^\$date/,/\$end/d' "$dir/$name.vcd"
}
while read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    n=$((n + 1))
    args=${args//@HERE@/$HERE}
    # shellcheck disable=SC2086
    run_one "$A" "${A_ARGS:-}" "$OUT/a" "$name" $args
    # shellcheck disable=SC2086
    run_one "$B" "${B_ARGS:-}" "$OUT/b" "$name" $args
    bad=""
    labels=""
    for ext in rc json vcd; do
        fa="$OUT/a/$name.$ext"; fb="$OUT/b/$name.$ext"
        [ -f "$fa" ] || [ -f "$fb" ] || continue
        if ! cmp -s "$fa" "$fb"; then
            if [ "$ext" = vcd ] && [ -f "$fa" ] && [ -f "$fb" ] && python3 "$HERE/vcd_same.py" "$fa" "$fb" >/dev/null; then
                labels=" (labels)"
            else
                bad="$bad $ext"
            fi
        fi
    done
    if [ -n "$bad" ]; then
        differ=$((differ + 1)); echo "DIFFERS $name:$bad"
    else
        echo "same$labels $name (exit $(cat "$OUT/a/$name.rc"))"
    fi
done < "$HERE/scenarios.txt"
echo "$n scenarios, $differ differ; outputs in $OUT"
[ "$differ" -eq 0 ]
