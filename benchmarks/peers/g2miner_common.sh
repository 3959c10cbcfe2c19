# Sourced by g2miner.sh and g2miner_fsm.sh: g2miner_setup NAME checks nvcc, finds the CUDA
# toolkit and its libcudart_static.a, copies $SRC to $DIR/src (fresh $DIR/bin), deletes the
# printf-only memoryClockRate lines of include/cutil_subset.h (CUDA 13 removed the field), and
# sets G2M_VARS (make variables: sm_$ARCH, CUDA_HOME, static cudart, BIN=$DIR/bin/) and G2M_JOBS.
g2miner_setup() {
  local name=$1 top cudahome libdir d
  command -v nvcc >/dev/null || { echo "$name: nvcc not on PATH" >&2; exit 1; }
  top=$(nvcc --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)
  cudahome=$(readlink -f "${CUDA_HOME:-$top}")
  libdir=""
  for d in "$cudahome/lib64" "$cudahome/targets/x86_64-linux/lib" "$cudahome/lib"; do
    if [ -e "$d/libcudart_static.a" ]; then libdir=$d; break; fi
  done
  [ -n "$libdir" ] || { echo "$name: no libcudart_static.a under $cudahome" >&2; exit 1; }
  G2M_JOBS=$(nproc 2>/dev/null || echo 8)
  rm -rf "$DIR/src" "$DIR/bin"
  mkdir -p "$DIR/bin"
  cp -r "$SRC" "$DIR/src"
  sed -i '/memoryClockRate/d' "$DIR/src/include/cutil_subset.h"
  if grep -rn 'memoryClockRate' "$DIR/src/include" "$DIR/src/src"; then
    echo "$name: memoryClockRate still referenced" >&2; exit 1
  fi
  G2M_VARS=(
    "CUDA_ARCH=-gencode arch=compute_$ARCH,code=sm_$ARCH"
    "CUDA_HOME=$cudahome"
    "NVLDFLAGS=-L$libdir -lcudart_static -ldl -lrt -lpthread"
    "BIN=$DIR/bin/"
  )
  echo "$name: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(g++ --version | head -1), sm_$ARCH, CUDA at $cudahome"
}
