#!/bin/sh
# check.sh includes|rings|map [SRC [OBJ]] - the rules of src/'s layering
# (issue 26), for tests/cli/layers.sh (make test) and by hand:
#   includes  every src/ folder is on a line of tests/layers/order (bottom
#             to top, one rank a line), and no file of src/ includes a
#             header ("../x/y.h" or "x/y.h") of a folder on its own line or
#             a line below (a layer above, or one beside it);
#   rings     no two src/ files call each other, nor three or more
#             around a ring: from the built objects (OBJ/dir/name.o of each
#             SRC/dir/name.c, `nm`), file A calls B when a symbol A leaves
#             undefined is defined in B.  Each pair that does is printed
#             with the symbols each way; then, each pair taken as one node,
#             each ring of more (a strongly connected set) with the calls
#             that close it.  One listed in tests/layers/rings.allow (with
#             its reason) passes, and a listed one that is no more fails,
#             so that the list only shrinks.
#   map       README.md's Layout names every src/ folder once, as a line
#             "src/NAME/ what it holds", in the order of tests/layers/order
#             (bottom to top), and no folder src/ lacks (README in the
#             environment names another file); and every src/DIR/FILE path
#             that README.md or docs/*.md (DOCS) names is there.
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
		if [ -f "$o" ]; then
			objs="$objs $o"
		else
			echo "no object $o for src/$rel: build first (make; a new folder goes in the Makefile's LIB_DIRS)"
			missing=$((missing + 1))
		fi
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
	function find(x) { while ((x in par) && par[x] != x) x = par[x]; return x }
	{ k = $1 SUBSEP $2; syms[k] = syms[k] " " $3; file[$1]; file[$2] }
	END {
		# The allow file: "A B reason" (a pair), "A B C... reason" (a ring).
		while ((getline line < allow) > 0) {
			ln++
			l = line; sub(/#.*/, "", l)
			m = split(l, w)
			if (m == 0) continue
			for (nf = 0; nf < m && w[nf + 1] ~ /\.c$/; nf++) fs[nf + 1] = w[nf + 1]
			if (nf < 2 || m == nf) { printf "%s:%d: \"%s\": wants two files or more and a reason\n", allow, ln, line; bad++; continue }
			if (nf == 2) {
				a = fs[1]; b = fs[2]; if (b < a) { t = a; a = b; b = t }
				allowed[a SUBSEP b] = ln; nallowed++
			} else {
				delete set
				for (i = 1; i <= nf; i++) set[fs[i]] = 1
				n = sorted(set, keys); key = ""
				for (i = 1; i <= n; i++) key = key (i > 1 ? " " : "") keys[i]
				ring_allowed[key] = ln; nallowed++
			}
		}
		# Pairs: A calls B and B calls A.
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
		# Rings of three files or more (A calls B calls C calls A): each
		# pair taken as one node, a ring is a strongly connected set of
		# nodes, given as its files.
		for (k in mutual) { split(k, ab, SUBSEP); ra = find(ab[1]); rb = find(ab[2]); if (ra != rb) par[ra] = rb }
		ng = 0
		for (f in file) { g = find(f); if (!(g in isg)) { isg[g] = 1; gl[++ng] = g } }
		for (k in syms) {
			split(k, ab, SUBSEP); ga = find(ab[1]); gb = find(ab[2])
			if (ga != gb && !((ga SUBSEP gb) in cadj)) { cadj[ga SUBSEP gb] = 1; out[ga] = out[ga] " " gb }
		}
		for (i = 1; i <= ng; i++) {   # reach[s, v]: s calls v, through any files
			s = gl[i]; qh = 1; qt = 1; q[1] = s
			while (qh <= qt) {
				v = q[qh++]; nn = split(out[v], nb, " ")
				for (j = 1; j <= nn; j++) if (!((s SUBSEP nb[j]) in reach)) { reach[s SUBSEP nb[j]] = 1; q[++qt] = nb[j] }
			}
		}
		nr = 0
		for (i = 1; i <= ng; i++) {
			g = gl[i]
			if ((g in ringed) || !((g SUBSEP g) in reach)) continue
			delete set
			for (j = 1; j <= ng; j++) { h = gl[j]; if ((g SUBSEP h) in reach && (h SUBSEP g) in reach) ringed[h] = g }
			for (f in file) if (find(f) in ringed && ringed[find(f)] == g) set[f] = 1
			n = sorted(set, keys); key = ""
			for (j = 1; j <= n; j++) key = key (j > 1 ? " " : "") keys[j]
			ring[++nr] = key
		}
		delete set
		for (i = 1; i <= nr; i++) set[ring[i]] = 1
		nr = sorted(set, rkeys)
		for (i = 1; i <= nr; i++) {
			key = rkeys[i]
			if (key in ring_allowed) { ring_seen[key] = 1; continue }
			n = split(key, rf, " ")
			printf "%d files call each other around a ring (not in %s): %s\n", n, allow, key
			delete set
			for (j = 1; j <= n; j++) set[rf[j]] = 1
			for (j = 1; j <= n; j++) for (m = 1; m <= n; m++)
				if ((rf[j] SUBSEP rf[m]) in syms && find(rf[j]) != find(rf[m]))
					printf "    %s -> %s:%s\n", rf[j], rf[m], syms[rf[j] SUBSEP rf[m]]
			bad++
		}
		na = sorted(ring_allowed, keys)
		for (i = 1; i <= na; i++) if (!(keys[i] in ring_seen)) {
			printf "%s:%d: %s are no longer one ring: remove the line (or list the ring they are now)\n", allow, ring_allowed[keys[i]], keys[i]
			bad++
		}
		printf "rings: %d pairs of files call each other and %d rings of more, %d allowed in %s: %s\n", np, nr, nallowed, allow, bad ? bad " problem(s)" : "no other"
		exit bad ? 1 : 0
	}'
	;;
map)
	readme=${README:-README.md}
	folders=$(cd "$src" && for d in */; do [ -d "$d" ] && echo "${d%/}"; done)
	mapped=$(sed -n 's|^src/\([a-z_]*\)/ .*|\1|p' "$readme")
	bad=0
	for d in $folders; do
		n=$(echo "$mapped" | grep -cx "$d")
		[ "$n" -eq 1 ] || { echo "$readme: src/$d/ is on $n lines of the Layout (once, saying what it holds)"; bad=$((bad + 1)); }
	done
	for d in $mapped; do
		echo "$folders" | grep -qx "$d" || { echo "$readme: the Layout names src/$d/, which src/ does not have"; bad=$((bad + 1)); }
	done
	# ranks never go down along the Layout (folders of one rank in any order)
	late=$(echo "$mapped" | awk -v order="$order" '
		BEGIN { while ((getline l < order) > 0) if (l !~ /^#/ && l ~ /[a-z]/) { r++; n = split(l, f, " "); for (i = 1; i <= n; i++) rank[f[i]] = r } }
		($0 in rank) { if (rank[$0] < top) print $0 " after " last; if (rank[$0] > top) { top = rank[$0]; last = $0 } }')
	[ -z "$late" ] || { echo "$readme: the Layout is not in $order's order (bottom to top): $(echo "$late" | tr '\n' ' ')"; bad=$((bad + 1)); }
	for f in $(grep -ohE 'src/[a-z_]+/[a-z_0-9]+\.(c|h|py)' "$readme" ${DOCS:-docs/*.md} | sort -u); do
		[ -e "$src/${f#src/}" ] || { echo "$(grep -l "$f" "$readme" ${DOCS:-docs/*.md} | head -1): names $f, which is not there"; bad=$((bad + 1)); }
	done
	echo "map: $(echo "$folders" | wc -l) folders, $(echo "$mapped" | wc -l) lines in $readme's Layout: ${bad} problem(s)"
	[ "$bad" -eq 0 ]
	exit $?
	;;
*)
	echo "usage: check.sh includes|rings|map [SRC [OBJ]]" >&2
	exit 2
	;;
esac
