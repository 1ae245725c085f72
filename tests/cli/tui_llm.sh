#!/bin/sh
# tui_llm.sh - the LLM pane of kbench-tui through a real terminal (tmux),
# against the scripted chat-completions server (tests/llm_server.py): each
# scripted answer (a whole file, a diff, a diff that does not apply, a
# kernel that does not compile, no code, a 429 then success, a 401, a stall,
# a cancel with Esc) shows its outcome in the pane; a proposal applied with
# Ctrl-T is one edit (saved, compiled; Ctrl-Z undoes it), Ctrl-W rejects;
# the editor keeps taking keys while an answer is on its way; the journal
# holds each exchange; the planted key is in no file and on no screen.
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
export CUDA_VISIBLE_DEVICES=
TUI=${TUI:-$KB_BIN_DIR/kbench-tui}
CASES="opens proposal apply_saves apply_undo reject bad_diff no_compile no_code rate_limit auth stall_types stall cancel journal command_provider command_judged replay_llm key_nowhere"
if ! command -v tmux >/dev/null 2>&1; then
	for c in $CASES; do skip $c "tmux not installed"; done
	finish; exit
fi
S=kbllm$$
export TMUX_TMPDIR="$T_TMP"
llm_cleanup() { tmux kill-server; }
. tests/cli/lib_llm.sh
# model MODEL: the next question goes to that scripted answer
model() {
	printf 'base_url = http://127.0.0.1:%s/v1\nkey_env = KB_TEST_LLM_KEY\nmodel = %s\nstall_timeout = 2\nretries = 2\n' \
		"$PORT" "$1" >"$XDG_CONFIG_HOME/kbench/config"
}
W="$T_TMP/work"; mkdir -p "$W"; cp kernels/vector_add.cu "$W/va.cu"
"$KB" session new tuillm >/dev/null
tmux new-session -d -s $S -x 160 -y 45 "cd $W && TERM=screen-256color $TUI va.cu 2>$T_TMP/tui.err; sleep 60"
screen() { tmux capture-pane -p -t $S; }
# next_session SUFFIX CMD: as in tui.sh (the new session first, then the
# old one killed, so that the server never exits in between)
next_session() {
	old=$S; S=$S$1
	tmux new-session -d -s $S -x 160 -y 45 "$2"
	tmux kill-session -t $old 2>/dev/null
}
keys() { tmux send-keys -t $S "$@"; }
wait_for() {
	i=0; lim=$(( ${2:-20} * 10 ))
	while [ $i -lt $lim ]; do screen | grep -qF -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done
	return 1
}
check() { if wait_for "$2" "${3:-20}"; then pass "$1"; else fail "$1" "'$2' not on screen: $(screen | tail -40)"; fi; }
# ask MODEL: a fresh question ("Enter alone": the default one)
ask() { model "$1"; keys C-l; sleep 0.2; keys Enter; }

check opens "registers   12/thread"
ask good_file
check proposal "a proposal: Ctrl-T applies it"
keys C-t
check apply_saves "applied and saved"
sleep 1
grep -q 'restrict-qualified' "$W/va.cu" && pass apply_file || fail apply_file "the file lacks the proposal"
keys C-z
i=0; while [ $i -lt 50 ] && screen | grep -q '^ *1[0-9] // llm: restrict'; do sleep 0.1; i=$((i + 1)); done
if ! screen | grep -q '^ *1[0-9] // llm: restrict'; then pass apply_undo; else fail apply_undo "$(screen | head -20)"; fi
keys C-s; sleep 0.5

ask good_diff
check diff_proposal "a proposal: Ctrl-T applies it"
keys C-w
check reject "rejected the proposal"

ask bad_diff
check bad_diff "diff does not apply: the diff does not apply"

ask no_compile
check no_compile_proposal "a proposal: Ctrl-T applies it"
keys C-t; sleep 0.5; keys Escape 1
check no_compile "va.cu:11:"
keys C-z; keys C-s; sleep 0.5

ask no_code
check no_code "no code: the answer has no code block"

ask rate_limit
check rate_limit "a proposal: Ctrl-T applies it"
keys C-w

ask auth
check auth "auth: the server refused the key (HTTP 401"

ask stall
wait_for "Looking at the hot loop" 10
# the editor takes keys while the answer is on its way
keys C-g; keys 1 Enter; keys -l 'TYPEDWHILEWAITING'
check stall_types "TYPEDWHILEWAITING"
check stall "timeout: the answer stalled after 25 chars" 15
keys C-z

rm -f "$SRV/streaming"
ask slow
i=0; while [ ! -f "$SRV/streaming" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
# Esc once the 25 chars sent are on screen (a fixed 0.3 s pause could lose
# that race on a loaded machine)
wait_for "Looking at the hot loop" 10; keys Escape
check cancel "cancelled: cancelled after 25 chars"

J="$XDG_DATA_HOME/kbench/sessions/tuillm/journal.jsonl"
python3 - "$J" >"$T_TMP/py" 2>&1 <<'EOF' && pass journal || fail journal "$(cat "$T_TMP/py")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
E = lambda k: [e for e in ev if e['event'] == k]
verdicts = [r['verdict'] for r in E('llm_round')]
kinds = [r['kind'] for r in E('llm_error')]
assert len(E('llm_ask')) == 9, len(E('llm_ask'))
assert verdicts == ['applied', 'rejected', 'diff does not apply', 'applied', 'no code', 'rejected'], verdicts
assert kinds == ['auth', 'timeout', 'cancelled'], kinds
assert E('llm_reply')[0]['answer'].startswith('Qualify the loads')
EOF
# a command provider from the TUI (forked from a threaded process)
printf 'command = cat >/dev/null; echo "nothing from the command"\n' >"$XDG_CONFIG_HOME/kbench/config"
keys C-l; sleep 0.2; keys Enter
check command_provider "nothing from the command"
check command_judged "no code: the answer has no code block"
keys C-q; sleep 0.3; keys y
# the replay shows the exchanges: the last step is the cancelled question
next_session r "cd $W && TERM=screen-256color $TUI --replay tuillm 2>>$T_TMP/tui.err; sleep 60"
wait_for "step 1/" 10
keys '>'
check replay_llm "round 10: no code: the answer has no code block"
keys C-q
leaks=$(grep -rl -- "$KEY" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$T_TMP/tui.err" 2>/dev/null)
[ -z "$leaks" ] && ! screen | grep -qF -- "$KEY" && pass key_nowhere || fail key_nowhere "the key is in: $leaks"
finish
