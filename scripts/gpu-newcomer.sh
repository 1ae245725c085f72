#!/bin/sh
# gpu-newcomer.sh - issue 25's compile and run items (3, 4, 5, 7, 8's
# --arch, 9, 10, 12) on a GPU machine, in one device call of at most about
# 7 minutes: each case's exit status and verdict line as a GPU run gives
# them, every kernel of the gallery compiled at the GPU's arch (the new
# launch, UTF-8 and missing-kernel checks must refuse none of them), the
# warm `kbench run` wall time (the spec is now checked before the runner),
# every gallery kernel run once (150 s at most), and the CLI tests these
# items touched (the emulator's run in make test: it needs no GPU).
# Usage (repo root, GPU machine, the `make dist` tarball under build/dist/,
# carried; nothing is built there):
#   sh scripts/gpu-newcomer.sh          (writes under $OUT, else /tmp/out)
# Files under $OUT: gpu.txt cases.txt gallery.txt timing.txt tests.txt
# summary.txt; the summary table is printed last.  One failing step
# never stops the others.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
KB=$PWD/build/kbench
T=$(mktemp -d /tmp/kb-newcomer.XXXXXX)
export XDG_CACHE_HOME=$T/cache XDG_DATA_HOME=$T/data KBENCH_NO_SESSION=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  date -u +%Y-%m-%dT%H:%MZ; cat build/COMMIT 2>/dev/null; } >"$OUT/gpu.txt" 2>&1
: >"$OUT/summary.txt"
row() { printf '%-34s %-6s %s\n' "$1" "$2" "$3" >>"$OUT/summary.txt"; }

# ---- the cases: NAME WANT_RC CMD... (the verdict line is the first that
# names one; the whole output goes to cases.txt) ----
V=kernels/vector_add.cu
sed 's/a : f32\[n\]/a : f31[n]/' $V >"$T/f31.cu"
sed 's/block=(256)/block=(256, 8, 8)/' $V >"$T/b3.cu"
sed 's/block=(256)/block=(BLOCK)/; s/cdiv(n, 256)/cdiv(n, BLOCK)/; s|^//! tol.*|&\n//! tune    BLOCK = 256, 512|' \
	$V >"$T/tb.cu"
sed 's/n = 64 \* 1024 \* 1024/n = 1099511627776/' $V >"$T/big.cu"
{ printf '// caf\303\251 \377\n'; cat $V; } >"$T/ff.cu"
sed 's/__global__ void vector_add/__global__ void __launch_bounds__(128) vector_add/' $V >"$T/lb.cu"
case_() {
	name=$1 want=$2; shift 2
	{ echo "==== $name: $*"; timeout 120 "$@"; echo "rc=$?"; } >"$T/case.txt" 2>&1
	cat "$T/case.txt" >>"$OUT/cases.txt"
	rc=$(sed -n 's/^rc=//p' "$T/case.txt" | tail -1)
	line=$(grep -v '^====' "$T/case.txt" | grep -m1 -E 'CORRECT|INCORRECT|SPEC ERROR|COMPILE ERROR|CANNOT LAUNCH|NO GPU|error:|SASS|FAULT|LAUNCH ERROR|overflows|sm_999' |
		cut -c1-100)
	[ "$rc" = "$want" ] && ok=ok || ok="FAIL(rc $rc)"
	row "$name" "$ok" "$line"
}
: >"$OUT/cases.txt"
case_ run_vector_add 0 "$KB" run $V --no-sweep
case_ run_spec_error_f31 1 "$KB" run "$T/f31.cu" --no-sweep
case_ run_cannot_launch_256x8x8 1 "$KB" run "$T/b3.cu" --no-sweep
case_ run_define_block_2048 1 "$KB" run "$T/tb.cu" --no-sweep -D BLOCK=2048
case_ run_tune_256_512 0 "$KB" run "$T/tb.cu"
case_ run_launch_bounds_128_runner 1 "$KB" run "$T/lb.cu" --no-sweep
case_ run_int_overflow_spec 1 "$KB" run "$T/big.cu" --no-sweep
case_ run_int_overflow_arg 1 "$KB" run $V --no-sweep --arg n=1099511627776
case_ run_option_G 1 "$KB" run $V --no-sweep --option -G
case_ compile_not_utf8 2 "$KB" compile "$T/ff.cu"
case_ compile_arch_sm_999 2 "$KB" compile $V --arch sm_999
case_ compile_sass_shown 0 "$KB" compile $V
case_ devices_sass 0 "$KB" devices
(cd "$T" && timeout 120 "$OLDPWD/build/emu/tile_emu" "$OLDPWD/$V" --size n=1000) >"$T/emu.txt" 2>&1
grep -q '^ok ' "$T/emu.txt" && row emu_from_other_dir ok "$(head -1 "$T/emu.txt" | cut -c1-80)" \
	|| row emu_from_other_dir FAIL "$(head -3 "$T/emu.txt" | tr '\n' ' ' | cut -c1-100)"
