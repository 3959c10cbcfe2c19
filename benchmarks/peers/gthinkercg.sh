#!/usr/bin/env bash
# G-ThinkerCG (github.com/akhlaqueak/G-ThinkerCG: Ahmad, Yan, Yuan, Adhikari, Han, Nimbale,
# "G-ThinkerCG: A Hybrid CPU-GPU Framework for Efficient Parallel Subgraph Finding", the seed
# paper's own code) as a benchmark peer: maximal cliques (app_mc) and subgraph matching with its
# built-in unlabeled patterns (app_gmatch), CPU-only, GPU-only or hybrid. From the repository root:
#
#   bash benchmarks/peers/gthinkercg.sh source              # .peers/gthinkercg from the fetched mirror
#   bash benchmarks/peers/gthinkercg.sh build               # -> $GCG_DIR/bin/{app_mc,app_gmatch}
#   bash benchmarks/peers/gthinkercg.sh mc GRAPH.bin MODE   # maximal cliques; MODE cpu, gpu or hybrid
#   bash benchmarks/peers/gthinkercg.sh gmatch GRAPH.bin Q MODE   # embeddings? see "Counts" below
#   bash benchmarks/peers/gthinkercg.sh selftest [MODES]    # a tiny graph, counts against Python
#
# Source: .peers/gthinkercg (git-ignored, never committed): `git archive` of 808bb9c (the fetch
# tool's mirror /work/.mirror/akhlaqueak+G-ThinkerCG/repo, or $GCG_MIRROR) with only README.md,
# app_mc/, app_gmatch/, system/ and common/ (not deleted/, g2-aimd/, the demo, the report or the
# bundled graphs); its prebuilt common/bliss/libbliss.a is deleted and bliss is compiled anew.
#
# build: copies .peers/gthinkercg to $GCG_DIR/src (default /tmp/gthinkercg; .peers is never
#   modified), patches the copy with sed (each patch checked), and compiles as its Makefiles do
#   (nvcc --maxrregcount=64 -std=c++20 -O3 -fopenmp -DOPENMP, bliss linked) but for
#   sm_$GCG_ARCH (default 90, H100) with -cudart static, then strips the binaries:
#   - CUDA 13 API: cudaMemPrefetchAsync takes a cudaMemLocation and flags;
#     cudaDeviceProp::clockRate / memoryClockRate are gone (printf-only lines in its device
#     report): read with cudaDeviceGetAttribute;
#   - BLK_NUMS (its kernels' grid: one block of 1024 threads per SM, 56 for the paper's P100)
#     = $GCG_BLOCKS (default 132, the SM count of an H100 and of an H200);
#   - its host subgraph buffer H is managed (unified) memory of HOST_BUFF_SZ = 20e9 vertices
#     (80 GB, + 20 GB of MCE labels + 16 GB of offsets: more than the GPU has, which this
#     project's GPU rules forbid): HOST_BUFF_SZ = $GCG_HOST_BUFF (default 2e9 vertices) and
#     HOST_OFFSET_SZ = $GCG_HOST_OFFSETS (default 2e8), and the device buffer B, which takes
#     all free device memory but 0.5 GB, leaves room for H as well (its byte size is added to
#     the reserve), so that H never exceeds what the GPU has free;
#   - app_mc counts maximal cliques in 32-bit unsigned ints (per CPU worker and the sum; its
#     GPU side counts in 64 bits): widened to unsigned long long, so that counts past 2^32 are
#     exact. Nothing else of its search changes.
#   Checked: builds with nvcc 13.0 + g++ 12.2 on a machine without a GPU, where `selftest cpu`
#   passes (its CPU-only mode makes no CUDA call that fails the run).
#
# mc / gmatch MODE: cpu = `-cpu $GCG_THREADS -gpu 0` (default 16 threads), gpu = `-cpu 0 -gpu 1`,
#   hybrid = `-cpu $GCG_THREADS -gpu 1`; its other parameters keep the paper's defaults (eta
#   1000 x warps, CPU chunk 50, GPU chunk 500K). gmatch Q is its -q: a built-in pattern
#   (common/graph.h selectPresetPatterns; e.g. 0 triangle, 1 4-cycle, 2 diamond, 5 K4 plus a
#   vertex on two of its vertices, 6 diamond + a vertex on its tips, 8 wheel W4, 9 K5 minus an
#   edge, 24 K4, 25 K5). Output: "Total time (s): S" (a timer around the run of its master:
#   graph loading, its preprocessing and the device set-up are outside it), "Total count: N";
#   this script adds "gthinkercg_wall_seconds = S" (the whole process).
#   Counts: app_mc counts maximal cliques (an isolated vertex is one); app_gmatch counts
#   distinct subgraphs on the GPU (symmetry broken by bliss's automorphism conditions) and,
#   its CPU workers, what its GQL-ordered backtracking finds: `selftest` prints both beside
#   Python's counts of embeddings and of distinct subgraphs.
#   app_gmatch writes degree_distribution.json beside GRAPH.bin (into its current folder).
#   Input: GRAPH.bin (the name must end in .bin): uint64 4, 8, n, m (m = directed entries),
#   uint64 row_ptr[n+1], uint32 cols[m], each list sorted, symmetric, and nothing after it
#   (benchmarks/peers/convert.py gthinkercg writes it).
#
# Env: GCG_DIR, GCG_ARCH, GCG_BLOCKS, GCG_HOST_BUFF, GCG_HOST_OFFSETS, GCG_THREADS, GCG_SRC
#   (default .peers/gthinkercg), GCG_MIRROR, GCG_COMMIT (default 808bb9c), PYTHON.
set -euo pipefail
source "$(dirname "$0")/build_info.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${GCG_SRC:-$ROOT/.peers/gthinkercg}
DIR=$(realpath -m "${GCG_DIR:-/tmp/gthinkercg}")
ARCH=${GCG_ARCH:-90}
BLOCKS=${GCG_BLOCKS:-132}
HOST_BUFF=${GCG_HOST_BUFF:-2000000000}
HOST_OFFSETS=${GCG_HOST_OFFSETS:-200000000}
THREADS=${GCG_THREADS:-16}
MIRROR=${GCG_MIRROR:-/work/.mirror/akhlaqueak+G-ThinkerCG/repo}
COMMIT=${GCG_COMMIT:-808bb9c}
PY=${PYTHON:-python3}

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

