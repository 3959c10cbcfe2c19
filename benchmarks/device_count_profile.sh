#!/usr/bin/env bash
# GPU clique-counting kernels alone on the `device` tool's GPU machine (carry .whl, .data):
# first the GPU tests of tests/test_count.py on the real GPU (TESTS=1), then
# benchmarks/count_gpu_profile.py on facebook_combined, email-Enron and R-MAT graphs (env
# RMATS="20:16 22:8" = scale:edge factor, KS (default 3,4,5), BLOCKS (grid caps, 0 = default),
# METHODS (auto,edge,vertex), REPEAT, TAG); COUNTING=1 then times gthinker.apps.count.count
# warm on the same graphs (benchmarks/counting.py --no-process, PATTERNS). No peer: for G2Miner use
# `bash benchmarks/device_gpu.sh count`.
source "$(dirname "$0")/device_env.sh"
if [ "${TESTS:-0}" = 1 ]; then
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
     tests/test_count.py -k gpu) 2>&1 | tail -4
fi
graphs=(--graph "fb=$ROOT/.data/snap/facebook_combined.txt.gz"
        --graph "enron=$ROOT/.data/snap/email-Enron.txt.gz")
for spec in ${RMATS-20:16}; do
  s=${spec%%:*}; ef=${spec##*:}
  gthinker generate rmat --scale "$s" --edge-factor "$ef" --seed 1 -o "/tmp/rmat$s.txt" 2>&1 | tail -1
  graphs+=(--graph "rmat$s=/tmp/rmat$s.txt")
done
python3 "$ROOT/benchmarks/count_gpu_profile.py" "${graphs[@]}" --k "${KS:-3,4,5}" \
  --blocks "${BLOCKS:-0}" --methods "${METHODS:-auto}" --repeat "${REPEAT:-10}" --out "$OUT/count_gpu_profile${TAG:-}.json" \
  2>&1 | grep --line-buffered -v -i "warn"
if [ "${COUNTING:-0}" = 1 ]; then  # gthinker.apps.count.count warm (no whole process, no peer)
  python3 "$ROOT/benchmarks/counting.py" "${graphs[@]}" --patterns "${PATTERNS:-triangle,4-clique,5-clique}" \
    --modes gpu --repeat "${REPEAT:-10}" --no-process --out "$OUT/counting${TAG:-}" 2>&1 \
    | grep --line-buffered -v -i "warn"
fi
