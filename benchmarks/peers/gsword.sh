#!/usr/bin/env bash
# gSWORD (github.com/Gibyeng/gsword: Lyu, Chen, Wang, Li, Qin, Zhang, "gSWORD: GPU-accelerated
# Sampling for Subgraph Counting", SIGMOD 2024), the seed paper's public code, as the benchmark
# peer of `gthinker gsword`. From the repository root:
#
#   bash benchmarks/peers/gsword.sh source GITDIR     # git archive of the peer into .peers/gsword
#   bash benchmarks/peers/gsword.sh build             # -> $GSWORD_DIR/gsword (default /tmp/gsword)
#   bash benchmarks/peers/gsword.sh run DATA QUERY METHOD SAMPLES THREADS
#                                                     # one estimate; prints its console output and
#                                                     # "gsword_wall_seconds = S" (the whole process)
#
# source: GITDIR is a git directory of Gibyeng/gsword (the `fetch` tool's mirror). Its newest
# commit that changes code (3df5f19, "update eval for candidate graph and Gcare order") calls
# functions that were never committed (checkQueryPlanCorrectnessBool, Graph::getNeigborListUI),
# and the two commits above it change only the README and the report: the code is taken from
# 79cd814 (GSWORD_COMMIT), the commit before it. Only the sources are archived (CMakeLists.txt,
# README.md, configuration/, graph/, han/, kernel/, matching/, utility/): not the bundled CUB, the
# report or the data sets. .peers/ is git-ignored: the peer's code is never committed here.
#
# build: copies .peers/gsword to $GSWORD_DIR (.peers is never modified), patches the copy for
# CUDA 13 and g++ 13, and compiles kernel/main.cu (which #includes everything else) as its
# CMakeLists.txt does, but for sm_$GSWORD_ARCH (default 90, H100) and C++17:
#   - the toolkit's CUB (CCCL) instead of the bundled one (`#include <cub/cub.cuh>`);
#     `cub::Max()` is gone from it: `cuda::maximum<>{}` (<cuda/functional>);
#   - `__shfl(x, i)` (removed in CUDA 9) -> `__shfl_sync(__activemask(), x, i)`;
#   - the unused `#include "cublas_v2.h"` goes (no cuBLAS needed);
#   - main.cu writes `record.cand_build_time`, a field its timer never had: the local
#     `cand_build_time` it means;
#   - ten `bool` functions end without a `return` (the 8 allocateGPU*/allocateMemoryPerThread
#     helpers of matching.cpp, hardcasesave and hardcasesaveonlylayer of kernel.cuh): with g++
#     -O3 the caller then runs on into the next function; each gets `return true;`, their
#     callers ignore the value;
#   - -cudart static (the binary needs no CUDA runtime library where it runs); curand's
#     headers come from the toolkit or, where it lacks them, from the nvidia-curand wheel
#     ($CURAND_INCLUDE, else found through python3);
#   - -march=$GSWORD_MARCH (default native, as its CMakeLists.txt; its CPU set intersections
#     need AVX2).
# Checked: builds with nvcc 13.0 + g++ 12.2 on a machine without a GPU.
#
# run: METHOD 1 = WanderJoin, 2 = Alley (no inheritance or streaming), 3-5 their optimised
# variants, 6-7 CPU-GPU co-processing (see its README). THREADS is its -c: the GPU threads the
# samples are spread over (its default is 10, whatever -t says: always pass it); -t SAMPLES
# must be a multiple of it. Its output ends with "Est path count: N" (the estimate, an
# integer), "Sampling_cost: S" (seconds: the kernel launches, a synchronize and the copy of
# the sum back), "candiate set cost: S".
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${GSWORD_DIR:-/tmp/gsword}
SRC=$ROOT/.peers/gsword
COMMIT=${GSWORD_COMMIT:-79cd814}
case "${1:-}" in
  source)
    git_dir=$2
    rm -rf "$SRC" && mkdir -p "$SRC"
    git --git-dir "$git_dir" archive "$COMMIT" CMakeLists.txt README.md configuration graph han \
      kernel matching utility | tar -x -C "$SRC"
    echo "$COMMIT" > "$SRC/PEER_COMMIT"
    echo "archived gsword $COMMIT into $SRC"
    ;;
  build)
    [ -f "$SRC/kernel/main.cu" ] || { echo "no $SRC: run '$0 source GITDIR' first" >&2; exit 1; }
    rm -rf "$DIR" && mkdir -p "$DIR" && cp -r "$SRC/." "$DIR/"
    cd "$DIR"
    sed -i 's|#include "../cub/cub/cub.cuh"|#include <cub/cub.cuh>\n#include <cuda/functional>|' \
      kernel/kernel.cuh matching/matching.cpp
    sed -i 's|cub::Max()|cuda::maximum<>{}|g; s|__shfl(|__shfl_sync(__activemask(), |g' kernel/kernel.cuh
    sed -i '/cublas_v2.h/d' kernel/Intersection.cu
    sed -i 's|record\.cand_build_time|cand_build_time|' kernel/main.cu
    # `return true;` before the closing brace of each bool function that lacks one.
    add_return() {  # FILE FUNCTION...
      local file=$1; shift
      for fn in "$@"; do
        awk -v fn="$fn" '
          !inside && $0 ~ ("bool[ \t]+" fn "[ \t]*\\(") && $0 ~ /\{[ \t]*$/ { inside = 1 }
          inside && /^}/ { print "\treturn true;"; inside = 0 }
          { print }' "$file" > "$file.tmp" && mv "$file.tmp" "$file"
      done
    }
    add_return matching/matching.cpp allocateGPU1D allocateGPU2D allocateGPU2DPitch \
      allocateMemoryPerThread allocateGPUEdges allocateGPUmatrix
    add_return kernel/kernel.cuh hardcasesave hardcasesaveonlylayer
    [ "$(grep -c 'return true;' matching/matching.cpp)" -ge 8 ] \
      || { echo "patching the bool functions failed" >&2; exit 1; }
    inc=${CURAND_INCLUDE:-}
    if [ -z "$inc" ] && ! echo '#include <curand_kernel.h>' | nvcc -x cu -E - > /dev/null 2>&1; then
      inc=$(python3 -c 'import nvidia, os; [print(os.path.join(p, "cu13", "include")) for p in nvidia.__path__]' \
            2>/dev/null | while read -r d; do [ -f "$d/curand.h" ] && echo "$d" && break; done)
    fi
    nvcc -w -std=c++17 -O3 -arch=sm_${GSWORD_ARCH:-90} -cudart static ${inc:+-I"$inc"} \
      -Xcompiler -fopenmp,-march=${GSWORD_MARCH:-native} kernel/main.cu -o gsword -lgomp
    echo "built $DIR/gsword (gsword $(cat PEER_COMMIT))"
    ;;
  run)
    data=$2; query=$3; method=$4; samples=$5; threads=$6
    cd "$DIR"  # it appends to ./output.txt
    t0=$(date +%s%N)
    "$DIR/gsword" -d "$data" -q "$query" -m "$method" -t "$samples" -c "$threads"
    t1=$(date +%s%N)
    printf 'gsword_wall_seconds = %d.%06d\n' $(((t1 - t0) / 1000000000)) $(((t1 - t0) / 1000 % 1000000))
    ;;
  *) sed -n 2,11p "$0"; exit 2 ;;
esac
