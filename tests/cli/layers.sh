#!/bin/sh
# layers.sh - src/'s layering holds (issue 26): no file includes a header
# of a folder above its own layer or beside it (tests/layers/order), and no
# two files call each other but the pairs tests/layers/rings.allow still
# lists (tests/layers/check.sh, on build/obj/src).  Then the check itself
# on copies: an upward include, an include within one rank, a folder the
# order file lacks, a name src/ lacks, a planted pair of files that call
# each other, three that call around a ring, an allowed pair or ring that
# is no more and an allow line without a reason each fail, naming what; a
# moved file's old object is ignored and a source without an object is
# said.  README.md's Layout names every folder once, bottom to top; a map
# missing a folder, naming one src/ lacks, or out of order fails.
. tests/cli/lib.sh
CHECK=tests/layers/check.sh
OBJ=build/obj/src

run sh $CHECK includes
expect_rc includes_hold 0
[ "$RC" -eq 0 ] || cat "$T_TMP/out"
if [ ! -d "$OBJ" ]; then
	fail rings_hold "no $OBJ: build first (make)"
else
	run sh $CHECK rings
	expect_rc rings_hold 0
	[ "$RC" -eq 0 ] || cat "$T_TMP/out"
fi

run sh $CHECK map
expect_rc map_matches_tree 0
[ "$RC" -eq 0 ] || cat "$T_TMP/out"
M=$T_TMP/README.md
grep -v '^src/tile/ ' README.md >"$M"
README=$M run sh $CHECK map
expect_rc map_missing_folder_fails 1
expect_in map_missing_folder_named out 'src/tile/ is on 0 lines'
{ cat README.md; echo 'src/gone/     a folder no more'; } >"$M"
README=$M run sh $CHECK map
expect_rc map_gone_folder_fails 1
expect_in map_gone_folder_named out 'names src/gone/, which src/ does not have'
awk '/^src\/core\// { core = $0; next } { print } /^src\/cli\// { print core }' README.md >"$M"
README=$M run sh $CHECK map
expect_rc map_out_of_order_fails 1
expect_in map_out_of_order_named out 'core after cli'
echo 'The timed loop is in src/measure/no_such_file.c.' >"$T_TMP/doc.md"
DOCS=$T_TMP/doc.md run sh $CHECK map
expect_rc map_stale_path_fails 1
expect_in map_stale_path_named out 'names src/measure/no_such_file.c, which is not there'

# ---- the include check on a copy of src/ --------------------------------
S=$T_TMP/src
cp -R src "$S"
echo '#include "../app/app.h"' >>"$S/core/err.c"
run sh $CHECK includes "$S"
expect_rc planted_upward_fails 1
expect_in planted_upward_names_file out 'src/core/err.c:'
expect_in planted_upward_says_why out 'app is a layer above core'
cp src/core/err.c "$S/core/err.c"

echo '#include "../session/session.h"' >>"$S/diff/diff.h"
run sh $CHECK includes "$S"
expect_rc planted_same_rank_fails 1
expect_in planted_same_rank_says_why out 'session and diff are one rank'
cp src/diff/diff.h "$S/diff/diff.h"

mkdir "$S/zz_new" && echo '#include "../core/kb.h"' >"$S/zz_new/time.c"
run sh $CHECK includes "$S"
expect_rc new_folder_fails 1
expect_in new_folder_named out 'src/zz_new/ is not in'
rm -r "$S/zz_new"

run sh $CHECK includes "$S"
expect_rc copy_holds 0
{ cat tests/layers/order; echo gone; } >"$T_TMP/order"
ORDER=$T_TMP/order run sh $CHECK includes "$S"
expect_rc gone_folder_fails 1
expect_in gone_folder_named out 'names gone'

