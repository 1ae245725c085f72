# gpu-start.sh - sourced by a one-call GPU script from the repo root (after
# its `cd`): OUT made, the make-dist tarball's programs unpacked into
# build/ (nothing is built on the GPU machine), a cache of the call's own
# and no session recorded.  Usage: . scripts/gpu-start.sh
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/kc}" KBENCH_NO_SESSION=1
