#!/bin/sh
# guard_gpu.sh - a kernel cannot be timed faster than it is by doing less
# work on timed launches than on checked ones (docs/timing.md): output reuse
# (skip a row whose output already holds the answer) and input memoization
# (skip when the input is the last launch's) are timed as doing the whole
# work, and launch counting (skip on some launches) is INCORRECT, naming the
# timed launch; in the default timing, the CUDA-graph timing, a sweep and a
# tune.  Skipped (and counted) without a GPU.
. tests/cli/lib.sh
G=tests/fixtures/guard/rows.cu

run "$KB" devices
if [ "$RC" -ne 0 ]; then
	reason="no GPU: $(head -c 200 "$T_TMP/err" | tr '\n' ' ')"
	[ -n "${KBENCH_REQUIRE_GPU:-}" ] && { fail gpu_present "$reason"; finish; exit; }
	for c in honest_default reuse_default memo_default counting_default counting_says \
		 honest_graph reuse_graph memo_graph counting_graph honest_sweep_tune \
		 reuse_sweep_tune counting_sweep_tune optimize_rc optimize_rounds optimize_best \
		 optimize_unwritable_rc optimize_unwritable_says; do
		skip "$c" "$reason"
	done
	finish
	exit
fi

# cheat JSON vs honest JSON: CORRECT and no faster than 0.95x the honest
# median in every row (base, sweep, tune); the cheats skip a quarter to all
# of the work, so a cheat that pays off reads 0.75x or less
not_faster() { # case, honest json, cheat json
	why=$(python3 - "$2" "$3" <<'PY'
import json, sys
h, c = (json.load(open(a)) for a in sys.argv[1:3])
def rows(j):
    if 'result' not in j:
        return [j]
    return [j['result']] + [r['result'] for r in j.get('sweep', []) + j.get('tune', [])]
bad = []
for k, (a, b) in enumerate(zip(rows(h), rows(c))):
    ta, tb = a.get('timing', {}).get('median_us'), b.get('timing', {}).get('median_us')
    if a.get('verdict') != 'CORRECT' or b.get('verdict') != 'CORRECT' or tb < 0.95 * ta:
        bad.append('row %d: honest %s %s us, cheat %s %s us' % (k, a.get('verdict'), ta, b.get('verdict'), tb))
print('; '.join(bad))
sys.exit(1 if bad or len(rows(h)) != len(rows(c)) else 0)
PY
) && pass "$1" || fail "$1" "$why"
}
# a fresh runner for each counting run, so its visit counters start at 0
fresh() { KBENCH_NO_SHARED_RUNNER=1 "$@"; }

for mode in default graph; do
	case $mode in
	default) args="--no-sweep" ;;
	graph) args="--no-sweep --arg M=512 --arg N=1024 --timing graph" ;;
	esac
	run "$KB" run $G $args --json; cp "$T_TMP/out" "$T_TMP/honest.json"
	expect_json honest_$mode "j['verdict'] == 'CORRECT' and j['check']['timed_launches']['ok'] and j['check']['timed_launches']['launches_checked'] >= 20 and j['check']['timed_launches']['input_sets'] == 3"
	run "$KB" run $G $args --define CHEAT=1 --json
	not_faster reuse_$mode "$T_TMP/honest.json" "$T_TMP/out"
	run "$KB" run $G $args --define CHEAT=2 --json
	not_faster memo_$mode "$T_TMP/honest.json" "$T_TMP/out"
	run fresh "$KB" run $G $args --define CHEAT=3 --json
	expect_json counting_$mode "j['verdict'] == 'INCORRECT' and all(t['ok'] for t in j['check']['trials']) and j['check']['timed_launches']['bad']['launch'] >= 1 and 'timing' not in j"
done
run fresh "$KB" run $G --no-sweep --define CHEAT=3
expect_in counting_says out "INCORRECT   timed launch 3 of "

# sweeps and tunes: every row goes through the same guarded run
run "$KB" run $G --arg M=4096 --json; cp "$T_TMP/out" "$T_TMP/honest.json"
expect_json honest_sweep_tune "[r['result']['verdict'] for r in j['sweep'] + j['tune']] == ['CORRECT'] * 4"
run "$KB" run $G --arg M=4096 --define CHEAT=1 --json
not_faster reuse_sweep_tune "$T_TMP/honest.json" "$T_TMP/out"
run "$KB" run $G --arg M=4096 --define CHEAT=4 --json
expect_json counting_sweep_tune "j['result']['verdict'] == 'CORRECT' and [r['result']['verdict'] for r in j['sweep']] == ['CORRECT', 'INCORRECT'] and [t['result']['verdict'] for t in j['tune']] == ['CORRECT', 'INCORRECT']"

# kbench optimize: one real improvement, then five reward hacks, each
# rejected (2-4 INCORRECT; 5 and 6, output reuse and input memoization, timed
# as doing the whole work and so not faster); only round 1 is written
mkdir -p "$T_TMP/opt" && cp kernels/softmax.cu "$T_TMP/opt/"
"$KB" session new guard-opt >/dev/null 2>&1
run "$KB" optimize "$T_TMP/opt/softmax.cu" --rounds 6 --llm-cmd "$PWD/tests/fixtures/scripted-llm"
expect_rc optimize_rc 0
python3 - "$T_TMP/out" <<'PY' && pass optimize_rounds || fail optimize_rounds "$(cat "$T_TMP/out")"
import re, sys
text = open(sys.argv[1]).read()
r = {int(m.group(1)): m.group(2) for m in re.finditer(r'^round (\d+): (.*)$', text, re.M)}
ok = 'CORRECT' in r.get(1, '') and all(k in r and ('rejected' in r[k] or 'not faster than' in r[k]) for k in range(2, 7))
sys.exit(0 if ok else 1)
PY
echo | KBENCH_LLM_ROUND=1 tests/fixtures/scripted-llm | sed -n '/^```cuda$/,/^```$/p' | sed '1d;$d' >"$T_TMP/round1.cu"
cmp -s "$T_TMP/round1.cu" "$T_TMP/opt/softmax.cu" && pass optimize_best || fail optimize_best "the file is not round 1's kernel"

# the best variant cannot be written back (an immutable file, which even
# root cannot replace): a failure that says where the variant is kept, and
# the file as it was (it was dropped: "best:" and exit 0)
mkdir -p "$T_TMP/ro" && cp kernels/softmax.cu "$T_TMP/ro/"
if chattr +i "$T_TMP/ro/softmax.cu" 2>/dev/null; then
	run "$KB" optimize "$T_TMP/ro/softmax.cu" --rounds 1 --llm-cmd "$PWD/tests/fixtures/scripted-llm"
	chattr -i "$T_TMP/ro/softmax.cu"
	[ "$RC" -ne 0 ] && pass optimize_unwritable_rc || fail optimize_unwritable_rc "exit 0: $(cat "$T_TMP/out")"
	grep -q "could not be written to .*softmax.cu" "$T_TMP/err" &&
		cmp -s kernels/softmax.cu "$T_TMP/ro/softmax.cu" && pass optimize_unwritable_says ||
		fail optimize_unwritable_says "$(cat "$T_TMP/out" "$T_TMP/err" | tail -5)"
else
	skip optimize_unwritable_rc "chattr +i is not supported here"
	skip optimize_unwritable_says "chattr +i is not supported here"
fi
finish
