#!/usr/bin/env bash
# Frequent subgraph mining on the GPU machine: G2Miner's FSM (OpenMP and GPU binaries) beside
# `gthinker fsm` cpu (16 threads) and gpu, pattern counts checked, a table in $OUT.
# From the repository root:
#
#   1. once, here: the wheels of benchmarks/device_gpu.sh (.whl), the labeled graphs
#        mkdir -p .data/labeled && cp ../shared/data/labeled/{hprd,yeast,human}.graph .data/labeled/
#      and G2Miner's FSM source with its sample inputs (citeseer, cora):
#        bash benchmarks/peers/g2miner_fsm.sh source /work/.mirror/chenxuhao+GraphMiner/repo
#   2. device run, carry [".whl", ".data", ".peers"]:  bash benchmarks/device_fsm.sh
#
# FSMTESTS=1 first runs tests/test_fsm.py on the real GPU (instead of the simulator).
# Then builds G2Miner (benchmarks/peers/g2miner_fsm.sh build; its log in $OUT) and runs
# benchmarks/fsm_peer.py: env GRAPHS (default "citeseer cora hprd yeast human rmat22"), KS,
# SUPPORTS_<graph>, MODES (default "g2m-omp g2m-gpu cpu gpu"), LIMIT (seconds a run), TAG.
# Results: $OUT/fsm_table_$TAG.txt (count / mining seconds / process seconds per tool, and
# whether the counts agree) and $OUT/fsm_runs_$TAG.jsonl.
source "$(dirname "$0")/device_env.sh"
if [ "${FSMTESTS:-0}" = 1 ]; then
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 PYTHONFAULTHANDLER=1 timeout -k 5 150 pytest -q -x -n 0 -p no:cacheprovider \
    tests/test_fsm.py -k "gpu or hybrid") 2>&1 | tail -15
fi
if ! bash "$ROOT/benchmarks/peers/g2miner_fsm.sh" build > "$OUT/g2miner_fsm_build.log" 2>&1; then
  tail -30 "$OUT/g2miner_fsm_build.log"
  echo "device_fsm: G2Miner's FSM did not build; gthinker runs alone" >&2
  export MODES=${MODES:-cpu gpu}
fi
ROOT=$ROOT OUT=$OUT python3 "$ROOT/benchmarks/fsm_peer.py"
