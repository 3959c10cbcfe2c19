#!/usr/bin/env bash
# A/B of two gthinker trees on the device tool's GPU machine, warm job times
# (benchmarks/ab_jobs.py) of tree A (an older commit) and tree B (this checkout), run in
# turn, twice each. From the repository root:
#
#   1. here, once: the wheels (.whl, see benchmarks/device_gpu.sh), the data (.data laid out
#      as ../shared/data: snap/*.gz, labeled/hprd.graph, labeled/queries/hprd/), and tree A:
#        mkdir -p .ab/A && git archive BASE | tar -x -C .ab/A
#   2. device run, carry [".whl", ".data", ".ab"]:  bash benchmarks/device_ab.sh [FIRST [LAST]]
#      (rounds FIRST..LAST, default 1..2; on a machine still warm from a call before, the
#      trees built there are reused, and the comparison covers every round's files there)
#
# Results: $OUT/ab_{A,B}_ROUND.json (also kept in /tmp/ab) and the comparison in $OUT/ab.txt.
set -euo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/results/device}
mkdir -p "$OUT"
mkdir -p /tmp/ab
[ -d /tmp/site/numba_cuda ] || python3 -m pip install -q --no-index --no-deps --no-compile \
  --upgrade --target /tmp/site .whl/*.whl
for tree in A B; do
  [ -d "/tmp/$tree/gthinker" ] && continue
  src=$([ "$tree" = A ] && echo "$ROOT/.ab/A" || echo "$ROOT")
  python3 -m pip install -q --no-build-isolation --no-deps --target "/tmp/$tree" "$src"
  python3 -m compileall -q -j 0 "/tmp/$tree" > /dev/null || true
done
cd /tmp
export PYTHONUNBUFFERED=1
for round in $(seq "${1:-1}" "${2:-2}"); do
  for tree in A B; do
    PYTHONPATH="/tmp/$tree:/tmp/site" python3 "$ROOT/benchmarks/ab_jobs.py" --data "$ROOT/.data" \
      --tag "$tree" --repeat "${REPEAT:-3}" ${ABARGS:-} --out "/tmp/ab/ab_${tree}_$round.json"
  done
done
cp /tmp/ab/*.json "$OUT/"
PYTHONPATH="/tmp/B:/tmp/site" python3 "$ROOT/benchmarks/ab_jobs.py" --compare /tmp/ab/ab_*.json \
  | tee "$OUT/ab.txt"
