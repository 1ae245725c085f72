#!/bin/sh
# profile_breakdown.sh - where a cold `kbench profile` spends its time: wall
# time of fresh processes with and without the CUPTI availability cache, the
# runner's phase and step times from the Result, and the timestamped log of
# the CLI and runner ($KBENCH_LOG).  Run from a checkout on a GPU machine
# after `tar xzf` of the `make dist` bundle (scripts/gpu-check.sh does that).
set -u
KB=${KB:-build/kbench}
F=${1:-kernels/softmax.cu}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kbench-cache}
echo "profile breakdown  $F  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
"$KB" calibrate > /dev/null 2>&1
"$KB" profile "$F" --json > "$T/warm.json" 2>/dev/null # compile cache, arch probe
# back to back: the previous runner may still be tearing down (it is not
# waited for); rested: 2 s after it
for mode in no-cache back-to-back rested; do
	for i in 1 2 3; do
		export KBENCH_NO_SHARED_RUNNER=1 # a fresh runner each time: the cold path
		[ $mode = no-cache ] && export KBENCH_NO_CUPTI_CACHE=1 || unset KBENCH_NO_CUPTI_CACHE
		[ $mode = rested ] && sleep 2
		rm -f "$T/log"
		s=$(date +%s%N); KBENCH_LOG=$T/log "$KB" profile "$F" --json > "$T/kb.json" 2>/dev/null; e=$(date +%s%N)
		echo "cold kbench profile, $mode #$i: $(( (e - s) / 1000000 )) ms wall;" \
		     "$(grep -o 'cuInit [0-9.]* ms, alone' "$T/log" | sed 's/ ms, alone//'), $(grep -o 'pass 1: .*start [0-9.]* (cpu: user [0-9.]*, kernel [0-9.]*)' "$T/log" | sed 's/flush.*start/first Start/')"
	done
done
python3 - "$T/kb.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j.get("runner_ms", {})
print("runner: device_open %.0f  nvml_open %.0f  request %.0f  since runner start %.0f ms" %
      (r.get("device_open", 0), r.get("nvml_open", 0), r.get("request", 0), r.get("since_start", 0)))
print("compile %.1f ms, cupti_prep %.1f ms (beside the context, checks and timing), cupti_open %.1f ms" %
      (j.get("compile_ms", 0), j.get("cupti_prep_ms", 0), j.get("cupti_open_ms", 0)))
print("phases:", "  ".join("%s %.1f" % kv for kv in j.get("phases_ms", {}).items()))
print("counters (%s passes):" % j.get("counters_passes"), "  ".join("%s %.1f" % kv for kv in j.get("counters_steps_ms", {}).items()))
print("check ms:", {k: round(v, 1) for k, v in j["check"].get("ms", {}).items()}, " timing loop_ms %.1f" % j.get("timing", {}).get("loop_ms", 0))
PY
echo "log of the last run (seconds, CLOCK_MONOTONIC):"
cat "$T/log"
