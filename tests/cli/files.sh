#!/bin/sh
# files.sh - a session of several kernel files: three files outside any
# repository, and three inside a git repository that has commits, a staged
# change and an untracked file.  Each file's log, show, diff, checkout and
# label see only its own variants with its own numbering; a verb that needs
# a file and has several candidates exits 2 naming them; commit messages say
# what each variant is; the user's HEAD, index and work tree are untouched.
# Then a session recorded by the previous release (tests/fixtures/session/
# legacy_session.tgz: two files on one ref) still lists, shows and reports.
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
export GIT_CEILING_DIRECTORIES="$T_TMP"
F=$PWD/tests/fixtures
git() { command git -c user.name=t -c user.email=t@t "$@"; }

# Three kernel files in dir $1, each with a marker line to tell them apart.
three_files() {
	cp "$F/session/v1.cu" "$1/a.cu"
	cp "$PWD/kernels/vector_add.cu" "$1/b.cu"
	cp "$F/kernels/copy.cu" "$1/c.cu"
}
mark() { printf '// %s\n' "$2" >> "$1"; }

# The scenario in dir $1 (cwd) for session $2; $3 names the place in output.
scenario() {
	dir=$1 sess=$2 where=$3
	cd "$dir"
	run "$KB" session new "$sess";  expect_rc "${where}_session_new" 0
	run "$KB" compile a.cu;         expect_rc "${where}_a1" 0
	run "$KB" compile b.cu;         expect_rc "${where}_b1" 0
	mark a.cu "a two";  run "$KB" compile a.cu; expect_rc "${where}_a2" 0
	run "$KB" compile c.cu;         expect_rc "${where}_c1" 0
	mark b.cu "b two";  run "$KB" compile b.cu; expect_rc "${where}_b2" 0
	mark b.cu "b three"; run "$KB" compile b.cu; expect_rc "${where}_b3" 0
	run "$KB" compile a.cu;         expect_rc "${where}_a_same" 0   # same text: no new variant

	run "$KB" log a.cu
	expect_in "${where}_log_a_v2" out "  v2 "; expect_not_in "${where}_log_a_no_v3" out "  v3 "
	expect_not_in "${where}_log_a_only_a" out "b.cu"
	run "$KB" log b.cu;  expect_in "${where}_log_b_v3" out "  v3 "
	run "$KB" log c.cu;  expect_in "${where}_log_c_v1" out "  v1 "
	expect_not_in "${where}_log_c_no_v2" out "  v2 "
	run "$KB" log;       expect_rc "${where}_log_all" 0
	n=$(grep -cE '^(a|b|c)\.cu  ' "$T_TMP/out")
	[ "$n" = 3 ] && pass "${where}_log_lists_each_file" || fail "${where}_log_lists_each_file" "$(cat "$T_TMP/out")"

	for verb in "show v2" "diff v1 v2" "checkout v1" "label v1 x" "note v1 y"; do
		run "$KB" $verb
		expect_rc "${where}_ambiguous_$(echo "$verb" | cut -d' ' -f1)" 2
	done
	expect_in "${where}_ambiguous_names_files" err "a.cu, b.cu, c.cu"
	expect_in "${where}_ambiguous_says_file" err "--file"
	run "$KB" replay "$sess" --only v1;          expect_rc "${where}_replay_only_ambiguous" 2
	run "$KB" report "$sess" -o "$T_TMP/r.html"; expect_rc "${where}_report_all_files" 0
	[ "$(grep -c '<html' "$T_TMP/r.html")" = 1 ] && [ "$(grep -c '</html>' "$T_TMP/r.html")" = 1 ] \
		&& [ "$(grep -c 'a.cu\|b.cu\|c.cu' "$T_TMP/r.html")" -ge 3 ] && pass "${where}_report_one_page" \
		|| fail "${where}_report_one_page" "$(grep -c '<html' "$T_TMP/r.html") pages"

	run "$KB" show v2 --file a.cu;  expect_in "${where}_show_a_v2" out "// a two"
	expect_not_in "${where}_show_a_v2_not_b" out "vector_add"
	run "$KB" show v3 --file a.cu;  expect_rc "${where}_show_a_v3_absent" 2
	run "$KB" show v3 --file b.cu;  expect_in "${where}_show_b_v3" out "// b three"
	run "$KB" diff v1 v3 --file b.cu --source
	expect_in "${where}_diff_b" out "+// b two"; expect_not_in "${where}_diff_b_not_a" out "a two"
	run "$KB" label v1 first-c --file c.cu;   expect_rc "${where}_label_c" 0
	run "$KB" show first-c --file c.cu;       expect_in "${where}_label_c_shows" out "copy4"
	run "$KB" show first-c --file a.cu;       expect_rc "${where}_label_not_a" 2
	run "$KB" report "$sess" --file b.cu -o "$T_TMP/rb.md"; expect_rc "${where}_report_b" 0
	grep -q '^| *v3 ' "$T_TMP/rb.md" && ! grep -q 'twice' "$T_TMP/rb.md" && pass "${where}_report_b_table" \
		|| fail "${where}_report_b_table" "$(head -c 600 "$T_TMP/rb.md")"
	cp b.cu "$T_TMP/b_before"
	run "$KB" checkout v1 --file a.cu;        expect_in "${where}_checkout_a" out "the text before is kept as v2"
	cmp -s a.cu "$F/session/v1.cu" && pass "${where}_checkout_wrote_a" || fail "${where}_checkout_wrote_a" "a.cu is not its v1"
	cmp -s b.cu "$T_TMP/b_before" && pass "${where}_checkout_left_b" || fail "${where}_checkout_left_b" "b.cu changed"
	cd - >/dev/null
}

