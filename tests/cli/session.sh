#!/bin/sh
# session.sh - a scripted tuning session in a real git repository: compile
# v1, edit, v2, an edit that does not compile (kept out of this session: a
# COMPILE ERROR variant, compile.sh), v3.  Exactly three variant
# commits (with notes) on refs/kbench/<session>, and the user's HEAD, index
# and working tree untouched byte for byte; log, show, diff, checkout; a
# kill -9 in the middle of a session loses no committed variant; two
# writers at once lose none either.
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
S=$PWD/tests/fixtures/session
R="$T_TMP/repo"
git() { command git -C "$R" -c user.name=t -c user.email=t@t "$@"; }

mkdir -p "$R/sub" && git init -q -b main
cp "$S/v1.cu" "$R/sub/k.cu"; echo "notes" > "$R/README"
git add . && git commit -qm "user's work"
echo "staged" >> "$R/README" && git add README       # a staged change
echo "unstaged" > "$R/scratch.txt"                    # an untracked file
snapshot() { # HEAD, index bytes, status, every file but the kernel
	{ git rev-parse HEAD; git symbolic-ref HEAD; sha256sum "$R/.git/index" | cut -d' ' -f1
	  git status --porcelain --untracked-files=all | grep -v 'sub/k.cu'
	  cat "$R/README" "$R/scratch.txt"; } > "$1"
}
snapshot "$T_TMP/before"

cd "$R"
run "$KB" session new scripted;      expect_rc session_new 0
run "$KB" compile sub/k.cu;          expect_rc v1_compiles 0
cp "$S/v2.cu" sub/k.cu
run "$KB" compile sub/k.cu;          expect_rc v2_compiles 0
cp "$S/broken.cu" sub/k.cu
run env KBENCH_NO_SESSION=1 "$KB" compile sub/k.cu; expect_rc broken_fails 1
cp "$S/v3.cu" sub/k.cu
run "$KB" compile sub/k.cu;          expect_rc v3_compiles 0
run "$KB" compile sub/k.cu;          expect_rc same_text_again 0
cd - >/dev/null

n=$(git rev-list --count refs/kbench/scripted)
[ "$n" = 3 ] && pass three_variant_commits || fail three_variant_commits "$n commits on refs/kbench/scripted"
notes=0
for c in $(git rev-list refs/kbench/scripted); do git notes --ref=kbench show "$c" | grep -q '"compile"' && notes=$((notes + 1)); done
[ "$notes" = 3 ] && pass three_notes || fail three_notes "$notes notes"
git log --oneline refs/kbench/scripted > "$T_TMP/gitlog" && pass plain_git_log || fail plain_git_log "git log failed"
snapshot "$T_TMP/after"
cmp -s "$T_TMP/before" "$T_TMP/after" && pass user_state_untouched || fail user_state_untouched "$(diff "$T_TMP/before" "$T_TMP/after")"
cmp -s "$R/sub/k.cu" "$S/v3.cu" && pass file_untouched || fail file_untouched "kbench changed the file"

cd "$R"
run "$KB" log sub/k.cu
expect_in log_v1 out "v1"; expect_in log_v3 out "v3"; expect_not_in log_no_v4 out "v4"
run "$KB" show v2;                   expect_in show_v2 out "(v2: a comment)"
run "$KB" diff v1 v3 --source
expect_in diff_source out "+		float4 v = *reinterpret_cast<const float4 *>(x + i); /* one 128-bit load */"
if command -v nvdisasm >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvdisasm" ]; then
	run "$KB" diff v1 v3 --sass
	expect_in diff_sass_ldg out "LDG.E.128"
	cp "$T_TMP/out" "$T_TMP/sassdiff"
	changed=$(grep -cE '^[-+][^-+]' "$T_TMP/sassdiff")
	[ "$changed" -le 12 ] && pass diff_sass_small || fail diff_sass_small "$changed changed lines: $(cat "$T_TMP/sassdiff")"
	[ -n "${KB_SASS_DIFF_OUT:-}" ] && cp "$T_TMP/sassdiff" "$KB_SASS_DIFF_OUT"
else
	skip diff_sass_ldg "no nvdisasm on PATH or in the toolkit (SASS diffs run where it exists)"
	skip diff_sass_small "no nvdisasm"
fi
run "$KB" report scripted -o "$T_TMP/r.md"; expect_rc report_md 0
grep -q '^| *v3 ' "$T_TMP/r.md" && grep -q 'twice' "$T_TMP/r.md" && pass report_md_table \
	|| fail report_md_table "$(head -c 600 "$T_TMP/r.md")"
run "$KB" report scripted -o "$T_TMP/r.html"; expect_rc report_html 0
grep -q '<table' "$T_TMP/r.html" && ! grep -q -e 'http' -e '<script' "$T_TMP/r.html" && pass report_html_selfcontained \
	|| fail report_html_selfcontained "not one self-contained page"
