# Sourced by the peers' build scripts: build_info NOTE writes $DIR/BUILD_INFO (the peer's
# commit from $SRC/PEER_COMMIT, the compilers, NOTE: what was changed to build it) and
# lists $DIR/bin.
build_info() {
  {
    cat "$SRC/PEER_COMMIT" 2>/dev/null || true
    nvcc --version | tail -2
    g++ --version | head -1
    echo "$1"
  } > "$DIR/BUILD_INFO"
  ls -l "$DIR/bin"
}
