#!/bin/sh
# run.sh [sanitize] - runs the test programs, as many at once as there are
# cores, and prints PASS/FAIL per program in a fixed order (each as soon as
# it and those before it are done), then one closing line "N passed, N
# failed[, N skipped]" counting test cases (the reasons for skips on the
# line before it).  Exits 1 on any failure.
#   run.sh           `make test`: the unit tests and the CLI scripts
#                    (tests/cli/*.sh), against the plain build;
#   run.sh sanitize  `make test-sanitize` (CI): the unit tests and the CLI
#                    scripts once more against the ASan+UBSan build (any
#                    report of any process a failure, tests/sanitize.sh),
#                    the TUI's script under valgrind, and every libFuzzer
#                    target for a few seconds on its corpus.
# Every program found is run: a new tests/unit/test_*.c or tests/cli/*.sh
# (but lib*) needs no edit here.  Each program's whole output is kept in
# build/test-logs/<pass>/NAME.log; a failing one's FAIL and error lines are
# printed under its name.
# The programs share nothing: each CLI script makes its own temporary,
# XDG, runtime (shared runners) and tmux folders and picks free ports
# (tests/cli/lib.sh), and each program gets XDG folders of its own here
# too, so that no unit test reads or fills the user's cache, sessions or
# settings.  KBENCH_TEST_JOBS=N runs N at a time; where a GPU answers, one
# at a time by default (the GPU tests time kernels and hold the profiler).
# Longest first, by the last run's times (build/test-logs/<pass>.times).
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.." || exit 1

# run.sh --one LOGS NAME COMMAND...: one program, its output in
# LOGS/NAME.log, then "STATUS SECONDS CPU-SECONDS" in LOGS/NAME.rc (CPU:
# user + system of the processes it waited for; not the detached ones, such
# as a shared runner or the tmux server).
if [ "${1:-}" = --one ]; then
	f=$2/$(echo "$3" | tr '/' '_'); shift 3
	tmp=$(mktemp -d /tmp/kbench-test.XXXXXX) && mkdir -m 700 "$tmp/run" || exit 1
	start=$(date +%s.%N)
	XDG_CACHE_HOME=$tmp/cache XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config \
		XDG_RUNTIME_DIR=$tmp/run "$@" >"$f.log" 2>&1 </dev/null
	rc=$?
	rm -rf "$tmp"
	times >"$f.cpu"   # here, not in a subshell: its children are this shell's
	cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } print t }' "$f.cpu")
	rm -f "$f.cpu"
	echo "$rc $(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2-$1}') ${cpu:-0}" >"$f.rc.tmp"
	mv "$f.rc.tmp" "$f.rc"
	exit 0
fi

pass=${1:-plain}
logs=build/test-logs/$pass
times=build/test-logs/$pass.times
list=build/test-logs/$pass.list
rm -rf "$logs" && mkdir -p "$logs" || exit 1

