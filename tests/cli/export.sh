#!/bin/sh
# export.sh - sessions as plain-text folders: a session of several files
# (with a label, a note and a Result-like note of floats) exported, imported
# into another store and exported again gives the same bytes; the folder
# alone (no store, no git refs) is read by log, show, report and replay; an
# export never overwrites a folder that is not one, and replaces an earlier
# one whole (written beside it, swapped in).
. tests/cli/lib.sh
unset KBENCH_NO_SESSION
export GIT_CEILING_DIRECTORIES="$T_TMP"
F=$PWD/tests/fixtures
W="$T_TMP/work"; mkdir -p "$W"
cp "$F/session/v1.cu" "$W/a.cu"; cp "$PWD/kernels/vector_add.cu" "$W/b.cu"
cd "$W"
run "$KB" session new exp;              expect_rc new 0
run "$KB" compile a.cu;                 expect_rc a1 0
run "$KB" compile b.cu;                 expect_rc b1 0
printf '// two\n' >> a.cu
run "$KB" compile a.cu;                 expect_rc a2 0
run "$KB" label v2 second --file a.cu;  expect_rc label 0
run "$KB" note v1 "the first; with | a bar" --file b.cu; expect_rc note 0
cd /   # exported from elsewhere: the session knows where its files are
run "$KB" session export exp -o "$T_TMP/one"; expect_rc export_rc 0
cd - >/dev/null
E="$T_TMP/one"
for f in manifest.json README.md journal.jsonl a.cu/v1.cu a.cu/v1.json a.cu/v2.cu b.cu/v1.cu; do
	[ -f "$E/$f" ] && pass "export_has_$f" || fail "export_has_$f" "$(cd "$E" && find . -type f)"
done
cmp -s "$E/a.cu/v2.cu" "$W/a.cu" && pass export_source_bytes || fail export_source_bytes "a.cu v2 differs"
cmp -s "$E/journal.jsonl" "$XDG_DATA_HOME/kbench/sessions/exp/journal.jsonl" && pass export_journal_bytes \
	|| fail export_journal_bytes "journal differs"
grep -q "$T_TMP" -r "$E" && fail export_no_local_paths "$(grep -rl "$T_TMP" "$E")" || pass export_no_local_paths
grep -q '| \[v2\](a.cu/v2.cu) second | twice | compiled |' "$E/README.md" && pass export_readme_table \
	|| fail export_readme_table "$(cat "$E/README.md")"

# round trip: import into another store, export again, byte for byte
(
	T_PASSED=0 T_FAILED=0 T_SKIPPED=0
	export XDG_DATA_HOME="$T_TMP/other"
	run "$KB" session import "$E";            expect_rc import_rc 0
	expect_in import_says_how_to_switch out "export KBENCH_SESSION="
	expect_in import_says out "session exp"
	run "$KB" session import "$E";            expect_rc import_twice_refused 2
	run "$KB" session export exp -o "$T_TMP/two"; expect_rc export_again_rc 0
	diff -r "$E" "$T_TMP/two" > "$T_TMP/rt.diff" && pass round_trip_byte_for_byte \
		|| fail round_trip_byte_for_byte "$(head -c 800 "$T_TMP/rt.diff")"
	run "$KB" log exp;                        expect_in imported_log_label out "  v2    second"
	finish
) > "$T_TMP/sub.log"
grep -v '^# passed' "$T_TMP/sub.log"
eval "$(sed -n 's/^# passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\)$/sp=\1 sf=\2 ss=\3/p' "$T_TMP/sub.log")"
T_PASSED=$((T_PASSED + ${sp:-0})); T_FAILED=$((T_FAILED + ${sf:-1})); T_SKIPPED=$((T_SKIPPED + ${ss:-0}))

# the folder alone, from another directory, with an empty store
(
	T_PASSED=0 T_FAILED=0 T_SKIPPED=0
	export XDG_DATA_HOME="$T_TMP/empty"
	cd /
	run "$KB" log "$E";                       expect_in folder_log_a out "a.cu  kernel twice"
	expect_in folder_log_b out "b.cu  kernel vector_add"
	run "$KB" report "$E" --file a.cu -o "$T_TMP/r.html"; expect_rc folder_report 0
	grep -q '<table' "$T_TMP/r.html" && pass folder_report_html || fail folder_report_html "no table"
	run "$KB" report "$E" -o "$T_TMP/r.md";   expect_rc folder_report_all_files 0
	expect_in folder_report_says_both out "(2 files)"
	[ "$(grep -c '^# kbench report: ' "$T_TMP/r.md")" = 2 ] && grep -q '^| *v2 ' "$T_TMP/r.md" \
		&& pass folder_report_two_parts || fail folder_report_two_parts "$(head -c 600 "$T_TMP/r.md")"
	if "$KB" devices >/dev/null 2>&1; then
		run "$KB" replay "$E" --file b.cu; expect_in folder_replay out "now on"
	else
		run "$KB" replay "$E" --file b.cu; expect_rc folder_replay_needs_gpu 3
		expect_in folder_replay_says err "replay re-runs each variant on a GPU"
	fi
	[ -z "$(ls "$XDG_DATA_HOME/kbench/sessions" 2>/dev/null)" ] && pass folder_leaves_store_alone \
		|| fail folder_leaves_store_alone "$(ls "$XDG_DATA_HOME/kbench/sessions")"
	finish
) > "$T_TMP/sub2.log"
grep -v '^# passed' "$T_TMP/sub2.log"
eval "$(sed -n 's/^# passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\)$/sp=\1 sf=\2 ss=\3/p' "$T_TMP/sub2.log")"
T_PASSED=$((T_PASSED + ${sp:-0})); T_FAILED=$((T_FAILED + ${sf:-1})); T_SKIPPED=$((T_SKIPPED + ${ss:-0}))