cat "$T/emu.txt" >>"$OUT/cases.txt"

# ---- every gallery kernel compiles at the GPU's arch, as before ----
: >"$OUT/gallery.txt"
nbad=0 n=0
for f in $(find kernels -name '*.cu' -o -name '*.tile' -o -name '*.ptx' | sort); do
	n=$((n + 1))
	timeout 120 "$KB" compile "$f" --no-sass >"$T/g.txt" 2>&1; rc=$?
	echo "$rc $f" >>"$OUT/gallery.txt"
	[ "$rc" = 0 ] || { nbad=$((nbad + 1)); cat "$T/g.txt" >>"$OUT/gallery.txt"; }
done
row gallery_compiles "$([ $nbad = 0 ] && echo ok || echo FAIL)" "$((n - nbad))/$n kernels exit 0"
# and runs (one trial, no sweep) with no new SPEC ERROR / COMPILE ERROR /
# CANNOT LAUNCH from the checks; at most 150 s of it
s0=$(date +%s) nrun=0 nerr=0
for f in $(find kernels -name '*.cu' -o -name '*.tile' | sort); do
	[ $(( $(date +%s) - s0 )) -lt 150 ] || break
	nrun=$((nrun + 1))
	timeout 60 "$KB" run "$f" --no-sweep --trials 1 >"$T/g.txt" 2>&1; rc=$?
	v=$(grep -m1 -oE 'CORRECT|INCORRECT|UNSUPPORTED|SPEC ERROR|COMPILE ERROR|FAULT|TIMEOUT|LAUNCH ERROR|NO GPU|IMPOSSIBLE' "$T/g.txt")
	echo "run rc=$rc ${v:-?} $f" >>"$OUT/gallery.txt"
	case $v in CORRECT|UNSUPPORTED) ;; *) nerr=$((nerr + 1)); cat "$T/g.txt" >>"$OUT/gallery.txt" ;; esac
done
row gallery_runs "$([ $nerr = 0 ] && echo ok || echo FAIL)" "$((nrun - nerr))/$nrun CORRECT or UNSUPPORTED (gallery.txt)"

# ---- warm run wall time (the runner kept warm; spec checked first) ----
: >"$OUT/timing.txt"
"$KB" run $V --no-sweep >/dev/null 2>&1
for i in 1 2 3 4 5 6 7; do
	s=$(date +%s%N); "$KB" run $V --no-sweep --trials 1 >/dev/null 2>&1
	echo $(( ($(date +%s%N) - s) / 1000000 )) >>"$OUT/timing.txt"
done
med=$(sort -n "$OUT/timing.txt" | sed -n 4p)
row run_warm_wall_median "-" "${med} ms (7 runs, vector_add --trials 1; timing.txt)"
"$KB" serve --stop >/dev/null 2>&1

# ---- the CLI tests these items touched, with the GPU present ----
: >"$OUT/tests.txt"
for t in compile run_nogpu run_gpu; do
	s=$(date +%s)
	timeout 120 sh tests/cli/$t.sh >"$T/t.txt" 2>&1
	grep -E '^  (FAIL|SKIP)|^# passed' "$T/t.txt" | sed "s/^/$t: /" >>"$OUT/tests.txt"
	row "test_$t" "$(grep -q 'failed=0' "$T/t.txt" && echo ok || echo FAIL)" \
		"$(grep '^# passed' "$T/t.txt" | tail -1) $(( $(date +%s) - s )) s"
done
rm -rf "$T"
cat "$OUT/gpu.txt"
cat "$OUT/summary.txt"
