#!/usr/bin/env python3
"""torch_timing_check.py - is bench/gallery.py's time_op fair to PyTorch?

(Before 2026-11-28 11:30Z) time_op recorded its first event right after the L2 flush was queued, on a
GPU that has just been synchronized: when PyTorch's host side (dispatch,
cuBLAS heuristics, a Python lambda) takes longer to queue the operation's
first kernel than the flush takes to run, the GPU waits inside the span
and PyTorch is charged for its host.  Here each operation is timed three
ways in one process: time_op as the tables use it; the same with the GPU
kept busy (torch.cuda._sleep, ~150 us) after the flush, so the whole
operation is queued before the first event is reached (the span is then
GPU time alone, gaps between the op's own kernels included); and the sum
of its kernels' durations from CUPTI (torch.profiler).  Medians of 30.
Usage: python3 bench/torch_timing_check.py   (GPU machine, repo root)."""
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gallery  # noqa: E402  (time_op, FLUSH, CLOCK_KHZ)

REPS = 30


def unpadded(fn, reps=REPS):
    """time_op as it was: the first event queued right behind the flush."""
    return gallery.time_op(fn, reps, pad_us=0)


def padded(fn, reps=REPS, pad_us=150):
    return gallery.time_op(fn, reps, pad_us=pad_us)


def cupti(fn, reps=REPS):
    from torch.profiler import profile, ProfilerActivity
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            gallery.FLUSH.zero_()
            torch.cuda._sleep(int(150 * gallery.CLOCK_KHZ / 1000))
            fn()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if str(e.device_type).endswith("CUDA"):
            per.setdefault(e.name, []).append(e.time_range.elapsed_us())
    # the op's kernels: all but the sleep and the flush (a FillFunctor memset)
    total = sum(sum(v) for name, v in per.items() if "sleep" not in name.lower() and "spin" not in name.lower() and "FillFunctor" not in name)
    total /= reps
    return total / 1000.0


def ops():
    r = lambda *s, dt=torch.float32: torch.randn(*s, device="cuda", dtype=dt)
    a, w = r(4096, 4096, dt=torch.bfloat16), r(4096, 4096, dt=torch.bfloat16) * 0.05
    bb = r(4096).to(torch.bfloat16)
    yield "addmm+gelu bf16 4096^3", lambda: F.gelu(torch.addmm(bb, a, w), approximate="tanh")
    yield "mm bf16 4096^3", lambda: torch.mm(a, w)
    x = r(32768, 4096)
    yield "softmax f32 32768x4096", lambda: torch.softmax(x, dim=1)
    xb = r(32768, 4096, dt=torch.bfloat16)
    yield "softmax bf16 32768x4096", lambda: torch.softmax(xb, dim=1)
    xl, wl, bl = r(8192, 50257, dt=torch.bfloat16), r(50257, dt=torch.bfloat16), r(50257, dt=torch.bfloat16)
    yield "layer_norm bf16 8192x50257", lambda: F.layer_norm(xl, (50257,), wl, bl, eps=1e-5)
    xc, t = r(1024, 50257), torch.randint(0, 32000, (1024,), device="cuda")
    yield "cross_entropy f32 1024x50257", lambda: F.cross_entropy(xc, t, reduction="none")
    q, k, v = (r(16, 16, 1024, 128, dt=torch.bfloat16) for _ in range(3))
    yield "sdpa bf16 16x16x1024x128", lambda: F.scaled_dot_product_attention(q, k, v)


print("torch timing check  %s  torch %s  %s" % (torch.cuda.get_device_name(), torch.__version__,
                                                time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())))
print("%-30s %12s %12s %12s %10s" % ("op", "time_op us", "padded us", "CUPTI us", "time_op/padded"))
for name, fn in ops():
    t0 = unpadded(fn) * 1e3
    t1 = padded(fn) * 1e3
    try:
        t2 = cupti(fn) * 1e3
    except Exception as e:  # the profiler is optional here
        print("  cupti: %s" % e)
        t2 = float("nan")
    print("%-30s %12.1f %12.1f %12.1f %9.1f%%" % (name, t0, t1, t2, 100.0 * t0 / t1), flush=True)
