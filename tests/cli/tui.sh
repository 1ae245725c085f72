#!/bin/sh
# tui.sh - kbench-tui driven through a real terminal (tmux send-keys and
# capture-pane): open kernels/softmax.cu, edit a line, save, see the compile
# summary update; a syntax error shows at its line; undo; switch panes;
# resize to 100x30 and 200x60; quit with the terminal restored.  A .tile
# file (kernels/softmax/softmax.tile): highlighted, its CUDA pane showing
# the generated code with the cursor line's marked, an error at its .tile
# line.  Where a GPU exists: CORRECT and a time after a save, and a planted
# infinite loop shows a timeout while the editor keeps taking keys.
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
TUI=${TUI:-$KB_BIN_DIR/kbench-tui}
if ! command -v tmux >/dev/null 2>&1; then
	for c in opens edit_save_updates syntax_error_line undo_recompiles switch_pane \
		 resize_100x30 resize_200x60 too_small quit_restores replay_opens replay_export_opens \
		 tile_opens tile_cuda_pane tile_error_line; do skip $c "tmux not installed"; done
	finish; exit
fi
S=kbtest$$
export TMUX_TMPDIR="$T_TMP"
W="$T_TMP/work"; mkdir -p "$W"; cp kernels/softmax.cu kernels/softmax/softmax.tile "$W/"
cleanup() { tmux kill-server 2>/dev/null; }
trap 'cleanup; rm -rf "$T_TMP"' EXIT
. tests/cli/lib_tui.sh
tui_open 120 40 "cd $W && TERM=screen-256color $TUI softmax.cu $TUI_ARGS; echo EXITED \$?; stty -a | tr ' ' '\n' | grep -x -e icanon -e echo | tr '\n' ' '; sleep 60"
# sep_at ROW: the text width before the editor/pane separator on that row
sep_at() { screen | sed -n "${1}p" | awk -F'│' '{print length($1)}'; }
# nap SECONDS: a pause for the TUI to redraw, times KBENCH_TUI_SLOW (under
# valgrind a resize is drawn seconds later)
nap() { sleep "$(awk "BEGIN { print $1 * $slow }")"; }
# settled CASE CONDITION: CONDITION (shell) holds within 10 s (times
# KBENCH_TUI_SLOW), polled: a resize is drawn late on a loaded machine
settled() {
	i=0
	while [ $i -lt $((100 * slow)) ]; do eval "$2" && { pass "$1"; return; }; sleep 0.1; i=$((i + 1)); done
	fail "$1" "$(screen | head -5)"
}

check opens "registers   14/thread"
# a .cu file has no CUDA pane in its tab bar
# (short names: the whole ones do not fit a 53-column bar)
screen | sed -n 2p | grep -q "│Sum SASS PTX Occ Metr Roof Var Diff LLM Help" && pass cu_tabs \
	|| fail cu_tabs "$(screen | sed -n 2p)"
# the colour of a spec line, to compare with a .tile file's
SPEC_CU=$(screen_e | grep -o "${ESC}\[[0-9;]*m//! kernel" | head -1)
# edit line 52: scratch[32] -> scratch[64], save: the summary shows the new smem
keys C-g; keys "52" Enter
keys End; keys BSpace BSpace BSpace BSpace; keys -l '64]\;'
keys C-s
check edit_save_updates "smem 256 B static"
grep -q 'scratch\[64\]' "$W/softmax.cu" && pass file_saved || fail file_saved "the file does not have the edit"
# a syntax error on line 56 is shown at line 56
keys C-g; keys "56" Enter; keys End; keys BSpace
keys C-s
check syntax_error_line "softmax.cu:57:"
# and the message itself after line 57's text where the row has room (a
# wide terminal; Down brings 57 into view)
tmux resize-window -t $S -x 200 -y 40; keys Down
settled syntax_error_inline "screen | grep -Eq '^ *57 .*◀ .*expected'"
tmux resize-window -t $S -x 120 -y 40; sleep 0.3
# undo brings the ';' back; saving compiles again
keys C-z; keys C-s
gone undo_clears_error "softmax.cu:57:"
check undo_recompiles "registers   14/thread"
# panes: F3 to SASS, Alt-4 to Occupancy
keys F3
check switch_pane "SASS"
keys Escape 4
check occupancy_pane "<- binds"
# Alt-6: the Roofline of the session's variants (with no GPU: why it is empty)
keys Escape 6
if "$KB" devices >/dev/null 2>&1; then
	check roofline_pane "FP32 peak" 60
else
	check roofline_pane "No roofline yet: no variant has been run"
