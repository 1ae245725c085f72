# gpu-pyref-torch.py FILE.cu [N=V ...] - PyTorch's own time for a kbench
# kernel file's `ref torch` expression (scripts/gpu-pyref.sh): the spec's
# inputs made on the GPU in float32 as the spec draws them, the expression
# run eagerly and through torch.compile, each timed with CUDA events around
# one call after an L2 flush (a 256 MB write), as kbench times kernels;
# prints "eager_us compile_us" (medians of 30), or "n/a n/a (why)".
import math
import re
import statistics
import sys

import torch
import torch.nn.functional as F


def spec(path, over):
    args, ins, ref = {}, [], None
    for line in open(path):
        m = re.match(r"//!\s+(\w+)\s+(.*)", line)
        if not m:
            continue
        d, rest = m.groups()
        if d == "arg":
            k, v = [s.strip() for s in rest.split("=", 1)]
            args[k] = int(over.get(k, v))
        elif d == "in":
            name, t = [s.strip() for s in rest.split(":", 1)]
            dt, dims, init = re.match(r"(\w+)\[(.*)\]\s*(?:=\s*(.*))?", t).groups()
            ins.append((name, dt, dims, init or "zeros"))
        elif d == "ref":
            ref = re.sub(r"^torch\s+(device=\w+\s+)?", "", rest.rsplit("->", 1)[0].strip())
    return args, ins, ref


def make(dt, shape, init):
    dtype = {"f32": torch.float32, "i32": torch.int32, "i64": torch.int64}[dt]
    if init.startswith("randn"):
        return torch.randn(shape, device="cuda").to(dtype)
    m = re.match(r"rand\(([-\d.e]+),\s*([-\d.e]+)\)", init)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        return (torch.rand(shape, device="cuda") * (hi - lo) + lo).to(dtype)
    return (torch.ones if init == "ones" else torch.zeros)(shape, device="cuda", dtype=dtype)


def cdiv(a, b):
    return -(-a // b)


def timed(fn, inputs, flush):
    for _ in range(3):
        fn(*inputs)
    times = []
    for _ in range(30):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(*inputs)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)


def main():
    path = sys.argv[1]
    over = dict(a.split("=", 1) for a in sys.argv[2:])
    args, ins, ref = spec(path, over)
    env = dict(args, cdiv=cdiv, min=min, max=max)
    names = [n for n, *_ in ins]
    inputs = [make(dt, tuple(eval("(%s,)" % dims.replace("/", "//"), {}, env)), init)
              for _, dt, dims, init in ins]
    fn = eval("lambda %s: %s" % (", ".join(names), ref),
              {"torch": torch, "F": F, "np": None, "math": math, **args})
    flush = torch.empty(64 << 20, device="cuda")
    with torch.no_grad():
        eager = timed(fn, inputs, flush)
        try:
            comp = "%.1f" % timed(torch.compile(fn), inputs, flush)
        except Exception as e:
            comp = "n/a(%s)" % type(e).__name__
    print("%.1f %s" % (eager, comp))


if __name__ == "__main__":
    main()
