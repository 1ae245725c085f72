#!/usr/bin/env python3
"""tile_fused.py - issue 29's table: the fused kernels of kernels/fused/,
each written once in the tile DSL (.tile) and once by hand in CUDA (.cu),
beside PyTorch eager and torch.compile (Triton: the DSL's nearest peer),
all in one run on this GPU.

For each kernel, `kbench run FILE --json --trials 1` runs the spec's sweep
(every kernel's sweep has a size that is no multiple of the block or the
vector width) and checks every size against the spec's reference (a CPU
built-in, or a reference kernel in double); the verdicts of all sizes are
printed and the median time of the first (the base size).  PyTorch runs
the same operation at the base size in this process, timed the way kbench
times (bench/gallery.py's time_op: the L2 flushed before every launch,
medians).  Targets (issue 29): the .tile >= 95% of the hand kernel, and
no slower than the faster of eager and torch.compile.

Usage: bench/tile_fused.py [FILTER]  (repo root, GPU machine).  The JSON of
each row goes to $OUT/tile-fused.jsonl when OUT is set.
"""
import json, math, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gallery  # noqa: E402  (KB, time_op)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

KB = gallery.KB
FILTER = sys.argv[1] if len(sys.argv) > 1 else ""
OUT = os.environ.get("OUT")
DEV = "cuda"


def randn(*s, dt=torch.float32):
    return torch.randn(*s, device=DEV, dtype=dt)


# ---- the operations in PyTorch, at each spec's base size ---------------------

def op_bias_gelu():
    x, b = randn(4096, 8192), randn(8192)
    return lambda x, b: F.gelu(x + b, approximate="tanh"), (x, b)


def op_swiglu():
    a, b = randn(4096, 8192), randn(4096, 8192)
    return lambda a, b: F.silu(a) * b, (a, b)


def op_add_rmsnorm():
    x, r, w = randn(4096, 8192), randn(4096, 8192), torch.rand(8192, device=DEV) + 0.5

    def f(x, r, w):
        h = x + r
        return h, F.rms_norm(h, (h.shape[1],), w, eps=1e-6)
    return f, (x, r, w)


def op_causal_softmax():
    t = 4096
    x = randn(4, t, t)
    mask = torch.ones(t, t, device=DEV, dtype=torch.bool).triu(1)

    def f(x, mask):
        return torch.softmax((0.125 * x).masked_fill(mask, float("-inf")), dim=-1)
    return f, (x, mask)


def op_cross_entropy():
    x = randn(1024, 50257)
    t = torch.randint(0, 32000, (1024,), device=DEV)
    return lambda x, t: F.cross_entropy(x, t, reduction="none"), (x, t)


def op_rope():
    bh, t = 256, 1024
    x, c, s = randn(bh, t, 128), randn(t, 64), randn(t, 64)

    def f(x, c, s):
        x1, x2 = x[..., :64], x[..., 64:]
        return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)
    return f, (x, c, s)


def op_colsum():
    x = randn(16384, 4096)
    return lambda x: x.sum(0), (x,)


def op_transpose():
    x = randn(8192, 8192)
    return lambda x: x.t().contiguous(), (x,)


def op_matmul_bias_gelu():
    a, w = randn(4096, 4096, dt=torch.bfloat16), randn(4096, 4096, dt=torch.bfloat16) * 0.05
    b = randn(4096).to(torch.bfloat16)
    return lambda a, w, b: F.gelu(torch.addmm(b, a, w), approximate="tanh"), (a, w, b)


KERNELS = [
    ("bias_gelu", "(1) bias + GELU (tanh), f32 4096 x 8192", op_bias_gelu),
    ("swiglu", "(2) SwiGLU silu(a) * b, f32 4096 x 8192", op_swiglu),
    ("add_rmsnorm", "(3) residual add + RMSNorm, both out, f32 4096 x 8192", op_add_rmsnorm),
    ("causal_softmax", "(4) softmax(scale x), causal, f32 4 x 4096 x 4096", op_causal_softmax),
    ("cross_entropy", "(5) cross-entropy, f32 1024 x 50257", op_cross_entropy),
    ("rope", "(6) RoPE, f32 [256 x 1024, 128]", op_rope),
    ("colsum", "(7) column sum, f32 16384 x 4096", op_colsum),
    ("transpose", "(8) transpose, f32 8192 x 8192", op_transpose),
    ("matmul_bias_gelu", "(9) matmul + bias + GELU, bf16 4096^3", op_matmul_bias_gelu),
]


