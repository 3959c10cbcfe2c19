#!/usr/bin/env bash
# Subgraph matching beside T-DFS, in one call on the `device` tool's GPU machine (an H100 or
# H200, 16 cores, no internet). From the repository root, with:
#   .whl/   the cp312 numpy and numba-cuda wheels (see benchmarks/device_gpu.sh, step 1);
#   .data/  snap/email-Enron.txt.gz, snap/facebook_combined.txt.gz, and for the labeled row
#           labeled/hprd.graph and labeled/queries/hprd/ (as ../shared/data);
#   T-DFS   built by `bash benchmarks/peers/tdfs.sh build` (here, without a GPU: nvcc only) into
#           $TDFS_DIR (default .peers/tdfs-build; it is built there when missing, which needs
#           .peers/tdfs and nvcc on the GPU machine).
#
#   bash benchmarks/device_tdfs.sh [tests] [bench]      (default: both)
#
# tests: tests/test_sm_dfs.py on the real GPU (GTHINKER_TEST_REAL_GPU=1) and T-DFS's selftest;
# bench: benchmarks/sm_tdfs.py: T-DFS's patterns 1-7 on email-Enron and facebook_combined (and
#        R-MAT with RMAT=20:16), gthinker in MODES (default gpu,cpu; cpu with 16 threads),
#        REPEAT warm runs (default 3), the small labeled HPRD query (HPRD=0 skips it), within
#        BUDGET seconds (default 300), RUN_LIMIT seconds a run (default 60); JSON and a table
#        in $OUT/sm_tdfs$TAG.{json,md}.
source "$(dirname "$0")/device_env.sh"
TDFS_DIR=${TDFS_DIR:-$ROOT/.peers/tdfs-build}
export TDFS_DIR
if [ ! -x "$TDFS_DIR/bin/ulb.out" ]; then
  bash "$ROOT/benchmarks/peers/tdfs.sh" build
fi
steps=${*:-tests bench}
for step in $steps; do
  case "$step" in
    tests)
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
         tests/test_sm_dfs.py) 2>&1 | tail -8
      bash "$ROOT/benchmarks/peers/tdfs.sh" selftest 2>&1 | tail -5
      ;;
    bench)
      labeled=()
      if [ "${HPRD:-1}" != 0 ]; then
        labeled=(--labeled "hprd=labeled/hprd.graph:labeled/queries/hprd/query_dense_16_1.graph")
      fi
      python3 "$ROOT/benchmarks/sm_tdfs.py" --data "$ROOT/.data" --tdfs "$TDFS_DIR" \
        --modes "${MODES:-gpu,cpu}" --threads 16 --repeat "${REPEAT:-3}" \
        ${RMAT:+--rmat "$RMAT"} "${labeled[@]}" --budget "${BUDGET:-300}" \
        --run-limit "${RUN_LIMIT:-60}" --out "$OUT/sm_tdfs${TAG:-}" 2>&1 | tee "$OUT/sm_tdfs${TAG:-}.log"
      ;;
    *) echo "device_tdfs.sh: unknown step $step (tests, bench)" >&2; exit 2 ;;
  esac
done
