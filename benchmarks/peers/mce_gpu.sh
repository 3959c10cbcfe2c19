#!/usr/bin/env bash
# MCE-GPU (github.com/yen-hsiang-chang/mce-gpu: Almasri, Chang, El Hajj, Nagi, Xiong, Hwu,
# "Parallelizing Maximal Clique Enumeration on GPUs", PACT 2023) as a benchmark peer of
# `gthinker mce`. Run from the repository root on the GPU machine (no internet needed):
#
#   bash benchmarks/peers/mce_gpu.sh source                 # .peers/mce-gpu from the fetched mirror
#   bash benchmarks/peers/mce_gpu.sh build                  # -> $MCEGPU_DIR/parallel_mce_on_gpus
#   bash benchmarks/peers/mce_gpu.sh run EDGELIST [ARGS]    # convert, then count; ARGS default
#                                                           # "-p l2 -i px -w wl" (its best on facebook)
#   bash benchmarks/peers/mce_gpu.sh mce GRAPH.bel [ARGS]   # count on a .bel made beforehand
#                                                           # (benchmarks/peers/convert.py mcegpu)
#
# Source: .peers/mce-gpu (git-ignored; `git archive` of commit 44ef6e0 without its prebuilt
# binary: include/, mce/, src/, Makefile, LICENSE, README.md; `source` makes it from the fetch
# tool's mirror, /work/.mirror/yen-hsiang-chang+mce-gpu/repo or $MCEGPU_MIRROR). build copies
# it to $MCEGPU_DIR (default /tmp/mcegpu) and patches the copy for CUDA 13:
#   - cudaMemAdvise(..., config.deviceId) takes a cudaMemLocation {device, id} now;
#   - cub::Max() is gone: cuda::maximum<>{} from <cuda/functional>.
#   - g++ 13 no longer pulls in <cstdint> through other headers: -include cstdint.
# and compiles src/main.cu with -std=c++17 -O3 -arch=sm_$MCEGPU_ARCH (default 90) -fopenmp
# -cudart static (no CUDA runtime library needed where it runs), then strips it.
# Checked: builds with nvcc 13.0 + g++ 12.2 without a GPU; there `-m convert` runs too (it makes
# no CUDA call), and writes the same bytes as benchmarks/peers/convert.py mcegpu.
#
# Schemes (its -p -i -w): the seed paper's L1+IP is "-p l1 -i p -w wl", L1+IPX "-p l1 -i px -w wl";
# its best on facebook here was "-p l2 -i px -w wl".
#
# run: gunzips a .gz edge list, converts it with the tool's own converter
# (-m convert -g in.txt -r out.bel), then runs -m mce on device 0. Its output has
# "count time <s> s" (the counting kernels, degeneracy order excluded) and
# "Found N maximal cliques in total."; the script adds "mcegpu_wall_seconds = <s>".
set -euo pipefail
source "$(dirname "$0")/build_info.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${MCEGPU_DIR:-/tmp/mcegpu}
SRC=$ROOT/.peers/mce-gpu
MIRROR=${MCEGPU_MIRROR:-/work/.mirror/yen-hsiang-chang+mce-gpu/repo}
COMMIT=44ef6e0
BEST=(-p l2 -i px -w wl)

need_bin() {
  [ -x "$DIR/parallel_mce_on_gpus" ] || { echo "mce_gpu: $DIR/parallel_mce_on_gpus missing: run '$0 build'" >&2; exit 1; }
}

case "${1:-}" in
  source)
    [ -d "$MIRROR" ] || { echo "mce_gpu: no mirror at $MIRROR (fetch github:yen-hsiang-chang/mce-gpu)" >&2; exit 1; }
    rm -rf "$SRC" && mkdir -p "$SRC"
    git --git-dir="$MIRROR" archive "$COMMIT" include mce src Makefile LICENSE README.md | tar -x -C "$SRC"
    git --git-dir="$MIRROR" rev-parse "$COMMIT" > "$SRC/PEER_COMMIT"
    echo "mce_gpu: $SRC at $(cat "$SRC/PEER_COMMIT")"
    ;;
  build)
    [ -f "$SRC/src/main.cu" ] || { echo "mce_gpu: no source at $SRC (run '$0 source')" >&2; exit 1; }
    rm -rf "$DIR" && mkdir -p "$DIR" && cp -r "$SRC/." "$DIR/"
    sed -i 's|config.deviceId /\*ignored\*/)|cudaMemLocation{cudaMemLocationTypeDevice, (int)config.deviceId})|' "$DIR/src/main.cu"
    sed -i 's|cub::Max()|cuda::maximum<>{}|; 1i #include <cuda/functional>' "$DIR/mce/mce.cuh"
    grep -q cudaMemLocationTypeDevice "$DIR/src/main.cu" && grep -q 'cuda::maximum' "$DIR/mce/mce.cuh" \
      || { echo "mce_gpu: patching for CUDA 13 failed" >&2; exit 1; }
    (cd "$DIR" && nvcc -w -std=c++17 -O3 -Xcompiler -fopenmp -arch=sm_${MCEGPU_ARCH:-90} -cudart static \
       -include cstdint -Iinclude src/main.cu -o parallel_mce_on_gpus -lgomp)
    strip "$DIR/parallel_mce_on_gpus"
    mkdir -p "$DIR/bin" && ln -sf ../parallel_mce_on_gpus "$DIR/bin/parallel_mce_on_gpus"
    SRC=$DIR build_info "sm_${MCEGPU_ARCH:-90}; patches: cudaMemAdvise cudaMemLocation, cub::Max -> cuda::maximum, -include cstdint; -cudart static; stripped"
    ;;
  mce)
    [ $# -ge 2 ] || { sed -n 2,12p "$0"; exit 2; }
    need_bin
    bel=$2; shift 2
    [ -f "$bel" ] || { echo "mce_gpu: no graph $bel (benchmarks/peers/convert.py mcegpu writes one)" >&2; exit 1; }
    if [ $# -eq 0 ]; then set -- "${BEST[@]}"; fi
    timed mcegpu "$DIR/parallel_mce_on_gpus" -m mce -g "$bel" -d 0 "$@"
    ;;
  run)
    need_bin
    src=$2; shift 2
    name=$(basename "${src%.gz}"); txt="$DIR/$name"; bel="$DIR/${name%.txt}.bel"
    if [[ $src == *.gz ]]; then gunzip -c "$src" > "$txt"; else cp "$src" "$txt"; fi
    [ -f "$bel" ] || "$DIR/parallel_mce_on_gpus" -m convert -g "$txt" -r "$bel" > /dev/null
    if [ $# -eq 0 ]; then set -- "${BEST[@]}"; fi
    timed mcegpu "$DIR/parallel_mce_on_gpus" -m mce -g "$bel" -d 0 "$@"
    ;;
  *) sed -n 2,12p "$0"; exit 2 ;;
esac
