#!/bin/sh
# gpu-flows.sh - issue 26's src/profile flows on one GPU, from the make dist
# bundle (repo root, build/dist carried): the paths the flows refactor
# touched, each run on its own so one failure does not stop the others.
#   unit     the GPU unit tests of src/profile (every KB_CU / KB_CUPTI call
#            site they reach; calibrate's wgmma build in test_profile_nvml)
#   cli      tests/cli/run_gpu.sh (faults and their error texts, sticky
#            errors, host vs GPU comparison) and guard_gpu.sh
#   runs     kbench run --json on a built-in reference: the default, a second
#            run (the kept reference), KBENCH_COMPARE=cpu, each --timing mode,
#            a span program (KBENCH_TIMING_EXP), KBENCH_CUPTI=1, --hot
#   cal      kbench calibrate (the wgmma probe built in calibrate.c)
# Output under $OUT (unit.txt, cli.txt, runs.txt, cal.txt, times.txt,
# summary.txt); the summary table last.  Usage: OUT=/tmp/out sh scripts/gpu-flows.sh [PART...]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kf-cache XDG_DATA_HOME=/tmp/kf-data PYTHONUNBUFFERED=1
KB=$PWD/build/kbench
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
PARTS=${*:-unit cli runs cal}
SUM="$OUT/summary.txt"; : >"$SUM"
R=/tmp/kf-runs; mkdir -p "$R" # each run's JSON and stderr (not brought back)

# One kbench run --json: NAME, then the arguments; a line of the table.
row() {
	name=$1; shift
	j="$R/$name.json"
	timeout 120 "$@" >"$j" 2>"$R/$name.err"; rc=$?
	python3 - "$name" "$rc" "$j" <<'EOF' >>"$SUM"
import json, sys
name, rc, path = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    j = json.load(open(path))
except Exception as e:
    print(f"{name:<14} rc={rc:<3} no JSON ({e.__class__.__name__})"); sys.exit()
c = j.get('check', {})
t = j.get('timing', {})
on = ','.join(x.get('compared_on', '?') for x in c.get('trials', []))
after = ','.join(sorted({x.get('compared_on', '?') for x in c.get('after_timing', [])}))
ms = c.get('ms', {})
print(f"{name:<14} rc={rc:<3} {j.get('verdict', j.get('status', '?')):<9} "
      f"mode={t.get('mode', '-'):<7} median_us={t.get('median_us', 0):<9.3f} "
      f"trials={on:<12} after={after:<4} cached={c.get('reference_cached_trials', '-')} "
      f"ref_ms={ms.get('reference', 0):.1f} cmp_ms={ms.get('compare', 0):.1f} "
      f"kernel={t.get('kernel_source', '-')[:24]} hot={len(j.get('hot', []))} "
      f"err={(j.get('error') or j.get('hot_error', {}).get('message', ''))[:90]}")
EOF
}

for part in $PARTS; do
	t0=$(date +%s)
	case $part in
	unit)
		for t in build/tests/test_profile_*; do
			echo "== $t"; KBENCH_REQUIRE_GPU=1 timeout 200 "$t" 2>&1 | tail -6
		done ;;
	cli)
		for t in run_gpu guard_gpu; do
			echo "== tests/cli/$t.sh"
			KBENCH_REQUIRE_GPU=1 timeout 200 sh tests/cli/$t.sh 2>&1 | tail -30
		done ;;
	runs)
		F=kernels/softmax.cu
		row first     "$KB" run $F --no-sweep --seed 7 --json
		row again     "$KB" run $F --no-sweep --seed 7 --json
		row fresh     "$KB" run $F --no-sweep --seed 1234 --json
		row cpu       env KBENCH_COMPARE=cpu "$KB" run $F --no-sweep --seed 99 --json
		row events    "$KB" run $F --no-sweep --seed 7 --timing events --json
		row graph     "$KB" run $F --no-sweep --seed 7 --timing graph --json
		row diff      "$KB" run $F --no-sweep --seed 7 --timing diff --json
		row exp       env KBENCH_TIMING_EXP=PFeKe "$KB" run $F --no-sweep --seed 7 --json
		row cupti     env KBENCH_CUPTI=1 "$KB" run $F --no-sweep --seed 7 --json
		row hot       "$KB" run $F --no-sweep --seed 7 --hot --json
		row vadd      "$KB" run kernels/vector_add.cu --no-sweep --seed 3 --json
		row oob_fault "$KB" run tests/fixtures/faults/oob_write.cu --no-sweep --json
		for e in "$R"/*.err; do echo "== $e"; tail -5 "$e"; done ;;
	cal)
		timeout 200 "$KB" calibrate 2>&1 | tail -20 ;;
	esac >"$OUT/$part.txt" 2>&1
	echo "$part: $(( $(date +%s) - t0 )) s ($GPU)" >>"$OUT/times.txt"
done
for part in $PARTS; do
	echo "==== $part"
	case $part in
	unit|cli) grep -E "^==|passed=|FAIL|not ok" "$OUT/$part.txt" ;;
	runs) tail -15 "$OUT/runs.txt" ;;
	*) cat "$OUT/$part.txt" ;;
	esac
done
cat "$OUT/times.txt"
echo "==== summary (one kbench run each)"
cat "$SUM"
