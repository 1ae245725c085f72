#!/bin/sh
# gpu-round.sh - one device call's worth of work: every test (tests/run.sh,
# the TUI's GPU half included), a TUI screenshot, a short tuning session
# (for the Δ lines), the profile breakdown, kbench vs ncu, and the warm
# runner's latencies.  Everything goes to $OUT/logs.tgz; a summary is
# printed last.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
L=$OUT/logs; mkdir -p "$L"
export XDG_CACHE_HOME=/tmp/kbench-cache XDG_DATA_HOME=/tmp/kbench-data
OUT=$L sh scripts/gpu-check.sh > "$L/check.txt" 2>&1
cp -r build/test-logs "$L/" 2>/dev/null
TUI=$PWD/build/kbench-tui sh scripts/tui-screenshot.sh kernels/softmax.cu "$L" 60 > "$L/shot.log" 2>&1
OUT=$L sh scripts/gpu-session.sh > "$L/session.txt" 2>&1
python3 bench/profile_latency.py 10 > "$L/profile_latency.txt" 2>&1
python3 bench/serve_latency.py 10 > "$L/serve_latency.txt" 2>&1
python3 bench/ncu_alongside.py > "$L/ncu_alongside.txt" 2>&1
sh bench/profile_breakdown.sh > "$L/profile_breakdown.txt" 2>&1
sh bench/profile_vs_ncu.sh > "$L/profile_vs_ncu.txt" 2>&1
ps aux | grep -c "[k]bench serve" > "$L/leftover_runners.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
tar xzf "$OUT/logs.tgz" -C /tmp
L=/tmp/logs
grep -E "^FAIL|passed|^  FAIL" "$L/tests.log" | tail -6
grep -A1 "Δ" "$L/session_runs.txt" | head -4
cat "$L/profile_latency.txt" "$L/serve_latency.txt"
grep "cold" "$L/profile_breakdown.txt"
grep -E "wall|=>|^kernels|^tests|alone" "$L/profile_vs_ncu.txt"
echo "runners left: $(cat $L/leftover_runners.txt)"
