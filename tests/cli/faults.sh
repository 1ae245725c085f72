#!/bin/sh
# faults.sh - kbench under faults (docs/faults.md); each is the real fault
# where this machine allows it, else skipped with the reason:
#  - a full disk (a 1 MiB tmpfs as XDG_DATA_HOME) and a read-only session
#    directory (a read-only bind mount): a compile still works and says, naming
#    the repository, that it was not recorded; no partial commit; the earlier
#    variants are intact, git fsck is clean, and once there is room the next
#    compile records;
#  - a damaged compile-cache entry (truncated, one byte changed): detected,
#    compiled again, the same bytes as before;
#  - notes that are not JSON: log, show and report work and name the variant;
#  - a kill between a file's first commit and its journal line: log lists it;
#  - a damaged line in the middle of the journal: log lists every variant
#    and names the line;
#  - a half-made private repository (git init killed mid-way) and a building
#    folder of a dead process: the compile records, the half one is kept aside;
#  - a runner that breaks the protocol (tests/faults/bad_runner.py, the remote
#    command through tests/faults/fake_ssh.sh) or a shell banner before it:
#    RUNNER ERROR / UNREACHABLE saying what came, at once; one that stops
#    talking: DISCONNECTED after the silence limit;
#  - a remote connection that stalls (the loopback sshd of lib_sshd.sh, its
#    session stopped with SIGSTOP mid-request): DISCONNECTED within ssh's
#    keep-alive bound, and the next request reconnects.
# An LLM endpoint that stalls mid-stream is tests/cli/llm.sh (stall_*); the
# kill -9 points are tests/cli/faults_kill.sh.
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
S=$PWD/tests/fixtures/session
FAULTS=$PWD/tests/faults
MOUNTS=""
on_exit() {
	for m in $MOUNTS; do umount "$m" 2>/dev/null; done
	[ -n "${SSHD_PID:-}" ] && kill "$SSHD_PID" 2>/dev/null
	pkill -f "serve --listen $T_TMP/" 2>/dev/null
	[ -n "${T_KEEP:-}" ] || rm -rf "$T_TMP"
}
trap on_exit EXIT
W=$T_TMP/work
mkdir -p "$W"

ROOT=$PWD
# in_w CMD...: run (lib.sh) CMD in the work folder, whose kernels are in no repository
in_w() { cd "$W" && run "$@"; cd "$ROOT" || exit 1; }
fsck_clean() { # NAME GITDIR
	if git --git-dir="$2" fsck --strict --no-dangling >"$T_TMP/fsck" 2>&1; then pass "$1"
	else fail "$1" "$(head -c 400 "$T_TMP/fsck")"; fi
}
count_is() { # NAME GITDIR REF N
	n=$(git --git-dir="$2" rev-list --count "$3" 2>/dev/null || echo none)
	[ "$n" = "$4" ] && pass "$1" || fail "$1" "$3 has $n commits, expected $4"
}

# ---- a full disk, a read-only session directory ----------------------------

# record_two SESSION: a session with v1 and v2 of k.cu
record_two() {
	cp "$S/v1.cu" "$W/k.cu"; in_w "$KB" session new "$1"; in_w "$KB" compile k.cu
	cp "$S/v2.cu" "$W/k.cu"; in_w "$KB" compile k.cu
}
# not_recorded PREFIX SESSION-DIR WHY: v3 compiles, is not recorded, and
# nothing of it is left; once writable, v3 records
not_recorded() {
	cp "$S/v3.cu" "$W/k.cu"; in_w "$KB" compile k.cu
	expect_rc "$1_compile_still_works" 0
	expect_in "$1_says_not_recorded" err "warning: not recorded in the session: $2/repo:"
	expect_in "$1_says_why" err "$3"
	in_w "$KB" label v1 best
	expect_rc "$1_label_rc" 3
	expect_in "$1_label_says_why" err "$3"
	in_w "$KB" log
	expect_rc "$1_log_rc" 0
	expect_in "$1_log_v2" out "  v2 "; expect_not_in "$1_log_no_v3" out "  v3 "
}
recorded_after() { # PREFIX SESSION-DIR: sound, and the next compile records v3
	fsck_clean "$1_fsck_clean" "$2/repo"
	count_is "$1_no_partial_commit" "$2/repo" "refs/kbench/$(basename "$2")" 2
	in_w "$KB" compile k.cu
	expect_rc "$1_next_compile" 0
	expect_not_in "$1_next_recorded" err "not recorded"
	in_w "$KB" log; expect_in "$1_log_v3" out "  v3 "
}

