#!/usr/bin/env bash
# The GPU kernel variants of clique counting (benchmarks/count_gpu_variants.py) beside
# G2Miner, and the hub graph's 4-cycles and diamonds in `gthinker sm --mode gpu`, in one call
# on the `device` tool's GPU machine. From the repository root, carrying .whl (the cp312 numpy
# and numba-cuda wheels, ../shared/GPU.md), .data/snap/facebook_combined.txt.gz and
# .peers/seed-peers-sm90.tar.xz (G2Miner, built by benchmarks/peers/bundle.sh build):
#
#   bash benchmarks/device_count_variants.sh          # hub step; triangles on facebook, R-MAT
#       20 (edge factor 16) and R-MAT 22 (edge factor 8), every variant and G2Miner; 4-cliques
#       on facebook and R-MAT 20, every by-vertex variant, by edge, and G2Miner
#   BIG=1 TESTS=1 bash benchmarks/device_count_variants.sh   # hub step, the tests, R-MAT 24
#
# Steps, in this order, each under `timeout -k 5` (SIGINT first: gthinker stops its kernels
# through the job's stop flag and prints what it has), each given at most its own cap and
# what is left of LIMIT (default 290 s: the whole call under 5 minutes; a step with less than
# 5 s left is skipped and says so):
#   install       the wheels and gthinker (benchmarks/device_env.sh, its pip steps under
#                 DEVICE_ENV_TIMEOUT), G2Miner unpacked from the peers bundle into /tmp/peers
#   hub           `gthinker generate preset edit-shwiki --scale 0.2` (915,800 vertices, a hub
#                 of 808,599), then `gthinker sm` 4-cycle and diamond with --mode gpu (the
#                 dispatch's choice on stderr: "mode: ..."; the 4-cycle goes to its formula),
#                 the 4-cycle forced onto the depth-first GPU search (--gpu-mode dfs: what the
#                 formula saves, stopped at its cap), and both counts on the CPU to compare
#   TESTS=1       numba-cuda's low-occupancy warning as an error on a one-block launch (it
#                 must stay quiet); the GPU tests of tests/test_hub_graphs.py,
#                 tests/test_matching_costs.py and tests/test_count.py -k gpu on the real GPU;
#                 benchmarks/dfs_check.py --hubs
#   BIG=1         R-MAT 24 (edge factor 16) 4-cliques from the binary file: two whole
#                 `gthinker count` processes, then in one process the job and the by-vertex
#                 variants (ONLY: their names); BIG=1 runs no other variants
#   otherwise     the variants beside G2Miner (KS)
# Each step's whole output is in $OUT/<step>$TAG.log, its last lines printed.
#
# Env: LIMIT (290), HUB (1; 0: no hub step), REPEAT (10; 2 for BIG), KS ("3 4"), ONLY (variant names, comma-separated),
# TAG, G2M_DIR (G2Miner's binaries: default /tmp/peers/g2miner from the bundle, else built
# by benchmarks/peers/g2miner.sh from .peers/GraphMiner).
T0=$(date +%s)
LIMIT=${LIMIT:-290}
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
step() { echo "== $1: $(( $(date +%s) - T0 )) s since the start"; }
# within CAP NAME COMMAND...: COMMAND under timeout -k 5 for CAP seconds or what is left of
# LIMIT, whichever is less; its output in $OUT/NAME$TAG.log, the last lines printed.
within() {
  local cap=$1 name=$2 rc=0 t
  shift 2
  t=$(left)
  [ "$t" -lt "$cap" ] && cap=$t
  if [ "$cap" -lt 5 ]; then echo "   $name: skipped ($t s left of $LIMIT)"; return 0; fi
  local t1
  t1=$(date +%s)
  timeout -k 5 -s INT "$cap" "$@" > "$OUT/$name${TAG:-}.log" 2>&1 || rc=$?
  grep -v -i "warn" "$OUT/$name${TAG:-}.log" | tail -"${TAIL:-6}" | sed 's/^/   /'
  echo "   $name: $(( $(date +%s) - t1 )) s (rc $rc$([ $rc = 124 ] && echo ", stopped at its cap of $cap s"))"
}

