#!/usr/bin/env python3
"""norm_triton.py - issue 31: the norm rows at powers of two where
torch.compile's Triton kernel reads 1-3% faster than kbench's best
(bench/gallery_h200.txt: both at the DRAM roofline).  For each row this
compiles the operation as bench/gallery.py does, runs it once and keeps
Inductor's generated code (the Triton kernel and its launch: grid,
num_warps, the block sizes) under $OUT/triton/, so what Triton does can be
read beside our kernel.  No timing here: bench/gallery.py times.
Usage: OUT=DIR python3 bench/norm_triton.py   (GPU machine)
"""
import glob, os, shutil, sys

OUT = os.environ.get("OUT", "/tmp/out")
CACHE = os.path.join(OUT, "inductor-cache")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = CACHE
import torch  # noqa: E402  (after the cache dir is set)
import torch.nn.functional as F  # noqa: E402

ROWS = [("layernorm", torch.float32, 32768, 4096), ("layernorm", torch.float32, 32768, 8192),
        ("layernorm", torch.bfloat16, 32768, 16384), ("rmsnorm", torch.float32, 32768, 4096),
        ("rmsnorm", torch.float32, 32768, 8192), ("rmsnorm", torch.float32, 32768, 16384),
        ("rmsnorm", torch.bfloat16, 32768, 8192)]


def op(name, n):
    if name == "layernorm":
        return lambda x, w, b: F.layer_norm(x, (n,), w, b, eps=1e-5)
    return lambda x, w, b: F.rms_norm(x, (n,), w, eps=1e-6)


def main():
    dest = os.path.join(OUT, "triton")
    os.makedirs(dest, exist_ok=True)
    for name, dt, m, n in ROWS:
        torch._dynamo.reset()
        x = torch.randn(m, n, device="cuda", dtype=dt)
        w = torch.rand(n, device="cuda", dtype=dt) + 0.5
        b = torch.randn(n, device="cuda", dtype=dt)
        before = set(glob.glob(CACHE + "/**/*.py", recursive=True))
        torch.compile(op(name, n))(x, w, b)
        torch.cuda.synchronize()
        new = sorted(set(glob.glob(CACHE + "/**/*.py", recursive=True)) - before)
        tag = "%s_%s_%dx%d" % (name, str(dt).split(".")[-1], m, n)
        for i, f in enumerate(new):
            text = open(f).read()
            if "triton" not in text:
                continue
            shutil.copy(f, os.path.join(dest, "%s_%d.py" % (tag, i)))
        print(tag, len(new), "generated files", flush=True)
    shutil.rmtree(CACHE, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
