#!/usr/bin/env bash
# A/B of two gthinker trees on the device tool's GPU machine, warm job times
# (benchmarks/ab_jobs.py) of tree A (an older commit) and tree B (this checkout), run in
# turn, twice each. From the repository root:
#
#   1. here, once: the wheels (.whl, see benchmarks/device_gpu.sh), the data (.data laid out
#      as ../shared/data: snap/*.gz, labeled/hprd.graph, labeled/queries/hprd/), and tree A:
#        mkdir -p .ab/A && git archive BASE | tar -x -C .ab/A
#   2. device run, carry [".whl", ".data", ".ab"]:  bash benchmarks/device_ab.sh [ROUNDS]
#
# Results: $OUT/ab_{A,B}_ROUND.json and the comparison in $OUT/ab.txt.
set -euo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/results/device}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl
for tree in A B; do
  src=$([ "$tree" = A ] && echo "$ROOT/.ab/A" || echo "$ROOT")
  python3 -m pip install -q --no-build-isolation --no-deps --target "/tmp/$tree" "$src"
  python3 -m compileall -q -j 0 "/tmp/$tree" > /dev/null || true
done
cd /tmp
export PYTHONUNBUFFERED=1
for round in $(seq 1 "${1:-2}"); do
  for tree in A B; do
    PYTHONPATH="/tmp/$tree:/tmp/site" python3 "$ROOT/benchmarks/ab_jobs.py" --data "$ROOT/.data" \
      --tag "$tree" --repeat "${REPEAT:-3}" ${ABARGS:-} --out "$OUT/ab_${tree}_$round.json"
  done
done
PYTHONPATH="/tmp/B:/tmp/site" python3 "$ROOT/benchmarks/ab_jobs.py" --compare "$OUT"/ab_*.json \
  | tee "$OUT/ab.txt"
