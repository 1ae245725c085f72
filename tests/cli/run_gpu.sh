#!/bin/sh
# run_gpu.sh - `kbench run` on a real GPU: correctness, faults that must be
# results (and the next run must work), cheats that must be caught, and the
# occupancy calculator against the driver.  Skipped (and counted) where
# there is no GPU.
. tests/cli/lib.sh
F=tests/fixtures/faults

run "$KB" devices
if [ "$RC" -ne 0 ]; then
	reason="no GPU: $(head -c 200 "$T_TMP/err" | tr '\n' ' ')"
	[ -n "${KBENCH_REQUIRE_GPU:-}" ] && { fail gpu_present "$reason"; finish; exit; }
	for c in softmax_correct softmax_time softmax_ceiling vector_add ptx_saxpy oob_fault \
		 after_fault hang_timeout after_hang unwritten offbyone_sweep race first_call \
		 skips_some ref_kernel tune_best tma_copy tma_zero tma_bad_stride sass_metrics_1 sass_metrics_2 impossible file_input occupancy_vs_driver \
		 profile_sections profile_disk_config profile_bad_metric hot_spot_line hot_spot_stalls \
		 hot_spot_text hot_spot_cluster16 clusters_at_once clusters_text run_option run_option_text run_bad_option run_bad_option_msg \
		 compare_gpu compare_same_correct compare_same_unwritten compare_same_offbyone \
		 compare_same_first_call compare_same_ref_kernel compare_same_skips \
		 auto_calibrate auto_calibrate_once progress_ticks gpus_all_tune require_arg_rc \
		 require_arg_text require_arg_json require_sweep_rc require_sweep_json \
		 require_sweep_text; do
		skip "$c" "$reason"
	done
	finish
	exit
fi
grep -q '"ceilings"' "$T_TMP/out" || "$KB" calibrate >/dev/null 2>&1

run "$KB" run kernels/softmax.cu --no-sweep
expect_rc softmax_correct 0
expect_in softmax_time out "us median"
expect_in softmax_ceiling out "of measured copy ceiling"
run "$KB" run kernels/vector_add.cu;  expect_rc vector_add 0
run "$KB" run kernels/saxpy.ptx;      expect_rc ptx_saxpy 0

# Faults are results, and the next run works without anyone doing anything.
run "$KB" run $F/oob_write.cu --json
expect_json oob_fault "j['status'] == 'fault' and 'ILLEGAL_ADDRESS' in j.get('error','') and j['during']['kernel'] == 'oob_write'"
run "$KB" run kernels/vector_add.cu;  expect_rc after_fault 0
run "$KB" run $F/hang.cu --timeout 3 --json
expect_json hang_timeout "j['status'] == 'timeout' and j['during']['kernel'] == 'hang' and j['during']['grid'][0] == 4096"
run "$KB" run kernels/vector_add.cu;  expect_rc after_hang 0

# Wrong results are caught, with where.
run "$KB" run $F/unwritten.cu --json
expect_json unwritten "j['verdict'] == 'INCORRECT' and j['check']['trials'][0]['outputs'][0]['unwritten'] == 64 and j['check']['trials'][0]['outputs'][0]['first_bad']['at'] == 'y[0, 999]'"
run "$KB" run $F/off_by_one.cu --json
expect_json offbyone_sweep "j['result']['verdict'] == 'CORRECT' and [r['result']['verdict'] for r in j['sweep']] == ['CORRECT', 'INCORRECT', 'INCORRECT']"
run "$KB" run $F/race.cu --trials 5 --json
expect_json race "j['verdict'] == 'INCORRECT'"
run "$KB" run $F/first_call_only.cu --json
expect_json first_call "j['verdict'] == 'INCORRECT' and not j['check']['trials'][1]['ok']"
run "$KB" run $F/skips_some.cu --json
expect_json skips_some "j['verdict'] in ('INCORRECT', 'IMPOSSIBLE') and all(t['ok'] for t in j['check']['trials'])"

