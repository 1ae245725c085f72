#!/bin/sh
# gpu-safety.sh - GPU evidence of issue 25 item 1 (a file is its real path):
# `kbench run` of k.cu in two folders outside git and in a git repository,
# one session; each file's log lists only its own variants, numbered from
# v1, each CORRECT; no file's bytes, HEAD, index or branches change but by
# checkout of the file it names.  Runs from the repo root of an unpacked
# `make dist` tree (builds nothing); about a minute.  Output: $OUT/safety.txt
# (every command and its output), then a table: check, ok/FAIL, detail.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
KB=$PWD/build/kbench
W=$(mktemp -d /tmp/kbench-safety.XXXXXX)
export XDG_DATA_HOME="$W/data" XDG_CACHE_HOME="$W/cache" GIT_CEILING_DIRECTORIES="$W"
unset KBENCH_NO_SESSION KBENCH_SESSION
LOG="$OUT/safety.txt"; TAB="$W/table"; : > "$TAB"
git() { command git -c user.name=t -c user.email=t@t "$@"; }
row() { printf '%-34s %-5s %s\n' "$1" "$2" "$3" >> "$TAB"; }
# k KB-ARGS...: runs kbench, logging the command and its output; status in $RC
k() { echo "\$ (cd ${PWD#"$W"/}) kbench $*" >> "$LOG"; "$KB" "$@" > "$W/o" 2>&1; RC=$?; cat "$W/o" >> "$LOG"; }
snap() { (cd "$W/work" && find . -path '*/.git' -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum
	git -C r rev-parse HEAD; sha256sum < r/.git/index; git -C r for-each-ref refs/heads) > "$1"; }

mkdir -p "$W/work/a" "$W/work/b" "$W/work/r"
for d in a b r; do cp kernels/vector_add.cu "$W/work/$d/k.cu"; echo "// $d" >> "$W/work/$d/k.cu"; done
git -C "$W/work/r" init -q -b main && git -C "$W/work/r" add -A && git -C "$W/work/r" commit -qm work
cd "$W/work"; k session new twofolders
snap "$W/s0"
for d in a b r; do
	cd "$W/work/$d"; k run k.cu --no-sweep --trials 3
	row "run $d/k.cu" "$([ $RC = 0 ] && echo ok || echo FAIL)" "exit $RC: $(grep -oE 'CORRECT|INCORRECT|NO GPU|FAULT' "$W/o" | head -1)"
done
cd "$W/work/a"; echo '// a two' >> k.cu; k run k.cu --no-sweep --trials 3
row "run a/k.cu edited" "$([ $RC = 0 ] && echo ok || echo FAIL)" "exit $RC"
snap "$W/s1"
n=$(diff "$W/s0" "$W/s1" | grep '^>' | grep -vc ' \./a/k\.cu$')
row "runs changed no other file/HEAD" "$([ "$n" = 0 ] && echo ok || echo FAIL)" "$n lines differ"
for d in a b r; do
	cd "$W/work/$d"; k log k.cu
	nv=$(grep -cE '^  v[0-9]+ ' "$W/o"); nc=$(grep -cE '^  v[0-9]+ .*CORRECT' "$W/o")
	want=$([ $d = a ] && echo 2 || echo 1)
	row "log $d/k.cu: own variants" "$([ "$nv" = "$want" ] && [ "$nc" = "$want" ] && echo ok || echo FAIL)" \
		"$nv variants ($want wanted), $nc CORRECT"
done
cd "$W/work"; k log k.cu
row "log k.cu from above: asks which" "$([ $RC = 2 ] && echo ok || echo FAIL)" "exit $RC: $(head -c 90 "$W/o")"
nr=$(git -C r rev-list --count refs/kbench/twofolders 2>/dev/null)
row "r's repository holds r's only" "$([ "$nr" = 1 ] && echo ok || echo FAIL)" "$nr commits on refs/kbench/twofolders"
np=$(git --git-dir="$W/data/kbench/sessions/twofolders/repo" ls-tree -r --name-only refs/kbench/twofolders 2>/dev/null | grep -c 'k\.cu$')
row "private repository: two paths" "$([ "$np" = 2 ] && echo ok || echo FAIL)" "$np paths"
echo '// b edit' >> b/k.cu; snap "$W/s2"
cd "$W/work/b"; k checkout v1 --file k.cu; snap "$W/s3"
n=$(diff "$W/s2" "$W/s3" | grep '^>' | grep -vc ' \./b/k\.cu$'); nb=$(diff "$W/s2" "$W/s3" | grep -c '^> .* \./b/k\.cu$')
row "checkout writes b/k.cu only" "$([ "$RC" = 0 ] && [ "$n" = 0 ] && [ "$nb" = 1 ] && echo ok || echo FAIL)" \
	"exit $RC, b changed $nb, others $n"
cd "$W/work"; k session export twofolders -o "$W/export"
row "export: a/k.cu and b/k.cu apart" "$(grep -q '"path": "a/k.cu"' "$W/export/manifest.json" && grep -q '"path": "b/k.cu"' "$W/export/manifest.json" && echo ok || echo FAIL)" "exit $RC"
cat "$TAB" >> "$LOG"
printf '%-34s %-5s %s\n' check result detail
cat "$TAB"
rm -rf "$W"