step "install"
export DEVICE_ENV_TIMEOUT=${DEVICE_ENV_TIMEOUT:-150}
source "$(dirname "$0")/device_env.sh"   # sets ROOT, OUT; cd /tmp; set -euo pipefail
set +e +o pipefail
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
export G2M_DIR=${G2M_DIR:-/tmp/peers/g2miner}
if [ -f "$ROOT/.peers/seed-peers-sm90.tar.xz" ] && [ ! -x "$G2M_DIR/bin/tc_gpu_base" ]; then
  within 60 peers_unpack bash "$ROOT/benchmarks/peers/bundle.sh" unpack /tmp/peers
fi

if [ "${HUB:-1}" = 1 ]; then
step "hub: edit-shwiki at scale 0.2, sm 4-cycle and diamond"
HUB=/tmp/shwiki02.csr
[ -f "$HUB" ] || within 60 hub_generate gthinker generate preset edit-shwiki --scale 0.2 -o "$HUB"
for q in 4-cycle diamond; do
  TAIL=3 within 90 "hub_sm_${q}_gpu" /usr/bin/time -f "whole process: %e s, peak %M KB" \
    gthinker sm "$HUB" "$q" --mode gpu --json
done
TAIL=3 within 30 hub_sm_4-cycle_dfs /usr/bin/time -f "whole process: %e s, peak %M KB" \
  gthinker sm "$HUB" 4-cycle --mode gpu --gpu-mode dfs --json
for q in 4-cycle diamond; do
  TAIL=2 within 40 "hub_sm_${q}_cpu" gthinker sm "$HUB" "$q" --mode cpu --json -q
done
fi

if [ "${TESTS:-0}" = 1 ]; then
  step "tests on the real GPU"
  within 60 occupancy_warning python3 -W error -c '
import numpy as np
from gthinker.gpu.availability import numba_cuda
cuda = numba_cuda()
@cuda.jit
def one(a):
    a[cuda.grid(1)] = 1
a = cuda.to_device(np.zeros(32, np.int32))
one[1, 32](a)
print("a one-block launch, warnings as errors: no low-occupancy warning; sum", a.copy_to_host().sum())'
  (cd "$ROOT" && within 120 tests_hub_costs env GTHINKER_TEST_REAL_GPU=1 pytest -q -x -n 0 \
     -p no:cacheprovider tests/test_hub_graphs.py tests/test_matching_costs.py)
  (cd "$ROOT" && within 60 tests_count_gpu env GTHINKER_TEST_REAL_GPU=1 pytest -q -x -n 0 \
     -p no:cacheprovider tests/test_count.py -k gpu)
  TAIL=20 within 60 dfs_check python3 "$ROOT/benchmarks/dfs_check.py" --hubs --sizes 12,30 \
    --variants default,windows,windows-tiny
fi

V="$ROOT/benchmarks/count_gpu_variants.py"
only=(); [ -n "${ONLY:-}" ] && only=(--only "$ONLY")
if [ "${BIG:-0}" = 1 ]; then
  step "R-MAT 24 4-cliques"
  [ -f /tmp/rmat24.csr ] || within 120 rmat24_generate gthinker generate rmat --scale 24 \
    --edge-factor 16 -o /tmp/rmat24.csr
  for i in 1 2; do
    TAIL=2 within 90 "rmat24_process_$i" /usr/bin/time -f "whole process $i: %e s, peak %M KB" \
      gthinker count /tmp/rmat24.csr 4-clique --mode gpu --json -q
  done
  TAIL=20 within 150 rmat24_variants python3 "$V" --graph rmat24=/tmp/rmat24.csr --k 4 \
    --repeat "${REPEAT:-2}" --job --no-cpu-reference "${only[@]}" \
    --out "$OUT/count_gpu_variants_rmat24${TAG:-}"
  step "done"
  exit 0
fi
if [ ! -x "$G2M_DIR/bin/tc_gpu_base" ] || [ ! -x "$G2M_DIR/bin/clique_gpu_base" ]; then
  within 240 g2miner_build bash "$ROOT/benchmarks/peers/g2miner.sh" build
fi
for k in ${KS:-3 4}; do
  step "variants, k=$k"
  graphs=(--graph "fb=$ROOT/.data/snap/facebook_combined.txt.gz" --rmat 20:16)
  [ "$k" = 3 ] && graphs+=(--rmat 22:8)
  TAIL=30 within 240 "variants_k$k" python3 "$V" "${graphs[@]}" --k "$k" \
    --repeat "${REPEAT:-10}" --g2miner "$G2M_DIR" "${only[@]}" \
    --out "$OUT/count_gpu_variants_k$k${TAG:-}"
done
step "done"