run "$KB" label v3 wide-loads;       expect_rc label_rc 0
run "$KB" show wide-loads;           expect_in show_by_label out "one 128-bit load"
run "$KB" note v3 four loads become one LDG.E.128; expect_rc note_rc 0
git notes --ref=kbench show refs/kbench/scripted | grep -q '"label":"wide-loads"' && pass label_in_git_note \
	|| fail label_in_git_note "$(git notes --ref=kbench show refs/kbench/scripted)"
# notes and labels are read back: show and log display them (they were written only)
run "$KB" show v3;                   expect_in show_label out "  label  wide-loads"
expect_in show_note out "  note   four loads become one LDG.E.128"
run "$KB" log sub/k.cu;              expect_in log_note out "  v3 note: four loads become one LDG.E.128"
# a label names one variant: given to another, it moves, saying from which
run "$KB" label v2 wide-loads;       expect_in label_moves out "v2: label wide-loads (moved from v3"
run "$KB" show wide-loads;           expect_in label_moved_show out "k.cu v2  commit"
run "$KB" log sub/k.cu
[ "$(grep -c 'wide-loads' "$T_TMP/out")" = 1 ] && pass label_once || fail label_once "$(cat "$T_TMP/out")"
run "$KB" label v3 wide-loads;       expect_in label_moves_back out "(moved from v2"
# a label that reads as a variant's name would be shadowed by it (v2 is
# variant 2 wherever vN is taken); one with a newline breaks every table
run "$KB" label v1 v2;               expect_rc label_like_variant_rc 2
expect_in label_like_variant_says err "label 'v2': it reads as a variant's name"
run "$KB" label v1 "two
lines";                              expect_rc label_newline_rc 2
expect_in label_newline_says err "control character"
run "$KB" label v3 "";               expect_rc label_empty_rc 2      # was a NULL dereference (139)
expect_in label_empty_says err "label '': it is empty"
run "$KB" note v3 "";                expect_rc note_empty_rc 2
expect_in note_empty_says err "note '': it is empty"
run "$KB" report scripted -o "$T_TMP/no/such/dir/r.md"; expect_rc report_missing_dir_rc 2
expect_in report_missing_dir_names err "cannot write $T_TMP/no/such/dir/r.md: No such file or directory"
# what the user named is not there, or not valid: a usage error (2), saying what
run "$KB" show v99;                  expect_rc show_v99_rc 2
expect_in show_v99_says err "no variant 'v99'"
cp "$S/v1.cu" "$T_TMP/other.cu"
run "$KB" show v1 --file "$T_TMP/other.cu"; expect_rc show_other_file_rc 2
expect_in show_other_file_names err "$T_TMP/other.cu is not a file of session scripted (its files: k.cu)"
run "$KB" session new "a/b";         expect_rc session_bad_name_rc 2
run "$KB" session new scripted;      expect_rc session_exists_rc 2
expect_in session_exists_says err "exists"
run "$KB" report scripted -o "$T_TMP/r.txt"; expect_rc report_txt_rc 2
expect_in report_txt_says err "a report is Markdown (FILE.md) or HTML (FILE.html)"
[ -e "$T_TMP/r.txt" ] && fail report_txt_not_written "r.txt written" || pass report_txt_not_written
(XDG_DATA_HOME="$T_TMP/fresh" "$KB" log >"$T_TMP/out" 2>"$T_TMP/err"); RC=$?
expect_rc fresh_log_rc 0;            expect_in fresh_log_says out "no session yet"
[ -e "$T_TMP/fresh/kbench/sessions" ] && fail fresh_log_creates_nothing "$(ls -R "$T_TMP/fresh")" \
	|| pass fresh_log_creates_nothing
(XDG_DATA_HOME="$T_TMP/fresh" "$KB" show v1 >"$T_TMP/out" 2>"$T_TMP/err"); RC=$?
expect_rc fresh_show_rc 2;           expect_in fresh_show_says err "no session yet"
[ -e "$T_TMP/fresh/kbench/sessions" ] && fail fresh_show_creates_nothing "$(ls -R "$T_TMP/fresh")" \
	|| pass fresh_show_creates_nothing
run "$KB" checkout v1;               expect_rc checkout_rc 0
cmp -s sub/k.cu "$S/v1.cu" && pass checkout_writes_v1 || fail checkout_writes_v1 "file is not v1"
run "$KB" sessions;                  expect_in sessions_lists out "scripted"
cd - >/dev/null

