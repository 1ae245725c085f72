#!/bin/sh
# run.sh [-j N] SECONDS [NAME...] - runs every libFuzzer target
# (build/fuzz/fuzz_*, `make fuzz-build`) SECONDS seconds each on its
# committed seed corpus tests/fuzz/corpus/NAME (read only: new inputs go to
# build/fuzz/work/NAME), N targets at a time (default 1).
# Prints one line per target with libFuzzer's final figures, the reproducer
# of any crash, a table of every target's final coverage, and the closing
# "# passed=N failed=N skipped=N" that tests/run.sh adds up.  Exits 1 on
# any crash, leak, timeout or OOM.
#
# It runs the same in the tree and in the bundle of `make fuzz-dist`
# (build/fuzz, tests/fuzz and build/lib there, the shared libraries the
# targets need: put first on LD_LIBRARY_PATH).
# (run.sh --one SECONDS NAME is one target, for the parallel runs.)
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/../.." || exit 1
[ -d build/lib ] && export LD_LIBRARY_PATH="$PWD/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
logs=build/fuzz/logs

# One target: its log in $logs/NAME.log, its exit status in $logs/NAME.rc.
one() { # seconds name
	bin=build/fuzz/fuzz_$2 work=build/fuzz/work/$2 art=build/fuzz/artifacts/$2/
	if ! [ -x "$bin" ]; then
		echo skip >"$logs/$2.rc"; return
	fi
	mkdir -p "$work" "$art"
	# (intercept_tls_get_addr=0: tests/sanitize.sh says why)
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:intercept_tls_get_addr=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$bin" -max_total_time="$1" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$art" \
		"$work" "tests/fuzz/corpus/$2" >"$logs/$2.log" 2>&1
	echo $? >"$logs/$2.rc"
}

if [ "${1:-}" = --one ]; then
	one "$2" "$3"
	exit 0
fi

jobs=1
case ${1:-} in
-j) jobs=$2; shift 2 ;;
-j*) jobs=${1#-j}; shift ;;
esac
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: -j wants a positive count, not '$jobs'" >&2; exit 2 ;; esac
secs=${1:-10}; [ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then
	names=$*
elif ls tests/fuzz/fuzz_*.c >/dev/null 2>&1; then  # the tree: every target's source
	names=$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c | sed 's/^fuzz_//'; done)
else                                                # the bundle: every target built
	names=$(for f in build/fuzz/fuzz_*; do basename "$f" | sed 's/^fuzz_//'; done)
fi
mkdir -p "$logs"
for name in $names; do rm -f "$logs/$name.rc"; done
printf '%s\n' $names | xargs -P "$jobs" -n 1 sh "$self" --one "$secs"

passed=0 failed=0 skipped=0
table="| target | result | cov | ft | corpus | execs | exec/s | peak RSS |
|---|---|---|---|---|---|---|---|"
for name in $names; do
	log=$logs/$name.log rc=$(cat "$logs/$name.rc" 2>/dev/null)
	if [ "$rc" = skip ]; then
		echo "  SKIP fuzz_$name: no libFuzzer here (clang -fsanitize=fuzzer cannot link)"
		skipped=$((skipped + 1)); continue
	fi
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" 2>/dev/null | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" 2>/dev/null)
	if [ "$rc" = 0 ] && [ -n "$done_line" ]; then
		passed=$((passed + 1)) verdict=ok
		echo "  ok   fuzz_$name: $(echo "$done_line" | sed 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*//') execs: $execs"
	else
		failed=$((failed + 1)) verdict=FAIL
		repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" 2>/dev/null | tail -1)
		echo "  FAIL fuzz_$name: rc ${rc:-none}; reproducer: ${repro:-none written}; log $log"
		grep -E 'ERROR|runtime error|SUMMARY' "$log" 2>/dev/null | head -5 | sed 's/^/    /'
		# the last figures libFuzzer printed before it stopped
		done_line=$(grep -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED)' "$log" 2>/dev/null | tail -1)
	fi
	row=$(echo "$done_line" | awk -v n="$name" -v v="$verdict" -v e="${execs:-?}" '{
		for (i = 1; i < NF; i++) f[$i] = $(i + 1)
		sub(/Mb$/, " MB", f["rss:"]); c = f["corp:"]; sub(/\//, " / ", c); sub(/Kb$/, " KB", c); sub(/Mb$/, " MB", c); sub(/b$/, " B", c)
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |", n, v, f["cov:"], f["ft:"], c, e,
			f["exec/s:"], f["rss:"] }')
	table="$table
$row"
done
echo "$table"
echo "# passed=$passed failed=$failed skipped=$skipped"
[ "$failed" -eq 0 ]
