#!/bin/sh
# gpu-farm.sh JOB... - one device call's jobs spread over every GPU of the
# machine: each GPU takes the next unclaimed job (longest first) and runs it
# alone on that GPU (CUDA_VISIBLE_DEVICES), with its own cache, data, runtime
# and TMPDIR (ncu serializes every profiler on a host through
# $TMPDIR/nsight-compute-lock: one TMPDIR a job lets four ncu profile four
# GPUs at once).  A job whose estimate would end past BUDGET seconds from the
# start is SKIPPED (the estimate is a job's timeout, about 1.5 times what
# it takes; the timeout is cut to end by BUDGET).  Every measurement a
# job makes (kbench beside ncu, kbench beside PyTorch) is taken on one GPU by
# one process, so a job's comparisons are as on a one-GPU machine.
# Out: $OUT/summary.txt (a line a job: GPU, rc, seconds), $OUT/JOB.txt for
# the first jobs and $OUT/all.txt (every job's output, in the order given),
# $OUT/parts.tgz (each job's own $OUT).  Repo root, make-dist tarball carried.
# Jobs:
#   ncuI/N    bench/ncu_gallery.sh over every N-th kernels/ file from the I-th
#             (REPS=1, NCU_COUNT=20, CLOCKS=1): issue 24's every-file table;
#             NCU_LIST=FILE: over the files it names instead (about 14 s a
#             file on an H200)
#   ncux      the entries NCUX_LIST names, REPS=3 with ncu's cc=none and
#             CUPTI's kernel durations beside (what separates the two)
#   gal-OP    scripts/gpu-gallery.sh table OP (issue 31's gallery table);
#             gal-OP:DTYPE the rows of one dtype, gal-OP:DTYPE:N,N of those
#             sizes (the N of bench/gallery.py's rows)
#   replay    kbench replay sessions/softmax (issue 31)
#   gmem      scripts/gpu-gallery.sh memcheck (the gallery's newer kernels
#             under compute-sanitizer)
#   rec-OP+OP scripts/record-gallery.sh OP OP (sessions.tgz), then a replay
#             of sessions/softmax on the same GPU
#   tests:A+B scripts/gpu-tests.sh A B (tests/cli/A.sh, B.sh on a GPU)
#   attn:P+P  scripts/gpu-attn.sh's parts P (correct, table, warm, profile)
#   guard     bench/timing_guard.sh over the nine kernels, NOD=1 (issue 24;
#             needs .gpu/kbench-old.tar.gz carried)
#   NAME      scripts/gpu-NAME.sh (attn-speed, tile-fused, lnodd, mbg, ...)
# Usage: OUT=DIR BUDGET=570 sh scripts/gpu-farm.sh ncu1/8 ... gal-softmax replay
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
NGPU=${NGPU:-$(nvidia-smi -L | grep -c '^GPU')}
BUDGET=${BUDGET:-570}
# the queue and the jobs' folders are this call's own: a job may run
# gpu-farm.sh itself (the test suite's farm.sh), which must not take them
Q=$(mktemp -d /tmp/farm.XXXXXX)
# a job's nvidia-smi queries name its own GPU, not the host's four (the
# tables' headers): a shim before the real one adds -i GPU to --query-gpu
SMI=$(command -v nvidia-smi)
mkdir -p "$Q/bin"
cat >"$Q/bin/nvidia-smi" <<SHIM
#!/bin/sh
case " \$* " in *" --query-gpu"*) case " \$* " in *" -i "* | *" --id"*) ;; *) exec "$SMI" -i "\$FARM_GPU" "\$@" ;; esac ;; esac
exec "$SMI" "\$@"
SHIM
chmod +x "$Q/bin/nvidia-smi"
T0=$(date +%s)
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tr '\n' ';'
  echo " $(date -u +%Y-%m-%dT%H:%MZ), kbench $(cat build/COMMIT 2>/dev/null || echo '(no build/COMMIT)'), $NGPU GPUs"; } >"$OUT/summary.txt"

