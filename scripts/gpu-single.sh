#!/bin/sh
# gpu-single.sh PART... - one-GPU evidence of issues 13, 14 and 18 in device
# calls that fit 10 minutes (repo root, build/dist and build/fuzz-dist
# carried).  Output under $OUT/PART.txt.
#   fuzzstart  every libFuzzer target 600 s at once on cores 4-15, detached
#              (setsid), so that it outlives this call; fuzzwait collects it
#   tile       bench/tile.py norms bf16 on cores 0-3 (scripts/gpu-tile.sh)
#   cluster    the long-row softmax kernels at every swept N at their own
#              defaults: CORRECT, or UNSUPPORTED by their require lines
#   fuzzwait   waits for fuzzstart's run and copies its table
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
FZ=/tmp/fz
# cores 0-3 for the GPU work, 4-15 for the fuzzers, where there are 16
if command -v taskset >/dev/null && [ "$(nproc)" -ge 16 ]; then PIN=1; else PIN=; fi
pin() { if [ -n "$PIN" ]; then taskset -c "$@"; else shift; "$@"; fi; }
for part in "$@"; do
	t0=$(date +%s)
	case $part in
	fuzzstart)
		mkdir -p $FZ && tar xzf build/fuzz-dist/kbench-fuzz-*.tar.gz -C $FZ
		d=$(ls -d $FZ/kbench-fuzz-*/)
		(cd "$d" && setsid nohup sh -c "${PIN:+taskset -c 4-15} make fuzz FUZZ_SECONDS=${FUZZ_SECONDS:-600} \
			FUZZ_JOBS=12" >$FZ/fuzz.log 2>&1 </dev/null &)
		echo "fuzz started in $d at $(date -u +%H:%M:%SZ), $(nproc) cores" ;;
	tile)
		pin 0-3 sh scripts/gpu-tile.sh norms bf16 ;;
	cluster)
		for f in kernels/softmax/06_cluster.cu kernels/softmax/07_cluster_async.cu \
			 kernels/softmax/softmax_bf16_cluster.cu kernels/softmax/softmax_bf16_cluster_async.cu; do
			ns=$(sed -n 's#^//! sweep *N = ##p' "$f" | tr -d ' ' | tr ',' ' ')
			for n in $ns; do
				printf '%-48s N=%-7s ' "$f" "$n"
				pin 0-3 build/kbench run "$f" --arg N="$n" --no-sweep --trials 2 2>&1 |
					grep -E 'CORRECT|INCORRECT|UNSUPPORTED|FAULT|ERROR|TIMEOUT' | head -1
			done
		done ;;
	fuzzwait)
		while pgrep -f 'build/fuzz/fuzz_' >/dev/null; do sleep 5; done
		cat $FZ/fuzz.log ;;
	esac >"$OUT/$part.txt" 2>&1
	echo "$part: $(( $(date +%s) - t0 )) s" >>"$OUT/summary.txt"
done
cat "$OUT/summary.txt"
