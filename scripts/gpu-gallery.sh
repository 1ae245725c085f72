#!/bin/sh
# gpu-gallery.sh - issue 13's GPU work in device calls that fit 10 minutes:
#   part a: the gallery's tuning paths recorded and exported (sessions.tgz,
#           gallery-notes.tgz) and a few long-row configurations;
#   part b: bench/gallery.py (every kernel at every size beside PyTorch).
# Usage: scripts/gpu-gallery.sh a|b (repo root, GPU machine, make dist tarball
# under build/dist*/).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -x build/kbench ] || tar xzf build/dist*/kbench-*.tar.gz
export XDG_CACHE_HOME=/tmp/kc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%Y-%m-%dT%H:%MZ
if [ "${1:-a}" = b ]; then
	KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1 timeout 560 python3 bench/gallery.py 2>&1 | grep -v '^W11' | tee "$OUT/gallery.txt"
	exit 0
fi
for n in 65536 131072 262144; do
	for minb in 2 3; do
		echo "bf16 long N=$n MINB=$minb: $(KBENCH_NO_SESSION=1 build/kbench run kernels/softmax/softmax_bf16_cluster.cu \
			--arg N=$n --define CLUSTER=$((n / 16384)) --define MINB=$minb --no-sweep --trials 1 2>&1 |
			grep -E 'INCORRECT|bandwidth|rror' | tr -s ' ' | cut -c1-60 | tr '\n' ' ')"
	done
done
sh scripts/record-gallery.sh 2>&1 | tee "$OUT/record.txt"
