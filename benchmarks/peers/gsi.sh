#!/usr/bin/env bash
# GSI (github.com/pkumod/GSI, the GPU matcher of "GSI: GPU-friendly Subgraph Isomorphism",
# Zeng et al., ICDE 2020; SGSI's code base) as a benchmark peer: subgraph isomorphisms of
# directed, vertex- and edge-labeled queries in a data graph, on one GPU. Run from the
# repository root (the GPU machine needs no internet; the build needs none):
#
#   bash benchmarks/peers/gsi.sh source                    # .peers/gsi from the fetched mirror
#   bash benchmarks/peers/gsi.sh build                     # -> $GSI_DIR/bin/GSI.exe
#   bash benchmarks/peers/gsi.sh run DATA.g QUERIES.g      # one line per query: count, times
#   bash benchmarks/peers/gsi.sh sample                    # path of its data/ folder
#   bash benchmarks/peers/gsi.sh selftest                  # its samples + a small graph, known counts
#
# Source: .peers/gsi (git-ignored, never committed): `git archive` of pkumod/GSI ae9a692 (the
# fetch tool's mirror, /work/.mirror/pkumod+GSI/repo, or $GSI_MIRROR; PEER_COMMIT names the
# commit). `source` makes it.
#
# build: copies .peers/gsi to $GSI_DIR/src (default /tmp/gsi; .peers is never modified),
#   removes the object files it ships (objs/IO.o, objs/Util.o, built elsewhere) and runs its
#   Makefile with one variable given on make's command line (no source change): NVCC, its own
#   line less `-G` (device debug code: every kernel unoptimised), `--ptxas-options=-v`,
#   `-lineinfo` and `-I ~/cudaToolkit/cub-1.8.0/` (the toolkit's own CUB serves its
#   `cub/cub.cuh`), with `-arch=sm_$GSI_ARCH` (default 90, H100) for `sm_35` and
#   `-cudart static` (the binary needs no CUDA runtime library where it runs). It keeps
#   `-rdc=true -lcudadevrt -Xcompiler -rdynamic` and its flags (-O2; ptxas optimises device
#   code at -O3 by default). Changed by sed on the copy, for CUDA 13: the GPU description
#   it prints reads `devProps.clockRate`, gone from cudaDeviceProp: 0 there; its warp
#   shuffles `__shfl_up(x, s)` and `__shfl(x, l)` (removed in CUDA 9's favour of the _sync
#   forms) -> `__shfl_up_sync(__activemask(), x, s)`, `__shfl_sync(__activemask(), x, l)`,
#   what the old forms did (gSWORD's build, ../shared/GPU.md, took the same change); and
#   for g++ 12 and later, its `hash()` in graph/Graph.cpp, ambiguous beside std::hash under
#   `using namespace std`, renamed gsi_hash(). In the Makefile (sed), its GSI.exe rule
#   compiles main/run.cpp, which includes CUB through match/Match.h, as CUDA (`-x cu -c`,
#   then the link): a host compiler cannot read CUB 2's headers.
#
# run: GSI.exe DATA.g QUERIES.g /dev/null (matches are written to the third argument, here
#   nowhere; formatting them is still inside its timing). Per query it prints
#   `result: ROWS COLS` on stdout (ROWS: the matches, one per isomorphism, i.e. embeddings of
#   a directed query: an undirected graph written both ways counts embeddings), and once, on
#   stderr, `match used: MS ms` (every query's matching, copies to and from the GPU and the
#   writing of the matches included; reading the files and the GPU's warm-up not). This
#   script prints `gsi_count QUERY ROWS` for each query, `gsi_match_ms = MS` and
#   `gsi_wall_seconds = S` (the whole process). A query it gives up on ("query already fail
#   after filter") has ROWS 0.
#   Regexes: ^gsi_count (\d+) (\d+)$   ^gsi_match_ms = (\d+)$   ^gsi_wall_seconds = ([0-9.]+)$
#
# Format (.g; data/readme): `t # 0`, `N M MAX_VERTEX_LABEL MAX_EDGE_LABEL`, `v ID LABEL` in id
#   order, `e FROM TO LABEL` (directed; labels from 1), `t # -1`; a query file holds one graph
#   or more. benchmarks/peers/gsi_convert.py writes it from gthinker's graphs and queries.
#
# Env: GSI_DIR (build dir, default /tmp/gsi), GSI_ARCH (default 90), GSI_SRC (default
#   .peers/gsi), GSI_MIRROR (the fetched git dir), PYTHON (default python3).
set -euo pipefail
source "$(dirname "$0")/build_info.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${GSI_SRC:-$ROOT/.peers/gsi}
DIR=${GSI_DIR:-/tmp/gsi}
ARCH=${GSI_ARCH:-90}
MIRROR=${GSI_MIRROR:-/work/.mirror/pkumod+GSI/repo}
PY=${PYTHON:-python3}

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

source_tree() {
  [ -d "$MIRROR" ] || { echo "gsi: no mirror at $MIRROR (fetch github:pkumod/GSI first)" >&2; exit 1; }
  rm -rf "$SRC"
  mkdir -p "$SRC"
  git --git-dir="$MIRROR" archive HEAD | tar -x -C "$SRC"
  git --git-dir="$MIRROR" rev-parse HEAD > "$SRC/PEER_COMMIT"
  echo "gsi: $SRC at $(cat "$SRC/PEER_COMMIT")"
}

