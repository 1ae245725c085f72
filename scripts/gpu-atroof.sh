#!/bin/sh
# gpu-atroof.sh - the gallery rows where kbench is not faster than PyTorch's
# best (bench/gallery_h200.txt, 2026-11-29: LayerNorm bf16 32768 x 16384
# 0.98x, colsum bf16 32768 x 8192 0.99-1.00x, max f32 4096 x 200003
# 0.99-1.02x), both sides' kernels under one tool: ncu with the L2 flushed
# before each launch (--cache-control all, as kbench and gallery.py flush)
# and the clocks as they run (--clock-control none): each kernel's time,
# DRAM bytes read and written, and DRAM throughput against its peak - what
# says whether either side has anything left.  From the make-dist tarball;
# about 90 s.  Out: $OUT/atroof.txt.  Usage: OUT=DIR sh scripts/gpu-atroof.sh
set -u
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-start.sh
KB=build/kbench
MET=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
prof() { # LABEL KERNEL-REGEX COMMAND...: 5 launches after 3
	_l=$1 _k=$2
	shift 2
	echo "== $_l"
	timeout 120 ncu --metrics "$MET" --cache-control all --clock-control none -k "regex:$_k" --launch-skip 3 \
		--launch-count 5 "$@" 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time|dram__" | head -30
}
torch_op() { # OP DTYPE M N: PyTorch's best side of gallery.py (torch.compile for the norms, eager for the reductions)
	cat <<PY
import torch, torch.nn.functional as F
op, dt, m, n = "$1", getattr(torch, "$2"), $3, $4
x = torch.randn(m, n, device="cuda", dtype=dt)
w = torch.rand(n, device="cuda", dtype=dt) + 0.5
b = torch.randn(n, device="cuda", dtype=dt)
f = {"layernorm": torch.compile(lambda: F.layer_norm(x, (n,), w, b, eps=1e-5)),
     "colsum": lambda: x.sum(dim=0), "max": lambda: x.amax(dim=1)}[op]
for _ in range(10):
    f()
torch.cuda.synchronize()
PY
}
{
	nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
	prof "kbench layernorm_bf16_twopass.cu THREADS=512 U=4, bf16 32768 x 16384" layernorm_bf16 \
		$KB run kernels/layernorm/layernorm_bf16_twopass.cu --arg M=32768 --arg N=16384 --define THREADS=512 --define U=4 \
		--no-sweep --trials 1
	torch_op layernorm bfloat16 32768 16384 >"$OUT/t.py"
	prof "torch.compile layer_norm, bf16 32768 x 16384" "triton|norm" python3 "$OUT/t.py"
	prof "kbench col_sum_bf16_vec.cu CLUSTER=8 THREADS=512, bf16 32768 x 8192" col_sum_bf16 \
		$KB run kernels/reduce/col_sum_bf16_vec.cu --arg M=32768 --arg N=8192 --define CLUSTER=8 --define THREADS=512 \
		--no-sweep --trials 1
	torch_op colsum bfloat16 32768 8192 >"$OUT/t.py"
	prof "torch eager sum(dim=0), bf16 32768 x 8192" "reduce" python3 "$OUT/t.py"
	prof "kbench row_max_f32_aligned.cu, f32 4096 x 200003" row_max_f32 \
		$KB run kernels/reduce/row_max_f32_aligned.cu --arg M=4096 --arg N=200003 --no-sweep --trials 1
	torch_op max float32 4096 200003 >"$OUT/t.py"
	prof "torch eager amax(dim=1), f32 4096 x 200003" "reduce" python3 "$OUT/t.py"
} >"$OUT/atroof.txt" 2>&1
cat "$OUT/atroof.txt"