# A reference kernel of the same file; tune lines; a too-good-to-be-true time.
run "$KB" run tests/fixtures/kernels/ref_kernel.cu --json
expect_json ref_kernel "j['verdict'] == 'CORRECT' and j['check']['trials'][0]['outputs'][0]['max_abs_err'] > 0"
run "$KB" run tests/fixtures/kernels/occupancy.cu --json
expect_json tune_best "[t['result']['verdict'] for t in j['tune']] == ['CORRECT', 'CORRECT'] and j['best_tune'] in (0, 1)"
# TMA: a `//! tensormap` parameter encoded per buffer set, edge tiles zero-filled.
run "$KB" run tests/fixtures/kernels/tma_copy.cu --json
expect_json tma_copy "j['result']['verdict'] == 'CORRECT' and [r['result']['verdict'] for r in j['sweep']] == ['CORRECT', 'CORRECT'] and [t['result']['verdict'] for t in j['tune']] == ['CORRECT', 'CORRECT'] and j['result']['timing']['median_us'] > 0"
run "$KB" run tests/fixtures/kernels/tma_copy.cu --arg N=100 --no-sweep
expect_in tma_bad_stride out "a row of x is 200 bytes; TMA needs every stride to be a multiple of 16 bytes"
# ... unless the line says unaligned=zero: then the map comes as zeros and the kernel copies another way
run "$KB" run tests/fixtures/kernels/tma_zero.cu --json
expect_json tma_zero "j['result']['verdict'] == 'CORRECT' and [r['result']['verdict'] for r in j['sweep']] == ['CORRECT', 'CORRECT']"
# SASS metrics in a fresh worker: twice in a row (the shared runner stays
# warm), each time the 32-way conflicted load counted and the hot spots annotated.
for n in 1 2; do
	run "$KB" profile kernels/transpose/02a_smem32_unpadded.cu --hot --section quick --no-sweep --json
	expect_json sass_metrics_$n "j['sass_metrics']['bank_conflicts'] > 0 and j['sass_metrics']['shared'][0]['bank_conflicts'] >= 0.98 * 31 * j['sass_metrics']['shared'][0]['executions'] and any('bank_conflicts' in h for h in j['hot'])"
done
run "$KB" run tests/fixtures/kernels/impossible.cu --json
expect_json impossible "j['verdict'] == 'IMPOSSIBLE' and 'floor' in j['roofline']['impossible_why']"

run "$KB" run tests/fixtures/kernels/file_input.cu --json
expect_json file_input "j['verdict'] == 'CORRECT' and j['check']['trials'][0]['outputs'][0]['max_abs_err'] == 0"

# The offline occupancy calculator agrees with the driver.
ok=1
for c in "R=4 B=256 S=0" "R=4 B=1024 S=0" "R=4 B=32 S=0" "R=4 B=128 S=49152" "R=64 B=256 S=0" "R=64 B=512 S=16384" "R=64 B=96 S=100000"; do
	set -- $c
	run "$KB" run tests/fixtures/kernels/occupancy.cu --no-sweep --define "$1" --arg "$2" --arg "$3" --json
	python3 -c "
import json,sys
j=json.load(open('$T_TMP/out'))
o=j['compile']['kernel']['occupancy']; d=j['launch']['driver_blocks_per_sm']
print('occupancy $c: regs %d, offline %d blocks/SM (%s), driver %d' % (j['compile']['kernel']['resources']['registers'], o['blocks_per_sm'], o['limiter'], d))
sys.exit(0 if o['blocks_per_sm'] == d else 1)" || ok=0
done
[ $ok = 1 ] && pass occupancy_vs_driver || fail occupancy_vs_driver "offline and driver disagree (see above)"
# Counters and hot spots (CUPTI): sections, metric-name errors, the slow line first.
run "$KB" profile kernels/softmax.cu --json
expect_json profile_sections "j['verdict'] == 'CORRECT' and j['counters']['dram__bytes_read.sum'] > 0.9 * 4096 * 8192 * 4 and j['sections']['sol']['bottleneck'] in ('memory', 'compute', 'latency')"
# a fresh runner reads the config image the run before saved, builds it
# again beside the passes, and reports every counter
run env KBENCH_NO_SHARED_RUNNER=1 "$KB" profile kernels/softmax.cu --json
expect_json profile_disk_config "j['counters_steps_ms']['config_from_disk'] and not j['counters_steps_ms']['config_stale'] and j['counters_steps_ms']['replays'] == j['counters_passes'] and all(v is not None for v in j['counters'].values()) and len(j['counters']) == 55"
run "$KB" profile kernels/softmax.cu --metrics dram__bytes_reed.sum --json
expect_json profile_bad_metric "j['status'] == 'metric_error' and 'dram__bytes_read' in j['message']"
run "$KB" profile tests/fixtures/kernels/hot_strided.cu --hot --section quick --json
python3 -c "import json; j = json.load(open('$T_TMP/out')); print('  hot lines (line, %%, top stall):', [(h['line'], round(h['share_pct'], 1), h['stalls'][0]['reason'] if h.get('stalls') else None) for h in j.get('hot_lines', [])[:4]])" 2>&1
expect_json hot_spot_line "j['hot_lines'][0]['line'] == 20"
# each hot line with its stall reasons, shares of its samples (summing to 100)
expect_json hot_spot_stalls "j['hot_lines'][0]['stalls'][0]['reason'] in ('long_scoreboard', 'lg_throttle') and abs(sum(s['share_pct'] for s in j['hot_lines'][0]['stalls']) - 100) < 0.01"
run "$KB" profile tests/fixtures/kernels/hot_strided.cu --hot --section quick
expect_in hot_spot_text out "stalls: "
# hot spots of a kernel whose cluster passes 8 blocks: the hot-spot launches
# load their own module, which needs the non-portable cluster size too
run "$KB" profile kernels/layernorm/06_cluster.cu --define CLUSTER=16 --define THREADS=224 --arg M=64 --arg N=50257 \
	--hot --section quick --no-sweep --json
