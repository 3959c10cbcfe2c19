#!/usr/bin/env bash
# 1, 2 and 4 GPUs in one call, on a `device` machine with several (kind nvidia-h100-x4 or
# nvidia-h200-x4; on -x2 the 4-GPU runs are skipped): facebook_combined MCE (gpu and hybrid),
# the R-MAT 22 (edge factor 16) 5-clique count (gpu) and subgraph matching of the T-DFS
# patterns on facebook (gpu) and gSWORD's sampling of hprd's query_dense_16_1 (gpu, Alley,
# 10^8 samples), counts compared, a table of job time, whole time, busy time per GPU and
# speed-up (benchmarks/multi_gpu.py). From the repository root:
#
#   1. once, here: the cp312 wheels of ../shared/GPU.md in .whl/, and
#        mkdir -p .data/snap .data/labeled && cp ../shared/data/snap/facebook_combined.txt.gz .data/snap/
#        cp ../shared/data/labeled/hprd.graph ../shared/data/labeled/queries/hprd/query_dense_16_1.graph .data/labeled/
#   2. device run, kind nvidia-h100-x4, carry [".whl", ".data"]:
#        bash benchmarks/device_multi_gpu.sh
#
# env: REPEAT (rounds, default 3), GPUS (default 1,2,4), MODES (MCE; default gpu,hybrid),
# RMAT (scale:edge-factor, default 22:16), PATTERN (default 5-clique), SM (patterns on
# facebook: gthinker's names of T-DFS's 1, 2, 5, 6, 7; T-DFS's .g files work too), GSWORD
# (DATA,QUERY; "" skips it), GSWORD_SAMPLES (default 10^8), TAG (file
# name suffix), MGTESTS=1 (first the multi-GPU tests on the real GPUs, gSWORD's and
# apps/cycles' among them, their exit status shown: the exit crash). JSON and log in $OUT (multi_gpu${TAG}.json|log).
source "$(dirname "$0")/device_env.sh"
nvidia-smi -L || true
if [ "${MGTESTS:-0}" = 1 ]; then
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
     tests/test_multi_gpu.py && echo "pytest exit status 0" || echo "pytest exit status $?") \
     2>&1 | tail -8
  # gSWORD's samplers and a user app (apps/cycles) on two GPUs
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
     tests/test_gsword_gpu.py tests/apps/test_cycles.py -k "two or gpus" \
     && echo "pytest exit status 0" || echo "pytest exit status $?") 2>&1 | tail -8
fi
spec=${RMAT:-22:16}; s=${spec%%:*}; ef=${spec##*:}
gthinker generate rmat --scale "$s" --edge-factor "$ef" --seed 1 -o "/tmp/rmat$s.txt" 2>&1 | tail -1
python3 "$ROOT/benchmarks/multi_gpu.py" --facebook "$ROOT/.data/snap/facebook_combined.txt.gz" \
  --rmat "/tmp/rmat$s.txt" --pattern "${PATTERN:-5-clique}" --modes "${MODES:-gpu,hybrid}" \
  --sm-patterns "${SM:-diamond,4-clique,4-wheel,5-clique-minus-edge,5-clique}" \
  --gsword "${GSWORD-$ROOT/.data/labeled/hprd.graph,$ROOT/.data/labeled/query_dense_16_1.graph}" \
  --gsword-samples "${GSWORD_SAMPLES:-100000000}" \
  --gpus "${GPUS:-1,2,4}" --repeat "${REPEAT:-3}" --out "$OUT/multi_gpu${TAG:-}.json" 2>&1 | tee "$OUT/multi_gpu${TAG:-}.log"
