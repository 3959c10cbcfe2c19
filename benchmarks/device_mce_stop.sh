#!/usr/bin/env bash
# Ctrl-C stops a GPU MCE run at once (benchmarks/mce_stop.py): facebook_combined in gpu mode
# (the bitset engine's queue kernel, one launch per GPU searching its whole share) and in
# hybrid mode (its per-launch kernel beside the CPU workers), through `gthinker mce` and
# through mce.run in a Python program (api-gpu, api-hybrid: there Ctrl-C raises
# KeyboardInterrupt; in hybrid mode it reaches the kernel through the master's abort), each
# run whole once, then REPEAT runs sent SIGINT 1 s after their first progress line: each
# must exit 130 within LIMIT seconds; the command's JSON result marked partial, fewer
# maximal cliques than the whole run and no more of any size. The last line says PASS or
# FAIL. From the repository root on a GPU host, carry [".whl", ".data"]:
#
#   bash benchmarks/device_mce_stop.sh
#
# env: GRAPH (default .data/snap/facebook_combined.txt.gz; without it an R-MAT of
# facebook's size, scale 12, edge factor 22, dense corner a=0.6 b=c=0.15), MODES (default
# gpu,hybrid,api-gpu,api-hybrid), REPEAT (default 3), DELAY (default 1), LIMIT (default
# 0.5), GPUS (--gpus, default: gthinker's). Every run's figures in $OUT/mce_stop.json.
source "$(dirname "$0")/device_env.sh"
set +e
nvidia-smi -L
graph=${GRAPH:-$ROOT/.data/snap/facebook_combined.txt.gz}
if [ ! -f "$graph" ]; then
  graph=/tmp/mce_stop_rmat12.csr
  [ -f "$graph" ] || python3 -m gthinker generate rmat --scale 12 --edge-factor 22 \
    --a 0.6 --b 0.15 --c 0.15 -o "$graph" --quiet
fi
echo "graph: $graph"
python3 "$ROOT/benchmarks/mce_stop.py" --graph "$graph" --modes "${MODES:-gpu,hybrid,api-gpu,api-hybrid}" \
  --repeat "${REPEAT:-3}" --delay "${DELAY:-1}" --limit "${LIMIT:-0.5}" --gpus "${GPUS:-0}" \
  --out "$OUT/mce_stop.json"
