#!/bin/sh
# gpu-lnhot.sh - issue 31: where the LayerNorm window kernels spend their
# issue slots and stalls at 4096 x 200003 on the H200 (bf16 at 78% of copy,
# f32 at 82%): `kbench profile --hot` (PC sampling mapped to SASS and
# source lines, each instruction's SASS metrics) of the gallery's best of
# each, from a working tree with the `make dist` tarball under build/dist*/
# (nothing is built here), in about a minute.
# Outputs: $OUT/hot.txt (both profiles as printed), $OUT/hot.DTYPE.json.
# Usage: OUT=DIR sh scripts/gpu-lnhot.sh   (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-start.sh
KB=build/kbench L=kernels/layernorm
W="--define PF=1 --define PFB=1 --define XA=1 --define PIPE=1 --define WSM=1 --define WAVE=0 --define LOOK=0"
V7="--define VPT=7 --define THREADS=448 --define MINB=2"
{
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	date -u +%Y-%m-%dT%H:%MZ
	for fd in "layernorm_bf16_cluster.cu 8 bf16" "06_cluster.cu 16 f32"; do
		# shellcheck disable=SC2086 # file, cluster, dtype
		set -- $fd
		echo "== $1 CLUSTER=$2 (VPT 7 x 448, the window, XA) at 4096 x 200003"
		# shellcheck disable=SC2086 # the defines, split on purpose
		timeout 120 "$KB" profile "$L/$1" --arg M=4096 --arg N=200003 --no-sweep --trials 1 --timeout 60 \
			--define CLUSTER="$2" $V7 $W --section stalls --section compute --hot --json >"$OUT/hot.$3.json" 2>"$OUT/hot.$3.err"
		echo "rc $?"
	done
} >"$OUT/hot.txt" 2>&1
tail -5 "$OUT/hot.txt"