source_tree() {
  [ -d "$MIRROR" ] || { echo "gthinkercg: no mirror at $MIRROR (fetch github:akhlaqueak/G-ThinkerCG)" >&2; exit 1; }
  rm -rf "$SRC" && mkdir -p "$SRC"
  git --git-dir="$MIRROR" archive "$COMMIT" README.md app_mc app_gmatch system common | tar -x -C "$SRC"
  rm -f "$SRC/common/bliss/libbliss.a" "$SRC/common/.DS_Store"
  git --git-dir="$MIRROR" rev-parse "$COMMIT" > "$SRC/PEER_COMMIT"
  echo "gthinkercg: $SRC at $(cat "$SRC/PEER_COMMIT")"
}

patch_once() {  # FILE SED-SCRIPT CHECK-REGEX: apply, then require CHECK-REGEX in FILE
  sed -i "$2" "$1"
  grep -q -- "$3" "$1" || { echo "gthinkercg: patching $1 failed ($2)" >&2; exit 1; }
}

build() {
  [ -f "$SRC/app_mc/main.cu" ] || { echo "gthinkercg: no source at $SRC (run '$0 source')" >&2; exit 1; }
  command -v nvcc >/dev/null || { echo "gthinkercg: nvcc not on PATH" >&2; exit 1; }
  rm -rf "$DIR/src" "$DIR/bin" && mkdir -p "$DIR/bin" && cp -r "$SRC" "$DIR/src"
  local s=$DIR/src
  patch_once "$s/common/device/cuda_context.h" \
    's|cudaMemPrefetchAsync(ret, size, dev_mem_->GetDevId())|cudaMemPrefetchAsync(ret, size, cudaMemLocation{cudaMemLocationTypeDevice, (int)dev_mem_->GetDevId()}, 0)|' \
    'cudaMemLocationTypeDevice'
  patch_once "$s/common/device/util.h" \
    's|prop\.clockRate|({ int r_ = 0; cudaDeviceGetAttribute(\&r_, cudaDevAttrClockRate, i); r_; })|; s|prop\.memoryClockRate|({ int r_ = 0; cudaDeviceGetAttribute(\&r_, cudaDevAttrMemoryClockRate, i); r_; })|' \
    'cudaDevAttrMemoryClockRate'
  patch_once "$s/system/global.h" \
    "s|^#define BLK_NUMS 56|#define BLK_NUMS $BLOCKS|; s|^#define HOST_BUFF_SZ .*|#define HOST_BUFF_SZ ${HOST_BUFF}ULL|; s|^#define HOST_OFFSET_SZ .*|#define HOST_OFFSET_SZ ${HOST_OFFSETS}ULL\n// bytes of managed memory in the host buffer H (vertices, MCE labels, offsets)\n#define HOST_BUFF_BYTES (HOST_BUFF_SZ * 5ULL + HOST_OFFSET_SZ * 8ULL)|" \
    'HOST_BUFF_BYTES'
  grep -q "^#define BLK_NUMS $BLOCKS[[:space:]]*$" "$s/system/global.h" || { echo "gthinkercg: BLK_NUMS not set" >&2; exit 1; }
  patch_once "$s/system/gpu_context.h" \
    's|free -= 500'"'"'000'"'"'000 + reserved_mem;|free -= 500'"'"'000'"'"'000 + reserved_mem + HOST_BUFF_BYTES;|' \
    'reserved_mem + HOST_BUFF_BYTES'
  patch_once "$s/app_mc/mc_cpu_worker.h" 's|^\( *\)ui total_counts=0;|\1ull total_counts=0;|' 'ull total_counts=0;'
  patch_once "$s/app_mc/main.cu" 's|^\( *\)ui get_results()|\1ull get_results()|; s|^\( *\)ui res = 0;|\1ull res = 0;|' \
    'ull res = 0;'
  if grep -rn 'clockRate\b\|memoryClockRate\b' "$s/common" "$s/system" | grep -v cudaDevAttr; then
    echo "gthinkercg: a removed cudaDeviceProp field is still read" >&2; exit 1
  fi
  local j flags
  j=$(nproc 2>/dev/null || echo 4)
  echo "gthinkercg: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(g++ --version | head -1), sm_$ARCH, $BLOCKS blocks"
  make -C "$s/common/bliss" -j"$j" lib > "$DIR/bliss.log" 2>&1 || { tail -20 "$DIR/bliss.log"; exit 1; }
  flags=(-arch=sm_"$ARCH" -cudart static --maxrregcount=64 -std=c++20 -O3 -w -Xcompiler -fopenmp
         -DOPENMP -I.. -I../common/MPMCQueue/include -I../common/bliss -I../system/ -I../common)
  compile() {  # NAME SOURCES...: one app, its log in $DIR/NAME.log
    local name=$1; shift
    (cd "$s/$name" && nvcc "${flags[@]}" "$@" -o "$DIR/bin/$name" -L../common/bliss -lbliss -lgomp \
       -lpthread) > "$DIR/$name.log" 2>&1 || { tail -30 "$DIR/$name.log"; return 1; }
  }
  local p1 p2 rc=0
  compile app_mc main.cu & p1=$!
  compile app_gmatch main.cu intersection/computesetintersection.cpp & p2=$!
  wait $p1 || rc=1
  wait $p2 || rc=1
  [ $rc = 0 ] || { echo "gthinkercg: build failed (logs in $DIR)" >&2; exit 1; }
  strip "$DIR/bin/app_mc" "$DIR/bin/app_gmatch"
  build_info "sm_$ARCH; BLK_NUMS=$BLOCKS; HOST_BUFF_SZ=$HOST_BUFF, HOST_OFFSET_SZ=$HOST_OFFSETS, B leaves room for H; CUDA 13 API (cudaMemPrefetchAsync, clock rates); app_mc counts in 64 bits; -cudart static; stripped"
}

