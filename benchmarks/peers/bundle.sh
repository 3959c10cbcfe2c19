#!/usr/bin/env bash
# The seed tables' peers built here (nvcc, no GPU needed) and carried to the GPU machine as one
# compressed file. From the repository root:
#
#   bash benchmarks/peers/bundle.sh build     # sources (if missing), builds, strips, packs
#                                             # -> .peers/seed-peers-sm$ARCH.tar.xz
#   bash benchmarks/peers/bundle.sh unpack DEST   # on the GPU machine: DEST/{mcegpu,tdfs,gthinkercg,g2miner}
#   bash benchmarks/peers/bundle.sh list      # what the bundle holds, and its size
#
# build: for each peer (MCE-GPU, T-DFS, G-ThinkerCG, G2Miner) runs its script's `source` where
#   .peers/<its source> is missing (from the fetch tool's mirrors; G2Miner's source must be
#   there already, see g2miner.sh) and its `build` into .peers/build/<peer> (each script's
#   patches and flags: sm_$ARCH, -cudart static), then copies only what a run needs, stripped:
#     mcegpu/parallel_mce_on_gpus                      (benchmarks/peers/mce_gpu.sh, MCEGPU_DIR)
#     tdfs/bin/ulb.out, tdfs/src/data/pattern/*.g       (benchmarks/peers/tdfs.sh, TDFS_DIR)
#     gthinkercg/bin/{app_mc,app_gmatch}               (benchmarks/peers/gthinkercg.sh, GCG_DIR)
#     g2miner/bin/{tc_gpu_base,clique_gpu_base}        (benchmarks/peers/g2miner.sh, G2M_DIR)
#   and each BUILD_INFO (the peer's commit, the compilers, what was changed), into one
#   .tar.xz. Carry that one file (`carry: [".peers/seed-peers-sm90.tar.xz", ...]`).
# unpack: extracts it into DEST and checks every binary is there; the scripts then run with
#   MCEGPU_DIR=DEST/mcegpu TDFS_DIR=DEST/tdfs GCG_DIR=DEST/gthinkercg G2M_DIR=DEST/g2miner
#   (benchmarks/seed_tables.py --peers DEST sets them).
#
# Env: ARCH (default 90), PEERS_BUNDLE (default .peers/seed-peers-sm$ARCH.tar.xz).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ARCH=${ARCH:-90}
BUNDLE=${PEERS_BUNDLE:-$ROOT/.peers/seed-peers-sm$ARCH.tar.xz}
BUILD=$ROOT/.peers/build
#: every file a run needs, relative to the bundle's top
FILES=(mcegpu/parallel_mce_on_gpus tdfs/bin/ulb.out gthinkercg/bin/app_mc gthinkercg/bin/app_gmatch
       g2miner/bin/tc_gpu_base g2miner/bin/clique_gpu_base)

step() {  # NAME COMMAND...: run, print its duration
  local t0 rc=0
  t0=$(date +%s)
  echo "== $1"
  shift
  "$@" || rc=$?
  echo "== done in $(( $(date +%s) - t0 )) s (rc $rc)"
  return $rc
}

build() {
  command -v nvcc >/dev/null || { echo "bundle: nvcc not on PATH" >&2; exit 1; }
  [ -d "$ROOT/.peers/mce-gpu" ] || bash "$HERE/mce_gpu.sh" source
  [ -d "$ROOT/.peers/tdfs" ] || bash "$HERE/tdfs.sh" source
  [ -d "$ROOT/.peers/gthinkercg" ] || bash "$HERE/gthinkercg.sh" source
  [ -d "$ROOT/.peers/GraphMiner" ] || { echo "bundle: no .peers/GraphMiner (see g2miner.sh)" >&2; exit 1; }
  rm -rf "$BUILD"
  step "MCE-GPU" env MCEGPU_DIR="$BUILD/mcegpu" MCEGPU_ARCH="$ARCH" bash "$HERE/mce_gpu.sh" build
  step "T-DFS" env TDFS_DIR="$BUILD/tdfs" TDFS_ARCH="$ARCH" bash "$HERE/tdfs.sh" build
  step "G-ThinkerCG" env GCG_DIR="$BUILD/gthinkercg" GCG_ARCH="$ARCH" bash "$HERE/gthinkercg.sh" build
  step "G2Miner" env G2M_DIR="$BUILD/g2miner" G2M_ARCH="$ARCH" bash "$HERE/g2miner.sh" build
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/tdfs/src/data"
  for f in "${FILES[@]}"; do
    mkdir -p "$stage/$(dirname "$f")"
    cp "$BUILD/$f" "$stage/$f"
    strip "$stage/$f"
  done
  cp -r "$BUILD/tdfs/src/data/pattern" "$stage/tdfs/src/data/"
  for p in mcegpu tdfs gthinkercg g2miner; do cp "$BUILD/$p/BUILD_INFO" "$stage/$p/"; done
  mkdir -p "$(dirname "$BUNDLE")"
  tar -C "$stage" -cf - . | xz -9e -T0 > "$BUNDLE.part"
  mv "$BUNDLE.part" "$BUNDLE"
  rm -rf "$stage"
  echo "bundle: $BUNDLE, $(stat -c %s "$BUNDLE") bytes ($(du -h "$BUNDLE" | cut -f1))"
}

unpack() {
  local dest=$1 f
  [ -f "$BUNDLE" ] || { echo "bundle: no $BUNDLE (run '$0 build' where nvcc is, and carry it)" >&2; exit 1; }
  mkdir -p "$dest"
  xz -dc "$BUNDLE" | tar -x -C "$dest"
  for f in "${FILES[@]}"; do
    [ -x "$dest/$f" ] || { echo "bundle: $dest/$f missing from $BUNDLE" >&2; exit 1; }
  done
  echo "bundle: unpacked $(basename "$BUNDLE") into $dest ($(du -sh "$dest" | cut -f1))"
}

case "${1:-}" in
  build) build ;;
  unpack) [ $# -eq 2 ] || { sed -n 2,10p "$0"; exit 2; }; unpack "$2" ;;
  list) xz -dc "$BUNDLE" | tar -tv; echo "$(stat -c %s "$BUNDLE") bytes" ;;
  *) sed -n 2,10p "$0"; exit 2 ;;
esac
