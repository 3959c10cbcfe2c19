#!/usr/bin/env bash
# One GPU against all of them, on a `device` machine with several (kind nvidia-h200-x2, or
# -x4 / -x8): facebook_combined MCE in gpu mode and the R-MAT 20 (edge factor 16) 4-clique
# count, --gpus 1 against --gpus N, counts compared (benchmarks/multi_gpu.py). From the
# repository root:
#
#   1. once, here: the cp312 wheels of ../shared/GPU.md in .whl/, and
#        mkdir -p .data/snap && cp ../shared/data/snap/facebook_combined.txt.gz .data/snap/
#   2. device run, kind nvidia-h200-x2, carry [".whl", ".data"]:
#        bash benchmarks/device_multi_gpu.sh
#
# env: REPEAT (rounds, default 3), MODES (gpu,hybrid; default gpu), RMAT (scale:edge-factor,
# default 20:16), PATTERN (default 4-clique), TAG (file name suffix), MGTESTS=1 (first the
# multi-GPU tests on the real GPUs). JSON and log in $OUT (multi_gpu${TAG}.json|log).
source "$(dirname "$0")/device_env.sh"
nvidia-smi -L || true
if [ "${MGTESTS:-0}" = 1 ]; then
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
     tests/test_multi_gpu.py) 2>&1 | tail -6
fi
spec=${RMAT:-20:16}; s=${spec%%:*}; ef=${spec##*:}
gthinker generate rmat --scale "$s" --edge-factor "$ef" --seed 1 -o "/tmp/rmat$s.txt" 2>&1 | tail -1
python3 "$ROOT/benchmarks/multi_gpu.py" --facebook "$ROOT/.data/snap/facebook_combined.txt.gz" \
  --rmat "/tmp/rmat$s.txt" --pattern "${PATTERN:-4-clique}" --modes "${MODES:-gpu}" \
  --repeat "${REPEAT:-3}" --out "$OUT/multi_gpu${TAG:-}.json" 2>&1 | tee "$OUT/multi_gpu${TAG:-}.log"
