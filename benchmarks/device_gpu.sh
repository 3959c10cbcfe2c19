#!/usr/bin/env bash
# The GPU numbers of docs/benchmarks.md in one call on the `device` tool's GPU machine
# (Python 3.12, 16 cores, an H100 or H200, no internet). From the repository root:
#
#   1. once, here: download the cp312 wheels the machine lacks (see ../shared/GPU.md):
#        python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#          --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 \
#          --platform manylinux_2_17_x86_64 -d .whl numpy==2.4.6 numba-cuda==0.30.4 \
#          igraph==1.0.0 texttable==1.7.2
#        mkdir -p .data && cp ../shared/data/snap/email-Enron.txt.gz .data/
#   2. device run, carry [".whl", ".data"]:  bash benchmarks/device_gpu.sh [smoke|tests|bench]
#
# smoke: builds, then MCE --mode gpu on small graphs and Enron against the CPU (a minute);
# tests: the GPU tests of tests/ on the real GPU instead of the simulator;
# bench: benchmarks/mce_gpu.py (Enron, R-MAT scale 22, small-buffer run), JSON in $OUT;
# hybrid: benchmarks/hybrid.py (cpu / gpu / hybrid / igraph per graph; env SNAP, RMATS, LIMIT,
#         IGRAPH_LIMIT, SWEEP (graph indices), TRACE=1 (PNGs), REPEAT (median of N), MODES, NOTABLE=1
#         (sweep only), TAG (file name suffix)).
# sm: benchmarks/sm.py (labeled query sets and unlabeled patterns, cpu / gpu (both layouts) /
#     hybrid / igraph VF2; env SMTESTS=1 (first the SM GPU tests on the real GPU), DATASETS,
#     SIZES, QUERIES (glob), MAXQ, NOALT=1, CAP, PEER (vf2|none), PEER_JOBS, PATTERNS, SNAP, RMATS, MODES, TAG).
# warm: the GPU tests that cover the compile cache and mode choice on the real GPU, then
#     benchmarks/warm_start.py (whole-process times, cold and warm, of the GPU and CPU cases);
#     needs .data/ laid out as ../shared/data (snap/, labeled/hprd.graph, labeled/queries/hprd/).
# count: builds G2Miner (benchmarks/peers/g2miner.sh, carry .peers too), runs the counting tests
#     on the real GPU (COUNTTESTS=1), then benchmarks/counting.py: gthinker gpu / hybrid / cpu
#     (16 threads) beside G2Miner on facebook_combined, email-Enron and R-MAT (env RMATS, e.g.
#     "20:16 22:8" = scale:edge factor; PATTERNS, MODES, REPEAT, TAG; ALLSIZES=fb,enron adds
#     every clique size on those graphs, CPU).
# gsword-peer: gSWORD's public code (benchmarks/peers/gsword.sh; built unless $GSWORD_DIR/gsword
#     exists, carry .peers too) beside gthinker: benchmarks/gsword_peer.py (env DATASETS, QUERIES,
#     CONFIGS, SAMPLES, PROCESSES, TAG); GSTESTS=1 first runs the gSWORD GPU tests on the real GPU
#     (GSTESTS_K: their -k); BASE=DIR also runs the driver on the gthinker tree in DIR (a baseline,
#     e.g. a git archive of main; installed apart, under /tmp/base) for BASE_CONFIGS on
#     BASE_DATASETS, before the tree here.
# mce: builds MCE-GPU (benchmarks/peers/mce_gpu.sh, carry .peers too), runs the MCE GPU tests
#     on the real GPU (MCETESTS=1), then benchmarks/mce_peer.py: gthinker gpu / hybrid / cpu
#     (16 threads) / gpu-levels beside MCE-GPU's schemes on email-Enron, facebook_combined and
#     R-MAT (env RMATS, e.g. "20:16 22:8"; MODES (";"-separated), REPEAT, BUDGET (gpu_node_budget),
#     TRACE=1 (trace plot of the last hybrid run), SKIPSNAP=1 (R-MAT only), TAG; MODE_LIMIT=S runs
#     each graph and mode in its own process, stopped after S seconds; mode "mcegpu" runs MCE-GPU's
#     first scheme; RMATS entries may add the skew a: scale:edge-factor:a, b = c = (1 - a) / 2.5).
# gsword: first the gSWORD GPU tests on the real GPU (GSTESTS=1), then benchmarks/gsword.py
#     (env DATASETS, SAMPLES, CONFIGS, ESTIMATORS, MAXQ, TAG).
source "$(dirname "$0")/device_env.sh"
case "${1:-smoke}" in
  smoke)
    python3 - "$ROOT/.data/email-Enron.txt.gz" <<'PY'
