#!/bin/sh
# gpu-mtclk.sh - issue 24: does collecting ncu's SM-clock counter (CLOCKS=1,
# as the every-file table does) slow the tensor-core .tile kernels that read
# ~3% slower under ncu than in kbench's loop?  ncu_gallery.sh over the wgmma
# kernels with gpu__time_duration alone (CLOCKS=0), then with the clock
# counter beside it (CLOCKS=1), nvidia-smi sampling the SM clock, the power
# and the clock-event reasons every 20 ms through both.  H200 15:50Z: the
# counter changes nothing (-2.9% and -3.8% without it), the power stays
# under 210 W with no cap reason, and ncu's cc=none reads the .tile kernels
# 2.2-3.0% faster than its cc=all (04_wgmma.cu: the same), kbench 0.7% under
# cc=none.  MTCLK=caches: what of ncu's cache control they feel: kbench's
# span programs with the instruction caches thrashed (I) or the TLBs swept
# (T) before each launch, or every L2 line discarded and the instruction
# caches thrashed (QI), beside ncu cc=all and cc=none (MTCLK_FILES and
# MTCLK_PROGS: other entries and programs, ncu_gallery.sh's PROGS).  Repo root, GPU,
# make-dist tarball unpacked.  Out: $OUT/mtclk.txt.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
F=${MTCLK_FILES:-"kernels/matmul/matmul.tile kernels/fused/matmul_bias_gelu.tile kernels/gemm/04_wgmma.cu"}
R="$OUT/mtclk.txt"
smi() { # smi TAG: sample until killed
	nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
		--format=csv,noheader -lms 20 | sed "s/^/$1, /" >>"$OUT/smi.csv" 2>/dev/null
}
if [ "${MTCLK:-}" = caches ]; then
	PROGS=${MTCLK_PROGS:-"default PFDIeFDWKe-FDIeFDWe PFDTeFDWKe-FDTeFDWe PQIeFDWKe-QIeFDWe"} NCU_NONE=1 REPS=3 \
		timeout 420 sh bench/ncu_gallery.sh $F 2>&1 | tee "$R"
	exit 0
fi
{
for c in 0 1; do
	echo "== CLOCKS=$c (ncu --metrics gpu__time_duration.sum$([ $c = 1 ] && echo ,sm__cycles_elapsed.avg.per_second))"
	smi "clocks$c" & SP=$!
	CLOCKS=$c REPS=3 NCU_NONE=$c timeout 200 sh bench/ncu_gallery.sh $F
	kill $SP 2>/dev/null; pkill -f "nvidia-smi --query-gpu=timestamp" 2>/dev/null
done
echo "== nvidia-smi over each phase: SM MHz min/median, power W max, clock-event reasons seen"
python3 - "$OUT/smi.csv" <<'PY'
import collections, statistics, sys
ph = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = [x.strip() for x in line.split(",")]
    if len(p) < 5: continue
    try: ph[p[0]].append((float(p[2].split()[0]), float(p[3].split()[0]), p[4]))
    except ValueError: pass
for k, v in ph.items():
    mhz = [a for a, _, _ in v]; w = [b for _, b, _ in v]
    rs = collections.Counter(r for _, _, r in v)
    print("%-8s n=%4d  MHz min %5.0f median %5.0f  W max %5.0f  reasons %s" % (k, len(v), min(mhz), statistics.median(mhz), max(w), dict(rs)))
PY
} 2>&1 | tee "$R"
