#!/usr/bin/env bash
# Edge-labeled, directed matching on the `device` tool's GPU machine (an H100 or H200, 16
# cores). From the repository root, with .whl/ as benchmarks/device_gpu.sh, step 1:
#
#   bash benchmarks/device_edge_labels.sh [tests] [bench]      (default: both)
#
# tests: tests/test_edge_labels.py on the real GPU (GTHINKER_TEST_REAL_GPU=1);
# bench: benchmarks/edge_labels.py on R-MAT $SCALE (default 20) with 4 and 64 skewed edge
#        labels, GSI's sample shapes and labeled T-DFS shapes, cpu (16 threads) and gpu;
#        one JSON line each in $OUT/edge_labels.json (a MISMATCH line on stderr if two modes
#        disagree).
source "$(dirname "$0")/device_env.sh"
steps=${*:-tests bench}
for step in $steps; do
  case "$step" in
    tests)
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
         tests/test_edge_labels.py) 2>&1 | tail -8 ;;
    bench)
      timeout 480 python3 "$ROOT/benchmarks/edge_labels.py" --scale "${SCALE:-20}" \
        --labels 4,64 --modes cpu,gpu | tee "$OUT/edge_labels.json" ;;
    *) echo "unknown step $step (tests, bench)" >&2; exit 2 ;;
  esac
done