FULL=$T_TMP/full
mkdir -p "$FULL"
if mount -t tmpfs -o size=1m tmpfs "$FULL" 2>"$T_TMP/err"; then
	MOUNTS="$FULL"
	export XDG_DATA_HOME="$FULL"
	record_two full
	dd if=/dev/zero of="$FULL/fill" bs=4k >/dev/null 2>&1 # until the disk is full
	not_recorded enospc "$FULL/kbench/sessions/full" "No space left on device"
	rm -f "$FULL/fill"
	recorded_after enospc "$FULL/kbench/sessions/full"
	export XDG_DATA_HOME="$T_TMP/data"
else
	for c in compile_still_works says_not_recorded says_why label_rc label_says_why log_rc log_v2 \
		 log_no_v3 fsck_clean no_partial_commit next_compile next_recorded log_v3; do
		skip "enospc_$c" "mount -t tmpfs refused here ($(head -c 80 "$T_TMP/err")): no small disk to fill"
	done
fi

RO=$XDG_DATA_HOME/kbench/sessions/ro
record_two ro
if mount --bind "$RO" "$RO" 2>"$T_TMP/err" && mount -o remount,bind,ro "$RO" 2>>"$T_TMP/err"; then
	MOUNTS="$MOUNTS $RO"
	not_recorded readonly "$RO" "Read-only file system"
	umount "$RO"
	recorded_after readonly "$RO"
else
	umount "$RO" 2>/dev/null
	for c in compile_still_works says_not_recorded says_why label_rc label_says_why log_rc log_v2 \
		 log_no_v3 fsck_clean no_partial_commit next_compile next_recorded log_v3; do
		skip "readonly_$c" "a read-only bind mount is refused here ($(head -c 80 "$T_TMP/err"))"
	done
fi

# ---- a damaged compile-cache entry -------------------------------------------

{ cat "$S/v2.cu"; echo "// the cache case: a text no other case compiles"; } >"$W/cache.cu"
in_w env KBENCH_NO_SESSION=1 "$KB" compile cache.cu --json
cp "$T_TMP/out" "$T_TMP/first.json"
expect_json cache_first_is_a_miss "not j['build']['cache_hit']"
key=$(python3 -c "import json; print(json.load(open('$T_TMP/first.json'))['build']['cache_key'])")
E=$XDG_CACHE_HOME/kbench/compile/$(echo "$key" | cut -c1-2)/$(echo "$key" | cut -c3-)
# the same bytes again: every sum but the log's (ptxas writes its compile time there)
same_bytes() { grep -v ' out.log$' "$E/ok" | cmp -s - "$T_TMP/sums.before"; }
grep -v ' out.log$' "$E/ok" >"$T_TMP/sums.before"
(cd "$E" && sha256sum -c --quiet ok) && pass cache_sums_check || fail cache_sums_check "$(cat "$E/ok")"
truncate -s 100 "$E/out.cubin"
in_w env KBENCH_NO_SESSION=1 "$KB" compile cache.cu
expect_in cache_truncated_detected out "cache miss: a damaged entry, compiled again"
same_bytes && pass cache_rewritten_same_bytes \
	|| fail cache_rewritten_same_bytes "$(diff "$T_TMP/sums.before" "$E/ok")"
in_w env KBENCH_NO_SESSION=1 "$KB" compile cache.cu
expect_in cache_hit_after out "cache hit"
printf 'X' | dd of="$E/out.ptx" bs=1 seek=40 conv=notrunc 2>/dev/null # one byte changed
in_w env KBENCH_NO_SESSION=1 "$KB" compile cache.cu --json
expect_json cache_flipped_detected "j['build']['cache_damaged'] and not j['build']['cache_hit']"
expect_json cache_same_result "j['kernel'] == json.load(open('$T_TMP/first.json'))['kernel']"
same_bytes && pass cache_flip_same_bytes || fail cache_flip_same_bytes "$(diff "$T_TMP/sums.before" "$E/ok")"

# ---- notes that are not JSON -----------------------------------------------------

