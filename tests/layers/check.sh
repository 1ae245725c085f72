#!/bin/sh
# check.sh includes|rings [SRC [OBJ]] - the two rules of src/'s layering
# (issue 26), for tests/cli/layers.sh (make test) and by hand:
#   includes  every src/ folder is on a line of tests/layers/order (bottom
#             to top, one rank a line), and no file of src/ includes a
#             header ("../x/y.h" or "x/y.h") of a folder on its own line or
#             a line below (a layer above, or one beside it);
#   rings     no two src/ files call each other: from the built objects
#             (OBJ/dir/name.o of each SRC/dir/name.c, `nm`), file A calls
#             B when a symbol A leaves undefined is defined in B.  Each
#             pair that does is printed with the symbols each way; a pair
#             listed in tests/layers/rings.allow (with its reason) passes,
#             and a listed pair that no longer calls each other fails, so
#             that the list only shrinks.
# SRC defaults to src, OBJ to build/obj/src (make builds it); ORDER and
# ALLOW in the environment name other order and allow files (the self-test
# in tests/cli/layers.sh plants an upward include and a ring in copies).
# Prints one line per problem and a last line saying what was checked;
# exits 0 when clean, 1 on any problem, 2 when it cannot check.
here=$(dirname "$0")
what=${1:-}
src=${2:-src}
obj=${3:-build/obj/src}
order=${ORDER:-$here/order}
allow=${ALLOW:-$here/rings.allow}
[ -d "$src" ] || { echo "check.sh: no source folder $src" >&2; exit 2; }

