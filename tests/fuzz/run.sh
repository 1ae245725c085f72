#!/bin/sh
# run.sh SECONDS [NAME...] - runs every libFuzzer target (build/fuzz/fuzz_*,
# `make fuzz-build`) SECONDS seconds each on its committed seed corpus
# tests/fuzz/corpus/NAME (read only: new inputs go to build/fuzz/work/NAME).
# Prints one line per target with libFuzzer's final figures, the reproducer
# of any crash, and the closing "# passed=N failed=N skipped=N" that
# tests/run.sh adds up.  Exits 1 on any crash, leak, timeout or OOM.
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-10}; [ $# -gt 0 ] && shift
passed=0 failed=0 skipped=0
names=${*:-$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c | sed 's/^fuzz_//'; done)}

for name in $names; do
	bin=build/fuzz/fuzz_$name
	if ! [ -x "$bin" ]; then
		echo "  SKIP fuzz_$name: no libFuzzer here (clang -fsanitize=fuzzer cannot link)"
		skipped=$((skipped + 1)); continue
	fi
	work=build/fuzz/work/$name art=build/fuzz/artifacts/$name/
	log=build/fuzz/logs/$name.log
	mkdir -p "$work" "$art" "$(dirname "$log")"
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$art" \
		"$work" "tests/fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$rc" -eq 0 ] && [ -n "$done_line" ]; then
		passed=$((passed + 1))
		echo "  ok   fuzz_$name: $(echo "$done_line" | sed 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*//') execs: $execs"
	else
		failed=$((failed + 1))
		repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
		echo "  FAIL fuzz_$name: rc $rc; reproducer: ${repro:-none written}; log $log"
		grep -E 'ERROR|runtime error|SUMMARY' "$log" | head -5 | sed 's/^/    /'
	fi
done
echo "# passed=$passed failed=$failed skipped=$skipped"
[ "$failed" -eq 0 ]