expect_json hot_spot_cluster16 "j['verdict'] == 'CORRECT' and 'hot_error' not in j and 'sass_metrics_error' not in j and j['hot_lines']"
# how many clusters run at once (the driver's figure), beside how many the
# SMs alone would hold: fewer where the GPCs' sizes leave SMs over
run "$KB" run kernels/layernorm/06_cluster.cu --define CLUSTER=8 --define THREADS=224 --define VPT=8 --define MINB=4 --arg M=4096 --arg N=50257 \
	--no-sweep --json
expect_json clusters_at_once "j['launch']['cluster_blocks'] == 8 and 1 <= j['launch']['driver_clusters_at_once'] <= j['launch']['clusters_sms_hold'] == j['launch']['driver_blocks_per_sm'] * j['env']['device']['sm_count'] // 8"
run "$KB" run kernels/layernorm/06_cluster.cu --define CLUSTER=8 --define THREADS=224 --define VPT=8 --define MINB=4 --arg M=4096 --arg N=50257 \
	--no-sweep
expect_in clusters_text out "clusters of 8: "
# --option reaches the runner's compile, and is recorded in the Result.
run "$KB" run kernels/vector_add.cu --no-sweep --option -maxrregcount=32 --json
expect_json run_option "j['verdict'] == 'CORRECT' and j['compile']['options'] == ['-maxrregcount=32']"
run "$KB" run kernels/vector_add.cu --no-sweep --option -maxrregcount=32
expect_in run_option_text out " -maxrregcount=32"
run "$KB" run kernels/vector_add.cu --no-sweep --option -use_fast_mth
expect_rc run_bad_option 1
expect_in run_bad_option_msg out "did you mean '-use_fast_math'?"

# Outputs compared on the GPU (the default) and on the host give the same
# verdicts and figures, with the same seed, for correct and wrong kernels.
run "$KB" run kernels/softmax.cu --no-sweep --seed 7 --json
run "$KB" run kernels/softmax.cu --no-sweep --seed 7 --json
expect_json compare_gpu "all(t['compared_on'] == 'gpu' for t in j['check']['trials']) and all(a['compared_on'] == 'gpu' for a in j['check']['after_timing']) and j['check']['compare'] == 'gpu'"
same_figures() { # NAME ARGS...: the run's check figures, GPU vs host
	name=$1; shift
	# fresh runners both: fixtures that count their launches start equal
	KBENCH_NO_SHARED_RUNNER=1 "$KB" run "$@" --no-sweep --seed 11 --json > "$T_TMP/gpu.json" 2>/dev/null
	KBENCH_NO_SHARED_RUNNER=1 KBENCH_COMPARE=cpu "$KB" run "$@" --no-sweep --seed 11 --json \
		> "$T_TMP/cpu.json" 2>/dev/null
	if python3 - "$T_TMP/gpu.json" "$T_TMP/cpu.json" <<'PY'
import json, math, sys
g, c = (json.load(open(p)) for p in sys.argv[1:3])
def figs(j, l2):
    out = [j.get('verdict')]
    # re-checks: their verdicts (on the host, a re-check bit-equal to the
    # verified output has no figures; on the GPU every one has)
    out += [bool(t.get('ok')) for t in j['check'].get('after_timing', [])]
    failed = [t for t in j['check'].get('after_timing', []) if not t.get('ok')]
    for t in j['check'].get('trials', []) + failed:
            out.append(bool(t.get('ok')))
            for o in t['outputs']:
                fb = o.get('first_bad', {})
                out.append((o['ok'], o['mismatches'], o['unwritten'], o['nan'], o['inf'],
                            fb.get('index'), fb.get('at'), str(fb.get('got')), str(fb.get('want')),
                            str(o['max_abs_err']), str(o['max_rel_err'])))
                l2.append(o['rel_l2_err'])
    return out
assert c['check']['compare'].startswith('cpu'), c['check']['compare']
assert g['check']['compare'] == 'gpu', g['check']['compare']
assert g['check']['trials'][0]['compared_on'] == 'gpu', g['check']['trials'][0]
l2g, l2c = [], []
fg, fc = figs(g, l2g), figs(c, l2c)
# the sums of squares behind rel L2 are added in another order: equal to 1e-9
close = len(l2g) == len(l2c) and all(str(a) == str(b) or math.isclose(float(a), float(b), rel_tol=1e-9)
                                     for a, b in zip(l2g, l2c))
if fg != fc or not close:
    print('    rel L2:', l2g, l2c)
    for a, b in zip(fg, fc):
        if a != b:
            print('    differ:', a, b)
    sys.exit(1)
print('    %s: %s on both, %d figures equal' % (sys.argv[1].split('/')[-1], g.get('verdict'), len(fg)))
PY
	then pass "$name"; else fail "$name" "GPU and host comparisons differ"; fi
}
same_figures compare_same_correct kernels/softmax.cu
same_figures compare_same_unwritten $F/unwritten.cu
same_figures compare_same_offbyone $F/off_by_one.cu --arg n=5000
same_figures compare_same_first_call $F/first_call_only.cu
same_figures compare_same_ref_kernel tests/fixtures/kernels/ref_kernel.cu
same_figures compare_same_skips $F/skips_some.cu