fi
# variants: Ctrl-P selects the newest (v4: the undone save; v3 is the
# syntax error's COMPILE ERROR, kept like every save), again down to v1 and
# shows it; Ctrl-D diffs v1 with the newest; Ctrl-O puts v1 in the editor,
# Ctrl-Z takes it back
keys C-p
check variant_selected ">v4 "
keys C-p
check variant_error_kept "COMPILE ERROR"
keys C-p; keys C-p
check variant_shown "softmax.cu v1  commit"
keys C-d
check diff_selected "source v1 -> v4"
keys C-o
check variant_loaded "v1 is in the editor"
screen | grep -q ' 1 // Row softmax' && pass variant_loaded_at_top || fail variant_loaded_at_top "$(screen | head -4)"
keys C-z
grep -q 'scratch\[64\]' "$W/softmax.cu" && pass variant_file_untouched \
	|| fail variant_file_untouched "Ctrl-O wrote the file"
# resizes keep a sane layout: the separator sits at 55% of the width
tmux resize-window -t $S -x 100 -y 30
settled resize_100x30 '[ "$(sep_at 5)" = 55 ] && screen | sed -n 2p | grep -q "│Sum SASS"'
tmux resize-window -t $S -x 200 -y 60
settled resize_200x60 '[ "$(sep_at 5)" = 110 ] && [ "$(screen | wc -l)" -ge 59 ] &&
	screen | sed -n 2p | grep -q "│Summary SASS PTX Occupancy Metrics Roofline Variants Diff LLM Help"'
tmux resize-window -t $S -x 70 -y 20; sleep 0.5
check too_small "needs at least 80x24"
tmux resize-window -t $S -x 120 -y 40; sleep 0.3
# GPU machines: a correct run shows CORRECT and a time
if "$KB" devices >/dev/null 2>&1; then
	keys Escape 1; keys F5
	check gpu_correct_and_time "us median" 60
	check gpu_correct_line "CORRECT     3/3 trials" 1
	# F8: counters and hot spots in Metrics, each line's share in SASS
	keys F8; keys Escape 5
	check gpu_profile_hot "Hot spots (PC sampling" 90
	keys Escape 2
	check gpu_sass_shares "share of the PC samples" 5
else
	skip gpu_correct_and_time "no GPU"; skip gpu_correct_line "no GPU"
	skip gpu_profile_hot "no GPU"; skip gpu_sass_shares "no GPU"
	keys F8
	check profile_needs_gpu "profiling needs a GPU"
fi
keys C-q
check quit_restores "EXITED 0"
check terminal_cooked "icanon echo" 10 # printed just after EXITED: wait for it, do not race it

# replay: the session just recorded, step by step, read-only, recording nothing
SID=$("$KB" sessions | awk '$1 == "*" {print $2}')
J="$XDG_DATA_HOME/kbench/sessions/$SID/journal.jsonl"
NEV=$(wc -l < "$J")
# a new session name: a new-session right after kill-server can meet the
# dying server and fail
tmux kill-session -t $S 2>/dev/null; S=${S}r
tui_open 120 40 "cd $W && TERM=screen-256color $TUI --replay $SID $TUI_ARGS; echo EXITED \$?; sleep 60"
check replay_opens "replay $SID  step 1/$NEV"
check replay_step_shown "compile  softmax.cu  v1"
keys n
check replay_next "step 2/$NEV"
keys '>'
check replay_last "step $NEV/$NEV"
keys x
check replay_read_only "replay is read-only"
keys C-q
check replay_quit "EXITED 0"
[ "$(wc -l < "$J")" = "$NEV" ] && pass replay_records_nothing \
	|| fail replay_records_nothing "the journal grew from $NEV to $(wc -l < "$J") events"
# the same session exported to a plain-text folder, replayed from there
"$KB" session export "$SID" -o "$T_TMP/exported" >/dev/null
tmux kill-session -t $S 2>/dev/null; S=${S}x
tui_open 120 40 "cd $W && TERM=screen-256color $TUI --replay $T_TMP/exported $TUI_ARGS; echo EXITED \$?; sleep 60"
check replay_export_opens "replay $T_TMP/exported  step 1/$NEV"
check replay_export_step "compile  softmax.cu  v1"
keys '>'
check replay_export_last "step $NEV/$NEV"
keys C-q
check replay_export_quit "EXITED 0"

# a .tile file: the tile lexer's colours, the CUDA pane (the generated code,
# the cursor line's marked), an error at its .tile line
tmux kill-session -t $S 2>/dev/null; S=${S}t
tui_open 120 40 "cd $W && TERM=screen-256color $TUI softmax.tile $TUI_ARGS; echo EXITED \$?; sleep 60"
check tile_opens "softmax.tile  softmax  sm_"
screen | sed -n 2p | grep -q "│Sum CUDA SASS PTX" && pass tile_tabs || fail tile_tabs "$(screen | sed -n 2p)"
# keywords, dtypes, built-ins and numbers each get a colour (an SGR escape
# right before them); a spec line the same colour as in the .cu file
row=$(screen_e | grep "kernel.*softmax.*(x:")
for w in kernel f32 grid; do
	echo "$row" | grep -q "${ESC}\[[0-9;]*m$w${ESC}" && pass tile_colour_$w \
		|| fail tile_colour_$w "$(echo "$row" | cat -v)"
