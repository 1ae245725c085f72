#!/bin/sh
# samename.sh - a file is its real path (issue 25, item 1): two files of one
# name in two folders, outside any repository, inside one repository, and
# in two repositories, never share a history; a commit lands only in the
# repository that holds its file; checkout writes only the file it names.
# Around every verb (compile, run, log, show, diff, checkout, label, note,
# export) every file's bytes and each repository's HEAD, index and branches
# are compared: only checkout may change one file, the one it names.
# Then a session recorded by 4627e7e (tests/fixtures/session/
# twofolders_4627e7e.tgz: a/k.cu and b/k.cu on one path of its private
# repository) still lists each file apart, and a name that fits both asks
# which, exit 2.
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
export GIT_CEILING_DIRECTORIES="$T_TMP"
K=$PWD/kernels/vector_add.cu
F=$PWD/tests/fixtures
git() { command git -c user.name=t -c user.email=t@t "$@"; }

# snap DIR OUT: every file's bytes under DIR and each repository's HEAD,
# index and branches (a repository's own objects and kbench's refs may grow).
snap() {
	{ (cd "$1" && find . -path '*/.git' -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum)
	  for g in $(cd "$1" && find . -name .git -type d | LC_ALL=C sort); do
		r="$1/${g%/.git}"
		echo "repo $g"; git -C "$r" rev-parse HEAD 2>&1; git -C "$r" symbolic-ref HEAD
		sha256sum < "$r/.git/index"; git -C "$r" for-each-ref refs/heads refs/tags
	  done; } > "$2"
}
# verb NAME WANT_RC CHANGED CMD...: runs CMD (stdout/stderr as run keeps
# them); the exit status is WANT_RC ("-": any) and nothing under $W changed
# but the file CHANGED ("-": none).
verb() {
	name=$1 want=$2 changed=$3; shift 3
	snap "$W" "$T_TMP/snap_before"
	run "$@"
	snap "$W" "$T_TMP/snap_after"
	[ "$want" = - ] || expect_rc "$name" "$want"
	diff "$T_TMP/snap_before" "$T_TMP/snap_after" | grep '^[<>]' | grep -v " \./$changed\$" > "$T_TMP/snap_diff"
	if [ -s "$T_TMP/snap_diff" ]; then
		fail "${name}_touches_nothing_else" "$(cat "$T_TMP/snap_diff")"
	else
		pass "${name}_touches_nothing_else"
	fi
	[ "$changed" = - ] || { diff -q "$T_TMP/snap_before" "$T_TMP/snap_after" >/dev/null \
		&& fail "${name}_wrote_$changed" "$changed unchanged" || pass "${name}_wrote_$changed"; }
}

