#!/usr/bin/env bash
# G2Miner (github.com/chenxuhao/GraphMiner, the GPU miner of "Efficient and Scalable Graph
# Pattern Mining on GPUs", OSDI'22) as a benchmark peer: triangle counting and k-clique
# counting on one GPU. Run from the repository root on the GPU machine (no internet needed):
#
#   bash benchmarks/peers/g2miner.sh build                     # -> /tmp/g2miner/bin/{tc,clique}_gpu_base
#   bash benchmarks/peers/g2miner.sh convert EDGELIST PREFIX   # SNAP .txt/.txt.gz -> PREFIX.{meta.txt,vertex.bin,edge.bin}
#   bash benchmarks/peers/g2miner.sh tc PREFIX                 # triangles
#   bash benchmarks/peers/g2miner.sh clique PREFIX K           # K-cliques, 4 <= K <= 8
#   bash benchmarks/peers/g2miner.sh selftest                  # convert + run a tiny graph with known counts
#
# Source: .peers/GraphMiner (git-ignored; a `git archive` of GraphMiner 2a76e3f with only
# LICENSE, Makefile, README.md, include/, src/common.mk, src/common/, src/triangle/,
# src/clique/; PEER_COMMIT names the commit). The `cub` submodule is not there: the CUB
# that ships with the CUDA toolkit (CCCL) is used, found by nvcc on its own.
#
# build: copies .peers/GraphMiner to $G2M_DIR/src (default /tmp/g2miner; .peers is never
#   modified) and patches the copy:
#     - sed deletes the two lines of include/cutil_subset.h that read
#       cudaDeviceProp::memoryClockRate (removed in CUDA 13; they only printf the memory
#       clock / peak bandwidth in print_device_info);
#     - links libcudart_static (not -lcuda -lcudart: no driver stub or libcudart.so path needed
#       at run time); no source change for that, only make variables.
#   Then runs GraphMiner's own Makefiles (src/triangle, src/clique, including src/common.mk)
#   for the targets tc_gpu_base and clique_gpu_base with CUDA_ARCH = sm_$G2M_ARCH
#   (default 90, H100) and its default flags: -O3, edge-parallel warp-centric kernels
#   (-DEDGE_PAR), USE_DAG=1. Binaries: $G2M_DIR/bin/tc_gpu_base, $G2M_DIR/bin/clique_gpu_base.
#   Checked: builds with nvcc 13.0 + g++ 12.2 (no GPU) and with nvcc 13.0 + g++ 13.3 on the
#   H100 (driver 580), where `selftest` passes and facebook_combined gives 1612010 triangles
#   (kernel 6.8e-05 s), 30004668 4-cliques (0.000638 s), 517965151 5-cliques (0.01348 s);
#   email-Enron 727044 / 2341639 / 5809356 (8.3e-05 / 0.00026 / 0.000951 s), all equal to a
#   Python reference count. Cosmetic: its device report prints "Unknown device type" and
#   "Total # CUDA cores: 0" (no Hopper entry in getSPcores).
#
# Input format (what src/common/graph.cc Graph::Graph(prefix) reads; written by
#   benchmarks/peers/g2miner_convert.py, numpy only):
#     PREFIX.meta.txt   text: n \n m \n 4 8 1 2 \n max_degree \n 0 \n 0 \n 0   where m counts
#                       directed entries (2 x undirected edges) and 4 8 1 2 are the byte sizes
#                       of vidType (int32), eidType (int64), vlabel_t, elabel_t (asserted)
#     PREFIX.vertex.bin int64 row pointers, n+1 of them
#     PREFIX.edge.bin   int32 column indices, m of them
#   an undirected, symmetric CSR without self-loops or duplicates, each neighbour list sorted
#   (the loader asserts 0 < max_degree < n). Ids are relabelled to 0..n-1. The graph name it
#   prints is the parent folder's name, so use PREFIX = DIR/NAME/graph.
#   Orientation: both binaries are built with USE_DAG=1 (include/defines.h default), so the
#   loader itself turns the undirected graph into a DAG (edge u->v if deg u < deg v, ties by
#   id; "Time on generating the DAG" is printed) before counting. No flag or oriented input
#   is needed or wanted: give it the full symmetric graph.
#
# Output (stdout of the binary, then one line of this script; in this order):
#   tc:      runtime [gpu_base] = <seconds> sec
#            throughput = ...
#            total_num_triangles = <count>
#   clique:  runtime [gpu] = <seconds> sec
#            num_<K>-cliques = <count>
#   both:    g2miner_wall_seconds = <seconds>     (whole process: load, DAG, copies, kernel)
#   Regexes: count  ^total_num_triangles = (\d+)$   or   ^num_(\d+)-cliques = (\d+)$
#            kernel ^runtime \[[^\]]*\] = ([0-9.eE+-]+) sec$   (std::cout default format, so
#                   small times print as e.g. 7e-05)
#            wall   ^g2miner_wall_seconds = ([0-9.]+)$
#   The "runtime" time is gettimeofday around the one kernel launch plus cudaDeviceSynchronize
#   (microsecond resolution): graph loading, orientation, host edge-list build and the
#   host->device copies are outside it. TC's kernel: one warp per DAG edge, binary-search
#   intersection; clique's: one warp per DAG edge, k-2 levels of set intersection in a
#   per-warp frontier buffer (clique4..8_warp_edge; K=3 is not supported by it: use tc).
#
# Env: G2M_DIR (build dir, default /tmp/g2miner), G2M_ARCH (default 90), G2M_SRC (default
#   .peers/GraphMiner), PYTHON (default python3).
set -euo pipefail
source "$(dirname "$0")/build_info.sh"
source "$(dirname "$0")/g2miner_common.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${G2M_SRC:-$ROOT/.peers/GraphMiner}
DIR=${G2M_DIR:-/tmp/g2miner}
ARCH=${G2M_ARCH:-90}
PY=${PYTHON:-python3}

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

