#!/usr/bin/env python3
"""attention.py - issue 30's GPU figures for kernels/attention/ (bf16, f32 sums).

  table     for each head dim D (64, 128), sequence length N (1024, 4096,
            8192, 16384 by default; $NS) and causal or not: every kbench
            kernel of kernels/attention/ except the naive one (its scores
            alone are 4 B*H*N^2 bytes; attention.tile with HD = D), 02 at its defaults and one other key
            step (`kbench run FILE --define D=.. [--define ..] --arg N=.. --arg B=..
            --arg H=.. --arg CAUSAL=.. --no-sweep --json --trials 1`), the
            best CORRECT one counting; a kernel that faults or hangs is not
            run again (each costs its 20 s timeout); and every backend of
            torch.nn.functional.scaled_dot_product_attention forced in turn
            (sdpa_kernel: FLASH_ATTENTION, CUDNN_ATTENTION,
            EFFICIENT_ATTENTION), timed in this process as kbench times
            (bench/gallery.py's time_op: warm-up, the L2 flushed before every
            launch, CUDA events, median of 30).  B*H fills the GPU as
            FlashAttention's benchmarks do: B = 16384 / N, H = 2048 / D.
            TFLOP/s = 4 B H N^2 D (half when causal) / time.
            After the table, each kbench row's check: the rows it compared
            a trial (the reference samples rows at large sizes) and the
            check's wall time (reference on the CPU, comparison).
  correct   every kbench kernel (the naive one too) at D = 64 and 128, causal
            and not, at B = 1, H = 4 over its spec's sweep (N = 1024, 4096,
            1000, 4097) and tune points, every row checked
            (KBENCH_ATTENTION_BUDGET=inf), 1 trial: CORRECT at every point?
  warm      `kbench run` of 02_fa2.cu at N = 8192, D = 128 (B = 2, H = 16)
            twice with one seed: the wall time cold (first) and warm (the
            compile cached), and the check's time in each.

No kbench run starts once BUDGET seconds (default 330) have passed; what was
skipped is printed.  Usage: bench/attention.py table|correct|warm (repo root,
GPU machine).  The JSON of each row goes to $OUT/attention-PART.jsonl when
OUT is set.
"""
import json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gallery  # noqa: E402  (time_op, the L2 flush)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

KB = gallery.KB
T0 = time.time()
BUDGET = float(os.environ.get("BUDGET", "330"))
NS = [int(n) for n in os.environ.get("NS", "1024,4096,8192,16384").split(",")]
DS = [int(d) for d in os.environ.get("DS", "64,128").split(",")]
# each kbench kernel with its variants in the table, per head dim: the -D
# lists to try (02: its defaults, a warp's 32 rows and 64 keys a step, and
# the other key step FlashAttention-2 or the registers suggest)
KERNELS = [(p, vs) for p, vs in (
    ("kernels/attention/02_fa2.cu", {64: ([], ["BN=128"]), 128: ([], ["BN=32"])}),
    ("kernels/attention/03_fa3.cu", {64: ([],), 128: ([],)}),
    ("kernels/attention/attention.tile", {64: (["HD=64"],), 128: (["HD=128"],)})) if os.path.exists(p)]
# FA2_VARIANTS="-;TREE=1;A=1,B=2": one kernel alone (VARIANT_KERNEL, 02_fa2.cu
# by default), with these -D lists at every head dim ("-": its defaults),
# each variant's time in the jsonl log: a variant against the defaults,
# the SDPA backends beside them, in one process
if os.environ.get("FA2_VARIANTS"):
    _vs = tuple([] if v == "-" else v.split(",") for v in os.environ["FA2_VARIANTS"].split(";"))
    KERNELS = [(os.environ.get("VARIANT_KERNEL", "kernels/attention/02_fa2.cu"), {64: _vs, 128: _vs})]
BROKEN = {}  # kernel file -> the verdict that stopped it (a fault or a hang costs its timeout)
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
PART = sys.argv[1] if len(sys.argv) > 1 else "table"
OUT = os.environ.get("OUT")
LOG = open(os.path.join(OUT, f"attention-{PART}.jsonl"), "w") if OUT else None


def log(row):
    if LOG:
        print(json.dumps(row), file=LOG, flush=True)


def left():
    return BUDGET - (time.time() - T0)


def flops(b, h, n, d, causal):
    return 4 * b * h * n * n * d / (2 if causal else 1)


def run_json(args):
    """`kbench run ARGS --json`: (the JSON or None, wall seconds)."""
    t0 = time.time()
    try:
        p = subprocess.run([KB, "run", *args, "--json"], capture_output=True, text=True,
                           timeout=max(left(), 15))
        return json.loads(p.stdout), round(time.time() - t0, 2)
    except Exception as e:
        print(f"    kbench run {' '.join(args)}: {type(e).__name__}", flush=True)
        return None, round(time.time() - t0, 2)


