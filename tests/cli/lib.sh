# lib.sh - helpers for CLI tests (sourced).  Each `check` is one test case;
# `finish` prints the "# passed=N failed=N skipped=N" line tests/run.sh adds up.
# KBENCH_BIN_DIR: where kbench and kbench-tui are (tests/run.sh points it at
# build/asan for the sanitized pass); KB and TUI name one program each.
KB_BIN_DIR=${KBENCH_BIN_DIR:-$PWD/build}
case $KB_BIN_DIR in /*) ;; *) KB_BIN_DIR=$PWD/$KB_BIN_DIR ;; esac
KB=${KB:-$KB_BIN_DIR/kbench}
T_PASSED=0 T_FAILED=0 T_SKIPPED=0
T_TMP=$(mktemp -d /tmp/kbench-cli.XXXXXX)
# Shared runners (src/runner/shared.c) of this test live under its own
# runtime dir, leave 20 s after their last client, and go with the test.
export XDG_RUNTIME_DIR="$T_TMP/run" KBENCH_SHARED_IDLE=${KBENCH_SHARED_IDLE:-20}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
trap 'pkill -f "serve --listen $T_TMP/" 2>/dev/null; [ -n "${T_KEEP:-}" ] || rm -rf "$T_TMP"' EXIT
# Every test gets a private compile cache and session store; only the
# session tests record sessions (others would write refs into this repo).
export XDG_CACHE_HOME="$T_TMP/cache"
export XDG_DATA_HOME="$T_TMP/data"
export KBENCH_NO_SESSION=1

pass() { T_PASSED=$((T_PASSED + 1)); [ -n "${T_VERBOSE:-}" ] && echo "  ok   $1"; return 0; }
fail() { T_FAILED=$((T_FAILED + 1)); echo "  FAIL $1: $2"; return 0; }
skip() { T_SKIPPED=$((T_SKIPPED + 1)); echo "  SKIP $1: $2"; return 0; }

# run CMD...: runs it, keeping stdout in $T_TMP/out, stderr in $T_TMP/err, status in $RC.
run() { "$@" >"$T_TMP/out" 2>"$T_TMP/err"; RC=$?; }

# expect_rc NAME CODE
expect_rc() { if [ "$RC" -eq "$2" ]; then pass "$1"; else fail "$1" "exit $RC, expected $2; stderr: $(head -c 600 "$T_TMP/err")"; fi; }
# expect_in NAME FILE(out|err) TEXT  (fixed string)
expect_in() { if grep -qF -- "$3" "$T_TMP/$2"; then pass "$1"; else fail "$1" "'$3' not in std$2: $(head -c 800 "$T_TMP/$2")"; fi; }
expect_not_in() { if grep -qF -- "$3" "$T_TMP/$2"; then fail "$1" "'$3' unexpectedly in std$2"; else pass "$1"; fi; }
# expect_json NAME PYTHON-EXPR over j (stdout parsed as JSON); the expression must be true
expect_json() {
	if python3 -c "import json,sys; j=json.load(open('$T_TMP/out')); sys.exit(0 if ($2) else 1)" 2>"$T_TMP/py"; then
		pass "$1"
	else
		fail "$1" "JSON check failed: $2 $(head -c 300 "$T_TMP/py")"
	fi
}
finish() { echo "# passed=$T_PASSED failed=$T_FAILED skipped=$T_SKIPPED"; [ "$T_FAILED" -eq 0 ]; }