# an export never empties a folder that is not one
mkdir -p "$T_TMP/mine"; echo precious > "$T_TMP/mine/notes.txt"
run "$KB" session export exp -o "$T_TMP/mine"; expect_rc export_refuses_other 2
expect_in export_refusal_says err "holds no kbench export"
[ -f "$T_TMP/mine/notes.txt" ] && pass export_kept_user_file || fail export_kept_user_file "notes.txt gone"
run "$KB" session export exp -o "$E";          expect_rc export_replaces_own 0

# An export is written beside its folder (.new.NAME.PID) and swapped in
# whole, so a kill mid-way leaves the earlier export as it was, never half
# of each; the next export sweeps what a dead one left.  A link to a folder
# stays a link: the export goes where it points.
mkdir -p "$T_TMP/.new.one.999999999/a.cu"; echo partial >"$T_TMP/.new.one.999999999/README.md"
printf '// three\n' >> "$W/a.cu"; (cd "$W" && "$KB" compile a.cu >/dev/null 2>&1)
run "$KB" session export exp -o "$E";          expect_rc export_swap_rc 0
[ -f "$E/a.cu/v3.cu" ] && pass export_swap_new || fail export_swap_new "$(cd "$E" && find . -type f)"
ls -a "$T_TMP" | grep -q '^\.new\.' && fail export_swap_no_leftover "$(ls -a "$T_TMP")" || pass export_swap_no_leftover
# A folder from a pull request is untrusted: a manifest naming a file out
# of the folder ("../../secret", an absolute path, or a link inside the
# folder to elsewhere), or a journal that is such a link, is refused, and
# nothing of the file reaches a report.
echo "SECRET-OF-THE-READER" >"$T_TMP/secret.txt"
evil() { # NAME EDIT: a copy of the export, edited by EDIT (sh, in the copy)
	rm -rf "$T_TMP/$1"; cp -r "$E" "$T_TMP/$1"; (cd "$T_TMP/$1" && eval "$2")
	run "$KB" report "$T_TMP/$1" -o "$T_TMP/$1.md"
	[ "$RC" -ne 0 ] && pass "untrusted_$1_refused" || fail "untrusted_$1_refused" "exit 0: $(cat "$T_TMP/out")"
	grep -rq "SECRET-OF-THE-READER" "$T_TMP/$1.md" "$T_TMP/out" "$T_TMP/err" "$XDG_CACHE_HOME" 2>/dev/null \
		&& fail "untrusted_$1_not_read" "the secret reached the output" || pass "untrusted_$1_not_read"
}
manifest_source() { # the first variant's source becomes $1
	python3 -c "import json,sys; m=json.load(open('manifest.json')); m['files'][0]['variants'][0]['source']=sys.argv[1]; json.dump(m,open('manifest.json','w'))" "$1"
}
evil dotdot 'manifest_source ../secret.txt'
expect_in untrusted_says err "names '../secret.txt', which is not inside"
evil absolute "manifest_source $T_TMP/secret.txt"
evil inlink 'ln -sf "$T_TMP/secret.txt" a.cu/v1.cu'
evil journallink 'ln -sf "$T_TMP/secret.txt" journal.jsonl'
expect_in untrusted_journal_says err "journal.jsonl is a link out of the folder"
# a session with nothing recorded yet exports as an empty, whole folder
# (it sorted a NULL list: UBSan found it through the kill points)
run "$KB" session new empty-one;          expect_rc empty_new 0
run "$KB" session export empty-one -o "$T_TMP/empty-export"; expect_rc empty_export_rc 0
[ -f "$T_TMP/empty-export/manifest.json" ] && pass empty_export_manifest || fail empty_export_manifest "$(ls -a "$T_TMP/empty-export")"
run "$KB" log "$T_TMP/empty-export";      expect_rc empty_export_reads 0
# importing a session this store already has: refused, saying how to bring it in beside
run "$KB" session import "$E";            expect_rc import_existing_rc 2
expect_in import_existing_hint err "already exists (bring it in beside that one with \`kbench session import $E --name NEW\`)"
run "$KB" session import "$E" --name exp2; expect_rc import_existing_renamed 0
ln -s "$E" "$T_TMP/link"
run "$KB" session export exp -o "$T_TMP/link";  expect_rc export_link_rc 0
[ -L "$T_TMP/link" ] && [ -f "$E/manifest.json" ] && pass export_link_kept || fail export_link_kept "$(ls -la "$T_TMP")"
finish
