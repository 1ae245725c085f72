# pyref_server.py - kbench's Python reference server (pyref.c starts it).
#
# One warm process per runner: it imports NumPy, PyTorch and the user's
# reference file once and answers one request per line of stdin, a JSON
# object, with one JSON line on the reply descriptor it was given (argv[1]);
# its own stdout goes to stderr (a log file), so a print in a reference
# cannot break the protocol.  Inputs arrive as files in shared memory that
# are mapped, not read (np.memmap, torch.from_numpy on the map); each output
# is converted once into the file kbench mapped for it.  A reference file is
# imported again only when its content changes.  Errors are replies with a
# kind kbench decides on, never a crash: an exception's traceback is cut to
# the user's frames (the reference file or the kernel file's ref line).
import json
import os
import sys
import time
import traceback

SELF = __file__ if "__file__" in globals() else "<kbench-pyref>"
modules = {}  # path -> (content, module namespace)
np = None
torch = None


class RefError(Exception):
    def __init__(self, kind, message, where=None, tb=None):
        Exception.__init__(self, message)
        self.kind, self.message, self.where, self.tb = kind, message, where, tb


def need(name, kind, label, imported):
    """The module name, imported at its first use (said in imported)."""
    if name not in sys.modules:
        imported.append(name)
    try:
        return __import__(name)
    except ImportError as e:
        imported.remove(name)
        raise RefError(kind, "%s is not installed for %s (%s)" % (label, sys.executable, e))


def need_numpy(imported):
    global np
    np = np or need("numpy", "no_numpy", "NumPy", imported)
    return np


def need_torch(imported, device):
    global torch
    torch = torch or need("torch", "no_torch", "PyTorch", imported)
    if device == "cuda" and not torch.cuda.is_available():
        raise RefError("no_cuda", "device=cuda, but this PyTorch sees no GPU (torch %s, CUDA %s)"
                       % (torch.__version__, torch.version.cuda))
    return torch


NP_DTYPES = {"f64": "float64", "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8",
             "u8": "uint8"}


def user_frames(tb, files):
    """The traceback's frames in the user's files, innermost last."""
    frames = [f for f in traceback.extract_tb(tb) if f.filename in files]
    return frames


def fail_from(exc, files):
    frames = user_frames(exc.__traceback__, files)
    where = "%s:%d" % (frames[-1].filename, frames[-1].lineno) if frames else None
    lines = []
    for f in frames:
        lines.append('  File "%s", line %d, in %s' % (f.filename, f.lineno, f.name))
        if f.line:
            lines.append("    " + f.line.strip())
    msg = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return RefError("exception", msg, where, "\n".join(lines))


def load_module(path, imported):
    try:
        with open(path, "rb") as f:
            content = f.read()
    except OSError as e:
        raise RefError("file", "cannot read the reference file: %s" % e)
    old = modules.get(path)
    if old and old[0] == content:
        return old[1]
    ns = {"__name__": "kbench_ref", "__file__": path}
    d = os.path.dirname(path)
    if d not in sys.path:
        sys.path.insert(0, d)
    try:
        code = compile(content, path, "exec")
        exec(code, ns)
    except Exception as e:
        raise fail_from(e, {path})
    modules[path] = (content, ns)
    imported.append(os.path.basename(path))
    return ns


def wrap_input(t, lang, device):
    dt = NP_DTYPES[t["dtype"]]
    shape = tuple(t["shape"])
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        a = np.zeros(shape, dtype=dt)
    else:  # copy-on-write map: writable for the reference, the file untouched
        a = np.memmap(t["path"], dtype=dt, mode="c", shape=shape)
    if lang == "torch":
        a = torch.from_numpy(a if n else a.copy())
        if device == "cuda":
            a = a.to("cuda")
    return a


def as_numpy(v, name):
    if torch is not None and isinstance(v, torch.Tensor):
        if v.is_complex():
            raise RefError("dtype", "output '%s' is complex (%s); kbench compares real values"
                           % (name, v.dtype))
        return v.detach().to("cpu").numpy() if v.dtype != torch.bfloat16 else \
            v.detach().to("cpu", torch.float64).numpy()
    a = np.asarray(v)
    if a.dtype.kind not in "biuf":
        raise RefError("dtype", "output '%s' has dtype %s (%s); kbench compares bool, integer "
                       "or float values" % (name, a.dtype, type(v).__name__))
    return a


def split_outputs(res, outs):
    names = [o["name"] for o in outs]
    if isinstance(res, dict):
        missing = [n for n in names if n not in res]
        if missing:
            raise RefError("count", "the reference's dict has no %s (keys: %s)"
                           % (", ".join(missing), ", ".join(map(str, res))))
        return [res[n] for n in names]
    if isinstance(res, tuple) or (isinstance(res, list) and _holds_arrays(res)):
        if len(res) != len(names):
            raise RefError("count", "the reference returned %d values; the ref line names %d (%s)"
                           % (len(res), len(names), ", ".join(names)))
        return list(res)
    if len(names) != 1:
        raise RefError("count", "the reference returned one value; the ref line names %d (%s)"
                       % (len(names), ", ".join(names)))
    return [res]


