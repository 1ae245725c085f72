#!/bin/sh
# tui-screenshot.sh - kbench-tui captured in tmux, as text and with colours,
# and those captures rendered to PNG (scripts/ansi2html.py, headless
# Chromium).  Three uses:
#
#   tui-screenshot.sh FILE OUTDIR [SECONDS]
#       the docs' screenshot: FILE in a 160x45 terminal; after the first
#       result (or SECONDS) the screen goes to OUTDIR/tui.txt and, with
#       colours, OUTDIR/tui.ansi
#   tui-screenshot.sh --panes OUTDIR NAME 'KEYS' 'READY' ARGS...
#       every result pane (Alt-1..9, then F1's Help, and the Summary
#       unfolded by F4) at 100x30 and 200x50 (SIZES=...): kbench-tui ARGS, wait for
#       READY on the screen (60 s), send KEYS (tmux key names; a word
#       "wait:TEXT" waits up to 60 s for TEXT), then one capture per pane:
#       OUTDIR/NAME-<pane>-<W>x<H>.txt and .ansi
#   tui-screenshot.sh --png DIR
#       every DIR/*.ansi to DIR/*.png at its terminal's size (the name's
#       <W>x<H>, else 160x45)
#
# Replay (no GPU): scripts/tui-screenshot.sh --panes docs/tui replay \
#     'n n n n n n n n n n n n' 'step 1/' --replay sessions/softmax
set -eu
TUI=${TUI:-$PWD/build/kbench-tui}
export TMUX_TMPDIR=$(mktemp -d)
trap 'tmux kill-server 2>/dev/null; rm -rf "$TMUX_TMPDIR"' EXIT

# wait_text TEXT SECONDS: until TEXT is on the screen of session shot
wait_text() {
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		tmux capture-pane -p -t shot | grep -qF -- "$1" && return 0
		sleep 0.1; i=$((i + 1))
	done
	echo "tui-screenshot: '$1' did not show in $2 s" >&2
	return 1
}

capture() { # OUT NAME
	tmux capture-pane -p -t shot > "$1/$2.txt"
	tmux capture-pane -e -p -t shot > "$1/$2.ansi"
}

panes() {
	out=$1 name=$2 keys=$3 ready=$4; shift 4
	mkdir -p "$out"
	for size in ${SIZES:-100x30 200x50}; do
		tmux new-session -d -s shot -x "${size%x*}" -y "${size#*x}" \
			"TERM=screen-256color $TUI $*; sleep 30"
		wait_text "$ready" 60 || true
		for k in $keys; do
			case $k in
			wait:*) wait_text "${k#wait:}" 60 || true ;;
			*) tmux send-keys -t shot "$k"; sleep 0.2 ;;
			esac
		done
		sleep 1
		n=1
		for pane in summary sass ptx occupancy metrics roofline variants diff llm; do
			tmux send-keys -t shot Escape "$n"; sleep 1.5
			capture "$out" "$name-$pane-$size"
			n=$((n + 1))
		done
		tmux send-keys -t shot F1; sleep 1; capture "$out" "$name-help-$size"
		tmux send-keys -t shot Escape 1 F4; sleep 1; capture "$out" "$name-summary-f4-$size"
		tmux send-keys -t shot C-q; sleep 0.3; tmux send-keys -t shot y
		tmux kill-session -t shot 2>/dev/null || true
		sleep 0.5
	done
}

png() {
	for a in "$1"/*.ansi; do
		size=$(basename "$a" .ansi | grep -o '[0-9]*x[0-9]*$' || echo 160x45)
		w=${size%x*} h=${size#*x}
		python3 scripts/ansi2html.py "$a" "${a%.ansi}.html"
		# DejaVu Sans Mono 13 px: 7.83 px a column, 16.25 px a row, 12 px margins
		chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--window-size="$(awk "BEGIN { print int($w * 7.83 + 26) }"),$(awk "BEGIN { print int($h * 16.25 + 26) }")" \
			--screenshot="$(realpath "${a%.ansi}.png")" "file://$(realpath "${a%.ansi}.html")" 2>/dev/null
		rm -f "${a%.ansi}.html"
	done
}

case ${1:-} in
--panes) shift; panes "$@"; exit ;;
--png) png "$2"; exit ;;
esac

FILE=$1 OUT=$2 WAIT=${3:-30}
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
