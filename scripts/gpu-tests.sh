#!/bin/sh
# gpu-tests.sh [SCRIPT...] - the CLI test scripts that need a GPU (by default
# run_gpu.sh, guard_gpu.sh and tile.sh), each under its own timeout, from
# the make-dist tarball (nothing is built here), KBENCH_REQUIRE_GPU=1 so a
# GPU test cannot skip; the whole suite (scripts/gpu-check.sh) takes longer
# than one device call on one GPU.  Out: $OUT/tests-NAME.log each, and a
# line a script last: its passed/failed/skipped and seconds.
# Usage: OUT=DIR sh scripts/gpu-tests.sh [run_gpu guard_gpu ...] (repo root)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SUM=$(mktemp)
for t in ${*:-run_gpu guard_gpu tile}; do
	s=$(date +%s)
	KBENCH_REQUIRE_GPU=1 timeout "${LIMIT:-200}" sh "tests/cli/$t.sh" >"$OUT/tests-$t.log" 2>&1
	rc=$?
	echo "$t: rc $rc, $(( $(date +%s) - s )) s, $(grep -E '^# passed=' "$OUT/tests-$t.log" | tail -1)" >>"$SUM"
	grep -E '^ *FAIL' "$OUT/tests-$t.log" | head -10 >>"$SUM"
done
cat "$SUM"