mode_flags() {
  case "$1" in
    cpu) echo "-cpu $THREADS -gpu 0" ;;
    gpu) echo "-cpu 0 -gpu 1" ;;
    hybrid) echo "-cpu $THREADS -gpu 1" ;;
    *) echo "gthinkercg: unknown mode $1 (cpu, gpu, hybrid)" >&2; exit 2 ;;
  esac
}

need() {  # BINARY GRAPH
  [ -x "$DIR/bin/$1" ] || { echo "gthinkercg: $DIR/bin/$1 missing: run '$0 build'" >&2; exit 1; }
  [[ $2 == *.bin ]] || { echo "gthinkercg: $2: the graph's name must end in .bin" >&2; exit 2; }
  [ -f "$2" ] || { echo "gthinkercg: no graph $2 (benchmarks/peers/convert.py gthinkercg writes one)" >&2; exit 1; }
}

mc() {
  need app_mc "$1"
  # shellcheck disable=SC2046
  timed gthinkercg "$DIR/bin/app_mc" -dg "$1" $(mode_flags "$2")
}

gmatch() {
  need app_gmatch "$1"
  [[ $2 =~ ^[0-9]+$ ]] || { echo "gthinkercg: Q must be a pattern number, got $2" >&2; exit 2; }
  local g
  g=$(realpath "$1")
  # it writes degree_distribution.json into the current folder: the graph's
  # shellcheck disable=SC2046
  (cd "$(dirname "$g")" && timed gthinkercg "$DIR/bin/app_gmatch" -dg "$g" -q "$2" $(mode_flags "$3"))
}

