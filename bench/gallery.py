#!/usr/bin/env python3
"""gallery.py - every gallery kernel at every size, beside PyTorch.

For each kernel of kernels/{softmax,layernorm,rmsnorm,reduce,transpose}/ and
each size it is tuned for (plus a size that is not a multiple of the block
or the vector width), runs `kbench run FILE --arg ... --no-sweep --json
--trials 1` and reads its verdict, median time, bandwidth and share of this
GPU's measured copy bandwidth; then times the same operation in PyTorch in
this process on the same GPU (eager, and torch.compile where it is faster),
the way kbench times: the L2 flushed (a write of 2x its size) before every
launch, CUDA events, warm-up first, the median of the repetitions.  Prints
one table; the JSON of every row goes to $OUT/gallery.jsonl when OUT is set.

Usage: bench/gallery.py [FILTER]   (repo root, GPU machine; FILTER keeps the
rows whose kernel file contains it)
"""
import json, os, statistics, subprocess, sys, time

import torch
import torch.nn.functional as F

KB = os.environ.get("KB", "build/kbench")
FILTER = sys.argv[1] if len(sys.argv) > 1 else ""
BIG = [4096, 8192, 16384]
LONG = [65536, 131072, 262144]

# (file, dtype, op, M or R, sizes of N or C, odd size, extra kbench args per N)
GALLERY = [
    ("kernels/softmax/05_registers.cu", "f32", "softmax", 32768, BIG, 5003, None),
    ("kernels/softmax/softmax_bf16.cu", "bf16", "softmax", 32768, BIG, 5003, None),
    ("kernels/softmax/06_cluster.cu", "f32", "softmax", 4096, LONG, 200003, "cluster"),
    ("kernels/softmax/softmax_bf16_cluster.cu", "bf16", "softmax", 4096, LONG, 200003, "cluster"),
    ("kernels/layernorm/02_registers.cu", "f32", "layernorm", 32768, BIG, 5003, None),
    ("kernels/layernorm/layernorm_bf16.cu", "bf16", "layernorm", 32768, BIG, 5003, None),
    ("kernels/rmsnorm/02_registers.cu", "f32", "rmsnorm", 32768, BIG, 5003, None),
    ("kernels/rmsnorm/rmsnorm_bf16.cu", "bf16", "rmsnorm", 32768, BIG, 5003, None),
    ("kernels/reduce/02_vec4.cu", "f32", "sum", 32768, [8192], 5003, None),
    ("kernels/reduce/row_sum_bf16.cu", "bf16", "sum", 32768, [8192], 5003, None),
    ("kernels/reduce/row_max_f32.cu", "f32", "max", 32768, [8192], 5003, None),
    ("kernels/transpose/03_tile64.cu", "f32", "transpose", 32768, [8192], 5003, None),
    ("kernels/transpose/transpose_bf16.cu", "bf16", "transpose", 32768, [8192], 5003, None),
]


