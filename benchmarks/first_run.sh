#!/bin/bash
# First runs with an empty cache: the whole process of one small job of each bundled app
# (count, sm, gsword, mce on tests/data), each with a fresh, empty GTHINKER_CACHE_DIR (and
# XDG_CACHE_HOME, so no other folder is read). Run from the repository root after
# `pip install .` (or -e); with code built for a portable level in the package
# (`gthinker warmup --portable x86-64-v3` or a GTHINKER_PREBUILD wheel) the runs load it.
# Usage: benchmarks/first_run.sh [GTHINKER]   (default: gthinker on PATH)
set -u
G=${1:-gthinker}
D=tests/data
Q=$D/queries/yeast/query_dense_16_2.graph
work=$(mktemp -d /tmp/gthinker-first-run.XXXX)
trap 'rm -rf "$work"' EXIT
one() {
    local label=$1; shift
    local d="$work/$label"
    mkdir -p "$d"
    local t0 t1
    t0=$(date +%s.%N)
    GTHINKER_CACHE_DIR="$d/cache" XDG_CACHE_HOME="$d/xdg" "$G" "$@" --json > "$d/out" 2> "$d/err"
    local rc=$?
    t1=$(date +%s.%N)
    printf '%-7s exit %d  whole process %6.1fs  compile_seconds %s\n' "$label" "$rc" \
        "$(echo "$t1 - $t0" | bc)" \
        "$(grep -o '"compile_seconds": [0-9.e-]*' "$d/out" | head -1 | cut -d' ' -f2)"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
one count count $D/facebook-1000.txt.gz triangle
one sm sm $D/yeast.graph.gz "$Q"
one gsword gsword $D/yeast.graph.gz "$Q"
one mce mce $D/facebook-1000.txt.gz
