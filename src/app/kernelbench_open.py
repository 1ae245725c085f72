# kernelbench_open.py - `kbench new --from-kernelbench PROBLEM.py` (app/kernelbench.c
# runs it): a KernelBench problem (a torch Model with get_inputs() and
# get_init_inputs()) as a kbench kernel file and its Python reference.
#
#   python3 kernelbench_open.py PROBLEM.py OUT.cu OUT_REF.py
#
# It imports the problem (its own code runs: the user named it), builds the
# Model as KernelBench's harness does, draws get_inputs(), and writes:
#  - OUT.cu: a spec with the forward's inputs (shapes, dtypes, an init of
#    the same kind as the problem's values), the Model's float parameters
#    and buffers as inputs too, the outputs (shapes from a forward on the
#    meta device, else a real one), KernelBench's tolerances, flops where
#    PyTorch's counter knows the ops, and a kernel skeleton that writes
#    zeros (INCORRECT until it is filled in);
#  - OUT_REF.py: the problem's source verbatim, then `reference(**inputs)`,
#    which loads kbench's values into the Model's parameters and calls its
#    forward in float64.
# One JSON line on stdout says what was written; an error is a message on
# stderr and exit status 1.
import inspect
import json
import os
import re
import sys

CTYPE = {"f32": "float", "f64": "double", "f16": "__half", "bf16": "__nv_bfloat16",
         "i64": "long long", "i32": "int", "i16": "short", "i8": "signed char", "u8": "unsigned char"}
C_WORDS = {"int", "float", "double", "char", "long", "short", "void", "signed", "unsigned", "const",
           "auto", "register", "static", "extern", "volatile", "restrict", "new", "delete",
           "class", "struct", "union", "enum", "template", "this", "default", "case", "switch",
           "if", "else", "for", "while", "do", "return", "break", "continue", "goto", "sizeof",
           "typedef", "inline", "bool", "true", "false", "operator", "n", "i"}


def kdtype(t):
    import torch
    return {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
            torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32", torch.int16: "i16",
            torch.int8: "i8", torch.uint8: "u8", torch.bool: "u8"}.get(t.dtype)


def ident(name, taken):
    s = re.sub(r"\W", "_", name)
    if not s or s[0].isdigit():
        s = "t_" + s
    if s in C_WORDS:
        s = s + "_"
    while s in taken:
        s = s + "_"
    taken.add(s)
    return s


def num(v):
    r = repr(float(v))
    return r[:-2] if r.endswith(".0") else r