def kbench(path, m, n, op, extra):
    rows, cols = ("R", "C") if op == "transpose" else ("M", "N")
    cmd = [KB, "run", path, "--arg", f"{rows}={m}", "--arg", f"{cols}={n}", "--no-sweep",
           "--json", "--trials", "1", "--timeout", "120"]
    if isinstance(extra, list):  # more kbench arguments (bench/tile.py: --define ...)
        cmd += extra
    elif extra == "cluster":
        per = -(-n // 16384)  # 16384 elements a block: the smallest power of 2 that holds the row
        cmd += ["--define", f"CLUSTER={4 if per <= 4 else 8 if per <= 8 else 16}"]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        r = json.loads(p.stdout)
    except Exception:
        return {"verdict": f"NO JSON (rc {p.returncode}): {p.stderr.strip()[-200:]}"}
    rf, t = r.get("roofline", {}), r.get("timing", {})
    return {"verdict": r.get("verdict") or r.get("status"), "us": t.get("median_us"),
            "cv": t.get("cv"), "GBps": rf.get("GBps"), "bytes": rf.get("bytes"),
            "pct_copy": rf.get("pct_of_measured_copy"), "wall_s": round(time.time() - t0, 1),
            "gpu": r.get("env", {}).get("device", {}).get("name")}


# ---- PyTorch ---------------------------------------------------------------

L2 = torch.cuda.get_device_properties(0).L2_cache_size
FLUSH = torch.empty(2 * L2 // 4, dtype=torch.float32, device="cuda")


def time_op(fn, reps=30):
    """Median ms of fn over reps launches, each after an L2 flush."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        FLUSH.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def torch_fn(op, x, w, b):
    if op == "softmax":
        return lambda: torch.softmax(x, dim=1)
    if op == "layernorm":
        return lambda: F.layer_norm(x, (x.shape[1],), w, b, eps=1e-5)
    if op == "rmsnorm":
        return lambda: F.rms_norm(x, (x.shape[1],), w, eps=1e-6)
    if op == "sum":
        return lambda: torch.sum(x, dim=1, dtype=torch.float32)
    if op == "max":
        return lambda: torch.amax(x, dim=1)
    if op == "transpose":
        return lambda: x.t().contiguous()
    raise ValueError(op)


COMPILED = {}
torch._dynamo.config.cache_size_limit = 64  # one compile per shape and dtype
torch._dynamo.config.recompile_limit = 64


def torch_times(op, dt, m, n):
    """(eager ms, compiled ms or None) for op on an m x n tensor."""
    dtype = torch.float32 if dt == "f32" else torch.bfloat16
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
    b = torch.randn(n, device="cuda", dtype=dtype)
    eager = time_op(torch_fn(op, x, w, b))
    comp = None
    if op in ("softmax", "layernorm", "rmsnorm") and os.environ.get("GALLERY_COMPILE", "1") == "1":
        key = (op, dt)
        try:
            if key not in COMPILED:
                base = {"softmax": lambda x, w, b: torch.softmax(x, dim=1),
                        "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[1],), w, b, eps=1e-5),
                        "rmsnorm": lambda x, w, b: F.rms_norm(x, (x.shape[1],), w, eps=1e-6)}[op]
                COMPILED[key] = torch.compile(base, dynamic=False)
            f = COMPILED[key]
            comp = time_op(lambda: f(x, w, b))
        except Exception as e:  # a compile that fails is reported, not fatal
            print(f"  (torch.compile {op} {dt} {m}x{n}: {type(e).__name__})", file=sys.stderr)
    del x, w, b
    torch.cuda.empty_cache()
    return eager, comp


def main():
    out = os.environ.get("OUT")
    log = open(os.path.join(out, "gallery.jsonl"), "w") if out else None
    print(f"kbench gallery vs PyTorch {torch.__version__}  {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}"
          f"  {torch.cuda.get_device_name(0)}  (L2 flushed before every launch, medians)")
    print(f"{'kernel':40s} {'dtype':5s} {'size':>14s} {'verdict':9s} {'kbench us':>10s} {'GB/s':>7s}"
          f" {'%copy':>6s} | {'torch us':>9s} {'%copy':>6s} {'which':8s} {'speedup':>7s}")
    for path, dt, op, m, sizes, odd, extra in GALLERY:
        if FILTER not in path:
            continue
        for n in sizes + [odd]:
            k = kbench(path, m, n, op, extra)
            t_eager, t_comp = torch_times(op, dt, m, n)
            t_best = min(t for t in (t_eager, t_comp) if t is not None) * 1e3
            which = "compile" if t_comp is not None and t_comp * 1e3 <= t_best else "eager"
            copy = k["GBps"] * 100 / k["pct_copy"] if k.get("pct_copy") else None
            tpct = k["bytes"] / (t_best * 1e-6) / 1e9 * 100 / copy if copy and k.get("bytes") else None
            sp = t_best / k["us"] if k.get("us") else None
            f = lambda v, fmt: (fmt % v) if isinstance(v, (int, float)) else "-"
            print(f"{os.path.basename(path) + ' ' + op:40s} {dt:5s} {f'{m}x{n}':>14s} {str(k['verdict'])[:9]:9s}"
                  f" {f(k.get('us'), '%10.1f')} {f(k.get('GBps'), '%7.0f')} {f(k.get('pct_copy'), '%5.1f%%')}"
                  f" | {t_best:9.1f} {f(tpct, '%5.1f%%')} {which:8s} {f(sp, '%6.2fx')}", flush=True)
            if log:
                log.write(json.dumps({"file": path, "op": op, "dtype": dt, "m": m, "n": n,
                                      "kbench": k, "torch_eager_us": t_eager * 1e3,
                                      "torch_compile_us": t_comp * 1e3 if t_comp else None}) + "\n")
                log.flush()


if __name__ == "__main__":
    main()