def summary_of(r, d, wall):
    """{verdict, us, rows, rows_checked, check_ms, ref_ms, wall_s} of a Result."""
    r = r or {"verdict": "NO JSON"}
    ck = r.get("check") or {}
    rows, checked = None, None
    for t in ck.get("trials", []):
        for o in t.get("outputs", []):
            s = o.get("sampled")
            if s:
                rows, checked = s.get("rows"), s.get("rows_checked")
            elif rows is None:
                rows = checked = o.get("elements", 0) // d
    ms = ck.get("ms") or {}
    return {"verdict": r.get("verdict") or r.get("status") or "?",
            "us": (r.get("timing") or {}).get("median_us"), "rows": rows, "rows_checked": checked,
            "check_ms": ms.get("total"), "ref_ms": ms.get("reference"), "wall_s": wall}


def note_broken(path, verdict):
    """A kernel that faulted or hung is not run again (each costs its timeout)."""
    if verdict not in ("CORRECT", "INCORRECT", "UNSUPPORTED") and not verdict.startswith("SKIPPED"):
        BROKEN.setdefault(path, verdict)


def kbench(path, d, defs, n, b, h, causal):
    """One kbench run at a bench point, summarised."""
    if left() < 15:
        return {"verdict": "SKIPPED (budget)"}
    if path in BROKEN:
        return {"verdict": f"SKIPPED ({BROKEN[path][:20]} before)"}
    tile = ["--arg", f"D={d}"] if path.endswith(".tile") else []  # D is its spec's arg, HD its const
    j, wall = run_json([path, "--define", f"D={d}", *tile, *[x for v in defs for x in ("--define", v)],
                        "--arg", f"N={n}", "--arg", f"B={b}", "--arg", f"H={h}",
                        "--arg", f"CAUSAL={int(causal)}", "--no-sweep", "--trials", "1",
                        "--timeout", "20"])
    sm = summary_of(j, d, wall)
    note_broken(path, sm["verdict"])
    return sm


def sdpa_us(name, backend, b, h, n, d, causal):
    """Median us of SDPA with one backend forced, or None (the reason printed)."""
    try:
        g = torch.Generator(device="cuda").manual_seed(1)
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
                   for _ in range(3))
        with sdpa_kernel(backend):
            fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
            return gallery.time_op(fn) * 1e3
    except Exception as e:
        print(f"    {name}: {type(e).__name__}: {str(e).splitlines()[0][:100]}", flush=True)
        return None


def fmt(v, f, w):
    return (f % v) if isinstance(v, (int, float)) else "-".rjust(w)


def header():
    print(f"attention forward, bf16, L2 flushed  {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}"
          f"  {torch.cuda.get_device_name(0)}  torch {torch.__version__}", flush=True)