def _holds_arrays(seq):
    return any(hasattr(v, "shape") for v in seq)


def squeeze_shape(s):
    return [d for d in s if d != 1]


def write_outputs(vals, outs):
    got = []
    for v, o in zip(vals, outs):
        if v is None:
            raise RefError("dtype", "output '%s' is None: the reference returned nothing for it"
                           % o["name"])
        a = as_numpy(v, o["name"])
        want = list(o["shape"])
        if list(a.shape) != want and (a.size != o["n"] or squeeze_shape(a.shape) != squeeze_shape(want)):
            raise RefError("shape", "output '%s' has shape %s; the spec declares %s"
                           % (o["name"], list(a.shape), want))
        if a.size:
            m = np.memmap(o["path"], dtype="float64", mode="r+", shape=(a.size,))
            m[:] = a.reshape(-1)
            m.flush()
            del m
        got.append({"name": o["name"], "shape": list(a.shape), "dtype": str(a.dtype)})
    return got


def call_reference(req, imported):
    lang, device = req["lang"], req.get("device", "cpu")
    need_numpy(imported)
    if lang == "torch":
        need_torch(imported, device)
    env = {}
    files = {req["kernel_file"]}
    if req.get("file"):
        files.add(req["file"])
        env.update(load_module(req["file"], imported))
    env.setdefault("np", np)
    env.setdefault("numpy", np)
    if torch is not None:
        env.setdefault("torch", torch)
        env.setdefault("F", torch.nn.functional)
    names = dict(req.get("scalars", {}))
    for t in req["inputs"]:
        names[t["name"]] = wrap_input(t, lang, device)
    fn = req.get("fn")
    try:
        if fn:
            f = env.get(fn)
            if not callable(f):
                raise RefError("args", "%s has no function %s" % (req["file"], fn),
                               "%s:1" % req["file"])
            res = call_by_names(f, fn, names)
        else:
            src = "\n" * (req["line"] - 1) + req["expr"].strip()
            code = compile(src, req["kernel_file"], "eval")
            res = eval(code, env, names)
        if lang == "torch" and device == "cuda":
            torch.cuda.synchronize()
    except RefError:
        raise
    except Exception as e:
        raise fail_from(e, files)
    return res


def call_by_names(f, fn, names):
    import inspect
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return f(**names)
    kw, missing = {}, []
    takes_all = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:
            takes_all = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            if p.name in names:
                kw[p.name] = names[p.name]
            elif p.default is p.empty:
                missing.append(p.name)
    if missing:
        raise RefError("args", "%s(%s): no input or arg named %s (the spec has: %s)"
                       % (fn, ", ".join(sig.parameters), ", ".join(missing), ", ".join(names)))
    if takes_all:
        kw = dict(names)
    return f(**kw)


def answer(req):
    imported = []
    t0 = time.perf_counter()
    try:
        res = call_reference(req, imported)
        t1 = time.perf_counter()
        vals = split_outputs(res, req["outs"])
        outs = write_outputs(vals, req["outs"])
    except RefError as e:
        return {"ok": False, "kind": e.kind, "message": e.message, "where": e.where,
                "traceback": e.tb, "imported": imported}
    versions = {"python": sys.version.split()[0], "numpy": np.__version__}
    if torch is not None:
        versions["torch"] = torch.__version__
    return {"ok": True, "ms": (t1 - t0) * 1e3, "total_ms": (time.perf_counter() - t0) * 1e3,
            "imported": imported, "outs": outs, "versions": versions}


def clean_up(*_):
    """Removes the shared-memory folder this script lives in, then exits."""
    d = os.path.dirname(os.path.abspath(SELF))
    if os.path.basename(d).startswith("kbench-pyref."):
        for f in os.listdir(d):
            try:
                os.unlink(os.path.join(d, f))
            except OSError:
                pass
        try:
            os.rmdir(d)
        except OSError:
            pass
    os._exit(0)


def main():
    import signal
    signal.signal(signal.SIGTERM, clean_up)  # asked to stop
    reply = os.fdopen(int(sys.argv[1]), "w")
    os.dup2(2, 1)  # prints of a reference go to the log, not the protocol
    serve(reply)
    clean_up()


def serve(reply):
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            rep = answer(req)
        except Exception as e:  # a bug of ours: say so, keep serving
            rep = {"ok": False, "kind": "internal", "message": "kbench's reference server: %s"
                   % "".join(traceback.format_exception_only(type(e), e)).strip()}
        reply.write(json.dumps(rep) + "\n")
        reply.flush()


if __name__ == "__main__":
    main()
