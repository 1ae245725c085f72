# lib_tui.sh - kbench-tui in tmux, for tests/cli/tui*.sh (after lib.sh):
# the screen of session $S, keys sent to it, and waiting for text to come
# or go.  $TM is the tmux command (default tmux; "tmux -L NAME" for a
# server of one's own).
TM=${TM:-tmux}
screen() { $TM capture-pane -p -t $S; }
# the screen with its colours (SGR escapes)
ESC=$(printf '\033')
screen_e() { $TM capture-pane -e -p -t $S; }
keys() { $TM send-keys -t $S "$@"; }
# wait_for TEXT [SECONDS]: poll the screen until TEXT shows (KBENCH_TUI_SLOW
# times longer: tests/sanitize.sh runs the TUI under valgrind)
slow=${KBENCH_TUI_SLOW:-1}
wait_for() {
	i=0; lim=$(( ${2:-20} * 10 * slow ))
	while [ $i -lt $lim ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done
	return 1
}
check() { if wait_for "$2" "${3:-20}"; then pass "$1"; else fail "$1" "'$2' not on screen: $(screen | head -30)"; fi; }
# gone NAME TEXT: TEXT leaves the screen within 20 s (times KBENCH_TUI_SLOW)
gone() {
	i=0
	while [ $i -lt $((200 * slow)) ]; do screen | grep -qF -- "$2" || { pass "$1"; return; }; sleep 0.1; i=$((i + 1)); done
	fail "$1" "'$2' is still on screen"
}
# tui_open W H CMD: session $S of W x H columns running CMD; a new session right
# after the last one closed can meet the dying server, so once more after a
# pause
tui_open() {
	$TM new-session -d -s $S -x "$1" -y "$2" "$3" 2>/dev/null ||
		{ sleep 1; $TM new-session -d -s $S -x "$1" -y "$2" "$3"; }
}
