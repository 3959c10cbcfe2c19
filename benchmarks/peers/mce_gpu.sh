#!/usr/bin/env bash
# MCE-GPU (github.com/yen-hsiang-chang/mce-gpu: Almasri, Chang, El Hajj, Nagi, Xiong, Hwu,
# "Parallelizing Maximal Clique Enumeration on GPUs", PACT 2023) as a benchmark peer of
# `gthinker mce`. Run from the repository root on the GPU machine (no internet needed):
#
#   bash benchmarks/peers/mce_gpu.sh build                  # -> $MCEGPU_DIR/parallel_mce_on_gpus
#   bash benchmarks/peers/mce_gpu.sh run EDGELIST [ARGS]    # convert, then count; ARGS default
#                                                           # "-p l2 -i px -w wl" (its best on facebook)
#
# Source: .peers/mce-gpu (git-ignored; `git archive` of commit 44ef6e0 without its prebuilt
# binary: include/, mce/, src/, Makefile, LICENSE, README.md). build copies it to
# $MCEGPU_DIR (default /tmp/mcegpu) and patches the copy for CUDA 13:
#   - cudaMemAdvise(..., config.deviceId) takes a cudaMemLocation {device, id} now;
#   - cub::Max() is gone: cuda::maximum<>{} from <cuda/functional>.
#   - g++ 13 no longer pulls in <cstdint> through other headers: -include cstdint.
# and compiles src/main.cu with -std=c++17 -O3 -arch=sm_$MCEGPU_ARCH (default 90) -fopenmp.
#
# run: gunzips a .gz edge list, converts it with the tool's own converter
# (-m convert -g in.txt -r out.bel), then runs -m mce on device 0. Its output has
# "count time <s> s" (the counting kernels, degeneracy order excluded) and
# "Found N maximal cliques in total."; the script adds "mcegpu_wall_seconds = <s>".
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${MCEGPU_DIR:-/tmp/mcegpu}
case "${1:-}" in
  build)
    rm -rf "$DIR" && mkdir -p "$DIR" && cp -r "$ROOT/.peers/mce-gpu/." "$DIR/"
    sed -i 's|config.deviceId /\*ignored\*/)|cudaMemLocation{cudaMemLocationTypeDevice, (int)config.deviceId})|' "$DIR/src/main.cu"
    sed -i 's|cub::Max()|cuda::maximum<>{}|; 1i #include <cuda/functional>' "$DIR/mce/mce.cuh"
    (cd "$DIR" && nvcc -w -std=c++17 -O3 -Xcompiler -fopenmp -arch=sm_${MCEGPU_ARCH:-90} -include cstdint \
       -Iinclude src/main.cu -o parallel_mce_on_gpus -lgomp)
    echo "built $DIR/parallel_mce_on_gpus"
    ;;
  run)
    src=$2; shift 2
    name=$(basename "${src%.gz}"); txt="$DIR/$name"; bel="$DIR/${name%.txt}.bel"
    if [[ $src == *.gz ]]; then gunzip -c "$src" > "$txt"; else cp "$src" "$txt"; fi
    [ -f "$bel" ] || "$DIR/parallel_mce_on_gpus" -m convert -g "$txt" -r "$bel" > /dev/null
    t0=$(date +%s%N)
    "$DIR/parallel_mce_on_gpus" -m mce -g "$bel" -d 0 ${@:-"-p" "l2" "-i" "px" "-w" "wl"}
    t1=$(date +%s%N)
    printf 'mcegpu_wall_seconds = %d.%03d\n' $(((t1 - t0) / 1000000000)) $(((t1 - t0) / 1000000 % 1000))
    ;;
  *) sed -n 2,22p "$0"; exit 2 ;;
esac