# two_folders WHERE DIR_A DIR_B: the issue's steps, each file's own history.
two_folders() {
	where=$1 A=$2 B=$3
	ra=${A#"$W"/} rb=${B#"$W"/}
	mkdir -p "$A" "$B"; cp "$K" "$A/k.cu"; cp "$K" "$B/k.cu"; echo '// b' >> "$B/k.cu"
	for d in "$W" "$A" "$B"; do
		[ -d "$d/.git" ] && git -C "$d" add -A && git -C "$d" commit -qm "user's work"
	done
	run "$KB" session new "$where";                expect_rc "${where}_new" 0
	cd "$A"; verb "${where}_compile_a" 0 - "$KB" compile k.cu
	cd "$B"; verb "${where}_compile_b" 0 - "$KB" compile k.cu
	verb "${where}_run_b" - - "$KB" run k.cu
	verb "${where}_log_b" 0 - "$KB" log k.cu
	expect_in "${where}_log_b_v1" out "  v1 "; expect_not_in "${where}_log_b_only_v1" out "  v2 "
	verb "${where}_show_b" 0 - "$KB" show v1 --file k.cu
	expect_in "${where}_show_b_is_b" out "// b"
	cd "$A"; echo '// a two' >> k.cu
	verb "${where}_compile_a2" 0 - "$KB" compile k.cu
	verb "${where}_log_a" 0 - "$KB" log k.cu
	expect_in "${where}_log_a_v2" out "  v2 "; expect_not_in "${where}_log_a_no_v3" out "  v3 "
	verb "${where}_diff_a" 0 - "$KB" diff v1 v2 --file k.cu --source
	expect_in "${where}_diff_a_own" out "+// a two"; expect_not_in "${where}_diff_a_not_b" out "// b"
	cd "$W"
	verb "${where}_log_all" 0 - "$KB" log
	expect_in "${where}_log_shows_a" out "$(basename "$A")/k.cu  kernel"
	expect_in "${where}_log_shows_b" out "$(basename "$B")/k.cu  kernel"
	verb "${where}_name_asks" 2 - "$KB" show v1 --file k.cu
	expect_in "${where}_name_lists" err "$(basename "$A")/k.cu, $(basename "$B")/k.cu"
	verb "${where}_label_b" 0 - "$KB" label v1 bee --file "$rb/k.cu"
	verb "${where}_note_a" 0 - "$KB" note v1 "a's first" --file "$ra/k.cu"
	verb "${where}_label_a_show" 2 - "$KB" show bee --file "$ra/k.cu"
	echo '// a-edit' >> "$A/k.cu"; echo '// b-edit' >> "$B/k.cu"
	cd "$B"; verb "${where}_checkout_b" 0 "$rb/k.cu" "$KB" checkout v1 --file k.cu
	grep -q '// a-edit' "$A/k.cu" && pass "${where}_checkout_left_a" || fail "${where}_checkout_left_a" "a/k.cu lost its edit"
	cd "$W"
	verb "${where}_export" 0 - "$KB" session export "$where" -o "$T_TMP/export_$where"
	python3 - "$T_TMP/export_$where/manifest.json" "$(basename "$A")/k.cu" "$(basename "$B")/k.cu" <<-'EOF' \
		&& pass "${where}_export_two_files" || fail "${where}_export_two_files" "$(cat "$T_TMP/export_$where/manifest.json")"
	import json, sys
	m = json.load(open(sys.argv[1]))
	paths = {f["path"]: len(f["variants"]) for f in m["files"]}
	sys.exit(0 if paths == {sys.argv[2]: 2, sys.argv[3]: 2} else 1)
	EOF
	grep -rq "$T_TMP" "$T_TMP/export_$where" \
		&& fail "${where}_export_no_local_paths" "$(grep -rl "$T_TMP" "$T_TMP/export_$where")" \
		|| pass "${where}_export_no_local_paths"
	verb "${where}_report" 0 - "$KB" report "$where" -o "$T_TMP/report_$where.md"
	grep -q "$(basename "$A")/k.cu" "$T_TMP/report_$where.md" && grep -q "$(basename "$B")/k.cu" "$T_TMP/report_$where.md" \
		&& pass "${where}_report_names_both" || fail "${where}_report_names_both" "$(grep -n 'k.cu' "$T_TMP/report_$where.md" | head -5)"
}

# ---- outside any repository ----------------------------------------------------
W="$T_TMP/plain"; mkdir -p "$W"
two_folders plain "$W/a" "$W/b"
repo="$XDG_DATA_HOME/kbench/sessions/plain/repo"
git --git-dir="$repo" ls-tree -r --name-only refs/kbench/plain > "$T_TMP/tree"
[ "$(grep -c 'k\.cu$' "$T_TMP/tree")" = 2 ] && pass plain_two_paths || fail plain_two_paths "$(cat "$T_TMP/tree")"
# a link is the file it points at: one history, whichever name compiles it
cd "$W"; ln -s a/k.cu lk.cu
verb plain_link_compile 0 - "$KB" compile lk.cu
verb plain_link_log 0 - "$KB" log lk.cu
expect_in plain_link_is_a out "a/k.cu  kernel"; expect_in plain_link_v3 out "  v3 "
verb plain_link_one_file 0 - "$KB" log
[ "$(grep -c 'k\.cu  kernel' "$T_TMP/out")" = 2 ] && pass plain_link_two_files || fail plain_link_two_files "$(cat "$T_TMP/out")"
cd - >/dev/null

# ---- two folders of one repository ---------------------------------------------
W="$T_TMP/onerepo"; mkdir -p "$W"; git -C "$W" init -q -b main
two_folders onerepo "$W/a" "$W/b"
git -C "$W" ls-tree -r --name-only refs/kbench/onerepo > "$T_TMP/tree"
printf 'a/k.cu\nb/k.cu\n' | cmp -s - "$T_TMP/tree" && pass onerepo_tree || fail onerepo_tree "$(cat "$T_TMP/tree")"

# ---- a file in a repository, one outside it; then two repositories -------------
W="$T_TMP/mixed"; mkdir -p "$W/r" "$W/p"; git -C "$W/r" init -q -b main
two_folders mixed "$W/r" "$W/p"
git -C "$W/r" show refs/kbench/mixed:k.cu | grep -q '// b' && fail mixed_plain_not_in_repo "p/k.cu's text is in r's repository" \
	|| pass mixed_plain_not_in_repo
W="$T_TMP/tworepos"; mkdir -p "$W/x" "$W/y"; git -C "$W/x" init -q -b main; git -C "$W/y" init -q -b main
two_folders tworepos "$W/x" "$W/y"
nx=$(git -C "$W/x" rev-list --count refs/kbench/tworepos); ny=$(git -C "$W/y" rev-list --count refs/kbench/tworepos)
[ "$nx" = 2 ] && [ "$ny" = 2 ] && pass tworepos_each_its_own || fail tworepos_each_its_own "x has $nx commits, y $ny"
git -C "$W/x" log -p refs/kbench/tworepos | grep -q '^+// b' && fail tworepos_y_not_in_x "y's text in x" || pass tworepos_y_not_in_x

# ---- a session recorded by 4627e7e ---------------------------------------------
L="$T_TMP/legacy"; mkdir -p "$L"
tar xzf "$F/session/twofolders_4627e7e.tgz" -C "$L"
old=$(cat "$L/ROOT"); sd="$L/data/kbench/sessions/twofolders"
sed -i "s|$old|$L|g" "$sd/files.json" "$sd/journal.jsonl"
(
	T_PASSED=0 T_FAILED=0 T_SKIPPED=0
	export XDG_DATA_HOME="$L/data" KBENCH_SESSION=twofolders
	W="$L/work"; cd "$W"
	verb legacy_sessions 0 - "$KB" sessions;  expect_in legacy_sessions_files out "a/k.cu, b/k.cu"
	verb legacy_log 0 - "$KB" log
	expect_in legacy_log_a out "a/k.cu  kernel"; expect_in legacy_log_b out "b/k.cu  kernel"
	verb legacy_log_name 2 - "$KB" log k.cu;  expect_in legacy_log_name_lists err "a/k.cu, b/k.cu"
	for v in "show v1" "diff v1 v2 --source" "checkout v1" "label v1 x" "note v1 y"; do
		verb "legacy_asks_$(echo "$v" | cut -d' ' -f1)" 2 - "$KB" $v --file k.cu
	done
	expect_in legacy_asks_lists err "a/k.cu, b/k.cu"
	cd "$W/b"
	verb legacy_log_b 0 - "$KB" log k.cu
	expect_in legacy_b_v1 out "  v1 "; expect_not_in legacy_b_only out "  v2 "
	verb legacy_show_b 0 - "$KB" show v1 --file k.cu;  expect_in legacy_show_b_is_b out "// b"
	cd "$W/a"
	verb legacy_log_a 0 - "$KB" log k.cu
	expect_in legacy_a_v2 out "  v2 "; expect_not_in legacy_a_no_v3 out "  v3 "
	verb legacy_show_a 0 - "$KB" show v2 --file k.cu
	expect_in legacy_show_a_is_a out "// a two"; expect_not_in legacy_show_a_not_b out "// b"
	echo '// a-edit' >> k.cu; echo '// b-edit' >> "$W/b/k.cu"
	cd "$W/b"; verb legacy_checkout_b 0 b/k.cu "$KB" checkout v1 --file k.cu
	grep -q '// a-edit' "$W/a/k.cu" && pass legacy_checkout_left_a || fail legacy_checkout_left_a "a/k.cu lost its edit"
	cd "$W/a"; verb legacy_compile_a 0 - "$KB" compile k.cu
	verb legacy_log_a3 0 - "$KB" log k.cu; expect_in legacy_a_v3 out "  v3 "
	cd "$W/b"; verb legacy_log_b_still 0 - "$KB" log k.cu
	expect_in legacy_b_kept out "  v2 "; expect_not_in legacy_b_not_a out "  v3 "
	finish
) > "$T_TMP/legacy.log"
grep -v '^# passed' "$T_TMP/legacy.log"
eval "$(sed -n 's/^# passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\)$/lp=\1 lf=\2 ls=\3/p' "$T_TMP/legacy.log")"
T_PASSED=$((T_PASSED + ${lp:-0})); T_FAILED=$((T_FAILED + ${lf:-1})); T_SKIPPED=$((T_SKIPPED + ${ls:-0}))
finish
