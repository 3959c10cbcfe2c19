#!/usr/bin/env bash
# Start-up and reading on the device tool's GPU machine, tree A (main, say) against tree B
# (this checkout), in one call. From the repository root:
#
#   1. here, once: the wheels (.whl, see benchmarks/device_gpu.sh), the data (.data laid out
#      as ../shared/data: snap/facebook_combined.txt.gz, snap/email-Enron.txt.gz,
#      labeled/hprd.graph, labeled/queries/hprd/), and tree A:
#        mkdir -p .ab/A && git archive main | tar -x -C .ab/A
#   2. device run, carry [".whl", ".data", ".ab"]:  bash benchmarks/device_warm_ab.sh [warm] [read]
#
# warm: benchmarks/process_overhead.py phases: warm whole processes of `count facebook
#       triangle`, `mce email-Enron` and `sm hprd query_dense_16_1` (auto mode), A and B in
#       turn, each split into phases (env RUNS, default 5; CASES);
# read: R-MAT 24 text (4.0 GB; env SCALE) generated once, then Graph.read timed on every core
#       for A, and benchmarks/read_speed.py (phases apart, on 1..16 cores; env THREADS) for B.
# Both by default. The trees are installed under /tmp/A and /tmp/B (kept on a machine still
# warm from a call before; FRESH=1 installs them again). Results in $OUT: warm_ab.txt|json,
# read_ab.txt|json.
set -euo pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/results/device}
mkdir -p "$OUT"
[ -d /tmp/site/numba_cuda ] || python3 -m pip install -q --no-index --no-deps --no-compile \
  --upgrade --target /tmp/site .whl/*.whl
for tree in A B; do
  [ -d "/tmp/$tree/gthinker" ] && [ -z "${FRESH:-}" ] && continue
  rm -rf "/tmp/$tree"
  src=$([ "$tree" = A ] && echo "$ROOT/.ab/A" || echo "$ROOT")
  python3 -m pip install -q --no-build-isolation --no-deps --target "/tmp/$tree" "$src"
  python3 -m compileall -q -j 0 "/tmp/$tree" > /dev/null || true
done
python3 -m compileall -q -j 0 /tmp/site > /dev/null || true
cd /tmp
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader || true
for what in ${@:-warm read}; do
  case "$what" in
    warm)
      python3 "$ROOT/benchmarks/process_overhead.py" phases --tree A=/tmp/A --tree B=/tmp/B \
        --site /tmp/site --data "$ROOT/.data" --runs "${RUNS:-5}" \
        --cases "${CASES:-count_fb,mce_enron,sm_hprd}" --json "$OUT/warm_ab.json" \
        | tee "$OUT/warm_ab.txt"
      ;;
    read)
      g=/tmp/rmat${SCALE:-24}.txt
      [ -f "$g" ] || PYTHONPATH=/tmp/B:/tmp/site python3 -m gthinker generate rmat \
        --scale "${SCALE:-24}" --edge-factor 16 -o "$g"
      {
        echo "A: Graph.read on every core (3 runs, after one that fills the page cache)"
        PYTHONPATH=/tmp/A:/tmp/site python3 - "$g" <<'PY'
import sys, time
from gthinker import Graph
Graph.read(sys.argv[1])
for _ in range(3):
    t = time.perf_counter(); g = Graph.read(sys.argv[1]); dt = time.perf_counter() - t
    print(f"  {dt:.2f} s, {g.num_edges:,} edges")
PY
        echo "B: benchmarks/read_speed.py"
        PYTHONPATH=/tmp/B:/tmp/site python3 "$ROOT/benchmarks/read_speed.py" "$g" \
          --threads "${THREADS:-1,2,4,8,16}" --repeat 2 --json "$OUT/read_ab.json"
      } 2>&1 | tee "$OUT/read_ab.txt"
      ;;
    *) echo "unknown: $what (warm or read)"; exit 2 ;;
  esac
done
