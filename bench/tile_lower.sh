#!/bin/bash
# tile_lower.sh - how long the tile compiler takes (lexing to generated CUDA,
# in process: `tile_ms` of `kbench compile --json`) for every .tile example
# in kernels/, REPS runs each on a compile-cache hit (so NVRTC stays out of
# the process; the lowering runs on every compile, hit or miss).  Target:
# < 5 ms for every example.  No GPU needed.
#
# Usage: bench/tile_lower.sh [REPS]   (repository root, after make)
# Prints a table; commit its output as bench/tile_lower.txt.
set -eu
REPS=${1:-31}
KB=${KB:-build/kbench}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/cache" KBENCH_NO_SESSION=1
echo "# tile lowering, $(date -u +%Y-%m-%dT%H:%MZ), code at $(git rev-parse --short HEAD)," \
     "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'))"
printf '%-40s %6s %8s %8s %8s %8s\n' example lines min_ms med_ms max_ms cuda_lines
for f in kernels/*.tile kernels/*/*.tile; do
	"$KB" compile "$f" --arch sm_90 >/dev/null 2>&1 || { echo "$f: does not compile" >&2; exit 1; }
	for _ in $(seq "$REPS"); do
		"$KB" compile "$f" --arch sm_90 --json --no-sass |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["tile_ms"])'
	done | sort -g >"$TMP/ms"
	gen=$("$KB" compile "$f" --emit-cuda | wc -l)
	awk -v f="$f" -v lines="$(wc -l <"$f")" -v gen="$gen" \
	    '{ v[NR] = $1 } END { printf "%-40s %6d %8.3f %8.3f %8.3f %8d\n", f, lines, v[1], v[int((NR + 1) / 2)], v[NR], gen }' "$TMP/ms"
done
