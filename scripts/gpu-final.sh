#!/bin/sh
# gpu-final.sh - the round's last device call (2026-11-27): every part under
# its own time limit, so one failing part does not stop the others; a
# summary last; each part's own files in $OUT/parts.tgz.  Repo root,
# build/dist/kbench-*.tar.gz carried.
#   guard    the GPU unit tests, run_gpu.sh, guard_gpu.sh (issue 24)
#   safety   scripts/gpu-safety.sh (issue 25: two k.cu in two folders)
#   attn     bench/attention.py correct (issue 30: every kernel, every size)
#   gallery  scripts/gpu-gallery.sh bulk check (issue 31: the new kernels)
#   guardcli tests/cli/guard_gpu.sh alone (issue 24, optimize into an
#            unwritable file among its cases)
#   tuilive  kbench-tui's panes live at 200x50 (issue 27; SIZES for others)
#   pyref    scripts/gpu-pyref.sh checks (issue 28)
#   kb       scripts/gpu-pyref.sh kernelbench (issue 28's table)
#   fused    scripts/gpu-tile-fused.sh (issue 29's table)
#   table    scripts/gpu-gallery.sh table softmax (issue 31, beside PyTorch)
#   flows    scripts/gpu-flows.sh (issue 26: the moved and split profile code
#            on the GPU: its unit tests, run_gpu.sh, guard_gpu.sh, each timing
#            mode, calibrate)
#   tuigpu   tests/cli/tui.sh with its GPU checks (issue 26's TUI moves)
#   tuisave  bench/tui_save.py: save -> verdict in kbench-tui (issue 27)
#   shared   tests/cli/shared.sh (issue 26's runner moves)
#   attntile scripts/gpu-attntile.sh (issue 30: attention.tile)
#   wgmma    scripts/gpu-wgmma.sh (issue 29: matmul.tile on wgmma vs cuBLAS)
#   bf16odd  scripts/gpu-bf16odd.sh (issue 31: bf16 softmax at odd widths)
#   rope     scripts/gpu-rope.sh (issue 29: rope.tile beside its hand kernel)
#   bf16fix  scripts/gpu-bf16fix.sh (issue 31: the bf16 ring softmax)
#   lnodd    scripts/gpu-lnodd.sh (issue 31: the ring LayerNorms, bf16 and f32)
#   fa2      scripts/gpu-fa2.sh (issue 30: 02_fa2.cu beside torch's flash)
#   attnspeed scripts/gpu-attn-speed.sh (issue 30: attention.tile vs 02_fa2)
#   replay   kbench replay sessions/softmax (issue 31)
#   ncuexp   bench/ncu_gallery.sh NCU_NONE=1 over NCU_PROGS: what separates
#            kbench from ncu on the kernels outside 2% (issue 24)
#   ncuall   bench/ncu_gallery.sh over NCU_FILES (default every kernels/ file)
#   ncuclk   bench/ncu_gallery.sh CLOCKS=1 on the four kernels outside 2%
#            of ncu and two inside (issue 24)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export PYTHONUNBUFFERED=1
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "$GPU $(date -u +%Y-%m-%dT%H:%MZ)" >"$OUT/summary.txt"
T_START=$(date +%s)
part() { # NAME SECONDS COMMAND...: skipped when it could end past BUDGET s
	name=$1 secs=$2; shift 2
	t0=$(date +%s)
	if [ $(( t0 - T_START + secs )) -gt "${BUDGET:-100000}" ]; then
		echo "$name: SKIPPED (${secs} s would pass the call's ${BUDGET} s)" >>"$OUT/summary.txt"
		return
	fi
	mkdir -p "/tmp/o/$name"
	(OUT=/tmp/o/$name XDG_CACHE_HOME=/tmp/kc-$name XDG_DATA_HOME=/tmp/kd-$name timeout "$secs" "$@") \
		>"$OUT/$name.txt" 2>&1
	echo "$name: rc $?, $(( $(date +%s) - t0 )) s" >>"$OUT/summary.txt"
}
for p in ${PARTS:-guard safety attn gallery}; do
	case $p in
	guard) part guard 150 sh scripts/gpu-guard.sh tests ;;
	safety) part safe 90 sh scripts/gpu-safety.sh ;;
	attn) part attn 105 env BUDGET=90 KBENCH_NO_SESSION=1 python3 bench/attention.py correct ;;
	gallery) part gallery 120 env BUDGET=100 sh scripts/gpu-gallery.sh bulk check ;;
	guardcli) part guardcli ${T_GUARDCLI:-120} sh tests/cli/guard_gpu.sh ;;
	tuilive) part tuilive ${T_TUILIVE:-220} env SIZES="${SIZES:-200x50}" \
		sh scripts/gpu-tui.sh --live /tmp/o/tuilive/w ;;
	pyref) part pyref ${T_PYREF:-170} sh scripts/gpu-pyref.sh checks ;;
	kb) part kb ${T_KB:-300} sh scripts/gpu-pyref.sh ${KB_PARTS:-kernelbench} ;;
	fused) part fused ${T_FUSED:-170} sh scripts/gpu-tile-fused.sh ;;
	table) part table ${T_TABLE:-200} env BUDGET=$(( ${T_TABLE:-200} - 20 )) \
		sh scripts/gpu-gallery.sh table softmax ;;
	attntile|wgmma|bf16odd|rope|bf16fix|fa2|lnodd) part $p $(eval echo \${T_$p:-150}) sh scripts/gpu-$p.sh ;;
	attnspeed) part attnspeed ${T_ATTNSPEED:-150} sh scripts/gpu-attn-speed.sh ;;
	replay) part replay ${T_REPLAY:-90} build/kbench replay sessions/softmax ;;
	tuisave) part tuisave ${T_TUISAVE:-90} python3 bench/tui_save.py kernels/softmax.cu 8 ;;
	flows) part flows ${T_FLOWS:-240} sh scripts/gpu-flows.sh ;;
	tuigpu) part tuigpu ${T_TUIGPU:-100} env KBENCH_REQUIRE_GPU=1 sh tests/cli/tui.sh ;;
	shared) part shared ${T_SHARED:-60} env KBENCH_REQUIRE_GPU=1 sh tests/cli/shared.sh ;;
	ncuclk) part ncuclk ${T_NCUCLK:-150} env CLOCKS=1 REPS=${NCU_REPS:-3} sh bench/ncu_gallery.sh \
		${NCU_FILES:-kernels/layernorm/layernorm.tile kernels/rmsnorm/rmsnorm_bf16.tile \
		kernels/softmax/softmax_bf16_cluster.cu kernels/matmul/matmul.tile \
		kernels/softmax.cu kernels/layernorm/02_registers.cu} ;;
	ncuexp) part ncuexp ${T_NCUEXP:-420} env NCU_NONE=${NCU_NONE:-1} REPS=${NCU_REPS:-2} \
		PROGS="${NCU_PROGS:-default trials1 cupti PFDHeFDWKe-FDHeFDWe}" sh bench/ncu_gallery.sh \
		${NCU_FILES:-kernels/fused/swiglu.cu kernels/fused/swiglu.tile \
		kernels/fused/add_rmsnorm.cu kernels/fused/transpose.cu kernels/layernorm/layernorm.tile \
		kernels/rmsnorm/rmsnorm_bf16.tile kernels/softmax.cu} ;;
	ncuall) part ncuall ${T_NCUALL:-590} env REPS=${NCU_REPS:-1} NCU_COUNT=${NCU_COUNT:-20} \
		sh bench/ncu_gallery.sh ${NCU_FILES:-} ;;
	esac
done
rm -rf /tmp/o/tuilive/w/cache /tmp/o/tuilive/w/data
tar czf "$OUT/parts.tgz" -C /tmp/o . 2>/dev/null
for p in ${PARTS:-guard safe attn gallery}; do
	echo "==== $p"
	case $p in
	guard) grep -E "^==|passed=|FAIL" "$OUT/guard.txt" ;;
	attntile|wgmma|bf16odd|rope|bf16fix|fa2|attnspeed) tail -22 "$OUT/$p.txt" ;;
	guardcli|tuigpu|shared) grep -E "passed|FAIL|fail" "$OUT/$p.txt" | tail -8 ;;
	*) tail -25 "$OUT/$p.txt" ;;
	esac
done
cat "$OUT/summary.txt"
