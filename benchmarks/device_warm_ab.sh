#!/usr/bin/env bash
# Start-up, reading and kept forms on the device tool's GPU machine, in one call (well under
# 4 minutes), against the warm-start issue's targets. From the repository root, carrying
# .whl (the cp312 numpy and numba-cuda wheels, ../shared/GPU.md) and .data (laid out as
# ../shared/data: snap/facebook_combined.txt.gz, snap/email-Enron.txt.gz, labeled/hprd.graph,
# labeled/queries/hprd/query_dense_16_1.graph):
#
#   bash benchmarks/device_warm_ab.sh [warm] [read] [forms]      (all three by default)
#
# warm:  benchmarks/process_overhead.py phases: warm whole processes of `count facebook
#        triangle`, `mce email-Enron` and `sm hprd query_dense_16_1` (auto mode: the GPU),
#        each split into phases; target: wall <= 0.9 s. Env RUNS (default 5), CASES.
# read:  an R-MAT text (env SCALE, default 22: 67M edges, ~1 GB) generated there, then
#        benchmarks/read_speed.py (phases apart, on THREADS cores, default 1,16); target:
#        >= 1 GB/s for the whole read on 16 cores ("total MB/s").
# forms: an R-MAT 20 text converted with the default forms (`gthinker convert`), then
#        `gthinker count r20.csr triangle --mode cpu` three times: the first makes the degree
#        orientation and keeps it in the file (it grows), the later ones prepare nothing
#        (prepare_seconds near 0, the file unchanged).
# A/B: with .ab/A carried too (mkdir -p .ab/A && git archive main | tar -x -C .ab/A), tree A
# is installed beside this one (/tmp/A): warm alternates A and B (this checkout), and read
# times A's Graph.read on every core first.
# Each step runs under `timeout -k 5`; results in $OUT: warm_ab.txt|json, read_ab.txt|json,
# forms.txt.
set -uo pipefail
T0=$(date +%s)
step() { echo "== $1: $(( $(date +%s) - T0 )) s since the start"; }
step "install"
source "$(dirname "$0")/device_env.sh"   # sets ROOT, OUT, PYTHONPATH=/tmp/site; cd /tmp
set +e
TREES=()
if [ -d "$ROOT/.ab/A" ]; then
  [ -d /tmp/A/gthinker ] || timeout -k 5 150 python3 -m pip install -q --no-build-isolation \
    --no-deps --target /tmp/A "$ROOT/.ab/A"
  python3 -m compileall -q -j 0 /tmp/A > /dev/null
  TREES=(--tree A=/tmp/A --tree B=)  # B: the gthinker installed by device_env.sh
fi
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/warm_ab
mkdir -p "$W"
for what in ${@:-warm read forms}; do
  step "$what"
  case "$what" in
    warm)
      timeout -k 5 120 python3 "$ROOT/benchmarks/process_overhead.py" phases ${TREES[@]+"${TREES[@]}"} \
        --data "$ROOT/.data" --runs "${RUNS:-5}" \
        --cases "${CASES:-count_fb,mce_enron,sm_hprd}" --json "$OUT/warm_ab.json" \
        2>&1 | tee "$OUT/warm_ab.txt"
      ;;
    read)
      g=$W/rmat${SCALE:-22}.txt
      [ -f "$g" ] || timeout -k 5 60 gthinker generate rmat --scale "${SCALE:-22}" \
        --edge-factor 16 --seed 1 -o "$g"
      {
        if [ -d /tmp/A/gthinker ]; then
          echo "A: Graph.read on every core (3 runs, after one that fills the page cache)"
          PYTHONPATH=/tmp/A:/tmp/site timeout -k 5 60 python3 - "$g" <<'PY'
import sys, time
from gthinker import Graph
Graph.read(sys.argv[1])
for _ in range(3):
    t = time.perf_counter(); g = Graph.read(sys.argv[1]); dt = time.perf_counter() - t
    print(f"  {dt:.2f} s, {g.num_edges:,} edges")
PY
        fi
        timeout -k 5 90 python3 "$ROOT/benchmarks/read_speed.py" "$g" \
          --threads "${THREADS:-1,16}" --repeat 2 --json "$OUT/read_ab.json"
      } 2>&1 | tee "$OUT/read_ab.txt"
      ;;
    forms)
      {
        timeout -k 5 30 gthinker generate rmat --scale 20 --edge-factor 16 --seed 1 \
          -o "$W/r20.txt" -q
        timeout -k 5 30 gthinker convert "$W/r20.txt" "$W/r20.csr"
        echo "converted: $(stat -c %s "$W/r20.csr") bytes"
        for run in 1 2 3; do
          got=$(timeout -k 5 60 gthinker count "$W/r20.csr" triangle --mode cpu --json -q | tail -1)
          python3 - "$got" "$run" "$(stat -c %s "$W/r20.csr")" <<'PY'
import json, sys
d = json.loads(sys.argv[1] or "{}")
print(f"run {sys.argv[2]}: count {d.get('count')}, prepare {d.get('prepare_seconds')} s, "
      f"count {d.get('seconds')} s; file {sys.argv[3]} bytes")
PY
        done
        timeout -k 5 30 python3 -c "import sys; from gthinker import Graph
print('kept forms:', ', '.join(sorted(Graph.load(sys.argv[1]).prepared())))" "$W/r20.csr"
      } 2>&1 | tee "$OUT/forms.txt"
      ;;
    *) echo "unknown step: $what (warm, read or forms)"; exit 2 ;;
  esac
done
step "done"
