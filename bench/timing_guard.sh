#!/bin/sh
# timing_guard.sh OLD_KBENCH - the timing guard's cost in accuracy and in
# wall time: each kernel's median under the kbench before the guard (OLD)
# and this one, runs alternated, REPS each (seed fixed; warm runners, one per
# program), and the wall time of a warm `kbench run --no-sweep` of each.
# NOD=1 adds a third side: this kbench with the flush the old one had (no
# discard of the flush's lines: KBENCH_TIMING_EXP=PFeFWKe-FeFWe), which
# separates the guard's cost from the flush's change (docs/timing.md).
# Usage: bench/timing_guard.sh /tmp/old/build/kbench (repo root, GPU).
set -u
OLD=$1
NEW=${KB:-build/kbench}
REPS=${REPS:-5}
NOD=${NOD:-0}
SIDES="old new"; [ "$NOD" = 1 ] && SIDES="old new nod"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "timing guard: before ($($OLD --version 2>&1 | head -1), $OLD) vs after ($($NEW --version 2>&1 | head -1))  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
printf '%-60s %11s %11s %7s %9s %9s %9s' "kernel (args)" "before us" "after us" diff "wall bef" "wall aft" "mode"
[ "$NOD" = 1 ] && printf ' %11s %7s' "after, no D" diff
echo
# the kernels (FILE ARGS a line); GUARD_LIST="FILE ARGS;FILE ARGS" for others
kernels() {
	if [ -n "${GUARD_LIST:-}" ]; then echo "$GUARD_LIST" | tr ';' '\n'; return; fi
	cat <<'LIST'
tests/fixtures/kernels/copy.cu
kernels/softmax.cu
kernels/softmax/05_registers.cu
kernels/softmax/softmax_bf16.cu
kernels/layernorm/02_registers.cu
kernels/rmsnorm/rmsnorm_bf16.cu
kernels/transpose/03_tile64.cu
kernels/gemm/04_wgmma.cu
kernels/vector_add.cu --arg n=1048576
LIST
}
kernels | while read -r f args; do
	[ -n "$f" ] || continue
	for kb in "$OLD" "$NEW"; do "$kb" run "$f" $args --no-sweep --seed 1 >/dev/null 2>&1; done # warm runners, references
	: >"$TMP/old"; : >"$TMP/new"; : >"$TMP/nod"; : >"$TMP/wold"; : >"$TMP/wnew"; : >"$TMP/wnod"
	for i in $(seq "$REPS"); do
		for side in $SIDES; do
			[ $side = old ] && kb=$OLD || kb=$NEW
			exp=; [ $side = nod ] && exp=PFeFWKe-FeFWe
			t0=$(date +%s.%N)
			KBENCH_TIMING_EXP=$exp "$kb" run "$f" $args --no-sweep --seed 1 --json >"$TMP/j" 2>/dev/null
			echo "$t0 $(date +%s.%N)" | awk '{print $2-$1}' >>"$TMP/w$side"
			python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['timing']['median_us'], j['timing']['mode'])" "$TMP/j" >>"$TMP/$side" 2>/dev/null
		done
	done
	python3 - "$TMP" "$f $args" <<'PY'
import statistics, sys
t, name = sys.argv[1], sys.argv[2]
def col(n, k=0):
    return [float(l.split()[k]) for l in open(t + "/" + n) if l.strip()]
o, n = statistics.median(col("old")), statistics.median(col("new"))
mode = open(t + "/new").read().split()[1] if open(t + "/new").read().split() else "?"
line = "%-60s %11.2f %11.2f %+6.2f%% %8.2fs %8.2fs %9s" % (name[:60], o, n, (n - o) / o * 100,
       statistics.median(col("wold")), statistics.median(col("wnew")), mode)
nod = col("nod")
if nod:
    d = statistics.median(nod)
    line += " %11.2f %+6.2f%%" % (d, (d - o) / o * 100)
print(line)
PY
done
