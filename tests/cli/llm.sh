#!/bin/sh
# llm.sh - `kbench optimize` against a real HTTP server on 127.0.0.1
# (tests/llm_server.py, chat completions streamed and not) and against a
# command provider: a good whole-file answer, a good diff, a diff that does
# not apply, a kernel that does not compile, an answer with no code, a 429
# then success, a 401, a stall mid-stream, a cancelled request, a refused
# connection, a 404; each with its outcome on stdout/stderr, its exit status
# and its journal events.  No GPU is used (CUDA_VISIBLE_DEVICES=): a
# candidate that compiles stops there, saying so.  A planted key must not
# appear in any file under the session, config and cache folders, in a
# report, or on stderr.
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
export CUDA_VISIBLE_DEVICES=
. tests/cli/lib_llm.sh
cat >"$XDG_CONFIG_HOME/kbench/config" <<EOF
# the test's settings (docs/llm.md)
base_url = http://127.0.0.1:$PORT/v1
key_env = KB_TEST_LLM_KEY
stall_timeout = 3
retries = 2
EOF
K="$T_TMP/k"; mkdir -p "$K"
cp kernels/vector_add.cu "$K/va.cu"
ALLERR="$T_TMP/allerr"; : >"$ALLERR"

# opt CASE ARGS...: a fresh session CASE, then kbench optimize on va.cu
opt() {
	c=$1; shift
	"$KB" session new "$c" >/dev/null
	run "$KB" optimize "$K/va.cu" --rounds 1 "$@"
	cat "$T_TMP/err" >>"$ALLERR"
}
# events NAME PYTHON-EXPR over ev (the current session's journal events)
events() {
	j=$(ls -d "$XDG_DATA_HOME"/kbench/sessions/"$c"/journal.jsonl)
	if python3 -c "import json,sys; ev=[json.loads(l) for l in open('$j')]; E=lambda k:[e for e in ev if e['event']==k]; sys.exit(0 if ($2) else 1)" 2>"$T_TMP/py"; then
		pass "$1"
	else
		fail "$1" "journal check failed: $2 $(head -c 300 "$T_TMP/py"; tail -c 600 "$j")"
	fi
}

opt good_file --llm-model good_file
expect_rc good_file_rc 3
expect_in good_file_says out "v2 NO GPU: compiled; checking and timing it needs a GPU"
expect_in good_file_err err "stopped after the compile"
events good_file_journal "[e['event'] for e in ev if e['event'].startswith('llm_')] == ['llm_ask','llm_reply','llm_round'] and E('llm_round')[0]['verdict']=='NO GPU' and E('llm_round')[0]['variant']=='v2' and E('llm_round')[0]['parent']=='v1' and E('compile')[-1]['ok'] and 'restrict-qualified' in E('llm_reply')[0]['answer']"
python3 -c "import json; b=json.load(open('$SRV/req-1.json'))['body']; assert b['stream'] and b['model']=='good_file'; u=b['messages'][1]['content']; assert all(k in u for k in ('registers/thread','occupancy','## Compile log','//! ref','extern \"C\" __global__','What this session tried'))" \
	&& pass prompt_has_facts || fail prompt_has_facts "$(head -c 600 "$SRV/req-1.json")"
cmp -s kernels/vector_add.cu "$K/va.cu" && pass file_untouched || fail file_untouched "va.cu changed"

opt good_diff --llm-model good_diff --no-stream
expect_rc good_diff_rc 3
expect_in good_diff_says out "v2 NO GPU: compiled"
events good_diff_journal "E('llm_round')[0]['verdict']=='NO GPU' and '@@' in E('llm_reply')[0]['answer'] and E('edit') and 'restrict-qualified' in E('edit')[-1]['diff']"
python3 -c "import json; b=json.load(open('$SRV/req-2.json'))['body']; assert b['stream'] is False" \
	&& pass no_stream_body || fail no_stream_body "$(head -c 300 "$SRV/req-2.json")"

opt json_only --llm-model json_only
expect_rc json_only_rc 3
expect_in json_only_says out "v2 NO GPU: compiled"