done
screen_e | grep -q "${ESC}\[[0-9;]*mpid${ESC}.*${ESC}\[[0-9;]*m0${ESC}" && pass tile_colour_call \
	|| fail tile_colour_call "$(screen_e | grep 'pid(0)' | cat -v)"
# a variable is not coloured (no escape before m_new), the built-in is
screen_e | grep -q " m_new = ${ESC}\[[0-9;]*mmax${ESC}" && pass tile_name_plain \
	|| fail tile_name_plain "$(screen_e | grep 'm_new = ' | cat -v)"
SPEC_TILE=$(screen_e | grep -o "${ESC}\[[0-9;]*m//! kernel" | head -1)
[ -n "$SPEC_CU" ] && [ "$SPEC_CU" = "$SPEC_TILE" ] && pass tile_spec_colour \
	|| fail tile_spec_colour "cu '$(echo "$SPEC_CU" | cat -v)' tile '$(echo "$SPEC_TILE" | cat -v)'"
# Alt-2: the CUDA pane; on line 20 (const BLOCK) its code is marked
keys Escape 2
check tile_cuda_pane '#line 3 "<kbench tile prologue>"'
keys C-g; keys "20" Enter
check tile_cuda_marks "│>    constexpr int BLOCK = 16384;"
# the pane follows the cursor to line 33's code, far down the generated text
keys C-g; keys "33" Enter
check tile_cuda_follows '│>#line 33 "softmax.tile"'
# an error: pid -> pidx on line 22; at its .tile line in the editor, in the
# Summary, and the CUDA pane says why there is none
keys C-g; keys "22" Enter; keys End Left Left Left; keys -l x; keys C-s
check tile_error_pane "No generated CUDA: the file did not lower"
screen | grep -Eq "^ *22 .*pidx\(0\) +◀ unknown function 'pidx'" && pass tile_error_line \
	|| fail tile_error_line "$(screen | grep -E '^ *2[1-3] ')"
keys Escape 1
check tile_error_summary "softmax.tile:22:11: error: unknown function 'pidx'"
# undo, save: the generated code is back
keys C-z; keys C-s; keys Escape 2
check tile_error_gone "│>        int row = (int)blockIdx.x;"
keys C-q
check tile_quit "EXITED 0"

# a save keeps the file's final newline (here a buffer cut and retyped
# without one); "quit anyway? y" discards the edits for good: the next
# start offers no recovered buffer
nl_session() { tui_open 120 40 "cd $W && TERM=screen-256color $TUI nl.cu --no-run $TUI_ARGS; echo EXITED \$?; sleep 60"; }
tmux kill-session -t $S 2>/dev/null; S=${S}n
printf '// one\n' > "$W/nl.cu"
nl_session
check nl_opens "nl.cu"
keys C-a; keys C-x; keys -l '// two'; keys C-s
check nl_saved "saved nl.cu"
[ "$(tail -c 1 "$W/nl.cu" | od -An -tx1 | tr -d ' ')" = 0a ] && grep -qx '// two' "$W/nl.cu" \
	&& pass save_keeps_final_newline || fail save_keeps_final_newline "$(od -c "$W/nl.cu" | head -3)"
keys -l ' unsaved'; nap 2.5 # the autosave writes the recovery file
keys C-q
check quit_asks "quit anyway?"
keys y
check quit_discards "EXITED 0"
tmux kill-session -t $S 2>/dev/null; S=${S}2
nl_session
check nl_reopens "nl.cu"; nap 1
screen | grep -q "recovered buffer" && fail quit_discarded_not_offered "$(screen | tail -1)" \
	|| pass quit_discarded_not_offered
keys C-q
check nl_quit "EXITED 0"

# GPU machines: a planted infinite loop becomes a TIMEOUT result while the
# editor keeps taking keys.
if "$KB" devices >/dev/null 2>&1; then
	cp tests/fixtures/faults/hang.cu "$W/"
	tmux kill-session -t $S 2>/dev/null; S=${S}h
	tui_open 120 40 "cd $W && TERM=screen-256color $TUI hang.cu --timeout 4; echo EXITED \$?; sleep 60"
	check hang_running "check trial" 60
	keys C-g; keys "14" Enter; keys End; keys -l ' /* typed while the kernel hangs */'
	check keys_while_hung "typed while the kernel hangs" 3
	# saving stops the stale run (it has run > 1 s) instead of waiting for
	# its timeout; the new run hangs too and times out
	sleep 1.2; keys C-s
	check hang_save_cancels "run stopped: a newer save replaced it" 5
	check hang_timeout "TIMEOUT" 60
	keys C-q
	check hang_quit "EXITED 0"
else
	for c in hang_running keys_while_hung hang_save_cancels hang_timeout hang_quit; do skip $c "no GPU"; done
fi
finish
