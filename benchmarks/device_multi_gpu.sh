#!/usr/bin/env bash
# Issue 41 in one call, on a `device` machine with several GPUs (kind nvidia-h100-x4 or
# nvidia-h200-x4; on -x2 the 4-GPU runs are skipped), in this order, each step within what is
# left of BUDGET seconds (default 510: the call's 9 minutes less the install):
#
#   1. benchmarks/multi_gpu.py at --gpus 1,2,4,default: facebook_combined MCE (gpu and hybrid),
#      facebook MCE in gpu mode with node budgets 4096 and 1024 (the default is 16384: whether a
#      GPU's smaller share wants shorter launch tails), the R-MAT 22 (edge factor 16) 5-clique
#      count (gpu), subgraph matching of the T-DFS
#      patterns on facebook (gpu) and gSWORD's sampling of hprd's query_dense_16_1 (gpu, Alley,
#      10^9 samples: samples/s), counts compared; a table of job time, whole time, busy time
#      per GPU, speed-up and samples/s (the default rows: how many GPUs the default took, and
#      whether it is within 10% of one GPU), then each GPU's profile of each job's last run
#      (wall, busy, launch, sync, copy, host and thread CPU seconds, records given and taken);
#   2. MCE-GPU (benchmarks/peers/mce_gpu.sh, its best scheme "-p l2 -i px -w wl") on facebook
#      with -d 0, -d 0,1 and -d 0,1,2,3, twice each ("count time" and its wall time);
#   3. what a user sees: gthinker mce (gpu, hybrid), count, sm and gsword on facebook / hprd
#      with the default --gpus, each command's exit status, Numba warnings in its stderr and
#      the GPUs it took;
#   4. tests/test_multi_gpu.py on the real GPUs MGRUNS times in a row (default 10; no run
#      starts with less than 45 s left; -X faulthandler: a crash at exit prints every thread's stack),
#      each run's exit status and the Numba warnings in its
#      output and stderr counted ("NumbaPerformanceWarning", "NumbaWarning", "Grid size").
#
# From the repository root:
#   1. once, here: the cp312 wheels of ../shared/GPU.md in .whl/, the peers' bundle
#      (bash benchmarks/peers/bundle.sh build) in .peers/, and
#        mkdir -p .data/snap .data/labeled && cp ../shared/data/snap/facebook_combined.txt.gz .data/snap/
#        cp ../shared/data/labeled/hprd.graph ../shared/data/labeled/queries/hprd/query_dense_16_1.graph .data/labeled/
#      (a .data/labeled/queries/hprd/ of the queries serves as well)
#   2. device run, kind nvidia-h100-x4, carry [".whl", ".data", ".peers/seed-peers-sm90.tar.xz"]:
#        bash benchmarks/device_multi_gpu.sh
#
# env: BUDGET (seconds, default 510), BUDGETS (MCE node budgets, default 4096,1024; "" none), REPEAT (rounds, default 2), GPUS (default 1,2,4,default),
# MODES (MCE; default gpu,hybrid), RMAT (scale:edge-factor, default 22:16), PATTERN (default
# 5-clique), SM (patterns on facebook: gthinker's names of T-DFS's 1, 2, 5, 6, 7; T-DFS's .g files
# work too), GSWORD (DATA,QUERY; "" skips it), GSWORD_SAMPLES (default 10^9), BENCH=0 (skips 1),
# MCEGPU=0 (skips 2), USERS=0 (skips 3), MGRUNS (runs of 4; 0 skips it), TAG (file name suffix). Logs in $OUT:
# multi_gpu${TAG}.json|log, mcegpu${TAG}.log, user_stderr${TAG}.log, mgtests${TAG}.log (each
# run's summary) and mgtests_output${TAG}.log (each run's last lines).
source "$(dirname "$0")/device_env.sh"
set +e +o pipefail
START=$(date +%s)
BUDGET=${BUDGET:-510}
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
# min(CAP, left), at least 1 (timeout 0 would be no limit at all)
cap() { local l; l=$(left); [ "$l" -lt 1 ] && l=1; [ "$1" -lt "$l" ] && echo "$1" || echo "$l"; }
nvidia-smi -L || true
WARNED="Numba[A-Za-z]*Warning\|Grid size [0-9]* will likely"  # a Numba warning's line
QUERY=$ROOT/.data/labeled/query_dense_16_1.graph  # or where .data keeps hprd's queries
[ -f "$QUERY" ] || QUERY=$ROOT/.data/labeled/queries/hprd/query_dense_16_1.graph

