#!/bin/sh
# gpu-mbgtune.sh - issue 29's row (9): matmul_bias_gelu.tile over its tune
# points (STAGES, GROUP, KB_WG_STORE: the store from registers or by TMA)
# and its hand kernel, beside PyTorch eager and torch.compile: bench/
# tile_fused.py's row (9), which times every tune point and takes the best
# (its "which").  Under 200 s.  Usage: OUT=DIR sh scripts/gpu-mbgtune.sh
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/gpu-tile-fused.sh matmul_bias 2>&1 | tail -6
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); print(j["kernel"], "tile best:", j["tile"]["which"], j["tile"]["us"], "hand:", j["hand"]["which"], j["hand"]["us"], "eager", j.get("eager_us"), "compile", j.get("compile_us"))' "$OUT/tile-fused.jsonl"
