#!/usr/bin/env bash
# The GPU kernel variants of clique counting (benchmarks/count_gpu_variants.py) beside
# G2Miner, in one call on the `device` tool's GPU machine (carry .whl, .data, .peers; see
# benchmarks/device_gpu.sh for the wheels and .data, benchmarks/peers/g2miner.sh for .peers):
#
#   bash benchmarks/device_count_variants.sh          # triangles on facebook, R-MAT 20
#       (edge factor 16) and R-MAT 22 (edge factor 8), every variant and G2Miner; 4-cliques
#       on facebook and R-MAT 20, every by-vertex variant, by edge, and G2Miner
#   BIG=1 bash benchmarks/device_count_variants.sh    # R-MAT 24 (edge factor 16) 4-cliques
#       from the binary file: two whole `gthinker count` processes, then in one process
#       the job (device copy, kernel) and the by-vertex variants (ONLY: their names)
#   TESTS=1 ...: first the GPU tests of tests/test_hub_graphs.py and tests/test_count.py
#       and benchmarks/dfs_check.py --hubs on the real GPU
#
# Env: REPEAT (10; 2 for BIG), KS ("3 4"), ONLY (variant names, comma-separated), TAG,
# G2M_DIR (G2Miner's build: $G2M_DIR/bin/{tc,clique}_gpu_base; default /tmp/g2miner, built
# there from .peers/GraphMiner by benchmarks/peers/g2miner.sh when they are missing).
source "$(dirname "$0")/device_env.sh"
if [ "${TESTS:-0}" = 1 ]; then
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
     tests/test_hub_graphs.py) 2>&1 | tail -4
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 200 pytest -q -x -n 0 -p no:cacheprovider \
     tests/test_count.py -k gpu) 2>&1 | tail -4
  timeout 300 python3 "$ROOT/benchmarks/dfs_check.py" --hubs --sizes 12,30 \
    --variants default,windows,windows-tiny 2>&1 | grep --line-buffered -v -i "warn" | tail -20
fi
V="$ROOT/benchmarks/count_gpu_variants.py"
only=(); [ -n "${ONLY:-}" ] && only=(--only "$ONLY")
if [ "${BIG:-0}" = 1 ]; then
  [ -f /tmp/rmat24.csr ] || gthinker generate rmat --scale 24 --edge-factor 16 -o /tmp/rmat24.csr \
    2>&1 | tail -1
  for i in 1 2; do
    /usr/bin/time -f "whole process $i: %e s, peak %M KB" \
      gthinker count /tmp/rmat24.csr 4-clique --mode gpu --json -q 2>&1 | tail -2
  done
  python3 "$V" --graph rmat24=/tmp/rmat24.csr --k 4 --repeat "${REPEAT:-2}" --job \
    --no-cpu-reference "${only[@]}" --out "$OUT/count_gpu_variants_rmat24${TAG:-}" 2>&1 \
    | grep --line-buffered -v -i "warn"
  exit 0
fi
export G2M_DIR=${G2M_DIR:-/tmp/g2miner}
if [ ! -x "$G2M_DIR/bin/tc_gpu_base" ] || [ ! -x "$G2M_DIR/bin/clique_gpu_base" ]; then
  bash "$ROOT/benchmarks/peers/g2miner.sh" build > "$OUT/g2miner_build${TAG:-}.log" 2>&1 \
    || { tail -30 "$OUT/g2miner_build${TAG:-}.log"; exit 1; }
fi
for k in ${KS:-3 4}; do
  graphs=(--graph "fb=$ROOT/.data/snap/facebook_combined.txt.gz" --rmat 20:16)
  [ "$k" = 3 ] && graphs+=(--rmat 22:8)
  python3 "$V" "${graphs[@]}" --k "$k" --repeat "${REPEAT:-10}" --g2miner "$G2M_DIR" \
    "${only[@]}" --out "$OUT/count_gpu_variants_k$k${TAG:-}" 2>&1 | grep --line-buffered -v -i "warn"
done
