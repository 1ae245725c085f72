#!/bin/sh
# gpu-ncu23.sh - why KernelBench's 23_softmax (a Python reference, served by
# a python3 child of kbench's runner) does not finish under ncu
# --target-processes all, and whether ncu's --target-processes-filter (not
# following the Python server) lets it: ncu's own help on the option, then
# bench/ncu_gallery.sh on the entry under each filter, 100 s each (issue 24).
# Out: $OUT/ncu23.txt.  Usage: OUT=DIR sh scripts/gpu-ncu23.sh (repo root)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
{
ncu --help | grep -A14 -- '--target-processes-filter' | head -30
E=kernels/kernelbench/23_softmax.cu@D=32768
for f in exclude-tree:python3 exclude:python3 kbench; do
	echo "== NCU_FILTER=$f"
	s=$(date +%s)
	NCU_FILTER=$f REPS=1 NCU_COUNT=20 CLOCKS=1 timeout 100 sh bench/ncu_gallery.sh $E; echo "rc $? in $(( $(date +%s) - s )) s"
done
echo "== python processes named"; ps -eo comm | grep -i py | sort | uniq -c
} 2>&1 | tee "$OUT/ncu23.txt"
