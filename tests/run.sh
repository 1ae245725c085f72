#!/bin/sh
# run.sh - runs every test program (unit, the same under ASan+UBSan, the
# libFuzzer targets for a short budget, the CLI scripts, the same against
# the ASan+UBSan programs, and the TUI's under valgrind), prints
# PASS/FAIL per program and one closing line "N passed, N failed[, N skipped (reason)]" counting test cases.  Exits 1 on
# any failure.  Logs of failing programs are kept under build/test-logs.
cd "$(dirname "$0")/.." || exit 1
logs=build/test-logs
rm -rf "$logs" && mkdir -p "$logs"
passed=0 failed=0 skipped=0 reasons=""

run_one() { # name, command...
	name=$1; shift
	log="$logs/$(echo "$name" | tr '/ ' '__').log"
	start=$(date +%s.%N)
	"$@" >"$log" 2>&1
	rc=$?
	secs=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2-$1}')
	line=$(grep '^# passed=' "$log" | tail -1)
	p=$(echo "$line" | sed -n 's/.*passed=\([0-9]*\).*/\1/p')
	f=$(echo "$line" | sed -n 's/.*failed=\([0-9]*\).*/\1/p')
	s=$(echo "$line" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p')
	if [ -z "$line" ]; then p=0; f=1; s=0; fi   # crashed before reporting
	[ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ] && f=1
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$s" -gt 0 ]; then
		r=$(grep '^  SKIP' "$log" | head -1 | sed 's/^  SKIP [^:]*: //')
		case "$reasons" in *"$r"*) ;; *) reasons="${reasons:+$reasons; }$r" ;; esac
	fi
	if [ "$f" -gt 0 ]; then
		echo "FAIL  $name ($secs s)"; grep -E '^  (FAIL|SKIP)|ERROR|runtime error|^Traceback|^[A-Za-z]*Error: ' "$log" | head -20
	else
		echo "PASS  $name ($secs s, $p passed${s:+, $s skipped})" | sed 's/, 0 skipped//'
	fi
}

for t in build/tests/test_*; do
	[ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
done
for t in build/asan/tests/test_*; do
	[ -x "$t" ] && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		run_one "asan/$(basename "$t")" "$t"
done
# libFuzzer targets, a few seconds each (make fuzz runs them longer).
run_one "fuzz" sh tests/fuzz/run.sh "${KBENCH_FUZZ_SECONDS:-2}"
for t in tests/cli/*.sh; do
	case $(basename "$t") in lib*) continue ;; esac
	[ -f "$t" ] && run_one "cli/$(basename "$t" .sh)" sh "$t"
done
# The same scripts once more against kbench and kbench-tui built with
# ASan+UBSan (build/asan), any report of any process a failure, and the
# TUI's under valgrind (tests/sanitize.sh).
for t in tests/cli/*.sh; do
	case $(basename "$t") in lib*) continue ;; esac
	[ -f "$t" ] && run_one "asan-cli/$(basename "$t" .sh)" sh tests/sanitize.sh asan "$t"
done
run_one "valgrind/tui" sh tests/sanitize.sh valgrind tests/cli/tui.sh

if [ "$skipped" -gt 0 ]; then
	echo "skipped: $reasons"
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