# job NAME: "SECONDS COMMAND" (the estimate is the timeout too)
job() {
	case $1 in
	ncu*/*) i=${1#ncu}; n=${i#*/}; i=${i%/*}
		files=$({ if [ -n "${NCU_LIST:-}" ]; then tr ' ' '\n' <"$NCU_LIST"; else
			sh bench/ncu_gallery.sh --list; fi; } |
			grep . | sort | awk -v i="$i" -v n="$n" 'NR % n == i % n')
		echo "$(( $(echo "$files" | wc -l) * 20 + 20 )) env REPS=1 NCU_COUNT=${NCU_COUNT:-20} CLOCKS=1 sh bench/ncu_gallery.sh $(echo $files)" ;;
	ncux) echo "$(( $(wc -w <"$NCUX_LIST") * 45 + 20 )) env NCU_NONE=1 REPS=3 PROGS='default cupti' NCU_COUNT=15 CLOCKS=1 sh bench/ncu_gallery.sh $(tr '\n' ' ' <"$NCUX_LIST")" ;;
	gal-softmax) echo "270 env BUDGET=240 sh scripts/gpu-gallery.sh table softmax" ;;
	gal-layernorm:*) g=${1#gal-}; echo "300 env BUDGET=280 sh scripts/gpu-gallery.sh table $(echo "$g" | tr : ' ')" ;; # 8-10 candidates a long row
	gal-*:*:*) g=${1#gal-}; echo "180 env BUDGET=160 sh scripts/gpu-gallery.sh table $(echo "$g" | tr : ' ')" ;;
	gal-*:*) g=${1#gal-}; echo "180 env BUDGET=160 sh scripts/gpu-gallery.sh table ${g%:*} ${g#*:}" ;;
	gal-layernorm | gal-rmsnorm) echo "150 env BUDGET=130 sh scripts/gpu-gallery.sh table ${1#gal-}" ;;
	gal-*) echo "45 env BUDGET=40 sh scripts/gpu-gallery.sh table ${1#gal-}" ;; # 18-31 s on an H200 (2026-11-29), cold caches
	replay) echo "120 build/kbench replay sessions/softmax" ;;
	gmem) echo "150 env BUDGET=130 sh scripts/gpu-gallery.sh memcheck" ;;
	rec-*) echo "${T:-300} sh -c 'sh scripts/record-gallery.sh $(echo "${1#rec-}" | tr + " ") && build/kbench replay sessions/softmax'" ;;
	tests:*) echo "${T:-250} env LIMIT=$(( ${T:-250} - 10 )) sh scripts/gpu-tests.sh $(echo "${1#tests:}" | tr + ' ')" ;;
	attn:*) echo "${T:-250} sh scripts/gpu-attn.sh $(echo "${1#attn:}" | tr + ' ')" ;;
	guard) echo "240 sh -c 'mkdir -p /tmp/oldkb && tar xzf .gpu/kbench-old.tar.gz -C /tmp/oldkb && NOD=1 REPS=3 sh bench/timing_guard.sh /tmp/oldkb/old/build/kbench'" ;;
	*) echo "${T:-150} sh scripts/gpu-$1.sh" ;;
	esac
}

n=0
for name in "$@"; do
	n=$((n + 1))
	echo "$(job "$name" | cut -d' ' -f1) $n $name" >>"$Q/list"
done
sort -k1,1nr "$Q/list" >"$Q/order"

run_one() { # GPU ORDINAL NAME
	spec=$(job "$3"); secs=${spec%% *}; cmd=${spec#* }
	now=$(date +%s)
	if [ $(( now - T0 + secs * 2 / 3 )) -gt "$BUDGET" ]; then
		echo "$3: SKIPPED (${secs} s would pass the call's ${BUDGET} s)" >>"$Q/sum.$2"; return
	fi
	[ $(( now - T0 + secs )) -gt "$BUDGET" ] && secs=$(( BUDGET - (now - T0) ))
	d=$Q/jobs/$2; mkdir -p "$d/out" "$d/tmp" "$d/cache" "$d/data" "$d/run" "$d/config"
	chmod 700 "$d/run"
	(unset BUDGET # the call's, not a job's own
	 CUDA_VISIBLE_DEVICES=$1 FARM_GPU=$1 PATH=$Q/bin:$PATH OUT=$d/out TMPDIR=$d/tmp XDG_CACHE_HOME=$d/cache XDG_DATA_HOME=$d/data \
	 XDG_RUNTIME_DIR=$d/run XDG_CONFIG_HOME=$d/config PYTHONUNBUFFERED=1 \
	 timeout "$secs" sh -c "$cmd") >"$Q/out.$2" 2>&1
	echo "$3: gpu $1, rc $?, $(( $(date +%s) - now )) s (from +$(( now - T0 )) s)" >>"$Q/sum.$2"
}

worker() { # GPU: claim jobs in order until none is left
	while read -r _secs ord name; do
		mkdir "$Q/claim.$ord" 2>/dev/null && run_one "$1" "$ord" "$name"
	done <"$Q/order"
}

g=0
while [ "$g" -lt "$NGPU" ]; do worker "$g" & g=$((g + 1)); done
wait

: >"$OUT/all.txt"
k=0
for name in "$@"; do
	k=$((k + 1))
	echo "==== $name" >>"$OUT/all.txt"
	cat "$Q/out.$k" >>"$OUT/all.txt" 2>/dev/null
	cat "$Q/sum.$k" >>"$OUT/summary.txt" 2>/dev/null
	[ "$k" -le 5 ] && cp "$Q/out.$k" "$OUT/$(echo "$name" | tr '/:' '__').txt" 2>/dev/null
done
(cd "$Q/jobs" && tar czf "$OUT/parts.tgz" */out) 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
