#!/bin/sh
# gpu-guard.sh PART... - issue 24's evidence on one GPU, from the make dist
# bundle (repo root; build/dist carried, and .gpu/kbench-old.tar.gz, the
# kbench before the guard, for `guard`).  Output under $OUT/PART.txt, a
# summary last.
#   tests    the GPU unit tests, run_gpu.sh and guard_gpu.sh
#   exp      kbench vs ncu on the streaming-hint kernels and two plain ones,
#            for each span program in $PROGS
#   guard    bench/timing_guard.sh: medians before/after the guard, wall time
#   gallery  bench/ncu_gallery.sh: every kernels/ file vs ncu
#   llm      kbench optimize with the scripted provider (scripts/gpu-llm.sh)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc XDG_DATA_HOME=/tmp/kd PYTHONUNBUFFERED=1
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
for part in "$@"; do
	t0=$(date +%s)
	case $part in
	tests)
		for t in build/tests/test_profile_host build/tests/test_profile_devcheck \
			 build/tests/test_runner; do
			[ -x "$t" ] && { echo "== $t"; KBENCH_REQUIRE_GPU=1 "$t" 2>&1 | tail -15; }
		done
		for t in run_gpu guard_gpu; do
			echo "== tests/cli/$t.sh"; KBENCH_REQUIRE_GPU=1 sh tests/cli/$t.sh 2>&1 | tail -25
		done ;;
	exp)
		PROGS=${PROGS:-"default PFDeFDWKe-FDeFDWe"} REPS=3 sh bench/ncu_gallery.sh \
			${EXP_FILES:-kernels/softmax.cu kernels/transpose/03_tile64.cu \
			kernels/softmax/05_registers.cu kernels/softmax/softmax_bf16.cu \
			kernels/layernorm/02_registers.cu} ;;
	guard)
		mkdir -p /tmp/oldkb && tar xzf .gpu/kbench-old.tar.gz -C /tmp/oldkb
		sh bench/timing_guard.sh /tmp/oldkb/old/build/kbench ;;
	gallery)
		sh bench/ncu_gallery.sh ;;
	llm)
		sh scripts/gpu-llm.sh ;;
	esac >"$OUT/$part.txt" 2>&1
	echo "$part: $(( $(date +%s) - t0 )) s ($GPU)" >>"$OUT/summary.txt"
done
for part in "$@"; do
	echo "==== $part"
	case $part in
	tests) grep -E "^==|passed=|FAIL" "$OUT/tests.txt" ;;
	llm) tail -30 "$OUT/llm.txt" ;;
	*) cat "$OUT/$part.txt" ;;
	esac
done
cat "$OUT/summary.txt"