# ---- outside any repository -------------------------------------------------
P="$T_TMP/plain"; mkdir -p "$P"; three_files "$P"
scenario "$P" plain plain
repo="$XDG_DATA_HOME/kbench/sessions/plain/repo"
git --git-dir="$repo" log --format=%s refs/kbench/plain > "$T_TMP/msgs"
grep -qE '^b\.cu v3: compiled: [0-9]+ regs, [0-9]+ B local, occupancy [0-9]+% \(' "$T_TMP/msgs" \
	&& grep -q '^a\.cu v1: ' "$T_TMP/msgs" && grep -q '^c\.cu v1: ' "$T_TMP/msgs" \
	&& pass plain_commit_messages || fail plain_commit_messages "$(cat "$T_TMP/msgs")"
git --git-dir="$repo" log -1 --format=%b refs/kbench/plain | grep -q '^kernel vector_add, sm_' \
	&& pass plain_message_body || fail plain_message_body "$(git --git-dir="$repo" log -1 --format=%B refs/kbench/plain)"

# from another directory the session still finds its files
(cd / && KBENCH_SESSION=plain "$KB" log > "$T_TMP/out" 2>&1)
expect_in plain_log_elsewhere out "  v3 "
(cd / && KBENCH_SESSION=plain "$KB" show v2 --file a.cu > "$T_TMP/out" 2>&1)
expect_in plain_show_elsewhere out "// a two"

# ---- inside a git repository with commits, a staged change, an untracked file -
R="$T_TMP/repo"; mkdir -p "$R/sub"
git -C "$R" init -q -b main; three_files "$R/sub"; echo "notes" > "$R/README"
git -C "$R" add . && git -C "$R" commit -qm "user's work"
echo "staged" >> "$R/README" && git -C "$R" add README
echo "untracked" > "$R/scratch.txt"
snapshot() { # HEAD, index bytes, status and the files kbench never writes
	{ git -C "$R" rev-parse HEAD; git -C "$R" symbolic-ref HEAD; sha256sum "$R/.git/index" | cut -d' ' -f1
	  git -C "$R" for-each-ref refs/heads refs/tags; cat "$R/README" "$R/scratch.txt"; } > "$1"
}
snapshot "$T_TMP/before"
scenario "$R/sub" inrepo repo
snapshot "$T_TMP/after"
cmp -s "$T_TMP/before" "$T_TMP/after" && pass repo_user_state_untouched \
	|| fail repo_user_state_untouched "$(diff "$T_TMP/before" "$T_TMP/after")"
git -C "$R" status --porcelain > "$T_TMP/status"
grep -q '^M  README' "$T_TMP/status" && grep -q '^?? scratch.txt' "$T_TMP/status" \
	&& pass repo_status_kept || fail repo_status_kept "$(cat "$T_TMP/status")"
git -C "$R" log --format=%s refs/kbench/inrepo | grep -q '^sub/b\.cu v3: compiled' \
	&& pass repo_commit_messages || fail repo_commit_messages "$(git -C "$R" log --format=%s refs/kbench/inrepo)"

# ---- a session recorded by the previous release -------------------------------
L="$T_TMP/legacy"; mkdir -p "$L"
tar xzf "$F/session/legacy_session.tgz" -C "$L"
(
	T_PASSED=0 T_FAILED=0 T_SKIPPED=0
	export XDG_DATA_HOME="$L/data" KBENCH_SESSION=legacy
	cd "$L/work"
	run "$KB" sessions;          expect_in legacy_sessions out "legacy"
	run "$KB" log
	expect_in legacy_log_a out "a.cu  kernel vector_add"; expect_in legacy_log_b out "b.cu  kernel copy4"
	run "$KB" log a.cu
	expect_in legacy_a_label_v2 out "  v2    second-a"; expect_not_in legacy_a_two out "  v3 "
	run "$KB" show v2 --file b.cu;   expect_in legacy_show_b_v2 out "// b v2"
	run "$KB" diff v1 v2 --file a.cu --source; expect_in legacy_diff_a out "(v2)"
	run "$KB" report legacy --file a.cu -o "$T_TMP/legacy.md"; expect_rc legacy_report 0
	grep -q '^| *v2 ' "$T_TMP/legacy.md" && pass legacy_report_table || fail legacy_report_table "$(head -c 600 "$T_TMP/legacy.md")"
	run "$KB" report legacy --file a.cu -o "$T_TMP/legacy.html"; expect_rc legacy_report_html 0
	finish
) > "$T_TMP/legacy.log"
cat "$T_TMP/legacy.log" | grep -v '^# passed'
eval "$(sed -n 's/^# passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\)$/lp=\1 lf=\2 ls=\3/p' "$T_TMP/legacy.log")"
T_PASSED=$((T_PASSED + ${lp:-0})); T_FAILED=$((T_FAILED + ${lf:-1})); T_SKIPPED=$((T_SKIPPED + ${ls:-0}))
finish
