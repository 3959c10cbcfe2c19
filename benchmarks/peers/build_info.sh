# Sourced by the peers' scripts: build_info NOTE writes $DIR/BUILD_INFO (the peer's
# commit from $SRC/PEER_COMMIT, the compilers, NOTE: what was changed to build it) and
# lists $DIR/bin; timed NAME COMMAND... runs the command, then prints
# "NAME_wall_seconds = S" (the whole process), and keeps its exit status.
build_info() {
  {
    cat "$SRC/PEER_COMMIT" 2>/dev/null || true
    nvcc --version | tail -2
    g++ --version | head -1
    echo "$1"
  } > "$DIR/BUILD_INFO"
  ls -l "$DIR/bin"
}

timed() {
  local name=$1 t0 t1 rc=0
  shift
  t0=$(date +%s.%N)
  "$@" || rc=$?
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v n="$name" 'BEGIN { printf "%s_wall_seconds = %.6f\n", n, b - a }'
  return $rc
}