def table():
    header()
    names = [os.path.basename(p).split(".")[0] for p, _ in KERNELS] + [n for n, _ in BACKENDS]
    head = f"{'D':>3s} {'N':>6s} {'causal':6s} {'B':>3s} {'H':>3s} | " + " | ".join(
        f"{n[:12]:>12s} {'TF/s':>6s}" for n in names) + " | best kbench / flash"
    print(head, flush=True)
    summary = []
    for d in DS:
        for n in NS:
            for causal in (False, True):
                b, h = max(1, 16384 // n), 2048 // d
                fl = flops(b, h, n, d, causal)
                cells, times, checks = [], {}, []
                for path, variants in KERNELS:
                    name = os.path.basename(path).split(".")[0]
                    best = None
                    for defs in variants.get(d, ()):
                        r = kbench(path, d, defs, n, b, h, causal)
                        r.update(kernel=name, defines=" ".join(defs), D=d, N=n, causal=causal, B=b,
                                 H=h)
                        log(r)
                        checks.append(r)
                        if r["verdict"] == "CORRECT" and r.get("us") and (
                                best is None or r["us"] < best["us"]):
                            best = r
                    us = best["us"] if best else None
                    times[name] = us
                    cells.append(f"{fmt(us, '%12.1f', 12)} {fmt(fl / us / 1e6 if us else None, '%6.0f', 6)}"
                                 if best else f"{(checks[-1]['verdict'] if checks else '-')[:12]:>12s} {'-':>6s}")
                for bname, backend in BACKENDS:
                    us = sdpa_us(bname, backend, b, h, n, d, causal)
                    times[bname] = us
                    log({"kernel": "sdpa_" + bname, "D": d, "N": n, "causal": causal, "B": b, "H": h,
                         "us": us})
                    cells.append(f"{fmt(us, '%12.1f', 12)} {fmt(fl / us / 1e6 if us else None, '%6.0f', 6)}")
                kb_best = min([t for k, t in times.items() if k.startswith("0") and t] or [None],
                              key=lambda x: x or 1e30)
                ratio = times["flash"] / kb_best * 100 if kb_best and times.get("flash") else None
                print(f"{d:3d} {n:6d} {str(causal):6s} {b:3d} {h:3d} | " + " | ".join(cells)
                      + f" | {fmt(ratio, '%6.1f%%', 7)}", flush=True)
                for r in checks:
                    summary.append(r)
    print("\nthe checks: rows compared a trial, the check's wall time (reference on the CPU)")
    print(f"{'kernel':8s} {'-D':>6s} {'D':>3s} {'N':>6s} {'causal':6s} {'verdict':10s} {'rows checked':>20s}"
          f" {'check ms':>9s} {'ref ms':>8s} {'run wall s':>10s}")
    for r in summary:
        rows = f"{r.get('rows_checked')}/{r.get('rows')}" if r.get("rows") else "-"
        print(f"{r['kernel']:8s} {(r['defines'] or '-')[:6]:>6s} {r['D']:3d} {r['N']:6d} {str(r['causal']):6s} "
              f"{r['verdict'][:10]:10s} {rows:>20s} {fmt(r.get('check_ms'), '%9.0f', 9)}"
              f" {fmt(r.get('ref_ms'), '%8.0f', 8)} {fmt(r.get('wall_s'), '%10.2f', 10)}")
    print(f"\n{time.time() - T0:.0f} s")


def correct():
    header()
    os.environ["KBENCH_ATTENTION_BUDGET"] = "inf"
    bad = 0
    print(f"{'kernel':10s} {'D':>3s} {'causal':6s} {'point':12s} {'verdict':10s} {'rows checked':>14s}"
          f" {'check ms':>9s}")
    for path in ["kernels/attention/01_naive.cu"] + [p for p, _ in KERNELS]:
        for d in DS:
            for causal in (0, 1):
                if left() < 15 or path in BROKEN:
                    print(f"skipped {path} D={d} causal={causal}: "
                          + (f"{BROKEN[path]} before" if path in BROKEN else "the budget is spent"))
                    bad += 1
                    continue
                pin = ["--define", "BM=128"] if "02_fa2" in path else []  # its tune: MT x BN
                pin += ["--define", f"HD={d}", "--arg", f"D={d}"] if path.endswith(".tile") else []
                j, wall = run_json([path, "--define", f"D={d}", *pin, "--arg", f"CAUSAL={causal}",
                                    "--arg", "B=1", "--arg", "H=4", "--arg", "N=4096",
                                    "--trials", "1", "--timeout", "20"])
                j = j or {}
                pts = [("N=4096", j.get("result", j))]
                pts += [(" ".join(f"{k}={v}" for k, v in (p.get("args") or {}).items()), p.get("result"))
                        for p in j.get("sweep", [])]
                pts += [(" ".join(p.get("defines", [])), p.get("result")) for p in j.get("tune", [])]
                for label, r in pts:
                    sm = summary_of(r, d, wall)
                    bad += sm["verdict"] != "CORRECT"
                    note_broken(path, sm["verdict"])
                    rows = f"{sm['rows_checked']}/{sm['rows']}" if sm.get("rows") else "-"
                    print(f"{os.path.basename(path)[:10]:10s} {d:3d} {causal:6d} {label[:12]:12s} "
                          f"{sm['verdict'][:10]:10s} {rows:>14s} {fmt(sm.get('check_ms'), '%9.0f', 9)}",
                          flush=True)
                    log({"kernel": path, "D": d, "causal": causal, "point": label, **sm})
    print(f"not CORRECT: {bad}")


def warm():
    header()
    args = ["kernels/attention/02_fa2.cu", "--define", "D=128", "--arg", "N=8192", "--arg", "B=2",
            "--arg", "H=16", "--no-sweep", "--trials", "1", "--seed", "7"]
    for what in ("cold", "warm"):
        j, wall = run_json(args)
        sm = summary_of(j, 128, wall)
        log({"run": what, **sm})
        print(f"kbench run 02_fa2.cu N=8192 D=128 B=2 H=16 ({what}): wall {wall:.2f} s, "
              f"{sm['verdict']}, check {fmt(sm.get('check_ms'), '%.0f', 1)} ms (reference "
              f"{fmt(sm.get('ref_ms'), '%.0f', 1)} ms), rows checked {sm.get('rows_checked')}/"
              f"{sm.get('rows')}, median {fmt(sm.get('us'), '%.1f', 1)} us", flush=True)


if __name__ == "__main__":
    {"table": table, "correct": correct, "warm": warm}[PART]()
