#!/usr/bin/env bash
# What today's engines do on graphs with hub vertices (issue 39's first look), on the GPU
# machine. From the repository root, carrying .whl:
#
#   bash benchmarks/device_explore_hubs.sh
#
# Graphs (made there): R-MAT 22 with the generator's default skew (a = 0.57: hubs of tens of
# thousands), and "bip": a bipartite graph of 2M pages and 200K users in which one user
# touches 1.5M pages (the shape of KONECT's edit-* graphs). Each job runs in its own process
# under a time limit (LIMIT, default 60 s); every line of $OUT/explore.jsonl is one job's
# --json output, or {"cmd", "rc", "seconds"} when it failed or ran out of time.
set -uo pipefail
source benchmarks/device_env.sh
set +e
LIMIT=${LIMIT:-30}
W=/tmp/explore
mkdir -p "$W"
log="$OUT/explore.jsonl"
: > "$log"

job() {  # job CMD...: run one gthinker command with --json under the limit
  local t0 t1 rc out
  t0=$(date +%s.%N)
  out=$(timeout -k 5 "$LIMIT" "$@" --json -q 2> "$W/err")  # -k: a GPU kernel ignores SIGTERM
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(python3 -c "print(round($t1 - $t0, 3))")
  if [ $rc -eq 0 ] && [ -n "$out" ]; then
    python3 -c "import json,sys; d=json.loads(sys.argv[1]); d['cmd']=sys.argv[2]; d['process_seconds']=float(sys.argv[3]); print(json.dumps(d))" \
      "$(echo "$out" | tail -1)" "$*" "$secs" >> "$log"
  else
    python3 -c "import json,sys; print(json.dumps({'cmd': sys.argv[1], 'rc': int(sys.argv[2]), 'process_seconds': float(sys.argv[3]), 'stderr': open(sys.argv[4]).read()[-2000:]}))" \
      "$*" "$rc" "$secs" "$W/err" >> "$log"
  fi
  echo "[$(date +%T)] rc=$rc ${secs}s $*"
}

t0=$(date +%s)
gthinker generate rmat --scale 22 --edge-factor 16 --seed 1 -o "$W/r22.csr"
python3 - "$W/bip.csr" <<'EOF'
import sys, numpy as np, gthinker
rng = np.random.default_rng(1)
pages, users = 2_000_000, 200_000
# user degrees: one hub of 1.5M pages, the rest heavy-tailed (Pareto), ~8M edges in all
deg = np.minimum((rng.pareto(1.2, users - 1) + 1) * 12, 200_000).astype(np.int64)
u = np.concatenate([np.zeros(1_500_000, np.int64), np.repeat(np.arange(1, users), deg)])
p = np.concatenate([rng.choice(pages, 1_500_000, replace=False),
                    rng.integers(0, pages, deg.sum())])
g = gthinker.Graph.from_edges(np.stack([u, users + p], 1), num_vertices=users + pages)
g.save(sys.argv[1])
print(g)
EOF
echo "graphs made in $(( $(date +%s) - t0 )) s"

for g in bip r22; do
  G="$W/$g.csr"
  job gthinker mce "$G" --mode gpu --gpu-engine bitsets
  job gthinker mce "$G" --mode gpu --gpu-engine levels
  if [ "$g" = bip ]; then
    job gthinker mce "$G" --mode hybrid --gpu-engine bitsets
    job gthinker mce "$G" --mode cpu
  fi
  job gthinker count "$G" triangle --mode gpu
  job gthinker count "$G" 4-clique --mode gpu
  job gthinker sm "$G" 4-cycle --mode gpu
  [ "$g" = bip ] && job gthinker sm "$G" diamond --mode gpu
done
nvidia-smi --query-gpu=name,memory.total --format=csv >> "$OUT/explore.txt" 2>&1
echo "done in $(( $(date +%s) - t0 )) s"
