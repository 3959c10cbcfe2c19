#!/usr/bin/env bash
# Where multi-GPU MCE spends its time, on a host with several GPUs (kind nvidia-h100-x4):
# the GPUs' topology, facebook MCE (gpu mode) at 1, 2 and 4 GPUs with each run's whole JSON
# stats (per-device kernel, host and launch figures), MCE-GPU's multi-GPU mode beside it,
# an Nsight Systems summary of the 2-GPU run where nsys exists, and the multi-GPU tests
# under faulthandler (the exit crash's stack). From the repository root, carry
# [".whl", ".data", ".peers/seed-peers-sm90.tar.xz"]:
#
#   bash benchmarks/device_mgpu_probe.sh
#
# env: MODES (default gpu), GPUS (default 1,2,4), REPEAT (default 2), PEER=0 (no MCE-GPU), TESTS=0 (no tests). Results in $OUT.
source "$(dirname "$0")/device_env.sh"
set +e
fb=$ROOT/.data/snap/facebook_combined.txt.gz
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
nvidia-smi -L
command -v nsys ncu nvcc; ls /usr/local/cuda*/bin 2>/dev/null | grep -E "nsys|ncu" | head
gthinker mce "$fb" --mode gpu --gpus 1 --quiet > /dev/null 2>&1  # graph prepared, GPU compiled
for m in $(echo "${MODES:-gpu}" | tr , " "); do
for g in $(echo "${GPUS:-1,2,4}" | tr , " "); do
  for r in $(seq "${REPEAT:-2}"); do
    f=$OUT/mce_${m}_g${g}_r$r
    /usr/bin/time -f "whole %e s" gthinker mce "$fb" --mode "$m" --gpus "$g" --json > "$f.json" 2> "$f.err"
    echo "$m gpus $g round $r: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(d['seconds'], d['count'], [(s['launches'], round(s['kernel_seconds'], 3)) for s in d['stats']['gpus']])" \
      "$f.json") $(tail -1 "$f.err")"
  done
done
done
[ "${PEER:-1}" = 1 ] && {
bash "$ROOT/benchmarks/peers/bundle.sh" unpack /tmp/peers > /dev/null
export MCEGPU_DIR=/tmp/peers/mcegpu
for d in 0 0,1 0,1,2,3; do
  echo "MCE-GPU -d $d:"
  timeout -k 5 60 bash "$ROOT/benchmarks/peers/mce_gpu.sh" run "$fb" -p l2 -i px -w wl -d "$d" 2>&1 | tail -3
done
}
if command -v nsys > /dev/null; then
  timeout -k 5 120 nsys profile -o /tmp/mce2 --force-overwrite true -t cuda,osrt,nvtx \
    gthinker mce "$fb" --mode gpu --gpus 2 --quiet > /dev/null 2>&1
  nsys stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,osrt_sum /tmp/mce2.nsys-rep \
    > "$OUT/nsys_mce2.txt" 2>&1
  head -c 20000 "$OUT/nsys_mce2.txt" | grep -v "^$" | head -60
fi
[ "${TESTS:-1}" = 1 ] && (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 PYTHONFAULTHANDLER=1 timeout -k 5 240 pytest -q -x -n 0 \
   -p no:cacheprovider tests/test_multi_gpu.py -W "ignore::Warning"; echo "pytest rc $?") \
   > "$OUT/mgtests.txt" 2>&1 && tail -40 "$OUT/mgtests.txt"
