#!/usr/bin/env bash
# One call for the rows that need a GPU but not several at once, on a host of several GPUs
# (kind nvidia-h200-x4 / nvidia-h100-x4: the multi-GPU tests use them all; the rest GPU 0):
#   1. tests/test_multi_gpu.py 10 times in a row on the real GPUs (benchmarks/device_multi_gpu.sh
#      with MGRUNS=10 and nothing else);
#   2. frequent subgraph mining beside G2Miner's FSM (benchmarks/device_fsm.sh, its tests on the
#      GPU first) on GRAPHS (default "citeseer cora hprd yeast") at KS (default "2 3");
#   3. subgraph matching beside GSI (benchmarks/device_gsi.sh tests bench; R-MAT 20 and the
#      R-MAT 22 parts rows, R-MAT 24 left out).
# Each step under a time cap (env CAP1, CAP2, CAP3 seconds). Carry [".whl", ".data", ".peers"]
# (.peers: seed-peers-sm90.tar.xz, GraphMiner-fsm from `benchmarks/peers/g2miner_fsm.sh source`,
# gsi and gsi-build from `benchmarks/peers/gsi.sh source|build`).
set -u
here=$(dirname "$0")
OUT=${OUT:-$(pwd)/benchmarks/results/device}
export OUT
export DEVICE_ENV_ONCE=/tmp/device-env-once.$$  # one install for the three scripts
echo "== 1. multi-GPU tests"
MGRUNS=${MGRUNS:-10} BENCH=0 MCEGPU=0 USERS=0 BUDGET=${CAP1:-170} \
  timeout -k 5 "$(( ${CAP1:-170} + 60 ))" bash "$here/device_multi_gpu.sh" 2>&1 | tail -14
echo "== 2. FSM beside G2Miner"
CUDA_VISIBLE_DEVICES=0 FSMTESTS=1 GRAPHS=${GRAPHS:-citeseer cora hprd yeast} KS=${KS:-2 3} \
  LIMIT=${LIMIT:-40} TAG=h200 timeout -k 5 "${CAP2:-190}" bash "$here/device_fsm.sh" 2>&1 | tail -40
echo "== 3. matching beside GSI"
CUDA_VISIBLE_DEVICES=0 CAPPED= RUN_LIMIT=${RUN_LIMIT:-40} BUDGET=$(( ${CAP3:-150} - 20 )) \
  timeout -k 5 "${CAP3:-150}" bash "$here/device_gsi.sh" tests bench 2>&1 | tail -40
