#!/bin/sh
# multi_gpu_tune.sh - issue 17: a spec's sweep and tune run on one GPU's
# worker and then on every GPU's (`kbench run FILE --gpus 0` vs `--gpus all`),
# REPS times each, alternating, each from cold compile and reference caches
# (both sides compile every variant and compute every CPU reference: the
# workers do both in parallel too).  Prints the
# wall time of each run, the ratio of the medians, whether every variant got
# the same verdict, and which GPU ran which variant.  The base run (before
# the sweep) is in both times.  Needs a GPU machine with >= 2 GPUs.
# MODE=cold (default): every run starts its runners afresh
# (KBENCH_NO_SHARED_RUNNER=1) with the compile and reference caches empty:
# a first sweep.  MODE=warm: the shared runners (one per GPU, kept between
# commands) are warmed by one untimed `--gpus all` run first, then the
# compile cache is emptied before each run: a sweep again after an edit
# (same inputs, so the runners still hold their references).
# Usage (repo root): [MODE=warm] [EXTRA='--arg M=131072'] sh bench/multi_gpu_tune.sh [FILE] [REPS]
#   default kernels/reduce/02_vec4.cu (4 sweep points, 16 tune variants:
#   THREADS x INFLIGHT, at 32768 x 8192 f32), 2 reps.
set -u
cd "$(dirname "$0")/.." || exit 1
K=${1:-kernels/reduce/02_vec4.cu}
REPS=${2:-2}
KB=${KB:-build/kbench}
W=$(mktemp -d /tmp/kbench-mgpu.XXXXXX)
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$W/cache} KBENCH_NO_SESSION=1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "# $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr -s ' ' | paste -sd,)  kbench ${KBENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "# $KB run $K ${EXTRA:-} --gpus 0  vs  --gpus all ($ngpu GPUs), $REPS reps each, caches as the mode says"
[ "$ngpu" -ge 2 ] || { echo "needs >= 2 GPUs, found $ngpu"; exit 1; }
"$KB" calibrate >/dev/null 2>&1 # the ceilings once, outside the timed runs
MODE=${MODE:-cold}
echo "# mode $MODE"
if [ "$MODE" = warm ]; then
	"$KB" serve --stop >/dev/null 2>&1
	"$KB" run "$K" ${EXTRA:-} --gpus all >/dev/null 2>&1
else
	export KBENCH_NO_SHARED_RUNNER=1
	# the count of --gpus all once, as the ceilings above: it is cached per
	# driver and GPUs like the default arch (src/app/gpus.c), a first use's
	# cost, not a sweep's (the caches the timed runs start without are
	# emptied before each)
	"$KB" run "$K" --gpus all >/dev/null 2>&1
fi
for i in $(seq "$REPS"); do
	for g in 0 all; do
		rm -rf "$XDG_CACHE_HOME/kbench/compile"
		[ "$MODE" = warm ] || rm -rf "$XDG_CACHE_HOME/kbench/refs"
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086 # EXTRA: more words for kbench run
		"$KB" run "$K" ${EXTRA:-} --gpus "$g" --json >"$W/$g.$i.json" 2>"$W/$g.$i.err"
		rc=$?
		echo "$g $i $rc $(echo "$t0 $(date +%s.%N)" | awk '{printf "%.2f", $2 - $1}')" >>"$W/times"
		[ "$rc" = 0 ] || { echo "--gpus $g, run $i: exit $rc"; tail -5 "$W/$g.$i.err"
			python3 -c "import json,sys; j=json.load(open(sys.argv[1])); j=j.get('result',j)
print('base run:', j.get('status'), j.get('verdict'), (j.get('message') or '')[:300])" "$W/$g.$i.json"; }
	done
done
python3 - "$W" "$REPS" <<'EOF'
import json, statistics, sys
w, reps = sys.argv[1], int(sys.argv[2])
times = {}
for line in open(w + "/times"):
    g, i, rc, s = line.split()
    times.setdefault(g, []).append((float(s), int(rc)))
def rows(path):
    j = json.load(open(path))
    out = []
    for kind in ("sweep", "tune"):
        for r in j.get(kind, []):
            key = " ".join(f"{k}={v}" for k, v in sorted(r.get("args", {}).items())) or " ".join(r.get("defines", []))
            res = r["result"]
            t = res.get("timing", {}).get("median_us")
            v = res.get("status")
            if v == "ok":
                v = res.get("verdict", "ok")
            out.append((kind, key, str(v), t, res.get("worker", "-")))
    return out
one, two = rows(f"{w}/0.1.json"), rows(f"{w}/all.1.json")
same = [a[:3] for a in one] == [b[:3] for b in two]
for g in ("0", "all"):
    for i in range(2, reps + 1):
        same = same and [a[:3] for a in rows(f"{w}/{g}.{i}.json")] == [a[:3] for a in one]
print(f"\n{'job':5} {'point':44} {'1 GPU':>22} {'all GPUs':>22}")
for a, b in zip(one, two):
    fa = f"{a[2]} {a[3]:.1f}us" if a[3] else a[2]
    fb = f"{b[2]} {b[3]:.1f}us" if b[3] else b[2]
    print(f"{a[0]:5} {a[1]:44} {fa:>22} {fb:>22} [{b[4]}]")
ntune = sum(1 for a in one if a[0] == "tune")
workers = sorted({b[4] for b in two})
m1 = statistics.median(t for t, _ in times["0"])
m2 = statistics.median(t for t, _ in times["all"])
print(f"\nwall s, 1 GPU ({reps} runs): " + " ".join(f"{t:.2f}" for t, _ in times["0"]) +
      f"   all GPUs: " + " ".join(f"{t:.2f}" for t, _ in times["all"]))
print(f"exit codes: 1 GPU {[rc for _, rc in times['0']]}, all GPUs {[rc for _, rc in times['all']]}")
print(f"jobs: {len(one) - ntune} sweep points + {ntune} tune variants; workers used: {', '.join(workers)}")
print(f"verdicts identical in every run: {'yes' if same else 'NO'}")
print(f"median wall: 1 GPU {m1:.2f} s, all GPUs {m2:.2f} s = {m2 / m1:.3f}x (target <= 0.6x)")
EOF
echo "(runs kept in $W)"