# ---- kbench ----------------------------------------------------------------

def kbench(path):
    """Every sweep size's verdict, and the base size's median us."""
    t0 = time.time()
    cmd = [KB, "run", path, "--json", "--trials", "1", "--timeout", "240"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    try:
        j = json.loads(p.stdout)
    except Exception:
        return {"verdicts": [f"NO JSON rc={p.returncode}"], "us": None,
                "err": (p.stderr or p.stdout).strip()[-600:], "wall_s": round(time.time() - t0, 1)}
    base = j.get("result", j)
    rows = [("base", base)] + [(" ".join(f"{k}={v}" for k, v in r.get("args", {}).items())
                                if isinstance(r.get("args"), dict) else "?", r.get("result") or {})
                               for r in j.get("sweep", [])]
    verdicts = [f"{lab}:{(r or {}).get('verdict') or (r or {}).get('status') or '?'}" for lab, r in rows]
    # the base size's time: the best CORRECT of the default and the tune points
    # (the hand GEMM's tune lines; the other files have none)
    best, which = None, "default"
    for lab, r in [("default", base)] + [(" ".join(r.get("defines", [])), r.get("result") or {})
                                         for r in j.get("tune", [])]:
        us = (r or {}).get("timing", {}).get("median_us")
        if (r or {}).get("verdict") == "CORRECT" and us and (best is None or us < best):
            best, which = us, lab
    return {"verdicts": verdicts, "us": best, "which": which,
            "all_correct": all(v.endswith(":CORRECT") for v in verdicts), "wall_s": round(time.time() - t0, 1)}


def torch_us(make):
    fn, args = make()
    eager = gallery.time_op(lambda: fn(*args)) * 1e3
    comp = None
    if os.environ.get("FUSED_COMPILE", "1") == "1":
        try:
            cf = torch.compile(fn, dynamic=False)
            comp = gallery.time_op(lambda: cf(*args)) * 1e3
        except Exception as e:  # reported, not fatal
            print(f"  (torch.compile: {type(e).__name__}: {str(e)[:200]})", file=sys.stderr)
    del args
    torch.cuda.empty_cache()
    return eager, comp


def fmt(v, f):
    return f % v if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)) else "-"


def main():
    log = open(os.path.join(OUT, "tile-fused.jsonl"), "w") if OUT else None
    print(f"fused kernels  {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}  {torch.cuda.get_device_name(0)}"
          f"  kbench {subprocess.run([KB, '--version'], capture_output=True, text=True).stdout.strip()}"
          f"  torch {torch.__version__}  (medians, L2 flushed before every launch)", flush=True)
    print(f"{'kernel':52s} | {'tile us':>8s} {'hand us':>8s} {'tile/hand':>9s} | {'eager':>8s} {'compile':>8s}"
          f" {'tile/best':>9s} | verdicts (tile; hand)")
    for name, what, make in KERNELS:
        if FILTER not in name:
            continue
        t = kbench(f"kernels/fused/{name}.tile")
        h = kbench(f"kernels/fused/{name}.cu")
        try:
            eager, comp = torch_us(make)
        except Exception as e:
            eager, comp = None, None
            print(f"  (torch {name}: {type(e).__name__}: {str(e)[:200]})", file=sys.stderr)
        best = min([v for v in (eager, comp) if v is not None], default=None)
        ratio = h["us"] / t["us"] * 100 if t.get("us") and h.get("us") else None  # % of the hand kernel's speed
        vs = best / t["us"] * 100 if best and t.get("us") else None
        print(f"{what:52s} | {fmt(t.get('us'), '%8.1f')} {fmt(h.get('us'), '%8.1f')} {fmt(ratio, '%8.1f%%')} |"
              f" {fmt(eager, '%8.1f')} {fmt(comp, '%8.1f')} {fmt(vs, '%8.1f%%')} |"
              f" {' '.join(t['verdicts'])}; {' '.join(h['verdicts'])}", flush=True)
        for side, r in (("tile", t), ("hand", h)):
            if r.get("err"):
                print(f"    {side}: {r['err']}", flush=True)
        if log:
            log.write(json.dumps({"kernel": name, "tile": t, "hand": h, "eager_us": eager,
                                  "compile_us": comp}) + "\n")
            log.flush()
    print("tile/hand: the hand kernel's time over the tile kernel's (>= 95% is the target); tile/best: the faster"
          " of eager and torch.compile over the tile kernel's (>= 100% is the target)")


if __name__ == "__main__":
    main()
