#!/bin/sh
# sanitize.sh asan|valgrind SCRIPT - runs one CLI test script (tests/cli/*.sh)
# with its programs watched, for tests/run.sh:
#   asan      kbench and kbench-tui from build/asan (ASan+UBSan, `make asan`),
#             and every kbench they start (the runner, a shared runner);
#   valgrind  kbench-tui under valgrind memcheck (build/kbench-tui; the
#             runner it starts is not traced).
# Every process writes its reports to a file of its own (under
# build/test-logs/sanitize/, kept), because the TUI's stderr is a tmux pane
# and a shared runner's is /dev/null.  Prints the script's output, one
# "  FAIL sanitizer: ..." case per report, and the script's closing line
# with those cases added.  Exits 1 on a failed case or a report.
cd "$(dirname "$0")/.." || exit 1
mode=$1 script=$2
dir=$PWD/build/test-logs/sanitize/$mode-$(basename "$script" .sh)
rm -rf "$dir" && mkdir -p "$dir"

case $mode in
asan)
	export KBENCH_BIN_DIR=$PWD/build/asan KBENCH_SANITIZE=asan
	# halt at the first error (UBSan too: -fno-sanitize-recover); every leak
	# counts (none of ncurses, libgit2 or libcurl showed: no suppressions)
	# (one runtime: the last log_path read wins, so both name the same)
	# intercept_tls_get_addr=0: clang 14's runtime (LLVM <= 16) takes a
	# dynamic TLS block (NVRTC's, nvJitLink's: dlopen'ed) that malloc put
	# 16 bytes into a page for glibc 2.19's header, reads the words before
	# it as the block's bounds, and LeakSanitizer's tracer then dies
	# scanning a range near 0 ("Tracer caught signal 11", pc in
	# ScanRangeForPointers; google/sanitizers#1322): CI's asan-cli/tile and
	# asan-cli/emu, one run in many.  Without it the blocks are still
	# scanned: they are heap chunks reached from the dtv, itself reached
	# from the thread's static TLS, so nothing they hold reads as a leak.
	export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:intercept_tls_get_addr=0:log_path=$dir/report:log_exe_name=1"
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$dir/report:log_exe_name=1"
	;;
valgrind)
	if ! command -v valgrind >/dev/null 2>&1; then
		echo "  SKIP valgrind: valgrind is not installed"
		echo "# passed=0 failed=0 skipped=1"
		exit 0
	fi
	# memory errors and definite leaks (what ncurses keeps till exit is
	# still reachable, not a leak: no suppressions needed) exit 97
	export TUI="valgrind --quiet --error-exitcode=97 --leak-check=full \
--errors-for-leak-kinds=definite --show-leak-kinds=definite \
--log-file=$dir/vg.%p $PWD/build/kbench-tui"
	# the TUI is 10-50 times slower: tui.sh waits 6 times longer for a screen
	export KBENCH_TUI_SLOW=6
	;;
*)
	echo "usage: sanitize.sh asan|valgrind SCRIPT" >&2
	exit 2
	;;
esac

sh "$script" >"$dir/out" 2>&1
rc=$?
grep -v '^# passed=' "$dir/out"
line=$(grep '^# passed=' "$dir/out" | tail -1)
p=$(echo "$line" | sed -n 's/.*passed=\([0-9]*\).*/\1/p')
f=$(echo "$line" | sed -n 's/.*failed=\([0-9]*\).*/\1/p')
s=$(echo "$line" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p')
[ -z "$line" ] && { p=0; f=1; s=0; echo "  FAIL $script: ended without its closing line (rc $rc)"; }

# One failed case per report: an ASan/UBSan/LSan file, or a valgrind log
# with anything in it (one per process; --quiet leaves a clean one empty).
# A report of only "Unable to get registers from thread N" is LeakSanitizer
# losing its process mid-check: a kill -9 that landed during the exit's leak
# scan (tests/cli/faults_kill.sh kills at random moments), not a finding.
for r in "$dir"/report.* "$dir"/vg.*; do
	[ -s "$r" ] || continue
	if ! grep -qv 'Unable to get registers from thread' "$r"; then
		echo "  note: $(basename "$r"): its leak check was cut short (killed at exit)"
		continue
	fi
	f=$((f + 1))
	what=$(grep -m1 -E 'ERROR|runtime error|definitely lost|Invalid|uninitialised' "$r")
	echo "  FAIL sanitizer: ${what:-$(head -1 "$r")} ($r)"
	grep -E '^ *#[0-9]+ |^==[0-9]+== +(at|by) ' "$r" | head -8 | sed 's/^/    /'
done
echo "# passed=${p:-0} failed=${f:-1} skipped=${s:-0}"
[ "$rc" -eq 0 ] && [ "${f:-1}" -eq 0 ]
