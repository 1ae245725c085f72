#!/bin/sh
# gpu-gallery.sh [MODE...] - the gallery's GPU work (issue 31) from a
# working tree with the `make dist` tarball under build/dist*/ (nothing is
# built here).  Outputs under $OUT/MODE.txt; each mode prints its summary
# last, one failing step does not stop the rest, and a run that would start
# after BUDGET seconds (default 450) from the start is listed as SKIPPED.
# With no MODE: bulk check long (the phase-1 evidence, under 8 minutes).
#   bulk     the bulk-copy long-row kernels (softmax bf16 and f32, LayerNorm
#            and RMSNorm f32) CORRECT at N = 13, 5003, 50257, 65536, 100003,
#            131072, 200003, 262144 (softmax; the norms at some)
#   check    every any-width kernel CORRECT at every odd width (N = 1, 7,
#            4093, 5003, 50257, 200003 where it fits; the ring norms at 1,
#            7, 13, 5003, 50257, 65536, 200003), with its % of copy, via
#            `kbench run --trials 2`
#   memcheck the new kernels under compute-sanitizer at small sizes
#            (M = 8; the ring norms at 50257 and 200003)
#   long     the long-row softmax kernels (bf16: bulk, async, async PIPE=1;
#            f32: 07, 08_bulk) at 4096 x 65536, 131072, 262144, 200003
#   table [OPS [DTYPES [SIZES]]]  bench/gallery.py (the best kernel of each
#            op x dtype x size beside PyTorch): `table softmax` and `table
#            layernorm,rmsnorm,sum,max,colsum,transpose` fit a call each
#   record   scripts/record-gallery.sh (every session, sessions.tgz)
#   a, b     issue 13's parts (a: long-row MINB and record; b: table)
# Usage: OUT=DIR scripts/gpu-gallery.sh check long   (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc} KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=${KB:-build/kbench}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%Y-%m-%dT%H:%MZ
SUM=$(mktemp)

# one FILE M N [kbench args...]: a run, one line to the summary
DEADLINE=$(($(date +%s) + ${BUDGET:-450}))
one() {
	_f=$1 _m=$2 _n=$3
	shift 3
	if [ "$(date +%s)" -ge "$DEADLINE" ]; then
		printf '%-44s %-22s %7s x %-7s %s\n' "${_f#kernels/}" "$*" "$_m" "$_n" "SKIPPED (BUDGET)" | tee -a "$SUM"
		return
	fi
	case $_f in *transpose*) _a=R _b=C ;; *) _a=M _b=N ;; esac
	_r=$(timeout 150 "$KB" run "$_f" --arg "$_a=$_m" --arg "$_b=$_n" --no-sweep --trials 2 --timeout 60 "$@" 2>&1)
	_v=$(printf '%s\n' "$_r" | grep -m1 -oE '\b(CORRECT|INCORRECT|UNSUPPORTED|FAULT|TIMEOUT|error)\b' | head -1)
	_v=${_v:-none}
	_p=$(printf '%s\n' "$_r" | grep -m1 -oE '[0-9.]+% of (measured )?copy' | cut -d% -f1)
	printf '%-44s %-22s %7s x %-7s %-11s %s\n' "${_f#kernels/}" "$*" "$_m" "$_n" "$_v" "${_p:+$_p%}" | tee -a "$SUM"
	[ "$_v" = CORRECT ] || printf '%s\n' "$_r" | tail -8 | sed 's/^/    /'
}

