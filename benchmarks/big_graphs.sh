#!/usr/bin/env bash
# Big graphs end to end (issue 33), in one call on the 16-core GPU machine:
#   R-MAT $SCALE (default 24, edge factor 16) generated to a text file, converted to a
#   binary graph, then `count triangle`, `count 4-clique` and `mce` on the GPU from the
#   binary file, each a whole process under /usr/bin/time -v (wall time, peak host
#   memory); then R-MAT $BIG_SCALE (default 26) generated straight to a binary file and
#   its triangles counted on one GPU.
#
#   usage: benchmarks/big_graphs.sh RESULTS_DIR
#   env:   SCALE=24 BIG_SCALE=26 (0: skip) EDGE_FACTOR=16 WORK=/tmp/gt-big
#          MCE_TIMEOUT=150 (seconds) BASELINE=0 (1: also count triangles from the text file)
#          MODE=gpu (cpu on a machine without one) PYTHON=python3
#
# Writes RESULTS_DIR/big_graphs.jsonl: one JSON object per step ({"step", "command",
# "exit", "wall_s", "peak_rss_mib", "result": the command's --json output}) and the
# commands' stderr as RESULTS_DIR/<step>.err. Locally, at a small scale:
#   SCALE=18 BIG_SCALE=0 MODE=cpu benchmarks/big_graphs.sh /tmp/big
# gthinker must be installed (pip install .), or GT_COMMAND say how to run it, e.g.
#   GT_COMMAND="python3 -m gthinker.cli.main" with PYTHONPATH set to a checkout built in place.
set -uo pipefail
out=$(mkdir -p "${1:?usage: big_graphs.sh RESULTS_DIR}" && cd "$1" && pwd)
SCALE=${SCALE:-24}
BIG_SCALE=${BIG_SCALE:-26}
EDGE_FACTOR=${EDGE_FACTOR:-16}
WORK=${WORK:-/tmp/gt-big}
MCE_TIMEOUT=${MCE_TIMEOUT:-150}
BASELINE=${BASELINE:-0}
MODE=${MODE:-gpu}
PY=${PYTHON:-python3}
mkdir -p "$out" "$WORK"
log="$out/big_graphs.jsonl"
# the installed command (or the module), run outside the checkout so that the installed
# package is imported, not the source folder
if [ -n "${GT_COMMAND:-}" ]; then read -r -a GT <<< "$GT_COMMAND"
elif command -v gthinker > /dev/null; then GT=(gthinker)
else GT=("$PY" -m gthinker.cli.main); fi
cd "$WORK"

# step NAME COMMAND...: runs it under /usr/bin/time -v, appends a JSON line
step() {
  local name=$1; shift
  local t0=$SECONDS
  /usr/bin/time -v -o "$WORK/$name.time" "$@" > "$WORK/$name.out" 2> "$out/$name.err"
  local rc=$?
  "$PY" - "$name" "$rc" "$WORK/$name.time" "$WORK/$name.out" "$*" >> "$log" <<'PYEOF'
import json, re, sys
name, rc, timef, outf, cmd = sys.argv[1:]
t = open(timef).read()
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t)
secs = None
if wall:
    parts = [float(x) for x in wall.group(1).split(":")]
    secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)
result = None
for line in open(outf).read().splitlines():
    try:
        result = json.loads(line)
    except ValueError:
        pass
print(json.dumps({"step": name, "command": cmd, "exit": int(rc), "wall_s": secs,
                  "peak_rss_mib": round(int(rss.group(1)) / 1024, 1) if rss else None,
                  "result": result}))
PYEOF
  echo "[$((SECONDS - t0))s] $name exit $rc" >&2
}

echo "{\"step\": \"machine\", \"cores\": $(nproc), \"scale\": $SCALE, \"big_scale\": $BIG_SCALE, \"mode\": \"$MODE\", \"git\": \"$(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null)\"}" >> "$log"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >> "$out/gpu.txt" 2>/dev/null

# compile every kernel the steps use, on a small graph (the targets are for warm processes)
"${GT[@]}" generate rmat --scale 12 --edge-factor 16 -o "$WORK/small.txt" 2>/dev/null
for p in triangle 4-clique; do "${GT[@]}" count "$WORK/small.txt" $p --mode "$MODE" -q > /dev/null; done
"${GT[@]}" mce "$WORK/small.txt" --mode "$MODE" -q > /dev/null

g="$WORK/rmat$SCALE"
step generate "${GT[@]}" generate rmat --scale "$SCALE" --edge-factor "$EDGE_FACTOR" -o "$g.txt"
sync
step convert "${GT[@]}" convert "$g.txt" "$g.csr"
step convert_verify "${GT[@]}" convert "$g.csr" --verify
step count_triangle "${GT[@]}" count "$g.csr" triangle --mode "$MODE" --json -q
step count_4clique "${GT[@]}" count "$g.csr" 4-clique --mode "$MODE" --json -q
step mce timeout -s INT "$MCE_TIMEOUT" "${GT[@]}" mce "$g.csr" --mode "$MODE" --json -q
if [ "$BASELINE" = 1 ]; then
  step count_triangle_text "${GT[@]}" count "$g.txt" triangle --mode "$MODE" --json -q
fi
rm -f "$g.txt"

if [ "$BIG_SCALE" != 0 ]; then
  b="$WORK/rmat$BIG_SCALE"
  step big_generate "${GT[@]}" generate rmat --scale "$BIG_SCALE" --edge-factor "$EDGE_FACTOR" -o "$b.csr"
  step big_count_triangle "${GT[@]}" count "$b.csr" triangle --mode "$MODE" --json -q
  rm -f "$b.csr"
fi
cat "$log"