case $what in
includes)
	[ -f "$order" ] || { echo "check.sh: no order file $order" >&2; exit 2; }
	folders=$(cd "$src" && for d in */; do [ -d "$d" ] && echo "${d%/}"; done)
	files=$(find "$src" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
	# The folders first (one "/FOLDER" record each), then every file's
	# lines: awk reads the folder list from stdin ("-"), the files after it.
	echo "$folders" | sed 's|^|/|' | awk -v order="$order" -v src="$src/" '
	BEGIN {
		while ((getline line < order) > 0) {
			ln++
			sub(/#.*/, "", line)
			n = split(line, w, /[ \t]+/)
			ranked = 0
			for (i = 1; i <= n; i++) {
				if (w[i] == "") continue
				if (w[i] in rank) {
					printf "%s:%d: %s is named twice\n", order, ln, w[i]; bad++
				}
				rank[w[i]] = rank_n + 1; at[w[i]] = ln; ranked = 1
			}
			rank_n += ranked
		}
		if (rank_n == 0) { printf "%s: names no folder\n", order; bad++ }
	}
	FILENAME == "-" {
		f = substr($0, 2); have[f] = 1; nf++
		if (!(f in rank)) {
			printf "src/%s/ is not in %s: add it on the line of its layer (bottom to top)\n", f, order
			bad++
		}
		next
	}
	FNR == 1 && !checked_names {
		checked_names = 1
		for (f in rank) if (!(f in have)) {
			printf "%s:%d: names %s, which %s does not have: remove it\n", order, at[f], f, src
			bad++
		}
	}
	/^[ \t]*#[ \t]*include[ \t]*"/ {
		p = $0; sub(/^[^"]*"/, "", p); sub(/".*/, "", p)
		if (p !~ /\//) next                  # a header of its own folder
		sub(/^(\.\.\/)+/, "", p)
		to = p; sub(/\/.*/, "", to)
		rel = substr(FILENAME, length(src) + 1); from = rel; sub(/\/.*/, "", from)
		nincl++
		if (to == from) next
		if (!(to in rank)) {
			printf "src/%s:%d: includes \"%s\": folder %s is not in %s\n", rel, FNR, p, to, order
			bad++
		} else if (!(from in rank)) {
			next                             # said once above, by folder
		} else if (rank[to] > rank[from]) {
			printf "src/%s:%d: includes \"%s\": %s is a layer above %s (%s)\n", rel, FNR, p, to, from, order
			bad++
		} else if (rank[to] == rank[from]) {
			printf "src/%s:%d: includes \"%s\": %s and %s are one rank (line %d of %s): neither may include the other\n", \
				rel, FNR, p, to, from, at[from], order
			bad++
		}
	}
	END {
		printf "includes: %d folders in %d ranks, %d cross-file includes: %s\n", nf, rank_n, nincl, bad ? bad " problem(s)" : "each one down a layer"
		exit bad ? 1 : 0
	}' - $files
	;;
rings)
	[ -f "$allow" ] || { echo "check.sh: no allow file $allow" >&2; exit 2; }
	command -v nm >/dev/null 2>&1 || { echo "check.sh: nm (binutils) is not installed" >&2; exit 2; }
	# Only the objects of today's sources: a moved or deleted file's old
	# object may still lie in OBJ.
	objs= missing=0
	for c in "$src"/*/*.c; do
		[ -f "$c" ] || continue
		rel=${c#"$src"/}
		o=$obj/${rel%.c}.o
		if [ -f "$o" ]; then objs="$objs $o"; else echo "no object $o for src/$rel: build first (make)"; missing=$((missing + 1)); fi
	done
	[ "$missing" -eq 0 ] || exit 2
	[ -n "$objs" ] || { echo "check.sh: no sources in $src" >&2; exit 2; }
	# "A B SYMBOL" for each symbol file A uses that file B defines (GNU nm:
	# an upper-case type is global, U undefined).
	# shellcheck disable=SC2086
	nm -P -A $objs | awk -v obj="$obj/" '
	{
		f = $1; sub(/:$/, "", f); f = substr(f, length(obj) + 1); sub(/\.o$/, ".c", f)
		if ($3 == "U") { u[++nu] = f; us[nu] = $2 }
		else if ($3 ~ /^[TDBRGSCVW]$/) owner[$2] = f
	}
	END { for (i = 1; i <= nu; i++) if ((us[i] in owner) && owner[us[i]] != u[i]) print u[i], owner[us[i]], us[i] }' |
	LC_ALL=C sort -u | awk -v allow="$allow" '
	function sorted(arr, keys,   i, j, n, t) {   # the indices of arr, sorted, into keys[1..n]
		n = 0
		for (t in arr) keys[++n] = t
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && keys[j - 1] > keys[j]; j--) { t = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = t }
		return n
	}
	{ k = $1 SUBSEP $2; syms[k] = syms[k] " " $3 }
	END {
		while ((getline line < allow) > 0) {
			ln++
			l = line; sub(/#.*/, "", l)
			m = split(l, w)
			if (m == 0) continue
			if (m < 3) { printf "%s:%d: \"%s\": wants two files and a reason\n", allow, ln, line; bad++; continue }
			a = w[1]; b = w[2]; if (b < a) { t = a; a = b; b = t }
			allowed[a SUBSEP b] = ln; nallowed++
		}
		for (k in syms) {
			split(k, ab, SUBSEP)
			if (ab[1] < ab[2] && ((ab[2] SUBSEP ab[1]) in syms)) mutual[k] = 1
		}
		np = sorted(mutual, keys)
		for (i = 1; i <= np; i++) {
			k = keys[i]; split(k, ab, SUBSEP); a = ab[1]; b = ab[2]
			if (k in allowed) { seen[k] = 1; continue }
			printf "src/%s <-> src/%s call each other (not in %s):\n", a, b, allow
			printf "    %s -> %s:%s\n", a, b, syms[a SUBSEP b]
			printf "    %s -> %s:%s\n", b, a, syms[b SUBSEP a]
			bad++
		}
		na = sorted(allowed, keys)
		for (i = 1; i <= na; i++) if (!(keys[i] in seen)) {
			split(keys[i], ab, SUBSEP)
			printf "%s:%d: src/%s and src/%s no longer call each other: remove the line\n", allow, allowed[keys[i]], ab[1], ab[2]
			bad++
		}
		printf "rings: %d pairs of files call each other, %d allowed in %s: %s\n", np, nallowed, allow, bad ? bad " problem(s)" : "no other"
		exit bad ? 1 : 0
	}'
	;;
*)
	echo "usage: check.sh includes|rings [SRC [OBJ]]" >&2
	exit 2
	;;
esac