# ---- the ring check on copies of src/ and the objects --------------------
if [ -d "$OBJ" ]; then
	O=$T_TMP/obj
	cp -R "$OBJ" "$O"
	printf 'int zz_ring_b(int);\nint zz_ring_a(int n) { return n ? zz_ring_b(n - 1) : 0; }\n' >"$S/core/zz_ring_a.c"
	printf 'int zz_ring_a(int);\nint zz_ring_b(int n) { return n ? zz_ring_a(n - 1) : 1; }\n' >"$S/core/zz_ring_b.c"
	${CC:-cc} -c "$S/core/zz_ring_a.c" -o "$O/core/zz_ring_a.o" &&
		${CC:-cc} -c "$S/core/zz_ring_b.c" -o "$O/core/zz_ring_b.o" && pass planted_ring_builds ||
		fail planted_ring_builds "${CC:-cc} -c failed"
	run sh $CHECK rings "$S" "$O"
	expect_rc planted_ring_fails 1
	expect_in planted_ring_named out 'src/core/zz_ring_a.c <-> src/core/zz_ring_b.c call each other'
	expect_in planted_ring_symbols_a out 'core/zz_ring_a.c -> core/zz_ring_b.c: zz_ring_b'
	expect_in planted_ring_symbols_b out 'core/zz_ring_b.c -> core/zz_ring_a.c: zz_ring_a'
	expect_not_in planted_ring_alone out 'no longer'

	{ cat tests/layers/rings.allow; echo 'core/zz_ring_b.c core/zz_ring_a.c planted by tests/cli/layers.sh'; } >"$T_TMP/allow"
	ALLOW=$T_TMP/allow run sh $CHECK rings "$S" "$O"
	expect_rc allowed_ring_passes 0

	# three files around a ring: a calls b calls c calls a, no pair
	for x in a:b b:c c:a; do
		f=${x%:*} g=${x#*:}
		printf 'int zz_three_%s(int);\nint zz_three_%s(int n) { return n ? zz_three_%s(n - 1) : 0; }\n' \
			"$g" "$f" "$g" >"$S/core/zz_three_$f.c"
		${CC:-cc} -c "$S/core/zz_three_$f.c" -o "$O/core/zz_three_$f.o" || fail planted_three_builds "${CC:-cc} -c failed"
	done
	ALLOW=$T_TMP/allow run sh $CHECK rings "$S" "$O"
	expect_rc planted_three_fails 1
	expect_in planted_three_named out '3 files call each other around a ring (not in'
	expect_in planted_three_files out 'core/zz_three_a.c core/zz_three_b.c core/zz_three_c.c'
	expect_in planted_three_calls out 'core/zz_three_c.c -> core/zz_three_a.c: zz_three_a'
	expect_not_in planted_three_no_pair out 'zz_three_a.c <->'
	{ cat "$T_TMP/allow"; echo 'core/zz_three_c.c core/zz_three_b.c core/zz_three_a.c planted'; } >"$T_TMP/allow3"
	ALLOW=$T_TMP/allow3 run sh $CHECK rings "$S" "$O"
	expect_rc allowed_three_passes 0

	rm "$S/core/zz_ring_a.c" "$S/core/zz_ring_b.c" "$S"/core/zz_three_*.c   # moved away: their objects stay
	run sh $CHECK rings "$S" "$O"
	expect_rc old_objects_ignored 0
	ALLOW=$T_TMP/allow3 run sh $CHECK rings "$S" "$O"
	expect_rc stale_allow_fails 1
	expect_in stale_allow_named out 'src/core/zz_ring_a.c and src/core/zz_ring_b.c no longer call each other'
	expect_in stale_ring_named out 'core/zz_three_a.c core/zz_three_b.c core/zz_three_c.c are no longer one ring'

	{ cat tests/layers/rings.allow; echo 'core/err.c core/file.c'; } >"$T_TMP/allow"
	ALLOW=$T_TMP/allow run sh $CHECK rings "$S" "$O"
	expect_rc allow_without_reason_fails 1
	expect_in allow_without_reason_said out 'wants two files or more and a reason'

	rm "$O/core/err.o"
	run sh $CHECK rings "$S" "$O"
	expect_rc missing_object_said 2
	expect_in missing_object_named out 'for src/core/err.c'
fi
finish
