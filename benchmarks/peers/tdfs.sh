#!/usr/bin/env bash
# T-DFS (github.com/lyuheng/tdfs, the GPU matcher of "Faster Depth-First Subgraph Matching on
# GPUs", Yuan et al., ICDE 2024) as a benchmark peer: embeddings of a pattern in a graph, on one
# GPU. Run from the repository root (the GPU machine needs no internet; the build needs none):
#
#   bash benchmarks/peers/tdfs.sh source                     # .peers/tdfs from the fetched mirror
#   bash benchmarks/peers/tdfs.sh build                      # -> $TDFS_DIR/bin/{ulb.out,lb.out,conv/}
#   bash benchmarks/peers/tdfs.sh convert EDGELIST DIR       # SNAP .txt/.txt.gz -> DIR/snap.txt.*
#   bash benchmarks/peers/tdfs.sh run DIR PATTERN.g          # embeddings of the pattern in DIR
#   bash benchmarks/peers/tdfs.sh pattern N                  # path of its shipped pattern N.g
#   bash benchmarks/peers/tdfs.sh selftest                   # convert + run a tiny graph, known counts
#
# Source: .peers/tdfs (git-ignored, never committed): `git archive` of lyuheng/tdfs 4af3d9a (the
# fetch tool's mirror, /work/.mirror/lyuheng+tdfs/repo, or $TDFS_MIRROR; PEER_COMMIT names the
# commit). `source` makes it.
#
# build: copies .peers/tdfs to $TDFS_DIR/src (default /tmp/tdfs; .peers is never modified) and,
#   as its README says, runs `make` in bliss/ (the automorphism library it links), in
#   graph_converter/ and at the top. The one change, made by sed on the copy: the Makefile's
#   `sm_80` -> `sm_$TDFS_ARCH` (default 90, H100) in both -arch and -gencode, and `-cudart static`
#   added to its nvcc options (a make variable's value, no source change), so the binary needs no
#   CUDA runtime library where it runs. Everything else is its own: -O3 is not set by its
#   Makefile (nvcc's default host -O3 applies to device code anyway), -maxrregcount 64,
#   108 blocks of 1024 threads (A100's SM count, src/config.h), GRAPH_DEGREE 4096 (the capacity
#   of a stack level: a larger intersection overflows it), at most 7 pattern vertices, a
#   timeout queue of 1,000,000 tasks, tau = its default.
#   Checked: builds with nvcc 13.0 + g++ 12.2 (no GPU).
#
# convert: the graph_converter steps of its convert.sh (snapToBin, bsort, makeLists, compactify;
#   not halve or labelize, which only the labeled binary needs), on a copy of EDGELIST as
#   DIR/snap.txt (gunzipped when .gz); convert.sh itself would also run make and delete the
#   text. Ids are renumbered in order of appearance; duplicates are dropped; self-loops are not
#   (give it a graph without them: benchmarks/sm_tdfs.py writes gthinker's own parse).
#   Output: DIR/snap.txt.meta.txt (n, directed entries, 4, max degree), .vertex.bin (uint64 row
#   pointers), .edge.bin (uint32 sorted neighbour lists).
#
# run: bin/ulb.out DIR/snap.txt PATTERN.g (the unlabeled binary). Its last stdout line is
#   PATTERN<TAB>kernel_ms<TAB>count: the kernel time is CUDA events around its one kernel
#   launch (graph loading, the symmetry analysis with bliss and the copies are outside it); the
#   count is embeddings (distinct subgraphs x |Aut|, it multiplies by PatternMultiplicity).
#   This script adds `tdfs_wall_seconds = S` (the whole process).
#   Regexes: ^([^\t]+)\t([0-9.]+)\t(\d+)$   and   ^tdfs_wall_seconds = ([0-9.]+)$
#
# Patterns (data/pattern/N.g, `# t 0`, `v ID LABEL`, `e U V LABEL`; 1-7 unlabeled):
#   1 diamond (01 02 03 12 13)              5 wheel W4 (01 02 03 04 12 14 23 34)
#   2 4-clique                              6 5-clique minus an edge (no 24)
#   3 4-clique + a vertex on 0, 1           7 5-clique
#   4 diamond + a vertex on its tips (01 02 03 12 13 24 34)
#
# Env: TDFS_DIR (build dir, default /tmp/tdfs), TDFS_ARCH (default 90), TDFS_SRC (default
#   .peers/tdfs), TDFS_MIRROR (the fetched git dir), PYTHON (default python3).
set -euo pipefail
source "$(dirname "$0")/build_info.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${TDFS_SRC:-$ROOT/.peers/tdfs}
DIR=${TDFS_DIR:-/tmp/tdfs}
ARCH=${TDFS_ARCH:-90}
MIRROR=${TDFS_MIRROR:-/work/.mirror/lyuheng+tdfs/repo}
PY=${PYTHON:-python3}

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

