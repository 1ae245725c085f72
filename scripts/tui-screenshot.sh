#!/bin/sh
# tui-screenshot.sh FILE OUTDIR [SECONDS] - kbench-tui on FILE in a 160x45
# tmux terminal; after the first result (or SECONDS) the screen is captured
# as text (OUTDIR/tui.txt) and with colours (OUTDIR/tui.ansi).  Render the
# latter with scripts/ansi2html.py and headless Chromium for a PNG.
set -eu
FILE=$1 OUT=$2 WAIT=${3:-30}
TUI=${TUI:-$PWD/build/kbench-tui}
export TMUX_TMPDIR=$(mktemp -d)
trap 'tmux kill-server 2>/dev/null; rm -rf "$TMUX_TMPDIR"' EXIT
tmux new-session -d -s shot -x 160 -y 45 "TERM=screen-256color $TUI $FILE; sleep 5"
i=0
while [ $i -lt $((WAIT * 10)) ]; do
	tmux capture-pane -p -t shot | grep -q -e "us median" -e "NO GPU" -e "INCORRECT" && break
	sleep 0.1; i=$((i + 1))
done
sleep 0.5
tmux send-keys -t shot C-g; tmux send-keys -t shot "56" Enter; sleep 0.3
tmux capture-pane -p -t shot > "$OUT/tui.txt"
tmux capture-pane -e -p -t shot > "$OUT/tui.ansi"
tmux send-keys -t shot C-q