# two rounds: the second question carries the first's outcome
opt two_rounds --llm-model no_code --rounds 2
expect_rc two_rounds_rc 0
events two_rounds_journal "[r['verdict'] for r in E('llm_round')]==['no code','no code'] and E('llm_ask')[1]['parent']=='v1'"
last=$(ls "$SRV" | grep '^req-' | sort -t- -k2 -n | tail -1)
python3 -c "import json; m=json.load(open('$SRV/$last'))['body']['messages']; assert [x['role'] for x in m]==['system','user','assistant','user'], m; assert 'Round 1: no code' in m[3]['content'] and 'no code block' in m[3]['content'] and 'Variants of this file' in m[3]['content']" \
	&& pass feedback_in_conversation || fail feedback_in_conversation "$(tail -c 800 "$SRV/$last")"

# budgets
opt tokens --llm-model no_code --rounds 3 --max-tokens 1
expect_in token_budget out "token budget spent"
events token_budget_journal "len(E('llm_ask'))==1"
opt wall --llm-model no_code --rounds 3 --max-time 0.001
expect_in time_budget out "time budget spent"
events time_budget_journal "len(E('llm_ask'))==0"

opt bad_diff --llm-model bad_diff
expect_rc bad_diff_rc 0
expect_in bad_diff_says out "diff does not apply: the diff does not apply: hunk 1 of 1"
events bad_diff_journal "E('llm_round')[0]['verdict']=='diff does not apply' and 'variant' not in E('llm_round')[0] and len(E('compile'))==1"

opt no_compile --llm-model no_compile
expect_rc no_compile_rc 0
expect_in no_compile_says out "round 1: v2 COMPILE ERROR: 1 error" # kept as a variant (issue 25)
events no_compile_journal "E('llm_round')[0]['verdict']=='COMPILE ERROR' and E('compile')[-1]['ok'] is False and E('compile')[-1]['errors']>=1"

opt no_code --llm-model no_code
expect_rc no_code_rc 0
expect_in no_code_says out "round 1: no code: the answer has no code block with a kernel"
events no_code_journal "E('llm_round')[0]['verdict']=='no code'"

opt rate_limit --llm-model rate_limit
expect_rc rate_limit_rc 3
expect_in rate_limit_retry out "HTTP 429: retry 1 in 1.0 s"
expect_in rate_limit_then_ok out "v2 NO GPU: compiled"
events rate_limit_journal "E('llm_retry')[0]['wait_s']==1 and E('llm_reply')[0]['attempts']==2"

opt auth --llm-model auth
expect_rc auth_rc 3
expect_in auth_says err "the server refused the key (HTTP 401"
expect_in auth_names_var err 'check $KB_TEST_LLM_KEY'
expect_in auth_redacted err "[redacted]"
events auth_journal "E('llm_error')[0]['kind']=='auth' and not E('llm_round')"

opt stall --llm-model stall --rounds 2
expect_rc stall_rc 3
expect_in stall_says out "round 1: the answer stalled after 25 chars: no data for 3 s"
events stall_journal "[e['kind'] for e in E('llm_error')]==['timeout','timeout'] and E('llm_error')[0]['partial'].startswith('Looking at')"
# the lost round is asked again, not answered with feedback
last=$(ls "$SRV" | grep '^req-' | sort -t- -k2 -n | tail -1)
python3 -c "import json; m=json.load(open('$SRV/$last'))['body']['messages']; assert [x['role'] for x in m]==['system','user'] and m[1]['content'].startswith('Make this kernel faster') and 'round 1: no answer' in m[1]['content'], m" \
	&& pass stall_asks_again || fail stall_asks_again "$(tail -c 600 "$SRV/$last")"