source_tree() {
  [ -d "$MIRROR" ] || { echo "tdfs: no mirror at $MIRROR (fetch github:lyuheng/tdfs first)" >&2; exit 1; }
  rm -rf "$SRC"
  mkdir -p "$SRC"
  git --git-dir="$MIRROR" archive HEAD | tar -x -C "$SRC"
  git --git-dir="$MIRROR" rev-parse HEAD > "$SRC/PEER_COMMIT"
  echo "tdfs: $SRC at $(cat "$SRC/PEER_COMMIT")"
}

build() {
  [ -f "$SRC/src/gpu_match.cu" ] || { echo "tdfs: no source at $SRC (run '$0 source')" >&2; exit 1; }
  command -v nvcc >/dev/null || { echo "tdfs: nvcc not on PATH" >&2; exit 1; }
  local j
  j=$(nproc 2>/dev/null || echo 8)
  rm -rf "$DIR/src" "$DIR/bin"
  mkdir -p "$DIR/bin/conv"
  cp -r "$SRC" "$DIR/src"
  sed -i "s/sm_80/sm_$ARCH/g; s/compute_80/compute_$ARCH/g; s/^OPTIONS = /OPTIONS = -cudart static /" \
    "$DIR/src/Makefile"
  grep -q "sm_$ARCH" "$DIR/src/Makefile" && ! grep -q 'sm_80\|compute_80' "$DIR/src/Makefile" ||
    { echo "tdfs: the Makefile's arch was not changed" >&2; exit 1; }
  echo "tdfs: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(g++ --version | head -1), sm_$ARCH"
  make -C "$DIR/src/bliss" -j"$j" lib > "$DIR/bliss.log" 2>&1 ||
    { tail -20 "$DIR/bliss.log"; exit 1; }
  make -C "$DIR/src/graph_converter" _all -j"$j" > "$DIR/converter.log" 2>&1 ||
    { tail -20 "$DIR/converter.log"; exit 1; }
  make -C "$DIR/src" all > "$DIR/build.log" 2>&1 || { tail -40 "$DIR/build.log"; exit 1; }
  cp "$DIR/src/bin/ulb.out" "$DIR/src/bin/lb.out" "$DIR/bin/"
  cp "$DIR/src/graph_converter/bin/"* "$DIR/bin/conv/"
  build_info "sm_$ARCH; change: sed s/sm_80/sm_$ARCH/ on the Makefile; -cudart static"
}

convert() {
  local src=$1 out=$2
  [ -x "$DIR/bin/conv/snapToBin" ] || { echo "tdfs: $DIR/bin/conv missing: run '$0 build'" >&2; exit 1; }
  mkdir -p "$out"
  out=$(cd "$out" && pwd)  # the steps below run inside it
  local f="$out/snap.txt"
  case "$src" in
    *.gz) gzip -dc "$src" > "$f" ;;
    *) cp "$src" "$f" ;;
  esac
  (
    cd "$out"
    "$DIR/bin/conv/snapToBin" "$f"
    "$DIR/bin/conv/bsort" -k 4 -r 8 -v "$f.rev.bin"
    "$DIR/bin/conv/makeLists" "$f"
    rm -f "$f.bin" "$f.rev.bin" "$f.raw.degree.bin"
    "$DIR/bin/conv/compactify" "$f"
    rm -f "$f.raw.edge.bin" "$f.raw.vertex.bin" "$f"
  ) > "$out/convert.log" 2>&1 || { tail -20 "$out/convert.log"; exit 1; }
  echo "tdfs: $out/snap.txt.meta.txt: $(tr '\n' ' ' < "$f.meta.txt")"
}

