#!/bin/sh
# tui_replay.sh - kbench-tui --replay sessions/softmax (the exported
# folder in the repository) through tmux at 80x24, 100x30 and 200x50:
# the Summary opens with the headline on one line (verdict and time);
# the title bar carries it where the Summary is not shown and there is
# room; the Variants pane lists the step's file's variants (never "no
# session") as a table none of whose lines wraps, with a sparkline; the
# Diff pane shows a diff at the first step and at the last (a file's
# first variant: against the session's variant before it); F4 unfolds the
# Summary's sections; and at 200x50 sessions/attention, a file that ran
# three kernels: '*' on the fastest of all, '+' on each other kernel's
# fastest.  Captures go to $TUI_CAPTURES when set.
. tests/cli/lib.sh
TUI=${TUI:-$KB_BIN_DIR/kbench-tui}
if ! command -v tmux >/dev/null 2>&1; then
	for c in replay_80x24 replay_100x30 replay_200x50; do skip $c "tmux not installed"; done
	finish; exit
fi
export TMUX_TMPDIR="$T_TMP"
# a server per size (-L): a new session right after the last one closed
# can meet the dying server
L=
tm() { tmux -L "kbr$L" "$@"; }
trap 'for L in 80x24 100x30 200x50; do tm kill-server 2>/dev/null; done; rm -rf "$T_TMP"' EXIT
. tests/cli/lib_tui.sh
ROOT=$PWD
NSTEPS=$(wc -l < sessions/softmax/journal.jsonl)
# the last step's file and variant, and how many variants that file has
LAST_FILE=$(tail -1 sessions/softmax/journal.jsonl | sed 's/.*"file":"\([^"]*\)".*/\1/')
LAST_V=$(tail -1 sessions/softmax/journal.jsonl | sed 's/.*"variant":"\([^"]*\)".*/\1/')
LAST_N=$(grep '"event":"run"' sessions/softmax/journal.jsonl | grep -c "\"file\":\"$LAST_FILE\"")
# its diff's new side: a file's first variant is named with its file (its
# old side is another file's), a later one by its variant alone
LAST_PLUS="+++ $LAST_V"; [ "$LAST_V" = v1 ] && LAST_PLUS="+++ $LAST_FILE v1"
# the result pane: each row's text right of the editor's separator
pane() { screen | awk -F'│' 'NR > 2 && NF > 1 { print $2 }'; }
keep() { [ -n "${TUI_CAPTURES:-}" ] && mkdir -p "$TUI_CAPTURES" && tm capture-pane -e -p -t $S > "$TUI_CAPTURES/$1.ansi"; return 0; }

# table_fits NAME: the Variants table's rows (from its heading to the
# sparkline) are each one variant: a wrapped row would leave a line that
# is not "vN ..." between them
table_fits() {
	rows=$(pane | awk '/verdict/ { on = 1; next } on && (/^time / || /^ *$/) { exit } on { print }')
	n=$(echo "$rows" | grep -c '^[ >]v[0-9]')
	other=$(echo "$rows" | grep -vc '^[ >]v[0-9]')
	if [ "$n" -ge 1 ] && [ "$other" = 0 ]; then pass "$1"; else fail "$1" "$n rows, $other other lines: $(pane | head -14)"; fi
}

# headline_row NAME: the pane's first row holds the verdict and the time,
# and the row under it is empty (not the headline's continuation)
headline_row() {
	row=$(pane | head -1)
	next=$(pane | sed -n 2p | tr -d ' ')
	echo "$row" | grep -q 'CORRECT' && echo "$row" | grep -Eq '[0-9.]+ us' && [ -z "$next" ] && pass "$1" \
		|| fail "$1" "first pane row: '$row'"
}

for size in 80x24 100x30 200x50; do
	w=${size%x*} h=${size#*x}
	S=kbr$size L=$size TM="tmux -L kbr$size"
	tui_open "$w" "$h" "cd $ROOT && TERM=screen-256color $TUI --replay sessions/softmax $TUI_ARGS; echo EXITED \$?; sleep 60"
	check replay_opens_$size "step 1/$NSTEPS"
	# Summary: the headline, one row; its sections one row each
	check summary_headline_$size "CORRECT" 20
	headline_row summary_headline_row_$size
	pane | grep -q 'F4: every section whole' && pass summary_folded_$size \
		|| fail summary_folded_$size "$(pane | head -12)"
	keep "summary-$size"
	keys F4
	gone summary_unfolded_$size "F4: every section whole"
	keys F4
	# Variants: the replayed file's variants, a table that fits, a sparkline
	keys Escape 7
	check variants_$size "variants (* the best)"
	screen | grep -q "no session" && fail variants_no_session_$size "$(pane | head -8)" \
		|| pass variants_no_session_$size
	table_fits variants_table_fits_$size
	pane | grep -q '^time [▁▂▃▄▅▆▇█]' && pass variants_sparkline_$size \
		|| fail variants_sparkline_$size "$(pane | head -12)"
	keep "variants-$size"
	# the title bar says the headline where the Summary is not shown (at
	# 80 columns a replay's title has no room for it)
	if [ "$w" -ge 100 ]; then
		screen | head -1 | grep -Eq 'CORRECT +[0-9.]+ us' && pass title_headline_$size \
			|| fail title_headline_$size "$(screen | head -1)"
	fi
	# Diff at the first step: v1 of softmax.cu against its second variant
	keys Escape 8
	check diff_first_$size "+++"
	# the tab bar keeps the current tab in view (short names where the
	# whole ones do not fit)
	screen | sed -n 2p | grep -q "│.*Diff" && pass tab_in_view_$size || fail tab_in_view_$size "$(screen | sed -n 2p)"
	keep "diff-$size"
	# the last step: the last file's last variant, against the one before it
	keys '>'
	check replay_last_$size "step $NSTEPS/$NSTEPS"
	check diff_last_$size "$LAST_PLUS"
	screen | grep -q "No diff yet" && fail diff_last_not_empty_$size "$(pane | head -6)" \
		|| pass diff_last_not_empty_$size
	keys Escape 7
	check variants_last_$size "$LAST_FILE: $LAST_N variant"
	screen | grep -q "no session" && fail variants_last_no_session_$size "$(pane | head -8)" \
		|| pass variants_last_no_session_$size
	table_fits variants_last_table_fits_$size
	keys Escape 1
	check summary_last_$size "F4: every section whole"
	headline_row summary_last_headline_row_$size
	keys C-q
	check replay_quit_$size "EXITED 0"
	tm kill-session -t $S 2>/dev/null
done

# sessions/attention: one file that ran three kernels (01_naive, 02_fa2,
# 03_fa3): the Variants pane marks the fastest of all '*' and each other
# kernel's fastest '+', and says so
S=kbra L=200x50 TM="tmux -L kbr200x50"
tui_open 200 50 "cd $ROOT && TERM=screen-256color $TUI --replay sessions/attention $TUI_ARGS; echo EXITED \$?; sleep 60"
check replay_kernels_opens "step 1/"
keys Escape 7
check variants_kernels_legend "attention.cu: 3 variants (* the best, + its kernel's best)"
pane | grep -q '^[ >]v3\* .*attn_fa3' && [ "$(pane | grep -c '^[ >]v[12]+ ')" = 2 ] && pass variants_kernels_marks \
	|| fail variants_kernels_marks "$(pane | head -8)"
keys C-q
check replay_kernels_quit "EXITED 0"
tm kill-session -t $S 2>/dev/null
finish