# kill -9 in the middle of a session: every committed variant and the
# journal survive.
cd "$R"
"$KB" session new killed >/dev/null
( i=0; while [ $i -lt 40 ]; do echo "// edit $i" >> sub/k.cu; "$KB" compile sub/k.cu >/dev/null 2>&1; i=$((i + 1)); done ) &
loop=$!
# the kill lands in a later compile, once two are committed (a fixed 2 s
# could pass before the first on a loaded machine, or under ASan)
i=0; while [ $i -lt 600 ] && [ "$(git rev-list --count refs/kbench/killed 2>/dev/null || echo 0)" -lt 2 ]; do
	sleep 0.1; i=$((i + 1))
done
kill -9 $loop 2>/dev/null; pkill -9 -f "kbench compile sub/k.cu" 2>/dev/null; wait 2>/dev/null
run "$KB" log killed;                expect_rc log_after_kill 0
cd - >/dev/null
journal="$XDG_DATA_HOME/kbench/sessions/killed/journal.jsonl"
made=$(grep -c '"variant"' "$journal" 2>/dev/null || echo 0)
have=$(git rev-list --count refs/kbench/killed 2>/dev/null || echo 0)
# A compile killed between its commit and its journal line leaves one more
# commit than journal lines; never fewer.
[ "$have" -ge "$made" ] && [ "$have" -le $((made + 1)) ] && [ "$have" -gt 0 ] && pass kill9_variants_kept \
	|| fail kill9_variants_kept "journal says $made variants, the ref has $have"
git fsck --no-dangling >/dev/null 2>&1 && pass kill9_repo_sound || fail kill9_repo_sound "git fsck failed"

# Two writers on one session at once (the TUI on one file and `kbench run`
# on another, or `kbench optimize` beside manual runs): every compile is
# recorded.  The ref moves only from the tip a commit was built on, so the
# loser of a race builds its commit again on the new tip (it used to warn
# "not recorded in the session: old reference value does not match", or
# failed on the lock of refs/notes/kbench: 2-11 of 40 compiles lost in 3 of
# 4 runs here), and both files' names are in files.json (each writer wrote
# the map without the other's name).
cd "$R"
"$KB" session new two >/dev/null
writer() { # NAME: 20 compiles of NAME.cu, each a new text
	i=0
	while [ $i -lt 20 ]; do
		{ cat "$S/v1.cu"; echo "// $1 $i"; } >"$1.cu"
		"$KB" compile "$1.cu" --no-sass >/dev/null 2>>"$T_TMP/two.err"
		i=$((i + 1))
	done
}
writer wa & a=$!; writer wb & b=$!; wait $a $b
for f in wa wb; do
	n=$(git log --oneline refs/kbench/two -- "$f.cu" | wc -l)
	[ "$n" -eq 20 ] && pass "two_writers_all_$f" || fail "two_writers_all_$f" "$n of 20 on the ref; $(head -3 "$T_TMP/two.err")"
done
grep -q "not recorded" "$T_TMP/two.err" && fail two_writers_no_warning "$(grep -m2 'not recorded' "$T_TMP/two.err")" \
	|| pass two_writers_no_warning
python3 -c "import json,sys; m=json.load(open(sys.argv[1])); sys.exit(0 if 'wa.cu' in m and 'wb.cu' in m else 1)" \
	"$XDG_DATA_HOME/kbench/sessions/two/files.json" && pass two_writers_both_named \
	|| fail two_writers_both_named "$(cat "$XDG_DATA_HOME/kbench/sessions/two/files.json")"
run "$KB" log two;                   expect_rc two_writers_log 0
[ "$(grep -c '^  v[0-9]' "$T_TMP/out")" -eq 40 ] && pass two_writers_listed || fail two_writers_listed "$(cat "$T_TMP/out")"
rm -f wa.cu wb.cu
# Eight files' first compiles at once: files.json (a file's name -> its
# path, how a command run elsewhere finds it) gets every name.  Without its
# lock each writer rewrote the map without the others' names: 2-4 of 8 left.
"$KB" session new eight >/dev/null
mkdir -p "$T_TMP/eight" && cd "$T_TMP/eight"
for i in 1 2 3 4 5 6 7 8; do cp "$S/v1.cu" "f$i.cu"; done
"$KB" compile f1.cu --no-sass >/dev/null 2>&1 # the session's repository made
for i in 2 3 4 5 6 7 8; do "$KB" compile "f$i.cu" --no-sass >/dev/null 2>&1 & done; wait
n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$XDG_DATA_HOME/kbench/sessions/eight/files.json")
[ "$n" = 8 ] && pass eight_writers_named || fail eight_writers_named "files.json holds $n of 8 names"
cd /
run "$KB" log eight
[ "$(grep -c '^  v1 ' "$T_TMP/out")" = 8 ] && pass eight_writers_listed_elsewhere \
	|| fail eight_writers_listed_elsewhere "$(cat "$T_TMP/out")"
cd - >/dev/null
finish
