#!/bin/sh
# ncu_short.sh - kernels of 10-40 us: kbench's median against Nsight
# Compute's gpu__time_duration.sum for the same kernel, inputs and launch.
# Per kernel: kbench's default timing, 5 runs (the median of their medians,
# and their min-max); ncu twice, gpu__time_duration alone (30 launches after
# the checks, --cache-control all --clock-control none, as kbench times: L2
# flushed, clocks as found), so the table shows ncu's own spread beside the
# difference.  diff is kbench against the mean of ncu's two medians;
# "within" says whether that is within 2%.  kbMHz: the SM clock NVML saw
# during kbench's timing.  (Collecting clock metrics in ncu's pass, as an
# earlier version of this script did, moved ncu's duration by up to 1-2%.)
# Usage: bench/ncu_short.sh (repo root, GPU machine); SPECS overrides the list.
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "kbench vs ncu, short kernels  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $($NCU --version | tail -1)  $(git rev-parse --short HEAD 2>/dev/null)"
printf '%-40s %8s %15s %8s %8s %7s %7s %6s\n' kernel kbench "kbench 5 runs" ncu1 ncu2 diff within kbMHz
. "$(dirname "$0")/ncu_med.sh"
SPECS=${SPECS:-"bench/kernels/layernorm_f32.cu layernorm_fwd
bench/kernels/layernorm_f32.cu layernorm_fwd M=4096,C=1024
bench/kernels/rmsnorm_bf16.cu rmsnorm_fwd
bench/kernels/transpose_f32.cu transpose_tiled
bench/kernels/transpose_f32.cu transpose_tiled R=2048,C=2048
bench/kernels/row_sum_f32.cu row_sum
kernels/softmax.cu softmax_rows M=4096,N=2048
kernels/vector_add.cu vector_add n=4194304
kernels/vector_add.cu vector_add n=8388608
tests/fixtures/kernels/copy.cu copy4 n=4194304"}
echo "$SPECS" | while read -r spec; do
	[ -n "$spec" ] || continue
	set -- $spec
	f=$1 k=$2 extra=
	if [ -n "${3:-}" ]; then
		for a in $(echo "$3" | tr ',' ' '); do extra="$extra --arg $a"; done
	fi
	: > "$TMP/kb"
	for i in 1 2 3 4 5; do
		"$KB" run "$f" $extra --no-sweep --json > "$TMP/r.json" 2>/dev/null
		python3 -c "
import json; t = json.load(open('$TMP/r.json'))['timing']
print(t['median_us'], t.get('gpu', {}).get('sm_clock_mhz', {}).get('median', float('nan')))" >> "$TMP/kb" 2>/dev/null
	done
	n1=$(ncu_med "$f" "$k" $extra)
	n2=$(ncu_med "$f" "$k" $extra)
	python3 - "$TMP/kb" "$(basename "$f") ${3:-}" "$n1" "$n2" <<'PY'
import statistics, sys
path, name, n1, n2 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rows = [l.split() for l in open(path) if l.strip()]
kb = [float(r[0]) for r in rows]
mhz = statistics.median(float(r[1]) for r in rows) if rows else float("nan")
m = statistics.median(kb) if kb else float("nan")
ncu = (n1 + n2) / 2
d = (m - ncu) / ncu * 100
print("%-40s %8.2f %7.2f-%-7.2f %8.2f %8.2f %+6.1f%% %7s %6.0f" % (
    name[:40], m, min(kb, default=float("nan")), max(kb, default=float("nan")), n1, n2, d,
    "yes" if abs(d) <= 2 else "no", mhz))
PY
done
