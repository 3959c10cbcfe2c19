#!/usr/bin/env bash
# Subgraph matching beside GSI, and the GPU search in parts (--gpu-memory), in one call on the
# `device` tool's GPU machine (an H100 or H200, 16 cores, no internet). From the repository
# root, with:
#   .whl/   the cp312 numpy and numba-cuda wheels (see benchmarks/device_gpu.sh, step 1);
#   GSI     built by `bash benchmarks/peers/gsi.sh build` (here, without a GPU: nvcc only) into
#           $GSI_DIR (default .peers/gsi-build, carried; it is built there when missing, which
#           needs .peers/gsi, made by `gsi.sh source`, and nvcc on the GPU machine: ~3 min).
#
#   bash benchmarks/device_gsi.sh [tests] [bench]      (default: both)
#
# tests: GSI's selftest (its samples and a small labeled graph against networkx) and
#        tests/test_gpu_memory_parts.py on the real GPU (GTHINKER_TEST_REAL_GPU=1);
# bench: benchmarks/sm_gsi.py: GSI's samples; R-MAT RMAT (default 20:16) unlabeled, with 4
#        vertex labels and, where `gthinker generate rmat` has --edge-labels, with 4 edge
#        labels, GSI's sample shapes and the T-DFS shapes beside `sm` on the GPU; the
#        triangles and 4-cycles of R-MAT PARTS (default 22:16) with and without a cap of half
#        the graph's bytes; the triangles of R-MAT CAPPED (default 24:16) capped. REPEAT warm
#        runs (default 2), RUN_LIMIT s a run (default 120), BUDGET s in all (default 480);
#        RMAT=, PARTS= or CAPPED= (empty) leaves that table out.
#        JSON and a table in $OUT/sm_gsi$TAG.{json,md}.
source "$(dirname "$0")/device_env.sh"
GSI_DIR=${GSI_DIR:-$ROOT/.peers/gsi-build}
export GSI_DIR
if [ ! -x "$GSI_DIR/bin/GSI.exe" ]; then
  bash "$ROOT/benchmarks/peers/gsi.sh" build
fi
steps=${*:-tests bench}
for step in $steps; do
  case "$step" in
    tests)
      bash "$ROOT/benchmarks/peers/gsi.sh" selftest 2>&1 | tail -8
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
         tests/test_gpu_memory_parts.py) 2>&1 | tail -8
      ;;
    bench)
      python3 "$ROOT/benchmarks/sm_gsi.py" --gsi "$GSI_DIR" --work /tmp/sm_gsi \
        --rmat "${RMAT-20:16}" --vertex-labels 4 --parts "${PARTS-22:16}" \
        --capped "${CAPPED-24:16}" --repeat "${REPEAT:-2}" --run-limit "${RUN_LIMIT:-120}" \
        --budget "${BUDGET:-480}" --out "$OUT/sm_gsi${TAG:-}" 2>&1 | tee "$OUT/sm_gsi${TAG:-}.log"
      ;;
    *) echo "device_gsi.sh: unknown step $step (tests, bench)" >&2; exit 2 ;;
  esac
done
