#!/bin/sh
# unpack-dist.sh - the `make dist` tarball's programs into build/ (run from
# the repo root): where build/kbench is missing, or where build/ was itself
# unpacked from a tarball (its build/COMMIT, which `make dist` writes into
# the tarball, is there) older than this one.  A GPU machine kept warm
# between device calls still holds the last call's build/, which must not
# run in place of this call's tarball; a checkout's own build (no
# build/COMMIT) is never overwritten.
for t in build/dist*/kbench-*.tar.gz; do
	[ -f "$t" ] || continue
	if [ ! -x build/kbench ] || { [ -f build/COMMIT ] && [ -n "$(find "$t" -newer build/COMMIT)" ]; }; then
		tar xzf "$t" || exit 1
		touch build/COMMIT # as new as the tarball it came from
	fi
	exit 0 # the first only
done
