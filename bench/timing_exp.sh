#!/bin/sh
# timing_exp.sh - which event arrangement tracks ncu's gpu__time_duration for
# short kernels.  Span programs (KBENCH_TIMING_EXP="A-B": the sample is
# span(A) - span(B); F flush, K kernel, Z empty kernel, e event):
#   FeFKe-FeFe   kbench's differential default
#   FeKe         plain events
#   FeFKe-FeFZe  difference against an empty kernel
#   FeFZKe-FeFZe the kernel behind an empty kernel instead of the flush
#   FZeKe        plain events, the event behind an empty kernel
# Usage: bench/timing_exp.sh (repo root, GPU machine).
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PROGS=${PROGS:-"FeFKe-FeFe FeKe FeFKe-FeFZe FeFZKe-FeFZe FZeKe"}
echo "timing arrangements vs ncu  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $(git rev-parse --short HEAD 2>/dev/null)"
printf '%-34s %8s' kernel ncu; for p in $PROGS; do printf ' %14s' "$p"; done; echo
. "$(dirname "$0")/ncu_med.sh"
SPECS=${SPECS:-"bench/kernels/layernorm_f32.cu layernorm_fwd
bench/kernels/rmsnorm_bf16.cu rmsnorm_fwd
bench/kernels/transpose_f32.cu transpose_tiled
bench/kernels/row_sum_f32.cu row_sum
kernels/softmax.cu softmax_rows M=4096,N=2048
kernels/vector_add.cu vector_add n=4194304
kernels/vector_add.cu vector_add n=2097152
kernels/vector_add.cu vector_add n=8388608"}
echo "$SPECS" | while read -r spec; do
	[ -n "$spec" ] || continue
	set -- $spec
	f=$1 k=$2 extra=
	if [ -n "${3:-}" ]; then
		for a in $(echo "$3" | tr ',' ' '); do extra="$extra --arg $a"; done
	fi
	line=$(ncu_med "$f" "$k" $extra)
	printf "%-34s %8s" "$(basename $f) ${3:-}" "$line"
	for p in $PROGS; do
		: > "$TMP/m"
		for i in 1 2 3; do
			KBENCH_TIMING_EXP=$p "$KB" run "$f" $extra --no-sweep --json > "$TMP/r.json" 2>/dev/null
			python3 -c "import json; print(json.load(open('$TMP/r.json'))['timing']['median_us'])" >> "$TMP/m" 2>/dev/null
		done
		python3 - "$TMP/m" "$line" <<'PY'
import statistics, sys
v = [float(x) for x in open(sys.argv[1]) if x.strip()]
n = float(sys.argv[2])
m = statistics.median(v) if v else float("nan")
print(" %6.2f(%+5.1f%%)" % (m, (m - n) / n * 100), end="")
PY
	done
	echo "  ncu again $(ncu_med "$f" "$k" $extra)"
done
: > "$TMP/z"
for i in 1 2 3; do
	KBENCH_TIMING_EXP=FeZe "$KB" run kernels/vector_add.cu --arg n=1048576 --no-sweep --json > "$TMP/r.json" 2>/dev/null
	python3 -c "import json; print(json.load(open('$TMP/r.json'))['timing']['median_us'])" >> "$TMP/z"
done
echo "empty kernel, plain events (FeZe): $(sort -n "$TMP/z" | sed -n 2p) us"
