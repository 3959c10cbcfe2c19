# Sourced by the device_*.sh scripts, from the repository root on the GPU machine: installs
# the carried wheels (.whl/) and gthinker itself, then moves to /tmp so that Python imports
# the installed package, not the checkout. Sets ROOT and OUT. It turns on `set -euo pipefail`
# for the scripts; a one-off command that sources it should `set +e` after, or its first
# failing step ends the whole command with nothing printed. DEVICE_ENV_TIMEOUT (seconds, unset:
# none): each pip step under `timeout -k 5` for that long.
set -euo pipefail
_limit=()
[ -n "${DEVICE_ENV_TIMEOUT:-}" ] && _limit=(timeout -k 5 "$DEVICE_ENV_TIMEOUT")
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/results/device}
mkdir -p "$OUT"
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
# DEVICE_ENV_ONCE (a file name): a script that runs several device scripts installs once.
if [ -z "${DEVICE_ENV_ONCE:-}" ] || [ ! -f "$DEVICE_ENV_ONCE" ]; then
"${_limit[@]}" python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl
"${_limit[@]}" python3 -m pip install -q --no-build-isolation --no-deps .
[ -n "${DEVICE_ENV_ONCE:-}" ] && touch "$DEVICE_ENV_ONCE"
fi
cd /tmp
# Byte-compile what was installed, as a user's pip install does (this machine does not
# write .pyc files on import; without them every process compiles ~1 s of Python source).
"${_limit[@]}" python3 -m compileall -q -j 0 /tmp/site "$(python3 -c 'import gthinker, os; print(os.path.dirname(gthinker.__file__))')" > /dev/null || true

# The device tool brings back at most 8 files of $OUT (each under 16 MiB). A script that
# leaves more packs them, at its exit, into one archive $OUT/results-SCRIPT-PID.tar.gz
# (`tar -xzf` it where the tool put it); nothing is deleted unless the archive was written.
# Two scripts in one call each pack what they find.
pack_out() {
  local rc=$? name
  if [ "$(find "$OUT" -type f | wc -l)" -gt "${OUT_FILES_MAX:-8}" ]; then
    name="results-$(basename "$0" .sh)-$$.tar.gz"
    if (cd "$OUT" && find . -mindepth 1 -maxdepth 1 ! -name "$name" -printf '%P\n' |
        tar -czf "$name" -T -); then
      find "$OUT" -mindepth 1 ! -name "$name" -delete 2>/dev/null || true
    else
      rm -f "$OUT/$name"
      echo "device_env: could not pack $OUT; the tool brings back 8 files of it" >&2
    fi
  fi
  return $rc
}
trap pack_out EXIT
