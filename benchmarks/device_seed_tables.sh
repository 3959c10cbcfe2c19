#!/usr/bin/env bash
# The seed paper's Tables I (MCE) and II (subgraph matching) for gthinker and its peers, in one
# call on the `device` tool's GPU machine (an H100 or H200, 16 cores, no internet). From the
# repository root, with two things carried:
#   .whl/                             the cp312 numpy and numba-cuda wheels (../shared/GPU.md);
#   .peers/seed-peers-sm90.tar.xz     the peers, built here: bash benchmarks/peers/bundle.sh build
#
#   bash benchmarks/device_seed_tables.sh TABLE [ARGS...]
#
# TABLE: mce, sm or both; ARGS go to benchmarks/seed_tables.py (e.g. --presets soc-pokec
# --scale 0.05, or --presets '' --graph r20=rmat --scale 20 --edge-factor 16 --a 0.5).
# Steps, each timed: install the wheels and gthinker (benchmarks/device_env.sh), unpack the
# peers into /tmp/peers, SELFTEST=1 only: G-ThinkerCG's selftest on the GPU (its three modes on
# a small graph against networkx's counts, ~1 min), then benchmarks/seed_tables.py --table TABLE
# --peers /tmp/peers --work /tmp/seed_tables --out $OUT, with --budget the seconds left of
# LIMIT (default 570: the device's 600-second command limit less a margin) after the set-up, less
# 45 s for the last run's overrun and the writing. A second call on the same warm machine finds
# the graphs and conversions in /tmp/seed_tables and the compile cache warm.
# Results in $OUT: seed_tables$TAG.{md,json,jsonl,log}.
set -euo pipefail
T0=$(date +%s)
TABLE=${1:?usage: bash benchmarks/device_seed_tables.sh mce|sm|both [seed_tables.py args]}
shift
case "$TABLE" in mce|sm|both) ;; *) echo "device_seed_tables: TABLE is mce, sm or both, got $TABLE" >&2; exit 2 ;; esac
step() { echo "== $1: $(( $(date +%s) - T0 )) s since the start"; }
step "install"
source "$(dirname "$0")/device_env.sh"   # sets ROOT, OUT; cd /tmp
step "unpack the peers"
bash "$ROOT/benchmarks/peers/bundle.sh" unpack /tmp/peers
for p in mcegpu tdfs gthinkercg g2miner; do echo "$p: $(head -1 /tmp/peers/$p/BUILD_INFO)"; done
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader || true
if [ "${SELFTEST:-0}" = 1 ]; then
  step "G-ThinkerCG selftest"
  GCG_DIR=/tmp/peers/gthinkercg timeout 120 bash "$ROOT/benchmarks/peers/gthinkercg.sh" selftest || true
fi
LIMIT=${LIMIT:-570}
BUDGET=$(( LIMIT - ($(date +%s) - T0) - 45 ))
[ "$BUDGET" -gt 60 ] || { echo "device_seed_tables: only $BUDGET s left for the tables" >&2; exit 1; }
step "seed tables ($TABLE, budget $BUDGET s)"
rc=0
timeout -s INT $(( BUDGET + 35 )) python3 "$ROOT/benchmarks/seed_tables.py" --table "$TABLE" \
  --peers /tmp/peers --work /tmp/seed_tables --out "$OUT" --tag "${TAG:-_$TABLE}" \
  --budget "$BUDGET" "$@" || rc=$?
step "done (rc $rc)"
cat "$OUT/seed_tables${TAG:-_$TABLE}.md" 2>/dev/null | head -120 || true
df -h /tmp | tail -1
exit $rc
