#!/usr/bin/env bash
# G2Miner's frequent subgraph mining (github.com/chenxuhao/GraphMiner, src/fsm: its OpenMP
# binary fsm_omp_base and its GPU binary fsm_gpu_base) as a benchmark peer of `gthinker fsm`.
# From the repository root:
#
#   bash benchmarks/peers/g2miner_fsm.sh source GITDIR   # here: GraphMiner's src/fsm and inputs
#                                                        # -> .peers/GraphMiner-fsm (carry .peers)
#   bash benchmarks/peers/g2miner_fsm.sh build           # GPU machine -> $G2M_DIR/bin/fsm_{omp,gpu}_base
#   bash benchmarks/peers/g2miner_fsm.sh omp PREFIX K S  # OMP_NUM_THREADS (default 16) threads
#   bash benchmarks/peers/g2miner_fsm.sh gpu PREFIX K S
#
# source: GITDIR is a clone (or the `fetch` tool's mirror, e.g.
#   /work/.mirror/chenxuhao+GraphMiner/repo) of GraphMiner; `git archive HEAD` of LICENSE,
#   Makefile, README.md, include/, src/common.mk, src/common/, src/fsm/ and the graph files of
#   the sample inputs inputs/citeseer, inputs/cora (not cora's features) go to $G2M_SRC (default .peers/GraphMiner-fsm), with
#   PEER_COMMIT naming the commit (2a76e3f when this was written).
# build: like benchmarks/peers/g2miner.sh (whose header says why): copies the source to
#   $G2M_DIR/src (default /tmp/g2miner-fsm), deletes the printf-only memoryClockRate lines of
#   include/cutil_subset.h (gone in CUDA 13), makes src/fsm/main.cc load the vertex labels
#   (use_vlabel; without it the labels it reads are a null pointer), links libcudart_static, and runs GraphMiner's own
#   src/fsm/Makefile (targets fsm_omp_base fsm_gpu_base) for sm_$G2M_ARCH (default 90) with its
#   default flags (-O3; g++ -fopenmp -march=native). CUB: the toolkit's (CCCL).
# omp / gpu: PREFIX is a graph in G2Miner's binary labeled format (PREFIX.meta.txt, ...; e.g.
#   $G2M_SRC/inputs/citeseer/graph, or one written by gthinker.graphs.formats.g2miner.write),
#   K the most edges of a pattern, S the support. Its FSM reads vertex labels only (edge
#   labels are ignored) and counts the frequent patterns of 1..K edges.
# Output: the binary's, then "g2miner_wall_seconds = S". Regexes:
#   count  ^Number of frequent patterns: (\d+)$
#   time   ^runtime \[[^\]]*\] = ([0-9.eE+-]+) sec$   (the mining, loading excluded; the last one)
#
# Env: G2M_DIR, G2M_ARCH, G2M_SRC, OMP_NUM_THREADS (omp; default 16).
set -euo pipefail
source "$(dirname "$0")/build_info.sh"
source "$(dirname "$0")/g2miner_common.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${G2M_SRC:-$ROOT/.peers/GraphMiner-fsm}
DIR=${G2M_DIR:-/tmp/g2miner-fsm}
ARCH=${G2M_ARCH:-90}
PATHS=(LICENSE Makefile README.md include src/common.mk src/common src/fsm
       inputs/citeseer/graph.{meta.txt,vertex.bin,edge.bin,vlabel.bin,elabel.bin}
       inputs/cora/graph.{meta.txt,vertex.bin,edge.bin,vlabel.bin})

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

source_tree() {
  local git=$1
  rm -rf "$SRC"
  mkdir -p "$SRC"
  git -C "$git" archive HEAD "${PATHS[@]}" | tar -x -C "$SRC"
  git -C "$git" rev-parse HEAD > "$SRC/PEER_COMMIT"
  echo "g2miner_fsm: $SRC from $(cat "$SRC/PEER_COMMIT")"
}

build() {
  [ -d "$SRC/src/fsm" ] || { echo "g2miner_fsm: no source at $SRC (run '$0 source GITDIR')" >&2; exit 1; }
  g2miner_setup g2miner_fsm
  # src/fsm/main.cc loads the graph without its vertex labels (Graph g(argv[1], 0, 1): the
  # fourth argument, use_vlabel, defaults to false) and then reads them: turn them on.
  sed -i 's/Graph g(argv\[1\], 0, 1);/Graph g(argv[1], 0, 1, 1);/' "$DIR/src/src/fsm/main.cc"
  grep -q 'Graph g(argv\[1\], 0, 1, 1);' "$DIR/src/src/fsm/main.cc" ||
    { echo "g2miner_fsm: main.cc patch did not apply" >&2; exit 1; }
  make -C "$DIR/src/src/fsm" -j"$G2M_JOBS" "${G2M_VARS[@]}" fsm_omp_base fsm_gpu_base
  build_info "sm_$ARCH; patches: sed '/memoryClockRate/d' include/cutil_subset.h; use_vlabel in src/fsm/main.cc; static cudart"
}

run_fsm() {
  local bin=$1 prefix=$2 k=$3 s=$4
  [ -x "$DIR/bin/$bin" ] || { echo "g2miner_fsm: $DIR/bin/$bin missing: run '$0 build'" >&2; exit 1; }
  [ -f "$prefix.meta.txt" ] || { echo "g2miner_fsm: $prefix.meta.txt missing" >&2; exit 1; }
  timed g2miner "$DIR/bin/$bin" "$prefix" "$k" "$s"
}

case "${1:-}" in
  source) [ $# -eq 2 ] || usage; source_tree "$2" ;;
  build) build ;;
  omp) [ $# -eq 4 ] || usage; OMP_NUM_THREADS=${OMP_NUM_THREADS:-16} run_fsm fsm_omp_base "$2" "$3" "$4" ;;
  gpu) [ $# -eq 4 ] || usage; run_fsm fsm_gpu_base "$2" "$3" "$4" ;;
  *) usage ;;
esac
