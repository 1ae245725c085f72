#!/bin/sh
# tui_latency.sh - keystroke-to-screen latency of kbench-tui, measured inside
# the program ($KBENCH_TUI_LATENCY: from reading a key to the end of the
# redraw that shows it, i.e. edit, incremental re-parse, highlighting and
# curses output) while tmux types 400 characters.  Two cases:
#   1. a 5,000-line file, typing at line 2500, the Summary pane up;
#   2. a session of 60 variants of kernels/softmax.cu with the Roofline pane
#      up (it reads every variant's note from git), typing at line 60.
# Prints median, p90, p99 and max of each.  Usage: bench/tui_latency.sh
# (repo root; case 2 compiles 60 variants first, ~20 s).
set -eu
TUI=${TUI:-$PWD/build/kbench-tui}
KB=${KB:-$PWD/build/kbench}
TMP=$(mktemp -d)
export TMUX_TMPDIR=$TMP
trap 'tmux kill-server 2>/dev/null; rm -rf "$TMP"' EXIT

# measure FILE LINE PANE_KEYS ENV: types 400 x's at LINE of FILE after
# sending PANE_KEYS (may be empty); prints the summary line
measure() {
	tmux new-session -d -s lat -x 160 -y 50 "cd $TMP && $4 KBENCH_TUI_LATENCY=$TMP/lat.txt TERM=screen-256color $TUI $1 --no-run --arch sm_90; sleep 5"
	sleep 2
	[ -n "$3" ] && tmux send-keys -t lat $3 && sleep 0.5
	tmux send-keys -t lat C-g; tmux send-keys -t lat "$2" Enter; sleep 0.5
	: > "$TMP/lat.txt"
	n=0
	while [ $n -lt 400 ]; do
		tmux send-keys -t lat -l "x"
		sleep 0.02
		n=$((n + 1))
	done
	sleep 0.5
	shown=$(tmux capture-pane -p -t lat | sed -n 3p | sed "s/.*│//")
	tmux send-keys -t lat C-z C-q y
	sleep 0.5
	tmux kill-session -t lat 2>/dev/null || true
	echo "  the pane shows: $shown"
	sort -n "$TMP/lat.txt" | awk '{v[NR]=$1} END {
		printf "  keys %d: median %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (target: median < 16 ms) -> %s\n",
		NR, v[int(NR*0.5)+1], v[int(NR*0.9)+1], v[int(NR*0.99)+1], v[NR], v[int(NR*0.5)+1] < 16 ? "MET" : "NOT MET" }'
}

echo "kbench-tui key-to-screen latency  $(date -u +%Y-%m-%dT%H:%MZ)  $(uname -n)  $(nproc) cores"

# 1. 5,000 lines: the softmax kernel repeated, renamed so it stays valid CUDA
i=0
while [ $i -lt 60 ]; do sed -e "s/softmax_rows/softmax_rows_$i/g; s/softmax_naive/softmax_naive_$i/g; s/block_reduce_/br${i}_/g; s|^//!.*||" kernels/softmax.cu >> "$TMP/big.cu"; i=$((i + 1)); done
head -n 4999 "$TMP/big.cu" > "$TMP/k.cu"
echo "// end" >> "$TMP/k.cu"
echo "1. typing at line 2500 of a $(wc -l < "$TMP/k.cu")-line CUDA file (tree-sitter highlighting on)"
measure k.cu 2500 "" "KBENCH_NO_SESSION=1 XDG_DATA_HOME=$TMP/d"

# 2. a session of 60 variants, Roofline pane (the 6th tab: F3 five times)
cp kernels/softmax.cu "$TMP/s.cu"
i=1
while [ $i -le 60 ]; do
	echo "// variant $i" >> "$TMP/s.cu"
	XDG_DATA_HOME=$TMP/d2 XDG_CACHE_HOME=$TMP/c2 "$KB" compile "$TMP/s.cu" --arch sm_90 --no-sass > /dev/null
	i=$((i + 1))
done
echo "2. typing at line 60 with the Roofline pane of a $(XDG_DATA_HOME=$TMP/d2 "$KB" log "$TMP/s.cu" | grep -c '^  v')-variant session up"
measure s.cu 60 "F3 F3 F3 F3 F3" "XDG_DATA_HOME=$TMP/d2 XDG_CACHE_HOME=$TMP/c2"