# The programs, one "NAME COMMAND..." line each, in the order printed.
cli_scripts() { for t in tests/cli/*.sh; do case $(basename "$t") in lib*) ;; *) [ -f "$t" ] && echo "$t" ;; esac; done; }
case $pass in
plain)
	for t in build/tests/test_*; do [ -x "$t" ] && echo "unit/$(basename "$t") $t"; done
	for t in $(cli_scripts); do echo "cli/$(basename "$t" .sh) sh $t"; done
	;;
sanitize)
	# (intercept_tls_get_addr=0: tests/sanitize.sh says why)
	for t in build/asan/tests/test_*; do
		[ -x "$t" ] && echo "asan/$(basename "$t") env ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1 $t"
	done
	# libFuzzer targets, a few seconds each (make fuzz runs them longer)
	echo "fuzz sh tests/fuzz/run.sh ${KBENCH_FUZZ_SECONDS:-2}"
	for t in $(cli_scripts); do echo "asan-cli/$(basename "$t" .sh) sh tests/sanitize.sh asan $t"; done
	echo "valgrind/tui sh tests/sanitize.sh valgrind tests/cli/tui.sh"
	;;
*)
	echo "usage: run.sh [sanitize]" >&2
	exit 2
	;;
esac >"$list"

jobs=${KBENCH_TEST_JOBS:-}
if [ -z "$jobs" ]; then
	jobs=$(nproc 2>/dev/null || echo 2)
	env -u KBENCH_REMOTE KBENCH_NO_SHARED_RUNNER=1 build/kbench devices >/dev/null 2>&1 && jobs=1
fi
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: KBENCH_TEST_JOBS wants a positive count, not '$jobs'" >&2; exit 2 ;; esac

# The report, in the list's order, each program's as soon as it is done:
# in the background, so that the programs run in the foreground (an
# asynchronous list ignores SIGINT, and so would every test under it).
report() {
	passed=0 failed=0 skipped=0 reasons=""
	: >"$times.new"
	while read -r name cmd; do
		f=$logs/$(echo "$name" | tr '/' '_')
		while [ ! -f "$f.rc" ] && [ ! -f "$logs/.done" ] && kill -0 $$ 2>/dev/null; do sleep 0.2; done
		kill -0 $$ 2>/dev/null || exit 1   # interrupted
		read -r rc secs cpu 2>/dev/null <"$f.rc" || { rc=1 secs=0 cpu=0; echo "  FAIL $name: it never ended ($cmd)" >>"$f.log"; }
		echo "$name $secs $cpu" >>"$times.new"
		line=$(grep '^# passed=' "$f.log" | tail -1)
		p=$(echo "$line" | sed -n 's/.*passed=\([0-9]*\).*/\1/p')
		fl=$(echo "$line" | sed -n 's/.*failed=\([0-9]*\).*/\1/p')
		s=$(echo "$line" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p')
		if [ -z "$line" ]; then p=0; fl=1; s=0; fi   # crashed before reporting
		[ "$rc" -ne 0 ] && [ "${fl:-0}" -eq 0 ] && fl=1
		passed=$((passed + p)); failed=$((failed + fl)); skipped=$((skipped + s))
		if [ "$s" -gt 0 ]; then
			r=$(grep '^  SKIP' "$f.log" | head -1 | sed 's/^  SKIP [^:]*: //')
			case "$reasons" in *"$r"*) ;; *) reasons="${reasons:+$reasons; }$r" ;; esac
		fi
		if [ "$fl" -gt 0 ]; then
			echo "FAIL  $name ($secs s)"; grep -E '^  (FAIL|SKIP)|ERROR|runtime error|^Traceback|^[A-Za-z]*Error: ' "$f.log" | head -20
		else
			echo "PASS  $name ($secs s, $p passed${s:+, $s skipped})" | sed 's/, 0 skipped//'
		fi
	done <"$list"
	mv "$times.new" "$times"
	if [ "$skipped" -gt 0 ]; then
		echo "skipped: $reasons"
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ "$failed" -eq 0 ]
}
report &
report_pid=$!

# Start order: longest first by the last run's seconds; a program new since
# then before all others (the CLI scripts, sanitized or not, and the fuzz
# targets before the unit tests).  A worker killed from outside (xargs stops
# at a child killed by a signal) fails its program alone: sh -c '... || :'.
awk -v times="$times" 'BEGIN { while ((getline l < times) > 0) { split(l, a, " "); s[a[1]] = a[2] } }
	{ t = ($1 in s) ? s[$1] : ($1 ~ /^unit|^asan\// ? 50000 : 100000); printf "%.1f %d %s\n", t, NR, $0 }' "$list" |
	sort -k1,1nr -k2,2n | cut -d' ' -f3- | sed "s|^|$logs |" |
	xargs -P "$jobs" -L 1 sh -c 'sh "$0" --one "$@" || :' "$self"
: >"$logs/.done"
wait "$report_pid"
