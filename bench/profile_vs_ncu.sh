#!/bin/sh
# profile_vs_ncu.sh - kbench's counters against Nsight Compute's for the
# same kernel, inputs, launch and metric names, under both of ncu's cache
# controls, 6 runs of each tool so that each one's own spread is known, and
# ncu against itself (its odd runs against its even runs: counters such as
# hit rates and bank conflicts move by several % between runs of ncu too);
# and the wall time of each tool, end to end, in fresh processes.
#   kbench: `kbench profile FILE --json [--cache-control none]` (every
#           section; its launch follows kbench's L2 flush), timed in a fresh
#           runner (KBENCH_NO_SHARED_RUNNER=1) and through the shared
#           runner left warm by the call before (src/runner/shared.c).
#   ncu:    the same metric names on a launch that also follows kbench's
#           L2 flush (a timed launch of `kbench run --timing events`), with
#           --clock-control none and --cache-control none / all; its values
#           read at full precision (bench/ncu_values.py).
# Limits (issue 5): DRAM bytes within 2%, every other metric within 5%.
# Usage: bench/profile_vs_ncu.sh (repository root, GPU machine).
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
RUNS=${RUNS:-6} # runs of each tool per kernel and cache control
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kbench-cache}
ms() { date +%s%N | awk '{printf "%d\n", $1/1000000}'; }
echo "kbench profile vs ncu  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $($NCU --version | tail -1)"
for spec in "kernels/softmax.cu softmax_rows" "tests/fixtures/kernels/copy.cu copy4"; do
	set -- $spec
	f=$1 k=$2
	rm -f "$T"/*.ms
	"$KB" profile "$f" --json > "$T/warm.json" 2>/dev/null # compile cache, availability cache
	metrics=$(python3 -c "import json; print(','.join(sorted(json.load(open('$T/warm.json'))['counters'])))")
	for i in 1 2 3; do # what ncu's target costs by itself
		sleep 1; t0=$(ms)
		KBENCH_NO_SHARED_RUNNER=1 "$KB" run "$f" --no-sweep --trials 1 --timing events --timeout 300 > /dev/null 2>&1
		t1=$(ms); echo $((t1 - t0)) >> "$T/target.ms"
	done
	for cc in all none; do
		for i in $(seq "$RUNS"); do
			# each tool starts 1 s after the last process (no overlap with a teardown)
			sleep 1; t0=$(ms)
			KBENCH_NO_SHARED_RUNNER=1 "$KB" profile "$f" --json --cache-control $cc > "$T/kb-$cc-$i.json" 2>/dev/null
			t1=$(ms)
			echo $((t1 - t0)) >> "$T/kb-$cc.ms"
			# the same through the shared runner, warm from the call before
			"$KB" profile "$f" --json --cache-control $cc > /dev/null 2>&1
			sleep 1; t0=$(ms)
			"$KB" profile "$f" --json --cache-control $cc > "$T/kbw-$cc-$i.json" 2>/dev/null
			t1=$(ms)
			echo $((t1 - t0)) >> "$T/kbw-$cc.ms"
			sleep 1; t0=$(ms)
			# (the target would use no shared runner anyway: ncu injects itself)
			KBENCH_NO_SHARED_RUNNER=1 \
			$NCU --metrics "$metrics" --clock-control none --cache-control $cc -f -o "$T/ncu-$cc-$i" \
			     --target-processes all -k "regex:^$k\$" --launch-skip 1 --launch-count 1 \
			     "$KB" run "$f" --no-sweep --trials 1 --timing events --timeout 300 > "$T/ncu.log" 2>&1
			t1=$(ms)
			echo $((t1 - t0)) >> "$T/ncu-$cc.ms"
			$NCU --import "$T/ncu-$cc-$i.ncu-rep" --csv --print-units base --page raw > "$T/ncu-$cc-$i.csv" 2>/dev/null
			python3 bench/ncu_values.py "$T/ncu-$cc-$i.ncu-rep" "$T/ncu-$cc-$i.csv" > "$T/ncu-$cc-$i.json"
		done
	done
	python3 - "$T" "$f" "$RUNS" <<'PY'
import json, statistics as st, sys
T, f = sys.argv[1], sys.argv[2]
STALL = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
RUNS = int(sys.argv[3])
def shown(cc):
    """The metrics behind the numbers `kbench profile` prints: every non-stall
    metric, and the stall reasons its Warp state section lists (the top 6)
    in any of the runs."""
    top, counters = set(), set()
    for i in range(1, RUNS + 1):
        j = json.load(open("%s/kb-%s-%d.json" % (T, cc, i)))
        top |= {STALL % r["reason"] for r in j["sections"]["stalls"]["reasons"][:6]}
        counters |= set(j["counters"])
    return {m for m in counters if "_issue_stalled_" not in m or m in top}
def runs(tool, cc):
    out = []
    for i in range(1, RUNS + 1):
        j = json.load(open("%s/%s-%s-%d.json" % (T, tool, cc, i)))
        out.append(j["counters"] if tool == "kb" else j["metrics"])
    return out
def wall(tool, cc):
    return [int(l) for l in open("%s/%s-%s.ms" % (T, tool, cc))]
src = json.load(open("%s/ncu-all-1.json" % T))["source"]
print("\n%s (ncu values via %s)" % (f, src))
tw = [int(l) for l in open("%s/target.ms" % T)]
print("  ncu's target alone (kbench run --trials 1 --timing events): median %d ms (%s)" % (st.median(tw), "/".join(map(str, tw))))
for cc in ("none", "all"):
    kw, ww, nw = wall("kb", cc), wall("kbw", cc), wall("ncu", cc)
    print("  wall, --cache-control %s: ncu median %d ms (%s)" % (cc, st.median(nw), "/".join(map(str, nw))))
    print("    kbench profile, fresh runner (first call, or after %s s idle): median %d ms (%s): ncu/kbench %.2fx"
          % ("300", st.median(kw), "/".join(map(str, kw)), st.median(nw) / st.median(kw)))
    print("    kbench profile, shared runner warm (a call within 300 s of the last): median %d ms (%s): ncu/kbench %.2fx"
          % (st.median(ww), "/".join(map(str, ww)), st.median(nw) / st.median(ww)))
for cc in ("none", "all"):
    kb, nc = runs("kb", cc), runs("ncu", cc)
    print("\n  --cache-control %s: mean of %d runs each; spread = (max-min)/mean of that tool's runs;" % (cc, RUNS))
    print("  ncu/ncu = ncu's odd runs against its even runs (how far ncu is from itself)")
    print("  %-72s %12s %6s %12s %6s %8s %8s" % ("metric", "kbench", "sprd%", "ncu", "sprd%", "diff%", "ncu/ncu%"))
    bad, bad_shown, noise_shown, show = 0, 0, 0, shown(cc)
    for m in sorted(kb[0]):
        k = [x[m] for x in kb if x.get(m) is not None]
        n = [x[m] for x in nc if m in x]
        if not k or not n:
            print("  %-72s %12s" % (m, "missing")); bad += 1; continue
        km, nm = st.mean(k), st.mean(n)
        ks = (max(k) - min(k)) / abs(km) * 100 if km else 0.0
        ns = (max(n) - min(n)) / abs(nm) * 100 if nm else 0.0
        d = 0.0 if km == nm else (km - nm) / max(abs(nm), 1e-30) * 100
        odd, even = st.mean(n[0::2]), st.mean(n[1::2]) if len(n) > 1 else st.mean(n)
        self_d = 0.0 if odd == even else (odd - even) / max(abs(even), 1e-30) * 100
        lim = 2.0 if m.startswith("dram__bytes") and not m.endswith("per_second") else 5.0
        flag, detail = "", ""
        if abs(d) > lim:
            # ncu's own spread only: kbench's being wide excuses nothing
            noise = abs(d) <= max(ns, abs(self_d))
            bad += 1
            bad_shown += m in show
            noise_shown += m in show and noise
            flag = "  > %.0f%%%s%s" % (lim, " (within ncu's own spread)" if noise else "",
                                      "" if m in show else "; not printed by kbench profile")
            detail = "      runs: kbench %s; ncu %s" % ("/".join("%.4g" % x for x in k),
                                                       "/".join("%.4g" % x for x in n))
        print("  %-72s %12.6g %6.2f %12.6g %6.2f %8.2f %8.2f%s" % (m[:72], km, ks, nm, ns, d, self_d, flag))
        if detail:
            print(detail)
    print("  => %d of %d metrics outside the limit; of the %d behind the numbers kbench profile prints "
          "(in any run): %d%s" % (bad, len(kb[0]), len(show), bad_shown,
                  " (%d of them no further from ncu than ncu's own runs are from each other)" % noise_shown
                  if bad_shown else ""))
PY
done
