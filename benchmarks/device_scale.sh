#!/usr/bin/env bash
# Issue 20's Ray numbers on the GPU machine of the `device` tool (16 cores, Python 3.12, no
# internet): 4 Ray workers x 4 threads against 1 worker x 4 threads, facebook_combined MCE and
# the R-MAT 20 4-clique count (benchmarks/scale.py). From the repository root:
#
#   1. once, here: python3 -m pip download --only-binary=:all: --python-version 3.12 \
#                    --implementation cp --platform manylinux2014_x86_64 \
#                    --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
#                    -d .device/whl_ray "ray==2.60.0"          # ray + its dependencies, 79 MB
#                  mkdir -p .data && cp ../shared/data/snap/facebook_combined.txt.gz .data/
#      The ray wheel alone (79 MB) is over the 64 MiB a call may carry: split it,
#                  mkdir -p .device/ray_a .device/ray_b && split -b 45M .device/whl_ray/ray-*.whl .device/ray_a/ray.whl.part-
#                  rm .device/whl_ray/ray-*.whl
#                  mv .device/ray_a/ray.whl.part-ab .device/ray_b/ && mv .device/whl_ray/*.whl .device/ray_b/
#      (keep the ray wheel's name in RAY_WHEEL below), and carry it over two calls of one
#      warm machine: ignored folders that a call does not carry stay there.
#   2. device run, carry [".device/ray_a"]:  bash benchmarks/device_scale.sh stash
#   3. device run, carry [".device/ray_b", ".whl", ".data"]:  bash benchmarks/device_scale.sh run
#
# run: about 220 s on the H100 host with REPEAT=1 (timed runs per configuration; the R-MAT
# 20 graph is generated first, and the 1-worker runs take longest); REPEAT=2 adds about 60 s.
RAY_WHEEL=${RAY_WHEEL:-ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl}
case "${1:-run}" in
  stash)
    mkdir -p .device/ray_stash && cp .device/ray_a/* .device/ray_stash/ && ls -la .device/ray_stash
    ;;
  run)
    mkdir -p .whl && cat .device/ray_stash/ray.whl.part-* .device/ray_b/ray.whl.part-* > ".whl/$RAY_WHEEL"
    cp .device/ray_b/*.whl .whl/ 2>/dev/null || true
    source "$(dirname "$0")/device_env.sh"
    python3 "$ROOT/benchmarks/scale.py" --facebook "$ROOT/.data/snap/facebook_combined.txt.gz" --workdir /tmp/bench --workers 4 \
      --threads 4 --repeat "${REPEAT:-1}" --out "$OUT/scale.json" 2>&1 | tee "$OUT/scale.log"
    ;;
esac
