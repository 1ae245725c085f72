#!/bin/sh
# fetch-npm.sh NAME VERSION SHA256 DEST PATH... - fetches an npm package's
# tarball with `npm pack` (no install scripts run), checks its SHA-256 and
# extracts the named paths into DEST with the leading package/ stripped.
set -eu
name=$1 version=$2 sum=$3 dest=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "NPM   $name@$version"
(cd "$tmp" && npm pack --silent "$name@$version" >/dev/null 2>npm.log) || {
	cat "$tmp/npm.log" >&2; echo "fetch-npm: npm pack $name@$version failed" >&2; exit 1; }
tgz=$(ls "$tmp"/*.tgz)
got=$(sha256sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$sum" ]; then
	echo "fetch-npm: $name@$version sha256 $got, expected $sum" >&2
	exit 1
fi
mkdir -p "$dest"
tar xzf "$tgz" -C "$tmp" "$@"
for p in "$@"; do
	rel=${p#package/}
	# vendor/tree-sitter/lib -> lib
	case $rel in vendor/tree-sitter/lib) rel=lib ;; esac
	mkdir -p "$dest/$(dirname "$rel")"
	rm -rf "$dest/$rel"
	cp -R "$tmp/$p" "$dest/$rel"
done