run() {
  local g=$1 p=$2
  [ -x "$DIR/bin/ulb.out" ] || { echo "tdfs: $DIR/bin/ulb.out missing: run '$0 build'" >&2; exit 1; }
  [ -f "$g/snap.txt.meta.txt" ] || { echo "tdfs: $g/snap.txt.* missing: run '$0 convert EDGELIST $g'" >&2; exit 1; }
  timed tdfs "$DIR/bin/ulb.out" "$g/snap.txt" "$p"
}

pattern() {
  local f="$DIR/src/data/pattern/$1.g"
  [ -f "$f" ] || f="$SRC/data/pattern/$1.g"
  [ -f "$f" ] || { echo "tdfs: no pattern $1.g" >&2; exit 1; }
  echo "$f"
}

selftest() {
  # K6 (ids scattered) and, apart, a wheel W4 (hub 50, rim 51-52-53-54) with a pendant; the
  # expected embeddings of patterns 1, 5 and 7 are counted here by brute force over injective
  # maps (Python), not written down.
  local t fail=0
  t=$(mktemp -d)
  "$PY" - "$t/mix.txt" "$t/expected" "$(pattern 1)" "$(pattern 5)" "$(pattern 7)" <<'PY'
import itertools, sys
edges = set()
k6 = [100, 7, 55, 3, 999, 12]
edges |= {tuple(sorted(e)) for e in itertools.combinations(k6, 2)}
rim = [51, 52, 53, 54]
edges |= {(50, r) for r in rim} | {tuple(sorted((rim[i], rim[(i + 1) % 4]))) for i in range(4)}
edges |= {(54, 77)}
with open(sys.argv[1], "w") as f:
    f.write("# selftest\n")
    for a, b in sorted(edges):
        f.write(f"{a}\t{b}\n")
adj = {}
for a, b in edges:
    adj.setdefault(a, set()).add(b); adj.setdefault(b, set()).add(a)
def embeddings(path):
    pe = [tuple(map(int, l.split()[1:3])) for l in open(path) if l.startswith("e ")]
    k = 1 + max(max(e) for e in pe)
    return sum(all(m[b] in adj[m[a]] for a, b in pe)
               for m in itertools.permutations(sorted(adj), k))
with open(sys.argv[2], "w") as f:
    for p in sys.argv[3:]:
        f.write(f"{p}\t{embeddings(p)}\n")
PY
  convert "$t/mix.txt" "$t/mix" > /dev/null
  while IFS=$'\t' read -r p want; do
    local out got
    out=$(run "$t/mix" "$p") || true
    got=$(echo "$out" | awk -F'\t' 'NF == 3 { c = $3 } END { print c }')
    echo "$(basename "$p"): $got embeddings (brute force: $want)"
    [ "$got" = "$want" ] || { echo "SELFTEST FAIL: $(basename "$p")"; fail=1; }
  done < "$t/expected"
  rm -rf "$t"
  [ $fail = 0 ] && echo "tdfs selftest: ok"
  return $fail
}

case "${1:-}" in
  source) source_tree ;;
  build) build ;;
  convert) [ $# -eq 3 ] || usage; convert "$2" "$3" ;;
  run) [ $# -eq 3 ] || usage; run "$2" "$3" ;;
  pattern) [ $# -eq 2 ] || usage; pattern "$2" ;;
  selftest) selftest ;;
  *) usage ;;
esac