selftest() {
  local modes=${1:-cpu,gpu,hybrid} t fail=0
  t=$(mktemp -d)
  # two K6 joined by a path, a wheel W5 and an isolated vertex; maximal cliques, and the
  # distinct subgraphs and embeddings of patterns 0 (triangle), 24 (K4), 2 (diamond),
  # counted by Python, not written down
  "$PY" "$HERE/convert.py" selftest-graph "$t/g.bin" "$t/expected"
  cat "$t/expected"
  local m want out got
  for m in ${modes//,/ }; do
    want=$(awk '$1 == "mc" { print $2 }' "$t/expected")
    out=$(timeout 60 bash "$0" mc "$t/g.bin" "$m" 2>&1) || true
    got=$(echo "$out" | sed -n 's/^Total count: \([0-9]*\).*/\1/p' | tail -1)
    echo "mc $m: $got (want $want)"
    [ "$got" = "$want" ] || { echo "$out" | tail -5; echo "SELFTEST FAIL: mc $m"; fail=1; }
    for q in 0 24 2; do
      out=$(timeout 60 bash "$0" gmatch "$t/g.bin" "$q" "$m" 2>&1) || true
      got=$(echo "$out" | sed -n 's/^Total count: \([0-9]*\).*/\1/p' | tail -1)
      want=$(awk -v q="$q" '$1 == "q" && $2 == q { print $3 " distinct, " $4 " embeddings" }' "$t/expected")
      echo "gmatch -q $q $m: $got (Python: $want)"
      awk -v q="$q" -v g="$got" '$1 == "q" && $2 == q && (g == $3 || g == $4) { ok = 1 } END { exit !ok }' \
        "$t/expected" || { echo "$out" | tail -5; echo "SELFTEST FAIL: gmatch -q $q $m"; fail=1; }
    done
  done
  rm -rf "$t"
  [ $fail = 0 ] && echo "gthinkercg selftest: ok"
  return $fail
}

case "${1:-}" in
  source) source_tree ;;
  build) build ;;
  mc) [ $# -eq 3 ] || usage; mc "$2" "$3" ;;
  gmatch) [ $# -eq 4 ] || usage; gmatch "$2" "$3" "$4" ;;
  selftest) selftest "${2:-}" ;;
  *) usage ;;
esac
