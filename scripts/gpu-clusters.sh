#!/bin/sh
# gpu-clusters.sh - how many clusters run at once (kbench run's resources
# line: the driver's cuOccupancyMaxActiveClusters beside what the SMs alone
# would hold) for the long-row kernels whose % of copy differs from one
# H200 to another (layernorm/04_ring.cu at 4096 x 262144 f32: 86% on one,
# 76% on another, bench/gallery_h200.txt 2026-11-29), and the memory the
# machine lets a process have (the gallery runner's crash).  From the
# make-dist tarball; about 40 s.  Out: $OUT/clusters.txt.
# Usage: OUT=DIR sh scripts/gpu-clusters.sh (repo root)
set -u
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-start.sh
KB=build/kbench L=kernels/layernorm S=kernels/softmax
row() { # FILE M N DEFINE...
	_f=$1 _m=$2 _n=$3
	shift 3
	_d=""
	for a in "$@"; do _d="$_d --define $a"; done
	# shellcheck disable=SC2086 # the defines, split on purpose
	"$KB" run "$_f" --arg M="$_m" --arg N="$_n" $_d --no-sweep --trials 1 --timeout 60 >"$OUT/r.txt" 2>&1
	echo "== $(basename "$_f") $_m x $_n $* (rc $?)"
	grep -E "^  (CORRECT|INCORRECT|[A-Z]+ )|^  (resources|bandwidth) " "$OUT/r.txt" | head -4
}
{
	nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
	row $L/04_ring.cu 4096 262144 CLUSTER=8 OUT=1 SUMS=1 U=4 NSLOT=7
	row $L/04_ring.cu 4096 262144 CLUSTER=6 OUT=1 SUMS=1 U=4 NSLOT=6
	row $S/09_ring.cu 4096 262144 CLUSTER=8
	row $L/06_cluster.cu 4096 262144 CLUSTER=16 VPT=8 THREADS=512 PF=1 PFB=1 XA=1
	row $L/layernorm_bf16_cluster.cu 4096 262144 CLUSTER=8 VPT=8 THREADS=512 PF=1 PFB=1 XA=1
	echo "== memory: cgroup max $(cat /sys/fs/cgroup/memory.max 2>/dev/null), peak $(cat /sys/fs/cgroup/memory.peak 2>/dev/null); $(grep MemTotal /proc/meminfo)"
} >"$OUT/clusters.txt" 2>&1
cat "$OUT/clusters.txt"
