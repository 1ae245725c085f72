#!/bin/sh
# gpu-tui.sh - issue 27's GPU evidence, from the repo root with the
# `make dist` tarball carried (build/dist); builds nothing.  Under 8 min.
# Each step has its own time limit (7.5 min in all), and one failing does
# not stop the rest.
#   run.txt            `kbench run kernels/softmax.cu`: the headline first
#   tui-live.tar.gz    every pane of kbench-tui at 100x30 and 200x50, live:
#                      a session of softmax steps 01..04 run, then 05 open
#                      in the TUI, run, and profiled with F8 (captures as
#                      .txt and .ansi; render here with
#                      scripts/tui-screenshot.sh --png DIR)
#   tui_save.txt       bench/tui_save.py: save -> verdict in the TUI
#   tui_tests.txt      tests/cli/tui.sh (its GPU checks: a run, F8's hot
#                      spots in Metrics and SASS, a hang's TIMEOUT)
#   summary.txt        one line per step, printed last
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
ROOT=$PWD

# --live DIR: the live captures, in a session of its own under DIR (a step
# of its own below, so that its time limit can stop it)
if [ "${1:-}" = --live ]; then
	W=$2
	export XDG_CACHE_HOME=$W/cache XDG_DATA_HOME=$W/data
	mkdir -p "$W/k" "$W/shots"
	for f in 01_block_row 02_warp_row 03_vec4 04_online; do
		cp "kernels/softmax/$f.cu" "$W/k/softmax.cu"
		(cd "$W/k" && "$ROOT/build/kbench" run softmax.cu --no-sweep | head -1)
	done
	cp kernels/softmax/05_registers.cu "$W/k/softmax.cu"
	(cd "$W/k" && TUI=$ROOT/build/kbench-tui sh "$ROOT/scripts/tui-screenshot.sh" --panes "$W/shots" live \
		'F8 wait:Hot' 'us median' softmax.cu)
	sed -n 1,3p "$W/shots/live-summary-200x50.txt"
	exit
fi

W=$(mktemp -d)
export XDG_CACHE_HOME=$W/cache XDG_DATA_HOME=$W/data PYTHONUNBUFFERED=1
: > "$OUT/summary.txt"

step() { # NAME LIMIT OUTFILE COMMAND...: runs it, says how it went
	name=$1 lim=$2 file=$3; shift 3
	t0=$(date +%s)
	timeout "$lim" "$@" > "$file" 2>&1
	rc=$?
	printf '%-10s rc %-3s %4d s  %s\n' "$name" "$rc" $(( $(date +%s) - t0 )) "$(tail -1 "$file" | cut -c1-90)" \
		>> "$OUT/summary.txt"
}

step run 60 "$OUT/run.txt" sh -c "nvidia-smi --query-gpu=name,driver_version --format=csv,noheader;
	build/kbench run kernels/softmax.cu --no-sweep; build/kbench run kernels/softmax.cu --no-sweep | head -3"

step live 200 "$OUT/live.txt" sh "$ROOT/scripts/gpu-tui.sh" --live "$W/live"
# what was captured, even when the step ran out of time
step pack 20 "$OUT/pack.txt" sh -c "tar czf '$OUT/tui-live.tar.gz' -C '$W/live' shots &&
	echo \$(ls '$W/live/shots' | grep -c txt) captures in tui-live.tar.gz"
step save 90 "$OUT/tui_save.txt" python3 bench/tui_save.py kernels/softmax.cu 8
step tests 150 "$OUT/tui_tests.txt" sh tests/cli/tui.sh

echo "kbench-tui GPU evidence  $(date -u +%Y-%m-%dT%H:%MZ)"
grep -h -e 'save -> verdict' "$OUT/tui_save.txt" | tail -1
grep -h '^# passed' "$OUT/tui_tests.txt" | tail -1
cat "$OUT/summary.txt"