NVCC_LINE="nvcc -arch=sm_$ARCH -cudart static -lcudadevrt -rdc=true -Xcompiler -rdynamic"

build() {
  [ -f "$SRC/match/Match.cu" ] || { echo "gsi: no source at $SRC (run '$0 source')" >&2; exit 1; }
  command -v nvcc >/dev/null || { echo "gsi: nvcc not on PATH" >&2; exit 1; }
  rm -rf "$DIR/src" "$DIR/bin"
  mkdir -p "$DIR/bin"
  cp -r "$SRC" "$DIR/src"
  rm -f "$DIR/src/objs/"*.o
  # CUDA 13 has no cudaDeviceProp::clockRate; it is only printed (the GPU's description)
  # and has no mask-less warp shuffles (gone since CUDA 9's _sync forms)
  sed -i 's/(int)devProps\.clockRate/0/; s/__shfl_up(/__shfl_up_sync(__activemask(), /g;
          s/__shfl(/__shfl_sync(__activemask(), /g' "$DIR/src/match/Match.cu"
  # its .cpp main includes CUB through Match.h: compiled as CUDA (-x cu), then linked
  sed -i 's|-o GSI.exe main/run.cpp $(objfile)|-x cu -c main/run.cpp -o $(objdir)run.o \&\& $(NVCC) $(EXEFLAG) -o GSI.exe $(objdir)run.o $(objfile)|' \
    "$DIR/src/Makefile"
  grep -q 'x cu -c main/run.cpp' "$DIR/src/Makefile" ||
    { echo "gsi: the Makefile's GSI.exe rule was not changed" >&2; exit 1; }
  # g++ 12+: its hash() clashes with std::hash (using namespace std): renamed in Graph.cpp
  sed -i 's/\bhash(/gsi_hash(/g' "$DIR/src/graph/Graph.cpp"
  echo "gsi: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(g++ --version | head -1), sm_$ARCH"
  make -C "$DIR/src" NVCC="$NVCC_LINE" GSI.exe > "$DIR/build.log" 2>&1 ||
    { tail -40 "$DIR/build.log"; exit 1; }
  cp "$DIR/src/GSI.exe" "$DIR/bin/"
  build_info "sm_$ARCH; change: make NVCC='$NVCC_LINE' (its own less -G, ptxas -v, -lineinfo, the cub-1.8.0 -I); shipped objs/*.o removed; sed: devProps.clockRate -> 0 (printed only), __shfl(_up) -> __shfl(_up)_sync(__activemask(), ...); Graph.cpp hash() -> gsi_hash(); Makefile: run.cpp compiled with -x cu"
}

run() {
  local data=$1 queries=$2 out rc=0
  [ -x "$DIR/bin/GSI.exe" ] || { echo "gsi: $DIR/bin/GSI.exe missing: run '$0 build'" >&2; exit 1; }
  out=$(mktemp)
  timed gsi "$DIR/bin/GSI.exe" "$data" "$queries" /dev/null > "$out" 2>&1 || rc=$?
  awk '/^result: / { print "gsi_count", n++, $2 }
       /^match used: / { print "gsi_match_ms =", $3 }
       /^gsi_wall_seconds = / { print }
       /query already fail after filter/ { print "gsi_count", n++, 0 }' "$out"
  [ $rc = 0 ] || { echo "gsi: exit status $rc; its last lines:" >&2; tail -5 "$out" >&2; }
  rm -f "$out"
  return $rc
}

sample() {
  local d="$DIR/src/data"
  [ -d "$d" ] || d="$SRC/data"
  [ -d "$d" ] || { echo "gsi: no data/ (run '$0 source')" >&2; exit 1; }
  echo "$d"
}

selftest() {
  # Its own samples (a directed 3-cycle; queries a 2-edge path, an in-star, a 3-cycle), then
  # a small undirected graph written both ways (gsi_convert.py) with 3 vertex labels and 2 edge
  # labels; the expected counts come from networkx's DiGraphMatcher (monomorphisms with node
  # and edge label matching), not written down.
  local t fail=0 d
  t=$(mktemp -d)
  d=$(sample)
  "$PY" "$HERE/gsi_convert.py" selftest "$t" "$d" > "$t/expected"
  while read -r data queries want; do
    local got
    got=$(run "$data" "$queries" | awk '/^gsi_count/ { printf "%s%s", s, $3; s = "," }') || true
    echo "$(basename "$data") $(basename "$queries"): $got (networkx: $want)"
    [ "$got" = "$want" ] || { echo "SELFTEST FAIL: $(basename "$queries")"; fail=1; }
  done < "$t/expected"
  rm -rf "$t"
  [ $fail = 0 ] && echo "gsi selftest: ok"
  return $fail
}

case "${1:-}" in
  source) source_tree ;;
  build) build ;;
  run) [ $# -eq 3 ] || usage; run "$2" "$3" ;;
  sample) sample ;;
  selftest) selftest ;;
  *) usage ;;
esac