cp "$S/v1.cu" "$W/k.cu"; in_w "$KB" session new notes; in_w "$KB" compile k.cu
for v in v2 v3; do cp "$S/$v.cu" "$W/k.cu"; in_w "$KB" compile k.cu; done
G="git --git-dir=$XDG_DATA_HOME/kbench/sessions/notes/repo"
v2=$($G rev-parse refs/kbench/notes~1)
$G notes --ref=kbench add -f -m 'garbage {{{ not json' "$v2" 2>/dev/null
printf '\000\377 binary' >"$T_TMP/bin" && $G notes --ref=kbench add -f -F "$T_TMP/bin" refs/kbench/notes~2 2>/dev/null
in_w "$KB" log
expect_rc notes_log_rc 0
expect_in notes_log_names_v2 out "v2: its note (refs/notes/kbench on $(echo "$v2" | cut -c1-10)) is not a JSON object: \"garbage {{{ not json"
expect_in notes_log_verdict out "BAD NOTE"
grep -Eq '^  v3 +compiled ' "$T_TMP/out" && pass notes_log_v3_fine || fail notes_log_v3_fine "$(cat "$T_TMP/out")"
in_w "$KB" show v2
expect_rc notes_show_rc 0
expect_in notes_show_names out "v2: its note"
in_w "$KB" report notes -o "$T_TMP/notes.md"
expect_rc notes_report_rc 0
grep -q '| v2 |.*BAD NOTE' "$T_TMP/notes.md" && pass notes_report_row || fail notes_report_row "$(grep '| v2 |' "$T_TMP/notes.md")"
in_w "$KB" label v2 mended
expect_rc notes_label_mends 0
in_w "$KB" log
expect_not_in notes_mended out "v2: its note"

# ---- a kill between a file's first commit and its journal line ------------------

cp "$S/v1.cu" "$W/first.cu"; in_w "$KB" session new unjournaled; in_w "$KB" compile first.cu
J=$XDG_DATA_HOME/kbench/sessions/unjournaled/journal.jsonl
grep -v '"event":"compile"' "$J" >"$T_TMP/j" ; cp "$T_TMP/j" "$J"  # as if killed before the line
in_w "$KB" log unjournaled
expect_in unjournaled_listed out "  v1 "
in_w "$KB" show v1
expect_rc unjournaled_show 0

# ---- a damaged journal line in the middle (a hand edit, a bad disk) ------------
# The variants are in git and the journal is their index: log lists them
# all and names the line; report and export work.  (A damaged middle line
# used to make the journal unreadable, and `kbench log` printed nothing,
# exit 0.)
cp "$S/v2.cu" "$W/first.cu"; in_w "$KB" compile first.cu
printf 'garbage\n' >>"$J"
cp "$S/v3.cu" "$W/first.cu"; in_w "$KB" compile first.cu
in_w "$KB" log unjournaled
expect_rc damaged_journal_log 0
[ "$(grep -c '^  v[0-9]' "$T_TMP/out")" = 3 ] && pass damaged_journal_all_listed || fail damaged_journal_all_listed "$(cat "$T_TMP/out")"
expect_in damaged_journal_named out "journal.jsonl:$(grep -n '^garbage$' "$J" | cut -d: -f1): not an event, passed over: garbage"
in_w "$KB" report unjournaled -o "$T_TMP/damaged.md"
expect_rc damaged_journal_report 0
in_w "$KB" session export unjournaled -o "$T_TMP/damaged-export"
expect_rc damaged_journal_export 0

# ---- a kill while the private repository was being made --------------------------
# The repository is built under .new.repo-N.PID and renamed into place, so a
# kill leaves that folder (swept once its process is gone), never a half
# repo/; one an older kbench left (git init killed after a few files) is
# moved aside, not deleted, and a whole one takes its place.

in_w "$KB" session new halfrepo
SD=$XDG_DATA_HOME/kbench/sessions/halfrepo
mkdir -p "$SD/.new.repo.999999999/objects" "$SD/repo/objects/info" "$SD/repo/refs"
echo "[core]" >"$SD/repo/config"   # no HEAD: what `git init` killed early leaves
cp "$S/v1.cu" "$W/half.cu"; in_w "$KB" compile half.cu
expect_rc halfrepo_compile 0
in_w "$KB" log halfrepo
expect_in halfrepo_listed out "  v1 "
fsck_clean halfrepo_fsck "$SD/repo"
count_is halfrepo_commit "$SD/repo" refs/kbench/halfrepo 1
ls -d "$SD"/repo.damaged-* >/dev/null 2>&1 && pass halfrepo_kept_aside || fail halfrepo_kept_aside "$(ls -a "$SD")"
[ -d "$SD/.new.repo.999999999" ] && fail halfrepo_stale_swept "$(ls -a "$SD")" || pass halfrepo_stale_swept
cp "$S/v2.cu" "$W/half.cu"; in_w "$KB" compile half.cu
count_is halfrepo_next_commit "$SD/repo" refs/kbench/halfrepo 2
ls -a "$SD" | grep -q '^\.new\.' && fail halfrepo_no_building_left "$(ls -a "$SD")" || pass halfrepo_no_building_left

# ---- a runner that breaks the protocol ---------------------------------------------