import sys, time, networkx as nx, gthinker
from gthinker.apps import mce
print(gthinker.gpu.require_device())
for seed in range(4):
    G = nx.gnp_random_graph(200, 0.1 + 0.1 * seed, seed=seed)
    ref = sum(1 for _ in nx.find_cliques(G))
    t = time.time(); r = mce.run(G, mode="gpu"); dt = time.time() - t
    print("gnp", seed, ref, r.count, ref == r.count, f"{dt:.2f}s")
    assert ref == r.count
g = gthinker.Graph.read(sys.argv[1])
c = mce.run(g, threads=16)
for opts in ({}, {"buffer_bytes": 1 << 20}, {"eta_per_warp": 4}):
    r = mce.run(g, mode="gpu", gpu_engine="levels" if opts else "auto", **opts)
    print("enron", opts, r.count, c.count, r.histogram == c.histogram, f"{r.seconds:.3f}s",
          {k: r.stats["gpu"][k] for k in ("levels", "launches", "to_host", "retries",
                                            "deferred", "max_depth", "peak_vertices")})
PY
    ;;
  warm)
    (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
       tests/test_modes.py tests/test_gpu.py tests/test_sm_gpu.py) 2>&1 | tail -6
    python3 "$ROOT/benchmarks/warm_start.py" --gpu --runs "${RUNS:-3}" --data "$ROOT/.data" \
      --cases "${CASES:-sm_gpu,mce_gpu,gsword_gpu,import,help,sm,gsword}" \
      --results-dir "$OUT" --out "warm_start${TAG:-}" 2>&1 | tail -40
    ;;
  tests)
    (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 500 pytest -q -x -n 0 -p no:cacheprovider tests/test_gpu.py) 2>&1 | tail -15
    ;;
  bench)
    python3 "$ROOT/benchmarks/mce_gpu.py" --data "$ROOT/.data" --rmat "${RMAT:-22:8}" --abc "${ABC:-0.5,0.2,0.2}" --threads 16 \
      --igraph-limit "${IGRAPH_LIMIT:-120}" --small-buffer "${SMALL:-33554432}" --out "$OUT/mce_gpu.json" 2>&1 | tee "$OUT/mce_gpu.log"
    ;;
  hybrid)
    python3 "$ROOT/benchmarks/hybrid.py" --data "$ROOT/.data" --threads 16 \
      --snap "${SNAP:-email-Enron.txt.gz}" --rmat "${RMATS:-22:8:0.5,21:8:0.45,20:16:0.5}" \
      --limit "${LIMIT:-100}" --igraph-limit "${IGRAPH_LIMIT:-20}" ${SWEEP:+--sweep-graph $SWEEP} \
      ${TRACE:+--trace-dir "$OUT/traces"} --repeat "${REPEAT:-1}" --modes "${MODES:-cpu,gpu,hybrid}" ${NOTABLE:+--no-table} \
      --out "$OUT/hybrid${TAG:-}.json" 2>&1 | tee "$OUT/hybrid${TAG:-}.log"
    ;;
  sm)
    if [ -n "${SMTESTS:-}" ]; then
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider tests/test_sm_gpu.py) 2>&1 | tail -5
    fi
    python3 "$ROOT/benchmarks/sm.py" --data "$ROOT/.data" --threads 16 --modes "${MODES:-cpu,gpu,hybrid}" \
      --datasets "${DATASETS-hprd,yeast,human}" --sizes "${SIZES:-16}" --max-queries "${MAXQ:-0}" --queries "${QUERIES:-*.graph}" ${NOALT:+--no-alt} \
      --cap "${CAP:-10}" --peer "${PEER:-vf2}" --peer-jobs "${PEER_JOBS:-8}" \
      --patterns "${PATTERNS-triangle,diamond,4-cycle,5-clique,house}" --snap "${SNAP-email-Enron.txt.gz}" \
      --rmat "${RMATS-}" --out "$OUT/sm${TAG:-}.json" 2>&1 | tee "$OUT/sm${TAG:-}.log"
    ;;
  gsword)
    if [ -n "${GSTESTS:-}" ]; then
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider tests/test_gsword_gpu.py) 2>&1 | tail -8
    fi
    python3 "$ROOT/benchmarks/gsword.py" --data "$ROOT/.data" --threads 16 --datasets "${DATASETS:-hprd,yeast,human}" \
      --samples "${SAMPLES:-1000000}" --configs "${CONFIGS:-cpu,gpu-O0,gpu-O1,gpu-O2,gpu-trawl}" \
      --estimators "${ESTIMATORS:-wj,alley}" --max-queries "${MAXQ:-0}" --results "$ROOT/benchmarks/results" \
      --out "$OUT/gsword${TAG:-}.json" 2>&1 | tee "$OUT/gsword${TAG:-}.log"
    ;;
  gsword-peer)
    [ -x "${GSWORD_DIR:-/tmp/gsword}/gsword" ] \
      || bash "$ROOT/benchmarks/peers/gsword.sh" build > "$OUT/gsword_build${TAG:-}.log" 2>&1 \
      || { tail -30 "$OUT/gsword_build${TAG:-}.log"; exit 1; }
    if [ -n "${GSTESTS:-}" ]; then
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
         tests/test_gsword_gpu.py ${GSTESTS_K:+-k "$GSTESTS_K"}) 2>&1 | tail -8
    fi
    run=(--data "$ROOT/.data" --threads 16 --samples "${SAMPLES:-1000000}"
         --exact "$ROOT/benchmarks/results/gsword_exact.json")
    if [ -n "${BASE:-}" ]; then
      python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/base "$BASE"
      PYTHONPATH=/tmp/base:$PYTHONPATH python3 "$ROOT/benchmarks/gsword_peer.py" "${run[@]}" \
        --methods "" --processes 0 --configs "${BASE_CONFIGS:-gpu:wj,gpu:alley}" \
        --datasets "${BASE_DATASETS:-hprd}" --queries "${QUERIES:-query_dense_16_1,query_dense_16_2,query_dense_16_3,query_dense_16_4,query_dense_16_5}" \
        --out "$OUT/gsword_peer_base${TAG:-}" 2>&1 | tee "$OUT/gsword_peer_base${TAG:-}.log" | tail -12
    fi
    python3 "$ROOT/benchmarks/gsword_peer.py" "${run[@]}" --datasets "${DATASETS:-hprd,yeast,human}" \
      --queries "${QUERIES:-query_dense_16_1,query_dense_16_2,query_dense_16_3,query_dense_16_4,query_dense_16_5}" \
      --configs "${CONFIGS:-gpu:wj,gpu:alley,gpu:wj:notrawl,cpu:wj,cpu:alley}" \
      --processes "${PROCESSES:-1}" --out "$OUT/gsword_peer${TAG:-}" 2>&1 | tee "$OUT/gsword_peer${TAG:-}.log"
    ;;
  mce)
    [ -x "${MCEGPU_DIR:-/tmp/mcegpu}/parallel_mce_on_gpus" ] \
      || bash "$ROOT/benchmarks/peers/mce_gpu.sh" build > "$OUT/mcegpu_build${TAG:-}.log" 2>&1 \
      || { tail -30 "$OUT/mcegpu_build${TAG:-}.log"; exit 1; }
    if [ "${MCETESTS:-0}" = 1 ]; then
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
         tests/test_mce_bitsets_gpu.py tests/test_hybrid.py tests/test_gpu.py \
         -k "(mce or bitsets or mode) and not auto_mode") 2>&1 | tail -6 || true
    fi
    graphs=(--graph "enron=$ROOT/.data/snap/email-Enron.txt.gz"
            --graph "fb=$ROOT/.data/snap/facebook_combined.txt.gz")
    [ "${SKIPSNAP:-0}" = 1 ] && graphs=()
    for spec in ${RMATS-}; do  # scale:edge-factor[:a], b = c = (1 - a) / 2.5
      IFS=: read -r s ef a <<< "$spec"
      skew=(); [ -n "$a" ] && skew=(--a "$a" --b "$(python3 -c "print((1-$a)/2.5)")" --c "$(python3 -c "print((1-$a)/2.5)")")
      gthinker generate rmat --scale "$s" --edge-factor "$ef" "${skew[@]}" --seed 1 -o "/tmp/rmat$s.txt" 2>&1 | tail -1
      graphs+=(--graph "rmat$s=/tmp/rmat$s.txt")
    done
    if [ -z "${MODE_LIMIT:-}" ]; then
      python3 "$ROOT/benchmarks/mce_peer.py" "${graphs[@]}" --modes "${MODES:-gpu;hybrid;cpu;gpu-levels}" \
        --threads 16 --repeat "${REPEAT:-3}" ${BUDGET:+--budget "$BUDGET"} ${TRACE:+--trace} \
        --mcegpu "-p l2 -i px -w wl" --mcegpu "-p l1 -i px -w wl" --out "$OUT/mce_peer${TAG:-}" 2>&1 \
        | grep -v -i "warn" | tail -40
    else  # one process per graph and mode, each stopped after MODE_LIMIT seconds; unbuffered
      for ((i=1; i<${#graphs[@]}; i+=2)); do
        g=${graphs[i]}; name=${g%%=*}; k=0
        IFS=';' read -ra modes <<< "${MODES:-gpu;hybrid;cpu;gpu-levels}"
        for m in "${modes[@]}"; do  # a mode, or "mcegpu" (its first scheme)
          k=$((k+1)); peer=(--modes "$m" --repeat "${REPEAT:-1}")
          [ "$m" = mcegpu ] && peer=(--modes "" --repeat 0 --mcegpu "-p l2 -i px -w wl")
          timeout "$MODE_LIMIT" python3 -u "$ROOT/benchmarks/mce_peer.py" --graph "$g" "${peer[@]}" \
            --threads 16 ${BUDGET:+--budget "$BUDGET"} \
            --out "$OUT/mce_peer${TAG:-}_${name}_$k" 2>&1 | grep -v -i "warn" \
            || echo "$name $m: stopped after $MODE_LIMIT s (or failed)"
        done
      done
    fi
    ;;
  count)
    bash "$ROOT/benchmarks/peers/g2miner.sh" build > "$OUT/g2miner_build${TAG:-}.log" 2>&1 \
      || { tail -30 "$OUT/g2miner_build${TAG:-}.log"; exit 1; }
    if [ "${COUNTTESTS:-0}" = 1 ]; then
      (cd "$ROOT" && GTHINKER_TEST_REAL_GPU=1 timeout 300 pytest -q -x -n 0 -p no:cacheprovider \
         tests/test_count.py) 2>&1 | tail -6
    fi
    graphs=(--graph "fb=$ROOT/.data/snap/facebook_combined.txt.gz"
            --graph "enron=$ROOT/.data/snap/email-Enron.txt.gz")
    for spec in ${RMATS-20:16}; do
      s=${spec%%:*}; ef=${spec##*:}
      gthinker generate rmat --scale "$s" --edge-factor "$ef" --seed 1 -o "/tmp/rmat$s.txt" 2>&1 | tail -1
      graphs+=(--graph "rmat$s=/tmp/rmat$s.txt")
    done
    python3 "$ROOT/benchmarks/counting.py" "${graphs[@]}" --patterns "${PATTERNS:-triangle,4-clique,5-clique}" \
      --modes "${MODES:-gpu,hybrid,cpu}" --threads 16 --repeat "${REPEAT:-3}" --g2miner /tmp/g2miner \
      --out "$OUT/counting${TAG:-}" 2>&1 | grep --line-buffered -v -i "warn"
    if [ -n "${ALLSIZES:-}" ]; then  # every clique size (Pivoter, CPU), e.g. ALLSIZES=fb,enron
      sel=(); for g in ${ALLSIZES//,/ }; do for ((i=0; i<${#graphs[@]}; i++)); do
        [[ ${graphs[i]} == "$g="* ]] && sel+=(--graph "${graphs[i]}"); done; done
      python3 "$ROOT/benchmarks/counting.py" "${sel[@]}" --patterns cliques --modes cpu --threads 16 \
        --repeat 1 --out "$OUT/counting_cliques${TAG:-}" 2>&1 | grep --line-buffered -v -i "warn"
    fi
    ;;
esac
