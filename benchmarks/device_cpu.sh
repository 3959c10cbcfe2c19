#!/usr/bin/env bash
# Everything the CPU numbers in docs/benchmarks.md need, in one go, on the GPU machine
# of the `device` tool (Python 3.12, 16 cores, no internet). From the repository root:
#
#   1. once, here:  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#                     --implementation cp --platform manylinux_2_28_x86_64 \
#                     --platform manylinux_2_17_x86_64 -d .whl numpy==2.4.6 igraph==1.0.0 texttable==1.7.2
#                   mkdir -p .data && cp ../shared/data/snap/*.gz .data/
#   2. device run, carry [".whl", ".data"]:  bash benchmarks/device_cpu.sh [quick|full]
#
# quick: tests + Enron/R-MAT table (about 8 minutes); full: also facebook_combined at 1 thread
# (about 7 more minutes: run it as a call of its own).
source "$(dirname "$0")/device_env.sh"
case "${1:-quick}" in
  quick)
    (cd "$ROOT" && timeout 300 pytest -q -x -p no:cacheprovider) 2>&1 | tail -3 | tee "$OUT/pytest.log"
    python3 "$ROOT/benchmarks/mce_cpu.py" --data "$ROOT/.data" --threads 1,2,4,8,16 --rmat 16:8 \
      --budgets 0.02 --facebook-seconds 150 --igraph-limit 300 --networkx-limit 30 \
      --out "$OUT/mce_cpu.json" 2>&1 | tee "$OUT/bench.log"
    ;;
  full)
    for t in 16 1; do
      timeout -s INT 560 gthinker mce "$ROOT/.data/facebook_combined.txt.gz" --threads "$t" --json \
        > "$OUT/fb_$t.json" 2> "$OUT/fb_$t.log" || echo "threads $t: stopped (see fb_$t.log)"
    done
    ;;
esac
