#!/bin/sh
# compile_speed.sh - how fast `kbench compile` is, end to end (wall time of
# the whole process, as a user sees it):
#   - a cache hit of kernels/softmax.cu (the edit loop's common case),
#   - a cold compile (empty cache) of the same file, with the split of its
#     time into parse (spec + tree-sitter), NVRTC, nvJitLink and SASS
#     (wall times include recording the variant in the session, as for a user),
#   - the same for the PTX example through nvJitLink.
# Usage: bench/compile_speed.sh [REPS]   (from the repository root, after make)
# Prints a table; commit its output as bench/compile_speed.txt.
set -eu
KB=${KB:-build/kbench}
REPS=${1:-30}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/cache" XDG_DATA_HOME="$TMP/data"
# The kernels are copied out of this repository, so the session recording
# (on, as for a user) goes to a private store, not to refs in this repo.
mkdir -p "$TMP/k" && cp kernels/softmax.cu kernels/saxpy.ptx "$TMP/k/"

wall_ms() { # command... -> prints wall milliseconds of one run
	s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
	echo "$(( (e - s) / 1000 ))" | awk '{printf "%.2f\n", $1/1000}'
}
stats() { # reads numbers, prints median min max
	sort -n | awk '{v[NR]=$1} END {m = NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2;
		printf "median %7.2f ms   min %7.2f   max %7.2f   (n=%d)\n", m, v[1], v[NR], NR}'
}
split() { # file -> the JSON timing split of one compile
	"$KB" compile "$1" --json | python3 -c "
import json,sys; b=json.load(sys.stdin)['build']; m=b['ms']
print('    in-process %.1f ms: parse %.2f, nvrtc %.2f, nvjitlink %.2f, sass %.2f (cache %s)' % (
      m['total'], m['parse'], m['nvrtc'], m['nvjitlink'], m['sass'], 'hit' if b['cache_hit'] else 'miss'))"
}

echo "kbench compile speed  $(date -u +%Y-%m-%dT%H:%MZ)  $(uname -n)  $(nproc) cores  nvdisasm: $(command -v nvdisasm || echo none)"
for f in "$TMP/k/softmax.cu" "$TMP/k/saxpy.ptx"; do
	echo "kernels/$(basename "$f")"
	rm -rf "$XDG_CACHE_HOME"
	i=0; : > "$TMP/cold"
	while [ $i -lt 5 ]; do
		rm -rf "$XDG_CACHE_HOME"; wall_ms "$KB" compile "$f" >> "$TMP/cold"; i=$((i + 1))
	done
	printf '  cold (empty cache) wall  '; stats < "$TMP/cold"
	rm -rf "$XDG_CACHE_HOME"; split "$f"
	i=0; : > "$TMP/hit"
	while [ $i -lt "$REPS" ]; do wall_ms "$KB" compile "$f" >> "$TMP/hit"; i=$((i + 1)); done
	printf '  cache hit wall           '; stats < "$TMP/hit"
	split "$f"
done