check() {
	for f in softmax/softmax_bf16_aligned layernorm/layernorm_bf16_aligned rmsnorm/rmsnorm_bf16_aligned; do
		one kernels/$f.cu 32768 5003
		one kernels/$f.cu 8192 50257 --define VPT=8
	done
	for f in 03_aligned row_max_f32_aligned row_sum_bf16_aligned row_max_bf16_aligned col_sum_f32 col_sum_bf16 \
		col_sum_bf16_vec col_sum_f32_vec; do
		one kernels/reduce/$f.cu 32768 5003
		one kernels/reduce/$f.cu 8192 50257
		one kernels/reduce/$f.cu 1000 200003
	done
	for n in 5003 4093 50257 8192; do
		one kernels/transpose/transpose_bf16_aligned.cu 8192 $n
	done
	# the ring norms past 16384 (the gallery's cluster sizes), and at the
	# narrow widths where a row is one chunk or none
	for w in 1024:1:1:2 1024:7:1:2 1024:13:1:2 4096:5003:1:2 8192:50257:1:2 4096:65536:1:2 4096:200003:4:8; do
		m=${w%%:*} r=${w#*:}
		n=${r%%:*} r=${r#*:}
		one kernels/layernorm/layernorm_bf16_ring.cu "$m" "$n" --define CLUSTER="${r%:*}"
		one kernels/layernorm/04_ring.cu "$m" "$n" --define CLUSTER="${r#*:}"
	done
	for w in 1024:7:4:8 4096:5003:4:8 8192:50257:4:8 4096:65536:4:8 4096:200003:16:0; do
		m=${w%%:*} r=${w#*:}
		n=${r%%:*} r=${r#*:}
		one kernels/layernorm/layernorm_bf16_ring.cu "$m" "$n" --define CLUSTER="${r%:*}" --define WS=1 --define NSLOT=9
		[ "${r#*:}" = 0 ] || one kernels/layernorm/04_ring.cu "$m" "$n" --define CLUSTER="${r#*:}" --define WS=1 --define NSLOT=9
	done
	for w in 1:2 7:2 13:2 5003:2 50257:2 65536:2 200003:8 262144:8; do # the f32 rings, gallery.py's ring32() clusters
		one kernels/softmax/09_ring.cu 1024 "${w%:*}" --define CLUSTER="${w#*:}"
		one kernels/rmsnorm/04_ring.cu 1024 "${w%:*}" --define CLUSTER="${w#*:}"
	done
	one kernels/reduce/row_sum_bf16_aligned.cu 32768 5003 --define ROWS=8
	one kernels/reduce/row_max_bf16_aligned.cu 32768 5003 --define ROWS=8
	for n in 1 7 4093; do
		one kernels/softmax/softmax_bf16_aligned.cu 4096 $n
		one kernels/layernorm/layernorm_bf16_aligned.cu 4096 $n
		one kernels/rmsnorm/rmsnorm_bf16_aligned.cu 4096 $n
		for f in 03_aligned row_max_f32_aligned row_sum_bf16_aligned row_max_bf16_aligned col_sum_f32 col_sum_bf16 \
			col_sum_bf16_vec col_sum_f32_vec; do
			one kernels/reduce/$f.cu 4096 $n
		done
		one kernels/reduce/row_sum_bf16_aligned.cu 4093 $n --define ROWS=8 # a last block part empty
		one kernels/reduce/row_max_bf16_aligned.cu 4093 $n --define ROWS=8
	done
}

# the bulk kernels: their defines at N = 13, 5003, 50257, 65536, 100003,
# 131072, 200003, 262144 (M = 64, 512, 8192, then 4096 rows)
bulk() {
	widths softmax_bf16_bulk CLUSTER=2 CLUSTER=2 CLUSTER=4 CLUSTER=4 CLUSTER=8 CLUSTER=8 CLUSTER=16 CLUSTER=16
	widths 08_bulk CLUSTER=2 CLUSTER=2 CLUSTER=8 CLUSTER=8 CLUSTER=16 CLUSTER=16 CLUSTER=16,VPT=8 CLUSTER=16,VPT=8
	one kernels/softmax/softmax_bf16_bulk.cu 300 131072 --define CLUSTER=8 # fewer rows than blocks
	one kernels/softmax/softmax_bf16_bulk.cu 512 5003 --define CLUSTER=2 --define NBUF=2
	one kernels/softmax/softmax_bf16_bulk.cu 4096 200003 --define CLUSTER=16 --define NBUF=2
	one kernels/softmax/08_bulk.cu 4096 200003 --define CLUSTER=16 --define VPT=8 --define NBUF=2
	for f in layernorm/03_bulk rmsnorm/03_bulk; do
		one kernels/$f.cu 64 13 --define CLUSTER=2
		one kernels/$f.cu 8192 50257
		one kernels/$f.cu 4096 20011 --define CLUSTER=4
		one kernels/$f.cu 4096 65536
		one kernels/$f.cu 4096 50257 --define NBUF=2
		one kernels/$f.cu 1024 200003 --define CLUSTER=16 --define VPT=8 --define NBUF=2
	done
}

# widths FILE DEFS...: FILE at each of bulk's widths with DEFS (a comma list) as --define
widths() {
	_k=kernels/softmax/$1.cu
	shift
	for _w in 64:13 512:5003 8192:50257 4096:65536 4096:100003 4096:131072 4096:200003 4096:262144; do
		one "$_k" "${_w%:*}" "${_w#*:}" $(printf -- '--define %s ' $(echo "$1" | tr , ' '))
		shift
	done
}

# sanitize FILE M N [kbench args...]: kernels/FILE.cu under compute-sanitizer
# memcheck (at most LIMIT seconds, default 200), one line to the summary
sanitize() {
	_f=$1 _m=$2 _n=$3
	shift 3
	_r=$(timeout "${LIMIT:-200}" "$CS" --tool memcheck --target-processes all "$KB" run "kernels/$_f.cu" --arg M="$_m" \
		--arg N="$_n" --no-sweep --trials 1 --timeout 100 "$@" 2>&1)
	_e=$(printf '%s\n' "$_r" | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' || echo "no summary")
	printf '%-44s M=%-5s N=%-7s %s  %s\n' "$_f $*" "$_m" "$_n" "$(printf '%s\n' "$_r" | grep -m1 -oE '\b(CORRECT|INCORRECT|FAULT)\b')" \
		"$_e" | tee -a "$SUM"
}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# lanes K LIST DIR: LIST's lines (each a command: one, sanitize and its
# arguments) K at a time, line i in lane i % K, each lane's output to
# DIR/lane.L; a line reached after DEADLINE is listed SKIPPED instead
lanes() {
	_l=0
	while [ "$_l" -lt "$1" ]; do
		awk -v l="$_l" -v k="$1" 'NR % k == l' "$2" | while read -r cmd; do
			if [ "$(date +%s)" -ge "$DEADLINE" ]; then
				echo "$cmd SKIPPED (BUDGET)" | tee -a "$SUM"
				continue
			fi
			# shellcheck disable=SC2086 # the job's words, split on purpose
			$cmd </dev/null
		done >"$3/lane.$_l" 2>&1 &
		_l=$((_l + 1))
	done
	wait
}

# checks_summary cat|sort: the runs and memchecks SUM holds since START:
# their count, every line (as written or sorted), those not CORRECT (a "no
# fit" line is neither), and the memchecks that found errors
checks_summary() {
	echo "== summary ($(($(date +%s) - START)) s): $(grep -c ' CORRECT' "$SUM") CORRECT of $(grep -vc 'no fit' "$SUM") runs and memchecks"
	$1 "$SUM"
	grep -v -e ' CORRECT ' -e 'no fit' "$SUM" | sed 's/^/  NOT: /'
	grep -E 'ERROR SUMMARY: [1-9]|no summary' "$SUM" | sed 's/^/  MEMCHECK: /'
}

memcheck() {
	for spec in "softmax/softmax_bf16_aligned 5003" "layernorm/layernorm_bf16_aligned 5003" \
		"rmsnorm/rmsnorm_bf16_aligned 4093" "reduce/row_sum_bf16_aligned 5003" "reduce/03_aligned 5003" \
		"reduce/col_sum_bf16 5003" "softmax/softmax_bf16_bulk 50257 --define CLUSTER=4" \
		"layernorm/layernorm_bf16_ring 50257 --define CLUSTER=1" "layernorm/04_ring 200003 --define CLUSTER=8" \
		"layernorm/layernorm_bf16_ring 200003 --define CLUSTER=16 --define WS=1 --define NSLOT=9" \
		"softmax/09_ring 50257 --define CLUSTER=2" "rmsnorm/04_ring 5003 --define CLUSTER=2" \
		"reduce/col_sum_bf16_vec 5003 --define CLUSTER=16" "reduce/row_sum_bf16_aligned 5003 --define ROWS=8" \
		"reduce/row_max_bf16_aligned 5003 --define ROWS=8" "reduce/col_sum_f32_vec 5003 --define CLUSTER=8"; do
		set -- $spec
		f=$1 n=$2
		shift 2
		if [ "$(date +%s)" -ge "$DEADLINE" ]; then
			echo "$f $* N=$n: SKIPPED (BUDGET)" | tee -a "$SUM"; continue
		fi
		sanitize "$f" 8 "$n" "$@"
	done
}

# the register kernels these replace, then other shapes of the bulk ones
# (bulk's runs have their defaults at these sizes)
long() {
	for n in 65536 131072 262144 200003; do
		c=$(((n + 16383) / 16384)); c=$((c <= 4 ? 4 : c <= 8 ? 8 : 16))
		one kernels/softmax/softmax_bf16_cluster_async.cu 4096 $n --define CLUSTER=$c
		one kernels/softmax/07_cluster_async.cu 4096 $n --define CLUSTER=$c
	done
	for n in 65536 131072 262144 200003; do
		c=$(((n + 16383) / 16384)); c=$((c <= 4 ? 4 : c <= 8 ? 8 : 16))
		one kernels/softmax/softmax_bf16_bulk.cu 4096 $n --define CLUSTER=$c --define BLOCKS=384
		one kernels/softmax/softmax_bf16_bulk.cu 4096 $n --define CLUSTER=$((c / 2)) --define THREADS=1024
		one kernels/softmax/softmax_bf16_bulk.cu 4096 $n --define CLUSTER=$c --define NBUF=2
		one kernels/softmax/softmax_bf16_cluster_async.cu 4096 $n --define CLUSTER=$c --define PIPE=1
		one kernels/softmax/08_bulk.cu 4096 $n --define CLUSTER=16 --define VPT=8 --define NBUF=2
	done
}

# prof LABEL FILE [kbench args...]: `kbench profile` of FILE at 8192 x
# 50257 (one trial, the sections of PROF_SECTIONS: sol memory compute
# occupancy stalls quick unless set), one row of $PT by
# scripts/profile_row.py, every counter in $OUT/profiles.txt; SKIPPED
# after DEADLINE
prof() {
	_l=$1 _f=$2 _s=
	shift 2
	if [ "$(date +%s)" -ge "$DEADLINE" ]; then
		echo "$_l SKIPPED (BUDGET)" | tee -a "$PT"
		return
	fi
	for _x in ${PROF_SECTIONS:-sol memory compute occupancy stalls quick}; do
		_s="$_s --section $_x"
	done
	_j=$(mktemp)
	# shellcheck disable=SC2086 # the --section flags, split on purpose
	timeout 40 "$KB" profile "$_f" --arg M=8192 --arg N=50257 --no-sweep --trials 1 --timeout 30 $_s --json "$@" \
		>"$_j" 2>>"$OUT/profiles.txt"
	{
		echo "== $_l: $_f $*"
		python3 scripts/profile_row.py "$_l" "$_j" "$PT"
	} >>"$OUT/profiles.txt" 2>&1
	tail -1 "$PT"
	rm -f "$_j"
}

# timed KEY DTYPE M N FILE [kbench args...]: one timed run (`kbench run
# --trials 1`), a line of $RES ("KEY DTYPE MxN verdict us % file
# defines"), the run's last lines where it is not CORRECT; SKIPPED once END
# has passed (RES and END: the caller's)
timed() {
	_k=$1 _d=$2 _m=$3 _n=$4 _f=$5
	shift 5
	if [ "$(date +%s)" -ge "$END" ]; then
		echo "$_k $_d ${_m}x$_n SKIPPED (TOTAL) - - ${_f##*/} $*" | tee -a "$RES"
		return
	fi
	_r=$(timeout 90 "$KB" run "$_f" --arg M="$_m" --arg N="$_n" --no-sweep --trials 1 --timeout 60 "$@" 2>&1)
	_v=$(printf '%s\n' "$_r" | grep -m1 -oE '\b(CORRECT|INCORRECT|UNSUPPORTED|FAULT|TIMEOUT|error)\b' | head -1)
	_u=$(printf '%s\n' "$_r" | grep -m1 -oE '^ *time +[0-9.]+ us' | grep -oE '[0-9.]+')
	_p=$(printf '%s\n' "$_r" | grep -m1 -oE '[0-9.]+% of (measured )?copy' | cut -d% -f1)
	printf '%-6s %-4s %-12s %-10s %8s %6s  %s %s\n' "$_k" "$_d" "${_m}x$_n" "${_v:-none}" "${_u:--}" "${_p:--}" \
		"${_f##*/}" "$(echo "$*" | sed 's/--define //g')" | tee -a "$RES"
	[ "${_v:-}" = CORRECT ] || printf '%s\n' "$_r" | tail -6 | sed 's/^/    /'
}

defs() { # a comma list as --define arguments
	# shellcheck disable=SC2046 # the list's words, split on purpose
	printf -- '--define %s ' $(echo "$1" | tr , ' ')
}

# prof_at LABEL DTYPE M N FILE [kbench args...]: `kbench profile` (sol,
# memory, occupancy, stalls) at M x N, all of it into $OUT/profiles.txt,
# its telling lines to $PT; SKIPPED once END has passed (PT and END: the
# caller's)
prof_at() {
	_k=$1 _d=$2 _m=$3 _n=$4 _f=$5
	shift 5
	if [ "$(date +%s)" -ge "$END" ]; then
		echo "$_k: SKIPPED (TOTAL)" >>"$PT"
		return
	fi
	_r=$(timeout 60 "$KB" profile "$_f" --arg M="$_m" --arg N="$_n" --no-sweep --trials 1 --timeout 40 \
		--section sol --section memory --section occupancy --section stalls "$@" 2>&1)
	printf '== %s %s %sx%s %s %s\n%s\n' "$_k" "$_d" "$_m" "$_n" "${_f##*/}" "$*" "$_r" >>"$OUT/profiles.txt"
	{
		echo "$_k ${_f##*/} $(echo "$*" | sed 's/--define //g')"
		printf '%s\n' "$_r" | grep -E '^ *(time|DRAM throughput|DRAM bandwidth|L1 hit rate|L2 hit rate|L2 throughput|achieved warps|long_scoreboard|barrier|membar|wait|short_scoreboard|lg_throttle|mio_throttle|drain|no_instructions|sleeping|branch_resolving|dispatch_stall|misc|math_pipe|not_selected|selected|tex_throttle|imc_miss) ' |
			sed 's/^ */    /' | head -14
	} >>"$PT"
}

# study_setup: a study script's start, once this library is sourced: END
# (START + TOTAL: no timed run after it), JOBS (a folder for lanes), this
# GPU's copy ceiling, which every % is of (calibrated where none is
# cached), and DEADLINE (BUDGET seconds on from here, the calibration not
# counted: no check starts after it)
study_setup() {
	END=$((START + TOTAL))
	JOBS=$(mktemp -d)
	"$KB" devices 2>&1 | grep -q 'no measured ceilings' && timeout 60 "$KB" calibrate >"$OUT/calibrate.txt" 2>&1
	"$KB" devices 2>&1 | grep -m1 -E '^ *copy' || echo "no copy ceiling: % of copy will be missing"
	DEADLINE=$(($(date +%s) + BUDGET))
}

# fit PER16 N C VPT: the threads that hold a rank's slice of N (vectors of
# PER16 elements) at VPT vectors a thread, whole warps, or 0 where over 768
# (the registers of a block at the cluster kernels' 64-80 a thread)
fit() {
	_per=$((($2 / $1 + $3 - 1) / $3))
	_t=$((32 * ((_per + 32 * $4 - 1) / (32 * $4))))
	[ "$_t" -ge 32 ] || _t=32
	[ "$_t" -le 768 ] && echo "$_t" || echo 0
}

# w0_copy DIR FILE...: each LayerNorm FILE (kernels/layernorm/NAME.cu) as
# DIR/NAME_w0.cu with its spec's w = ones and b = zeros, for a run at W = 0
# (no w or b read), which is CORRECT only against those; says so where the
# spec was not rewritten
w0_copy() {
	_d=$1
	shift
	for _f in "$@"; do
		_o=$_d/$(basename "$_f" .cu)_w0.cu
		sed -e 's/^\(\/\/! in *w : [a-z0-9]*\[N\]\) = .*/\1 = ones/' \
			-e 's/^\(\/\/! in *b : [a-z0-9]*\[N\]\) = .*/\1 = zeros/' "$_f" >"$_o"
		grep -q '^//! in *b : .* = zeros' "$_o" || echo "W=0 copy of $_f: spec not rewritten"
	done
}

# GALLERY_LIB=1 . scripts/gpu-gallery.sh: the functions above for another
# script (one, sanitize, prof, timed, defs, prof_at, study_setup, fit,
# w0_copy; OUT, KB, SUM, DEADLINE set), no mode run
[ -z "${GALLERY_LIB:-}" ] || return 0
if [ "${1:-}" = table ]; then # the rest are bench/gallery.py's arguments
	shift
	t0=$(date +%s)
	timeout 470 python3 bench/gallery.py "$@" 2>&1 | grep -v '^W11' | tee "$OUT/gallery.txt"
	echo "== table $* ($(($(date +%s) - t0)) s)"
	# the shared runner's memory after its last client (its log's last such line)
	d=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/kbench}
	for l in "${d:-/tmp/kbench-$(id -u)}"/runner-*.log; do
		[ -f "$l" ] && echo "== $(basename "$l"): $(grep 'after client' "$l" | tail -1)"
	done
	exit 0
fi
[ $# -gt 0 ] || set -- bulk check long
for mode in "$@"; do
	: >"$SUM"
	t0=$(date +%s)
	case $mode in
	bulk | check | memcheck | long)
		$mode >"$OUT/$mode.txt" 2>&1
		cat "$SUM"
		grep -v ' CORRECT ' "$SUM" | sed 's/^/  NOT: /'
		echo "== $mode ($(($(date +%s) - t0)) s): $(grep -c ' CORRECT' "$SUM") CORRECT of $(wc -l <"$SUM")"
		sed "s/^/$mode: /" "$SUM" >>"$SUM.all" ;;
	record)
		sh scripts/record-gallery.sh >"$OUT/record.txt" 2>&1
		tail -40 "$OUT/record.txt"
		echo "== record ($(($(date +%s) - t0)) s): sessions.tgz $(ls -l "$OUT/sessions.tgz" 2>&1 | awk '{print $5}') bytes" ;;
	a)
		for n in 65536 131072 262144; do
			for minb in 2 3; do
				echo "bf16 long N=$n MINB=$minb: $("$KB" run kernels/softmax/softmax_bf16_cluster.cu \
					--arg N=$n --define CLUSTER=$((n / 16384)) --define MINB=$minb --no-sweep --trials 1 2>&1 |
					grep -E 'INCORRECT|bandwidth|rror' | tr -s ' ' | cut -c1-60 | tr '\n' ' ')"
			done
		done
		sh scripts/record-gallery.sh 2>&1 | tee "$OUT/record.txt" ;;
	b)
		timeout 560 python3 bench/gallery.py 2>&1 | grep -v '^W11' | tee "$OUT/gallery.txt" ;;
	*) echo "unknown mode $mode" ;;
	esac
done
if [ -s "$SUM.all" ]; then
	echo "== summary: $(grep -c ' CORRECT' "$SUM.all") CORRECT of $(wc -l <"$SUM.all") runs; the others:"
	grep -v ' CORRECT ' "$SUM.all" | sed 's/^/  /'
fi
rm -f "$SUM" "$SUM.all"