def sample(t):
    """At most a million of t's values, spread over it, in float64."""
    f = t.detach().reshape(-1)
    step = max(1, f.numel() // 1000000)
    return f[::step].double()


def init_of(t):
    """An init line of the same kind as the problem's values."""
    import torch
    if t.numel() == 0:
        return "zeros"
    if t.dtype == torch.bool or not t.is_floating_point():
        lo, hi = int(t.min()), int(t.max())
        return "rand(%d, %d)" % (lo, hi + 1)
    d = sample(t)
    lo, hi = float(d.min()), float(d.max())
    if lo == hi:
        return "ones" if lo == 1 else "zeros" if lo == 0 else "rand(%s, %s)" % (num(lo), num(hi))
    if lo >= 0 and hi <= 1:
        return "rand(0, 1)"
    mean, std = float(d.mean()), float(d.std()) if d.numel() > 1 else 1.0
    if d.numel() > 64 and abs(mean) < 0.2 and 0.8 < std < 1.2:
        return "randn()"
    b = max(abs(lo), abs(hi))
    if abs(lo + hi) < 0.02 * b:  # symmetric: a uniform init (PyTorch's kaiming bound)
        return "rand(-%.4g, %.4g)" % (b, b)
    return "rand(%.4g, %.4g)" % (lo, hi)


FACTORIES = ("rand", "randn", "randint", "ones", "zeros", "empty", "full", "rand_like",
             "randn_like", "ones_like", "zeros_like")
REAL_BYTES = 256 << 20  # get_inputs() drawn for real (its values read) up to this


def meta_inputs(get_inputs):
    """get_inputs() with torch's factories on the meta device (shapes, no
    memory), and the factory calls it made, in order."""
    import torch
    calls, saved = [], {n: getattr(torch, n) for n in FACTORIES if hasattr(torch, n)}

    def wrap(name, f):
        def g(*a, **k):
            k["device"] = "meta"
            calls.append((name, a, k))
            return f(*a, **k)
        return g
    for n, f in saved.items():
        setattr(torch, n, wrap(n, f))
    try:
        return list(get_inputs()), calls
    finally:
        for n, f in saved.items():
            setattr(torch, n, f)


def init_of_call(call, t):
    """The init of a tensor too big to draw here, from the factory call that made it."""
    import torch
    name, a, k = call
    if not t.is_floating_point():
        if name == "randint":
            lo, hi = (0, a[0]) if len(a) < 2 or not isinstance(a[1], int) else (a[0], a[1])
            return "rand(%d, %d)" % (lo, hi)
        return "rand(0, 2)"
    return {"rand": "rand(0, 1)", "rand_like": "rand(0, 1)", "ones": "ones", "ones_like": "ones",
            "zeros": "zeros", "zeros_like": "zeros"}.get(name, "randn()")


def dims(shape):
    return "[%s]" % ", ".join(str(int(s)) for s in shape) if len(shape) else "[1]"


def out_shapes(model, args, drawn):
    """The forward's outputs on the meta device (no compute), else for real
    (when the inputs were drawn here)."""
    import copy
    import torch
    try:
        m = copy.deepcopy(model).to("meta")
        a = [v.to("meta") if isinstance(v, torch.Tensor) else v for v in args]
        with torch.no_grad():
            return m(*a), "a forward on the meta device"
    except Exception as e:
        if drawn:
            with torch.no_grad():
                return model(*args), "a forward on the CPU"
        try:
            return batch_probe(model, args), "forwards at batch 1 and 2 (no meta kernel here)"
        except Exception as e2:
            sys.exit("the forward does not run on the meta device here (%s: %s), the inputs are "
                     "too big to run it for real on this machine, and at batch 1 and 2 it says "
                     "nothing (%s): no output shapes" % (type(e).__name__, str(e).splitlines()[0],
                                                         e2))


def batch_probe(model, args):
    """The outputs' shapes from forwards at batch 1 and 2 (dim 0 of every
    tensor input of the common batch size), each dim that doubles scaled
    to the batch; meta tensors of those shapes."""
    import torch
    ts = [v for v in args if isinstance(v, torch.Tensor)]
    n = ts[0].shape[0] if ts and ts[0].dim() else None
    if not n or any(t.dim() == 0 or t.shape[0] != n for t in ts):
        raise ValueError("the inputs share no batch dim")

    def at(b):
        a = [torch.rand((b,) + tuple(v.shape[1:])).to(v.dtype) if isinstance(v, torch.Tensor) else v
             for v in args]
        with torch.no_grad():
            r = model(*a)
        return list(r) if isinstance(r, (tuple, list)) else [r]
    one, two = at(1), at(2)
    outs = []
    for x, y in zip(one, two):
        shape = []
        for p, q in zip(x.shape, y.shape):
            if p != q and q != 2 * p:
                raise ValueError("an output dim is neither fixed nor the batch's")
            shape.append(p if p == q else p * n)
        outs.append(torch.empty(shape, dtype=x.dtype, device="meta"))
    return tuple(outs) if len(outs) > 1 else outs[0]


def flops_of(model, args):
    try:
        import copy
        import torch
        from torch.utils.flop_counter import FlopCounterMode
        m = copy.deepcopy(model).to("meta")
        a = [v.to("meta") if isinstance(v, torch.Tensor) else v for v in args]
        fc = FlopCounterMode(display=False)
        with fc, torch.no_grad():
            m(*a)
        return int(fc.get_total_flops()) or None
    except Exception:
        return None


def main():
    prob, out_cu, out_ref = sys.argv[1:4]
    try:
        import torch
    except ImportError as e:
        sys.exit("kbench new --from-kernelbench: PyTorch is not installed for %s (%s): install "
                 "it (Debian: apt-get install python3-torch; or pip install torch), or set "
                 "KBENCH_PYTHON to a Python that has it" % (sys.executable, e))
    with open(prob) as f:
        src = f.read()
    ns = {"__name__": "kbench_problem", "__file__": os.path.abspath(prob)}
    exec(compile(src, prob, "exec"), ns)
    for need in ("Model", "get_inputs", "get_init_inputs"):
        if need not in ns:
            sys.exit("%s has no %s: a KernelBench problem defines Model, get_inputs() and "
                     "get_init_inputs()" % (prob, need))
    torch.manual_seed(0)
    model = ns["Model"](*ns["get_init_inputs"]())
    args, calls = meta_inputs(ns["get_inputs"])
    nbytes = sum(v.numel() * v.element_size() for v in args if isinstance(v, torch.Tensor))
    drawn = nbytes <= REAL_BYTES
    if drawn:  # small enough: the values themselves say how they were drawn
        torch.manual_seed(0)
        args = list(ns["get_inputs"]())
    tensors = [v for v in args if isinstance(v, torch.Tensor)]
    by_call = dict(zip(map(id, tensors), calls)) if len(calls) == len(tensors) else {}
    try:
        params = list(inspect.signature(model.forward).parameters.values())
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    if len(names) != len(args):
        names = ["in%d" % i for i in range(len(args))]
    taken = set()
    ins, spec_args, fwd, bools = [], [], [], []
    for n, v in zip(names, args):
        k = ident(n, taken)
        fwd.append(k)
        if isinstance(v, torch.Tensor):
            if kdtype(v) is None:
                sys.exit("%s: input %s has dtype %s, which kbench has no dtype for" % (prob, n, v.dtype))
            init = init_of(v) if drawn else init_of_call(by_call.get(id(v), ("randn", (), {})), v)
            ins.append((k, kdtype(v), dims(v.shape), init, v))
            if v.dtype == torch.bool:
                bools.append(k)
        elif isinstance(v, (bool, int, float)):
            spec_args.append((k, v))
        else:
            sys.exit("%s: input %s is a %s, neither a tensor nor a number" % (prob, n, type(v).__name__))
    state = {}
    for pname, p in list(model.named_parameters()) + list(model.named_buffers()):
        if p.is_floating_point() and kdtype(p):
            k = ident(pname, taken)
            state[k] = pname
            ins.append((k, kdtype(p), dims(p.shape), init_of(p), p))
    res, how = out_shapes(model, args, drawn)
    outs_t = list(res) if isinstance(res, (tuple, list)) else [res]
    outs = []
    for i, t in enumerate(outs_t):
        if not isinstance(t, torch.Tensor):
            t = torch.tensor(t)
        k = ident("y" if len(outs_t) == 1 else "y%d" % i, taken)
        outs.append((k, kdtype(t) or "f32", dims(t.shape), int(t.numel()) or 1))
    flops = flops_of(model, args)
    tol = 1e-2 if any(o[1] in ("f16", "bf16") for o in outs) else 1e-4
    stem = os.path.basename(prob)
    ref_name = os.path.basename(out_ref)
    kname = ident("kb_" + re.sub(r"^\d+_", "", os.path.splitext(stem)[0]).lower(), set(taken))
    w = []
    w.append("// KernelBench %s, opened by `kbench new --from-kernelbench`." % stem)
    w.append("// The reference is the problem's own Model.forward (its source is in")
    w.append("// %s), run by PyTorch in float64 on the CPU with kbench's inputs;" % ref_name)
    w.append("// the Model's parameters are inputs too, drawn like the problem's own")
    w.append("// values%s. The output shapes come from %s. The kernel below is a"
             % ("" if drawn else " (as its get_inputs() calls name them: too big to draw here)", how))
    w.append("// skeleton: it writes zeros, so it runs INCORRECT until you write it.")
    w.append("// Tolerances are KernelBench's (fp32 1e-4, fp16/bf16 1e-2).")
    w.append("//")
    w.append("//! kernel  %s" % kname)
    for k, v in spec_args:
        w.append("//! arg     %s = %s" % (k, int(v) if isinstance(v, (bool, int)) else num(v)))
    for k, _, _, n in outs:
        w.append("//! arg     n_%s = %d" % (k, n))
    for k, dt, d, init, _ in ins:
        w.append("//! in      %s : %s%s = %s" % (k, dt, d, init))
    for k, dt, d, _ in outs:
        w.append("//! out     %s : %s%s" % (k, dt, d))
    w.append("//! launch  grid=(cdiv(n_%s, 256)) block=(256)" % outs[0][0])
    w.append("//! ref     torch %s:reference -> %s" % (ref_name, ", ".join(o[0] for o in outs)))
    w.append("//! tol     rtol=%g atol=%g" % (tol, tol))
    if flops:
        w.append("//! flops   %d" % flops)
    w.append("")
    if any(dt == "f16" for _, dt, *_ in ins + outs):
        w.append("#include <cuda_fp16.h>")
    if any(dt == "bf16" for _, dt, *_ in ins + outs):
        w.append("#include <cuda_bf16.h>")
    params = ["const %s *%s" % (CTYPE[dt], k) for k, dt, *_ in ins]
    params += ["%s *%s" % (CTYPE[dt], k) for k, dt, *_ in outs]
    params += ["%s %s" % ("int" if isinstance(v, (bool, int)) else "float", k) for k, v in spec_args]
    params += ["long long n_%s" % k for k, *_ in outs]
    w.append("__global__ void %s(%s)" % (kname, ",\n\t\t".join(params)))
    w.append("{")
    w.append("\tlong long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;")
    for k, dt, *_ in outs:
        w.append("\tif (i < n_%s)" % k)
        w.append("\t\t%s[i] = 0; /* TODO: the problem's forward */" % k)
    w.append("}")
    with open(out_cu, "w") as f:
        f.write("\n".join(w) + "\n")
    adapter = '''

# ---- kbench: the reference of %(cu)s (written by kbench new --from-kernelbench) ----
_KB_FORWARD = %(fwd)r      # the forward's arguments, in order
_KB_STATE = %(state)r      # kbench input -> the Model's parameter or buffer
_KB_BOOL = %(bools)r
_kb_model = None


def reference(**kw):
    """The Model's forward in float64 on kbench's inputs (parameters included)."""
    global _kb_model
    import torch
    if _kb_model is None:
        torch.manual_seed(0)
        _kb_model = Model(*get_init_inputs()).to(torch.float64)
    dev = next((v.device for v in kw.values() if isinstance(v, torch.Tensor)), None)
    if dev is not None:
        _kb_model = _kb_model.to(dev)
    with torch.no_grad():
        sd = _kb_model.state_dict()
        for k, name in _KB_STATE.items():
            sd[name].copy_(kw[k].reshape(sd[name].shape))
        args = [kw[n].bool() if n in _KB_BOOL else kw[n] for n in _KB_FORWARD]
        return _kb_model(*args)
''' % {"cu": os.path.basename(out_cu), "fwd": fwd, "state": state, "bools": bools}
    with open(out_ref, "w") as f:
        f.write(src.rstrip("\n") + "\n" + adapter)
    print(json.dumps({"cu": out_cu, "ref": out_ref, "kernel": kname, "shapes_from": how,
                      "inputs": [[k, dt, d] for k, dt, d, *_ in ins],
                      "outputs": [[k, dt, d] for k, dt, d, _ in outs],
                      "params": len(state), "flops": flops, "tol": tol}))


if __name__ == "__main__":
    main()