cp "$S/v3.cu" "$W/r.cu"
# The silence limit counts from the start too: bad_runner.py must answer
# hello within it (2 s was too short for a python start on a loaded machine:
# UNREACHABLE instead of DISCONNECTED).
SILENCE=6
bad() { # MODE: `kbench run --remote` whose runner is bad_runner.py in MODE
	t0=$(date +%s.%N)
	in_w env KBENCH_SSH="$FAULTS/fake_ssh.sh" KBENCH_REMOTE_CMD="$FAULTS/bad_runner.py" \
		KBENCH_BAD_RUNNER="$1" KBENCH_TEST_SILENCE=$SILENCE timeout 60 "$KB" run r.cu --remote box --no-sweep
	SECS=$(echo "$t0 $(date +%s.%N)" | awk '{printf "%d", $2 - $1}')
}
for m in garbage notjson notype; do
	bad $m
	expect_rc "runner_${m}_rc" 3
	expect_in "runner_${m}_says" out "RUNNER ERROR"
	[ "$SECS" -lt $SILENCE ] && pass "runner_${m}_at_once" || fail "runner_${m}_at_once" "$SECS s"
done
expect_in runner_shows_what_came out '"{"status":"ok"}"'
for m in half silent; do
	bad $m
	expect_rc "runner_${m}_rc" 3
	expect_in "runner_${m}_disconnected" out "DISCONNECTED the connection to box was lost (no answer from the runner for $SILENCE s"
	[ "$SECS" -ge $SILENCE ] && [ "$SECS" -lt $((SILENCE + 10)) ] && pass "runner_${m}_bounded" || fail "runner_${m}_bounded" "$SECS s"
done
in_w env KBENCH_SSH="$FAULTS/fake_ssh.sh" KBENCH_REMOTE_CMD="echo 'Welcome to gpu-box!'; exec $KB serve" \
	timeout 60 "$KB" run r.cu --remote box --no-sweep
expect_rc runner_banner_rc 3
expect_in runner_banner_says out 'UNREACHABLE no runner answered on box (the runner'"'"'s output is not the kbench protocol'
# the banner, and maybe the runner's first frame too when both came in one read
expect_in runner_banner_shows out 'it began "Welcome to gpu-box!\x0a'

# ---- a remote connection that stalls ---------------------------------------------------

. tests/cli/lib_sshd.sh
trap on_exit EXIT
if [ -n "${SSHD_PID:-}" ]; then
	for i in $(seq 50); do ssh -F "$D/ssh_config" kbtest true 2>/dev/null && break; sleep 0.1; done
	: >"$D/stall/file" && chmod 666 "$D/stall/file"
	export KBENCH_SSH="ssh -F $D/ssh_config"
	export KBENCH_REMOTE_CMD="env CUDA_VISIBLE_DEVICES= KBENCH_TEST_STALL=$D/stall/file $KB serve"
	t0=$(date +%s)
	"$KB" run kernels/vector_add.cu --remote kbtest --no-sweep >"$T_TMP/stall_out" 2>&1 &
	client=$!
	for i in $(seq 300); do [ -s "$D/stall/file" ] && break; sleep 0.1; done
	# the sshd serving the remote runner: its first ancestor named sshd
	p=$(cut -d' ' -f2 "$D/stall/file"); sess=
	for i in 1 2 3 4 5 6; do
		case $(cut -d' ' -f2 /proc/"$p"/stat 2>/dev/null) in "(sshd"*) sess=$p; break ;; esac
		p=$(cut -d' ' -f4 /proc/"$p"/stat 2>/dev/null || echo 1)
	done
	[ -n "$sess" ] && kill -STOP "$sess"
	wait $client; rc=$?; secs=$(($(date +%s) - t0))
	[ -n "$sess" ] && kill -9 "$sess" 2>/dev/null
	rm -f "$D/stall/file"
	[ -n "$sess" ] && pass stall_sshd_stopped || fail stall_sshd_stopped "no sshd above the runner"
	[ "$rc" = 3 ] && pass stall_rc || fail stall_rc "exit $rc: $(cat "$T_TMP/stall_out")"
	grep -q "DISCONNECTED the connection to kbtest was lost" "$T_TMP/stall_out" && pass stall_disconnected \
		|| fail stall_disconnected "$(cat "$T_TMP/stall_out")"
	# ssh's keep-alives: 3 unanswered, 5 s apart
	[ "$secs" -lt 40 ] && pass stall_bounded || fail stall_bounded "$secs s"
	run "$KB" run kernels/vector_add.cu --remote kbtest --no-sweep
	expect_rc stall_next_reconnects 3
	expect_in stall_next_answers out "NO GPU"
else
	for c in sshd_stopped rc disconnected bounded next_reconnects next_answers; do
		skip "stall_$c" "no openssh-server here (make deps installs it)"
	done
fi
finish
