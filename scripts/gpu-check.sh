#!/bin/sh
# gpu-check.sh - on a GPU machine, from a working tree with the `make dist`
# tarball: unpack the build, run every test, and show the main job.
# Output goes to stdout and, when $OUT is set, to $OUT/*.log.
set -u
cd "$(dirname "$0")/.."
tar xzf build/dist/kbench-*.tar.gz
OUT=${OUT:-/tmp}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kbench-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
build/kbench devices 2>&1 | tee "$OUT/devices.log"
build/kbench calibrate 2>&1 | tee "$OUT/calibrate.log"
KBENCH_REQUIRE_GPU=1 tests/run.sh > "$OUT/tests.log" 2>&1
tail -40 "$OUT/tests.log"
build/kbench run kernels/softmax.cu 2>&1 | tee "$OUT/softmax.log"
build/kbench compile kernels/softmax.cu 2>&1 | tee -a "$OUT/softmax.log"