if [ "${BENCH:-1}" = 1 ]; then
  spec=${RMAT:-22:16}; s=${spec%%:*}; ef=${spec##*:}
  timeout 60 gthinker generate rmat --scale "$s" --edge-factor "$ef" --seed 1 -o "/tmp/rmat$s.txt" 2>&1 | tail -1
  timeout -k 5 "$(cap 330)" python3 -X faulthandler "$ROOT/benchmarks/multi_gpu.py" \
    --facebook "$ROOT/.data/snap/facebook_combined.txt.gz" \
    --rmat "/tmp/rmat$s.txt" --pattern "${PATTERN:-5-clique}" --modes "${MODES:-gpu,hybrid}" \
    --mce-budgets "${BUDGETS-4096,1024}" \
    --sm-patterns "${SM:-diamond,4-clique,4-wheel,5-clique-minus-edge,5-clique}" \
    --gsword "${GSWORD-$ROOT/.data/labeled/hprd.graph,$QUERY}" \
    --gsword-samples "${GSWORD_SAMPLES:-1000000000}" \
    --gpus "${GPUS:-1,2,4,default}" --repeat "${REPEAT:-2}" --out "$OUT/multi_gpu${TAG:-}.json" \
    > "$OUT/multi_gpu${TAG:-}.log" 2>&1
  echo "multi_gpu.py exit status $? ($(( $(date +%s) - START )) s in)"
  grep -v "^{" "$OUT/multi_gpu${TAG:-}.log" | grep "^|\|speed-up\|skipped\|Error\|error" | head -80
fi

if [ "${MCEGPU:-1}" = 1 ] && [ "$(left)" -gt 60 ]; then
  export MCEGPU_DIR=/tmp/peers/mcegpu
  [ -x "$MCEGPU_DIR/parallel_mce_on_gpus" ] \
    || timeout 60 bash "$ROOT/benchmarks/peers/bundle.sh" unpack /tmp/peers > /dev/null 2>&1
  for d in 0 0,1 0,1,2,3; do
    for r in 1 2; do
      echo "== MCE-GPU facebook -d $d (run $r)"
      timeout "$(cap 40)" bash "$ROOT/benchmarks/peers/mce_gpu.sh" run \
        "$ROOT/.data/snap/facebook_combined.txt.gz" -p l2 -i px -w wl -d "$d" 2>&1 \
        | grep -i "count time\|maximal cliques\|wall_seconds\|error"
    done
  done 2>&1 | tee "$OUT/mcegpu${TAG:-}.log"
fi

# What a user sees: the commands' stderr on all GPUs (the default --gpus), Numba warnings counted.
if [ "${USERS:-1}" = 1 ] && [ "$(left)" -gt 90 ]; then
  fb=$ROOT/.data/snap/facebook_combined.txt.gz
  for cmd in "mce $fb --mode gpu" "mce $fb --mode hybrid" "count $fb 4-clique --mode gpu" \
             "sm $fb diamond --mode gpu" \
             "gsword $ROOT/.data/labeled/hprd.graph $QUERY --mode gpu --samples 100000000"; do
    [ "$(left)" -lt 15 ] && break
    timeout "$(cap 40)" gthinker $cmd --json > /tmp/user.out 2> /tmp/user.err
    echo "gthinker ${cmd%% *} ...: exit status $?, Numba warning lines $(grep -c "$WARNED" /tmp/user.err), GPUs used $(python3 -c "import json,sys; print(len(json.load(open('/tmp/user.out')).get('stats', {}).get('gpus', [])))" 2>/dev/null), stderr: $(head -c 300 /tmp/user.err | tr '\n' ' ')"
  done 2>&1 | tee "$OUT/user_stderr${TAG:-}.log"
fi

runs=${MGRUNS:-10}
for i in $(seq 1 "$runs"); do
  [ "$(left)" -lt 45 ] && { echo "tests: run $i not started, $(left) s left"; break; }
  o=/tmp/mgtest.out; e=/tmp/mgtest.err
  (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 PYTHONFAULTHANDLER=1 timeout -k 5 "$(cap 180)" pytest -q -x -n 0 \
     -p no:cacheprovider tests/test_multi_gpu.py > "$o" 2> "$e")
  rc=$?
  warned=$(cat "$o" "$e" | grep -c "$WARNED")
  echo "test run $i: exit status $rc, Numba warning lines $warned, stderr bytes $(wc -c < "$e"), $(tail -1 "$o")"
  { echo "== run $i (exit status $rc)"; tail -5 "$o"; tail -20 "$e"; } >> "$OUT/mgtests_output${TAG:-}.log"
done 2>&1 | tee "$OUT/mgtests${TAG:-}.log"
echo "done in $(( $(date +%s) - START )) s"
