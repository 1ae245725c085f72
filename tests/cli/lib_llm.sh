# lib_llm.sh - the scripted chat-completions server for the LLM tests
# (sourced after lib.sh).  Sets KEY (a planted sk-test- key, exported as
# $KBENCH_TEST_KEY, which the server demands, and $KB_TEST_LLM_KEY, which the
# tests' config names), SRV (the server's folder: port, req-N.json) and
# PORT; the server goes with the test, and llm_cleanup (when the test
# defines one) runs at its end.  XDG_CONFIG_HOME is the test's own.
export XDG_CONFIG_HOME="$T_TMP/config"
KEY="sk-test-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export KBENCH_TEST_KEY="$KEY" KB_TEST_LLM_KEY="$KEY"
SRV="$T_TMP/srv"; mkdir -p "$SRV" "$XDG_CONFIG_HOME/kbench"
python3 tests/llm_server.py "$SRV" 2>"$T_TMP/server.log" &
SRV_PID=$!
trap 'kill $SRV_PID 2>/dev/null; llm_cleanup 2>/dev/null; pkill -f "serve --listen $T_TMP/" 2>/dev/null; [ -n "${T_KEEP:-}" ] || rm -rf "$T_TMP"' EXIT
i=0; while [ ! -f "$SRV/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PORT=$(cat "$SRV/port")
