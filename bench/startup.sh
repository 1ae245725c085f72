#!/bin/bash
# startup.sh - what a kbench process costs before it does anything, as a user
# sees it (wall time of the whole process, fork to exit):
#   - `kbench --version`,
#   - `kbench compile kernels/softmax.cu` when the compile cache has it (the
#     edit loop's common case; the session recording is on, as for a user),
# for this build and a BEFORE build, interleaved before/after run by run in
# one go, so drift of a shared machine hits both alike.  Then which shared
# libraries each process opens on a cache hit (the loader's own log).
#
# Usage: bench/startup.sh BEFORE_KBENCH [REPS]   (repository root, after make)
#   e.g. git worktree add /tmp/kb-before 9b8f471 && mkdir -p /tmp/kb-before/build &&
#        cp -r build/deps /tmp/kb-before/build/ && make -C /tmp/kb-before -j8 &&
#        bench/startup.sh /tmp/kb-before/build/kbench 41
# Prints a table; commit its output as bench/startup.txt.
set -eu
BEFORE=${1:?usage: bench/startup.sh BEFORE_KBENCH [REPS]}
REPS=${2:-41}
AFTER=${KB:-build/kbench}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The kernel is copied out of this repository, so the session recording goes
# to a private store, not to refs in this repo; each build has its own cache.
mkdir -p "$TMP/k" && cp kernels/softmax.cu "$TMP/k/"
K="$TMP/k/softmax.cu"
export XDG_DATA_HOME="$TMP/data"

rev() { git -C "$1" rev-parse --short HEAD 2>/dev/null || echo "?"; }
dirty() { [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ] && echo "+changes" || true; }
src_of() { cd "$(dirname "$1")/.." && pwd; } # build/kbench -> the checkout

# One run of "$@" with the cache of side $1; prints wall ms.
wall() {
	local side=$1
	shift
	local s=$EPOCHREALTIME
	XDG_CACHE_HOME="$TMP/cache-$side" "$@" >/dev/null 2>&1
	local e=$EPOCHREALTIME
	echo "$s $e" | awk '{printf "%.3f\n", ($2 - $1) * 1000}'
}
# Reads numbers; prints median min max.
stats() {
	sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%8.2f %8.2f %8.2f", m, v[1], v[NR]}'
}
# bench NAME ARGS...: REPS interleaved runs of before and after, after 3
# warm-ups of each; one row per side, then the median of the pair ratios.
bench() {
	local name=$1
	shift
	: > "$TMP/b"; : > "$TMP/a"; : > "$TMP/r"
	for _ in 1 2 3; do wall before "$BEFORE" "$@" >/dev/null; wall after "$AFTER" "$@" >/dev/null; done
	for ((i = 0; i < REPS; i++)); do
		b=$(wall before "$BEFORE" "$@"); a=$(wall after "$AFTER" "$@")
		echo "$b" >> "$TMP/b"; echo "$a" >> "$TMP/a"
		echo "$a $b" | awk '{printf "%.4f\n", $1 / $2}' >> "$TMP/r"
	done
	printf '%-22s before %s\n' "$name" "$(stats < "$TMP/b")"
	printf '%-22s after  %s\n' "" "$(stats < "$TMP/a")"
	printf '%-22s after/before, median of the %d pairs: %.3f\n' "" "$REPS" \
		"$(sort -n "$TMP/r" | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')"
}
# Libraries the loader opens for one cache hit of side $1 (binary $2).
libs() {
	XDG_CACHE_HOME="$TMP/cache-$1" LD_DEBUG=files "$2" compile "$K" 2>&1 >/dev/null |
		sed -n 's/.*file=\([^ ]*\) .*generating link map.*/\1/p' | sort -u
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
virt=$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor:[[:space:]]*//p')
echo "kbench start-up  $(date -u +%Y-%m-%dT%H:%MZ)  host $(uname -n), $(uname -sr)"
echo "machine: nproc $(nproc), ${cpu:-unknown CPU}${virt:+ ($virt virtual machine)}, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
echo "before: $(rev "$(src_of "$BEFORE")")$(dirty "$(src_of "$BEFORE")")  $BEFORE"
echo "after:  $(rev "$(src_of "$AFTER")")$(dirty "$(src_of "$AFTER")")  $AFTER"
echo "wall ms of the whole process, $REPS runs of each side, before and after in turn"
echo
# Fill both caches; a hit must be a hit.
XDG_CACHE_HOME="$TMP/cache-before" "$BEFORE" compile "$K" >/dev/null
XDG_CACHE_HOME="$TMP/cache-after" "$AFTER" compile "$K" >/dev/null
for side in before after; do
	bin=$BEFORE; [ $side = after ] && bin=$AFTER
	XDG_CACHE_HOME="$TMP/cache-$side" "$bin" compile "$K" | grep -q "cache hit" ||
		{ echo "$side: the second compile was not a cache hit" >&2; exit 1; }
done
printf '%-22s %-6s %8s %8s %8s\n' "" "" median min max
bench "--version" --version
echo "                       (target: after <= 10 ms)"
bench "compile, cache hit" compile "$K"
echo "                       (target: after <= 20 ms)"
echo
for side in before after; do
	bin=$BEFORE; [ $side = after ] && bin=$AFTER
	l=$(libs $side "$bin")
	echo "libraries loaded by a cache hit, $side: $(echo "$l" | grep -c .) -" $l
done
# Peak resident memory of one run (GNU time's %M, KiB).
peak() { XDG_CACHE_HOME="$TMP/cache-$1" /usr/bin/time -f %M -o "$TMP/m" "${@:2}" >/dev/null 2>&1; cat "$TMP/m"; }
if [ -x /usr/bin/time ]; then
	echo "peak resident memory, KiB: --version before $(peak before "$BEFORE" --version)," \
	     "after $(peak after "$AFTER" --version); cache hit before $(peak before "$BEFORE" compile "$K")," \
	     "after $(peak after "$AFTER" compile "$K")"
fi