"$KB" session new cancel >/dev/null; c=cancel
rm -f "$SRV/streaming"
"$KB" optimize "$K/va.cu" --rounds 1 --llm-model slow --llm-stall 30 >"$T_TMP/out" 2>"$T_TMP/err" &
KPID=$!
i=0; while [ ! -f "$SRV/streaming" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
# (the 25 chars sent reach kbench as soon as it is scheduled: 2 s leaves a
# loaded machine room, where 0.3 s could lose the race)
sleep 2; kill -INT $KPID; wait $KPID; RC=$?
cat "$T_TMP/err" >>"$ALLERR"
expect_rc cancel_rc 130
expect_in cancel_says err "cancelled after 25 chars"
events cancel_journal "E('llm_error')[0]['kind']=='cancelled'"

opt refused --llm-url http://127.0.0.1:1/v1
expect_rc refused_rc 3
expect_in refused_says err "cannot connect to http://127.0.0.1:1/v1/chat/completions"
expect_in refused_hint err "is the server running"

opt notfound --llm-url "http://127.0.0.1:$PORT/api"
expect_rc notfound_rc 3
expect_in notfound_says err "HTTP 404 from http://127.0.0.1:$PORT/api/chat/completions"

opt cmd --llm-cmd 'cat >/dev/null; echo "round $KBENCH_LLM_ROUND: nothing to offer"'
expect_rc cmd_rc 0
expect_in cmd_no_code out "round 1: no code"
events cmd_journal "E('llm_ask')[0]['provider']=='command' and E('llm_reply')[0]['answer'].strip()=='round 1: nothing to offer'"

# the GPU script's provider: round 1 proposes a kernel that compiles; with
# no GPU to check it, the loop stops there
cp kernels/softmax.cu "$K/softmax.cu"
"$KB" session new scripted >/dev/null; c=scripted
run "$KB" optimize "$K/softmax.cu" --rounds 4 --llm-cmd "$PWD/tests/fixtures/scripted-llm"
cat "$T_TMP/err" >>"$ALLERR"
expect_rc scripted_rc 3
expect_in scripted_says out "round 1: v2 NO GPU: compiled; checking and timing it needs a GPU"
events scripted_journal "len(E('llm_round'))==1 and 'online softmax' in E('llm_reply')[0]['answer']"
cmp -s kernels/softmax.cu "$K/softmax.cu" && pass scripted_file_kept || fail scripted_file_kept "changed"

# round 1's kernel computes softmax (the host emulator, tests/emu: one launch
# per size, so it says nothing of the reward hacks, which need a GPU's
# repeated trials); the longer and unaligned rows take the other path
echo | KBENCH_LLM_ROUND=1 tests/fixtures/scripted-llm | sed -n '/^```cuda$/,/^```$/p' | sed '1d;$d' >"$T_TMP/round1.cu"
if [ -x build/emu/tile_emu ]; then
	run build/emu/tile_emu "$T_TMP/round1.cu" --size M=16,N=8192 --size M=6,N=1000 --size M=4,N=32768
	expect_rc scripted_round1_correct 0
else
	skip scripted_round1_correct "build/emu/tile_emu not built"
fi

# every round of the scripted provider is a kernel that compiles (rounds
# 2-6 are the reward hacks a GPU run must reject: tests/cli/guard_gpu.sh)
for r in 2 3 4 5 6; do
	echo | KBENCH_LLM_ROUND=$r tests/fixtures/scripted-llm | sed -n '/^```cuda$/,/^```$/p' | sed '1d;$d' >"$T_TMP/round$r.cu"
	run "$KB" compile "$T_TMP/round$r.cu"
	expect_rc scripted_round${r}_compiles 0
done

n=$(ls "$SRV" | grep -c '^req-')
nj=$(wc -l <"$XDG_DATA_HOME/kbench/sessions/$c/journal.jsonl")
run "$KB" optimize "$K/va.cu" --dry-run --llm-model good_file
expect_rc dry_run_rc 0
expect_json dry_run_body "j['model']=='good_file' and j['messages'][0]['role']=='system' and 'vector_add' in j['messages'][1]['content']"
[ "$(wc -l <"$XDG_DATA_HOME/kbench/sessions/$c/journal.jsonl")" = "$nj" ] && pass dry_run_records_nothing \
	|| fail dry_run_records_nothing "the journal grew"
expect_not_in dry_run_no_key out "$KEY"
[ "$(ls "$SRV" | grep -c '^req-')" = "$n" ] && pass dry_run_sends_nothing || fail dry_run_sends_nothing "a request was made"

# settings: a key in the config file is refused without echoing it; a
# key_file readable by others is refused
cp "$XDG_CONFIG_HOME/kbench/config" "$T_TMP/config.good"
echo "api_key = $KEY" >>"$XDG_CONFIG_HOME/kbench/config"
run "$KB" optimize "$K/va.cu" --rounds 1; cat "$T_TMP/err" >>"$ALLERR"
expect_rc config_key_rc 3
expect_in config_key_says err "a key does not belong in the config file"
cp "$T_TMP/config.good" "$XDG_CONFIG_HOME/kbench/config"
echo "$KEY" >"$T_TMP/keyfile"; chmod 644 "$T_TMP/keyfile"
KB_TEST_LLM_KEY= run "$KB" optimize "$K/va.cu" --rounds 1 --llm-model good_file; cat "$T_TMP/err" >>"$ALLERR"
expect_rc keyfile_rc 3
KBENCH_LLM_KEY_FILE="$T_TMP/keyfile" KB_TEST_LLM_KEY= run "$KB" optimize "$K/va.cu" --rounds 1 --llm-model good_file
cat "$T_TMP/err" >>"$ALLERR"
expect_in keyfile_mode err "is readable by others (mode 644): chmod 600"
chmod 600 "$T_TMP/keyfile"
"$KB" session new keyfile >/dev/null; c=keyfile
KBENCH_LLM_KEY_FILE="$T_TMP/keyfile" KB_TEST_LLM_KEY= run "$KB" optimize "$K/va.cu" --rounds 1 --llm-model good_file
cat "$T_TMP/err" >>"$ALLERR"
expect_in keyfile_0600_works out "v2 NO GPU: compiled"
run "$KB" llm config
expect_in llm_config out "key           \$KB_TEST_LLM_KEY (set)"
expect_not_in llm_config_no_key out "$KEY"

run "$KB" llm templates
expect_in templates_where out "$XDG_CONFIG_HOME/kbench/templates/NAME.md"
run "$KB" llm templates --init
[ -f "$XDG_CONFIG_HOME/kbench/templates/optimize.md" ] && pass templates_init || fail templates_init "no optimize.md"
echo 'Only this: {{kernel}} {{question}}' >"$XDG_CONFIG_HOME/kbench/templates/optimize.md"
run "$KB" optimize "$K/va.cu" --dry-run --llm-model x --question "why so slow?"
expect_json template_edited "j['messages'][1]['content'].strip()=='Only this: vector_add why so slow?'"

# log and report show the rounds
c=good_file
run "$KB" log good_file
expect_in log_rounds out "round 1 (good_file): v2 NO GPU"
run "$KB" report good_file -o "$T_TMP/r.md"
expect_rc report_rc 0
grep -q "| 1 | good_file | Qualify the loads. | v2 | v1 | NO GPU |" "$T_TMP/r.md" && pass report_rounds \
	|| fail report_rounds "$(sed -n '/LLM rounds/,$p' "$T_TMP/r.md")"
run "$KB" report good_file -o "$T_TMP/r.html"
grep -q "<h2[^>]*>LLM rounds" "$T_TMP/r.html" && pass report_rounds_html || fail report_rounds_html "no LLM rounds heading"

# the planted key: nowhere under the session, config and cache folders, in
# no report, no exported session, on no stderr
run "$KB" session export good_file -o "$T_TMP/exported"; expect_rc export_rc 0
[ -s "$T_TMP/exported/journal.jsonl" ] && pass export_has_journal || fail export_has_journal "no journal exported"
leaks=$(grep -rl -- "$KEY" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$T_TMP"/r.* "$T_TMP/exported" "$ALLERR" 2>/dev/null | grep -v "/keyfile$")
[ -z "$leaks" ] && pass key_nowhere || fail key_nowhere "the key is in: $leaks"
grep -rq -- "sk-test-" "$XDG_DATA_HOME" && fail key_prefix_nowhere "an sk-test- string is in the session" || pass key_prefix_nowhere
finish