build() {
  [ -d "$SRC/src/triangle" ] || { echo "g2miner: no source at $SRC (see the header)" >&2; exit 1; }
  g2miner_setup g2miner
  make -C "$DIR/src/src/triangle" -j"$G2M_JOBS" "${G2M_VARS[@]}" tc_gpu_base
  make -C "$DIR/src/src/clique" -j"$G2M_JOBS" "${G2M_VARS[@]}" clique_gpu_base
  build_info "sm_$ARCH; patch: sed '/memoryClockRate/d' include/cutil_subset.h; static cudart"
}

need_bin() {
  [ -x "$DIR/bin/$1" ] || { echo "g2miner: $DIR/bin/$1 missing: run '$0 build' first" >&2; exit 1; }
}

need_graph() {
  [ -f "$1.meta.txt" ] && [ -f "$1.vertex.bin" ] && [ -f "$1.edge.bin" ] ||
    { echo "g2miner: $1.{meta.txt,vertex.bin,edge.bin} missing: run '$0 convert EDGELIST $1'" >&2; exit 1; }
}

tc() {
  need_bin tc_gpu_base; need_graph "$1"
  # args: <graph> [num_gpu(1)] [chunk_size(1024)] [adj_sorted(1)]
  timed g2miner "$DIR/bin/tc_gpu_base" "$1" 1 1024 1
}

clique() {
  local k=$2
  if ! [[ $k =~ ^[0-9]+$ ]] || [ "$k" -lt 4 ] || [ "$k" -gt 8 ]; then
    echo "g2miner: clique_gpu_base supports K = 4..8 (K=3: use 'tc')" >&2; exit 2
  fi
  need_bin clique_gpu_base; need_graph "$1"
  # args: <graph> <k> [ngpu] [chunk_size]
  timed g2miner "$DIR/bin/clique_gpu_base" "$1" "$k" 1 1024
}

selftest() {
  # K7 + K5 (disjoint) + a path hanging off the K5, written as a messy SNAP file:
  # triangles 35+10 = 45, 4-cliques 35+5 = 40, 5-cliques 21+1 = 22, 6-cliques 7, 7-cliques 1
  local t
  t=$(mktemp -d)
  "$PY" - "$t/mix.txt" <<'PY'
import itertools, sys
with open(sys.argv[1], "w") as f:
    f.write("# selftest\n# FromNodeId\tToNodeId\n")
    for a, b in itertools.combinations([100, 7, 55, 3, 999, 12, 40], 2):
        f.write(f"{a}\t{b}\n{b} {a}\n")                      # both directions
    for a, b in itertools.combinations([5, 6, 8, 9, 10], 2):
        f.write(f"{a} {b}\n{a} {b}\n")                       # duplicates
    f.write("10 11\n11 13\n13 2000000\n13 13\n")             # path + self-loop
PY
  "$PY" "$HERE/g2miner_convert.py" "$t/mix.txt" "$t/mix/graph" --check
  local out fail=0
  out=$(tc "$t/mix/graph") || true; echo "$out" | grep -E '^(total_num|runtime|g2miner_wall)'
  echo "$out" | grep -qx 'total_num_triangles = 45' || { echo "SELFTEST FAIL: triangles != 45"; fail=1; }
  for kc in 4:40 5:22 6:7 7:1 8:0; do
    out=$(clique "$t/mix/graph" "${kc%:*}") || true; echo "$out" | grep -E '^(num_|runtime)'
    echo "$out" | grep -qx "num_${kc%:*}-cliques = ${kc#*:}" || { echo "SELFTEST FAIL: ${kc%:*}-cliques != ${kc#*:}"; fail=1; }
  done
  rm -rf "$t"
  [ $fail = 0 ] && echo "g2miner selftest: ok"
  return $fail
}

case "${1:-}" in
  build) build ;;
  convert) [ $# -eq 3 ] || usage; "$PY" "$HERE/g2miner_convert.py" "$2" "$3" ;;
  tc) [ $# -eq 2 ] || usage; tc "$2" ;;
  clique) [ $# -eq 3 ] || usage; clique "$2" "$3" ;;
  selftest) selftest ;;
  *) usage ;;
esac
