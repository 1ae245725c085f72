#!/bin/sh
# tui_latency.sh - keystroke-to-screen latency of kbench-tui while typing in
# a 5,000-line file, measured inside the program ($KBENCH_TUI_LATENCY: from
# reading a key to the end of the redraw that shows it, i.e. edit, incremental
# re-parse, highlighting and curses output) while tmux types 400 characters.
# Prints median, p90, p99 and max.  Usage: bench/tui_latency.sh (repo root).
set -eu
TUI=${TUI:-$PWD/build/kbench-tui}
TMP=$(mktemp -d)
export TMUX_TMPDIR=$TMP
trap 'tmux kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
# 5,000 lines: the softmax kernel repeated, renamed so it stays valid CUDA
i=0
while [ $i -lt 60 ]; do sed -e "s/softmax_rows/softmax_rows_$i/g; s/softmax_naive/softmax_naive_$i/g; s/block_reduce_/br${i}_/g; s|^//!.*||" kernels/softmax.cu >> "$TMP/big.cu"; i=$((i + 1)); done
head -n 4999 "$TMP/big.cu" > "$TMP/k.cu"
echo "// end" >> "$TMP/k.cu"
tmux new-session -d -s lat -x 160 -y 50 "cd $TMP && KBENCH_NO_SESSION=1 XDG_DATA_HOME=$TMP/d KBENCH_TUI_LATENCY=$TMP/lat.txt TERM=screen-256color $TUI k.cu --no-run; sleep 5"
sleep 2
tmux send-keys -t lat C-g; tmux send-keys -t lat "2500" Enter; sleep 0.5
: > "$TMP/lat.txt"
n=0
while [ $n -lt 400 ]; do
	tmux send-keys -t lat -l "x"
	sleep 0.02
	n=$((n + 1))
done
sleep 0.5
lines=$(wc -l < "$TMP/k.cu")
tmux send-keys -t lat C-z C-q y
sleep 0.5
echo "kbench-tui key-to-screen latency  $(date -u +%Y-%m-%dT%H:%MZ)  $(uname -n)  $(nproc) cores"
echo "typing 400 characters at line 2500 of a $lines-line CUDA file (tree-sitter highlighting on)"
sort -n "$TMP/lat.txt" | awk '{v[NR]=$1} END {
	printf "keys %d: median %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (target: median < 16 ms) -> %s\n",
	NR, v[int(NR*0.5)+1], v[int(NR*0.9)+1], v[int(NR*0.99)+1], v[NR], v[int(NR*0.5)+1] < 16 ? "MET" : "NOT MET" }'