# `//! require`: a violating --arg is UNSUPPORTED before anything is compiled,
# allocated or launched (exit 1, the requirement and its values); the
# sweep's violating point (n=1002) and the tune's (BLOCKS=2) are UNSUPPORTED
# rows, neither failures nor the best, and the run exits 0.
R=tests/fixtures/kernels/require.cu
run "$KB" run $R --arg n=1002 --no-sweep
expect_rc require_arg_rc 1
expect_in require_arg_text out "  UNSUPPORTED requires n % 4 == 0: n % 4 = 2 (n = 1002)"
run "$KB" run $R --arg n=8192 --no-sweep --json
expect_json require_arg_json "j['status'] == 'unsupported' and j['message'] == 'requires n <= BLOCKS * 256 * 4: n = 8192, BLOCKS * 256 * 4 = 4096 (BLOCKS = 4)' and j['require']['line'] == 14 and 'check' not in j and 'timing' not in j and j['compile']['cubin_bytes'] == 0"
run "$KB" run $R --json
expect_rc require_sweep_rc 0
expect_json require_sweep_json "j['result']['verdict'] == 'CORRECT' and [r['result'].get('verdict', r['result']['status']) for r in j['sweep']] == ['CORRECT', 'unsupported', 'CORRECT'] and [t['result'].get('verdict', t['result']['status']) for t in j['tune']] == ['CORRECT', 'CORRECT', 'unsupported'] and j['best_tune'] in (0, 1)"
run "$KB" run $R
expect_in require_sweep_text out "UNSUPPORTED               -              -  requires n % 4 == 0: n % 4 = 2 (n = 1002)"

# A GPU with no measured ceilings is calibrated by its first run, once.
run env XDG_CACHE_HOME="$T_TMP/fresh-cache" "$KB" run kernels/vector_add.cu --json
expect_json auto_calibrate "j['calibrated']['ms'] > 0 and 'error' not in j['calibrated'] and j['roofline']['pct_of_measured_copy'] > 0"
run env XDG_CACHE_HOME="$T_TMP/fresh-cache" "$KB" run kernels/vector_add.cu --json
expect_json auto_calibrate_once "'calibrated' not in j and j['roofline']['pct_of_measured_copy'] > 0"

# A phase over a second ticks (elapsed time); ticks stop before the result.
python3 tests/cli/progress_ticks.py "$KB" tests/fixtures/kernels/slow_copy.cu > "$T_TMP/out" 2>"$T_TMP/err"
if python3 - "$T_TMP/out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ticks = [m for m in lines if m.get('tick')]
assert lines[-1] == {'result': 'ok', 'verdict': 'CORRECT'}, lines[-1]
assert ticks and ticks[-1]['elapsed_s'] >= 1.0, ticks
assert all(t['phase'] == 'check trial 1/1' and t['gpu'] for t in ticks), ticks
print('    %d ticks, the last at %.2f s' % (len(ticks), ticks[-1]['elapsed_s']))
PY
then pass progress_ticks; else fail progress_ticks "$(tail -c 600 "$T_TMP/out")"; fi
# every GPU's worker: the base run, 4 sweep points and 16 tune variants in
# one queue, each result naming its GPU, every one CORRECT
run "$KB" run kernels/reduce/02_vec4.cu --gpus all --json --trials 1
expect_json gpus_all_tune "j['result']['verdict'] == 'CORRECT' and j['result']['worker'].startswith('gpu ') and len(j['sweep']) == 4 and len(j['tune']) == 16 and all(r['result']['verdict'] == 'CORRECT' and r['result']['worker'].startswith('gpu ') for r in j['sweep'] + j['tune'])"
finish
