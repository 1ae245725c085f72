#!/bin/sh
# sample_first_start.sh - where a fresh runner's CPU goes during CUPTI's
# first cuptiRangeProfilerStart (and the whole run), by bench/cpu_sampler.c
# preloaded into `kbench profile` and its runner.  GPU machine, repository
# root, after `tar xzf` of the `make dist` bundle; build/cpu_sampler.so is
# built beside it (cc -shared -fPIC bench/cpu_sampler.c -o build/cpu_sampler.so).
set -u
KB=${KB:-build/kbench}
F=${1:-kernels/softmax.cu}
T=$(mktemp -d)
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kbench-cache} KBENCH_NO_SHARED_RUNNER=1
"$KB" profile "$F" --json > /dev/null 2>&1 # compile and availability caches
for i in 1 2 3; do
	sleep 1
	rm -f "$T"/s.* "$T/log"
	KBENCH_LOG=$T/log KB_SAMPLER_OUT=$T/s LD_PRELOAD=$PWD/build/cpu_sampler.so \
		"$KB" profile "$F" --json > /dev/null 2>&1
	runner=$(ls -S "$T"/s.* | head -1) # the runner has the most samples
	echo "== run $i: $(grep -o 'pass 1: .*start [0-9.]* (cpu: user [0-9.]*, kernel [0-9.]*)' "$T/log")"
	python3 bench/cpu_samples.py "$runner" "$T/log"
	[ $i = 3 ] && { echo "== run 3, whole runner"; python3 bench/cpu_samples.py "$runner" "$T/log" all; }
	[ -n "${OUT:-}" ] && cp "$runner" "$OUT/samples-$i.txt" && cp "$T/log" "$OUT/log-$i.txt"
done
rm -rf "$T"
