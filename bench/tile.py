#!/usr/bin/env python3
"""tile.py - issue 14's GPU figures for the tile DSL (kernels/**/*.tile).

  correct   every .tile example at every size its spec sweeps (and every tune
            point), CORRECT or not, from `kbench run FILE --json`.
  norms     softmax.tile, layernorm.tile, rmsnorm.tile (f32 and bf16) at
            32768 x {4096, 8192, 16384} against the best hand-written kernel
            of kernels/ for the same operation and PyTorch (eager and
            torch.compile), all measured in this run on this GPU.  The tile
            kernel is tuned per size the way its tune lines allow (THREADS
            from 128 to 1024 with BLOCK the row rounded up to a power of 2),
            the best CORRECT configuration counts, and which one it was is
            printed; the hand kernels are run as they ship.
  matmul    matmul.tile (bf16) at 4096^3 and 8192^3, its tune points (BM,
            BK, STAGES), against torch.matmul (cuBLAS) timed the same way.
  hot       `kbench profile --hot` of softmax.tile: the hottest line must be
            a line of the .tile file.

Times are medians with the L2 flushed before every launch on both sides
(bench/gallery.py's time_op).  Usage: bench/tile.py correct|norms|matmul|hot
[FILTER] (repo root, GPU machine).  The JSON of each row goes to
$OUT/tile-PART.jsonl when OUT is set.
"""
import json, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gallery  # noqa: E402  (kbench(), time_op, torch_times)
import torch  # noqa: E402

KB = gallery.KB
PART = sys.argv[1] if len(sys.argv) > 1 else "norms"
FILTER = sys.argv[2] if len(sys.argv) > 2 else ""
OUT = os.environ.get("OUT")
LOG = None  # $OUT/tile-PART.jsonl, opened by main (bench/gemm.py imports this file)
M, SIZES = 32768, [4096, 8192, 16384]


def log(row):
    if LOG:
        LOG.write(json.dumps(row) + "\n")
        LOG.flush()


def header(what):
    print(f"{what}  {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}  {torch.cuda.get_device_name(0)}"
          f"  kbench {subprocess.run([KB, '--version'], capture_output=True, text=True).stdout.strip()}"
          f"  torch {torch.__version__}", flush=True)


def run_json(cmd, timeout=560):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(p.stdout), p
    except Exception:
        return None, p


# ---- correct -----------------------------------------------------------------

def verdict(res):
    return (res or {}).get("verdict") or (res or {}).get("status") or "?"


def correct():
    header("every .tile example at every swept size and tune point")
    files = sorted(subprocess.run(["sh", "-c", "ls kernels/*.tile kernels/*/*.tile"],
                                  capture_output=True, text=True).stdout.split())
    bad = 0
    for f in files:
        if FILTER not in f:
            continue
        trials = "1"  # every point is checked; more trials cost reference time
        j, p = run_json([KB, "run", f, "--json", "--trials", trials, "--timeout", "120"])
        if not j:
            print(f"{f:42s} NO JSON rc={p.returncode} {p.stderr.strip()[-300:]}")
            bad += 1
            continue
        base = j.get("result", j)
        rows = [("base", base)]
        rows += [(" ".join(f"{k}={v}" for k, v in r["args"].items()) if isinstance(r.get("args"), dict)
                  else json.dumps(r.get("args")), r["result"]) for r in j.get("sweep", [])]
        rows += [(" ".join(r["defines"]), r["result"]) for r in j.get("tune", [])]
        for label, r in rows:
            v = verdict(r)
            bad += v != "CORRECT"
            t = (r or {}).get("timing", {}).get("median_us")
            print(f"{f:42s} {label:28s} {v:10s} {t if t is not None else '-':>10}", flush=True)
            log({"file": f, "point": label, "verdict": v, "median_us": t})
    print(f"not CORRECT: {bad}")


# ---- norms -------------------------------------------------------------------

HAND = {("softmax", "f32"): "kernels/softmax/05_registers.cu",
        ("softmax", "bf16"): "kernels/softmax/softmax_bf16.cu",
        ("layernorm", "f32"): "kernels/layernorm/02_registers.cu",
        ("layernorm", "bf16"): "kernels/layernorm/layernorm_bf16.cu",
        ("rmsnorm", "f32"): "kernels/rmsnorm/02_registers.cu",
        ("rmsnorm", "bf16"): "kernels/rmsnorm/rmsnorm_bf16.cu"}


def tile_file(op, dt):
    return f"kernels/{op}/{op}{'_bf16' if dt == 'bf16' else ''}.tile"


def configs(n):
    block = 1 << (n - 1).bit_length()
    return [(block, t) for t in (128, 256, 512, 1024) if 4 <= block // t <= 64]


def norms():
    header("tile kernels vs the best hand-written kernel and PyTorch (M = 32768)")
    print(f"{'op':10s} {'dtype':5s} {'N':>6s} | {'tile us':>8s} {'BLOCK/THREADS':>13s} | {'hand us':>8s}"
          f" {'tile/hand':>9s} | {'torch us':>8s} {'which':7s} {'tile vs torch':>13s} | %copy tile")
    for (op, dt), hand in HAND.items():
        if FILTER and FILTER not in f"{op} {dt}":
            continue
        for n in SIZES:
            h = gallery.kbench(hand, M, n, op, None)
            best = None
            for block, threads in configs(n):
                k = gallery.kbench(tile_file(op, dt), M, n, op,
                                   ["--define", f"BLOCK={block}", "--define", f"THREADS={threads}"])
                log({"op": op, "dtype": dt, "n": n, "block": block, "threads": threads, "tile": k})
                if k.get("verdict") == "CORRECT" and k.get("us") and (not best or k["us"] < best[0]["us"]):
                    best = (k, block, threads)
            eager, comp = gallery.torch_times(op, dt, M, n)
            t_best = min(t for t in (eager, comp) if t is not None) * 1e3
            which = "compile" if comp is not None and comp * 1e3 <= t_best else "eager"
            if not best:
                print(f"{op:10s} {dt:5s} {n:6d} | no CORRECT tile configuration | hand {h.get('verdict')}")
                continue
            k, block, threads = best
            ratio = h["us"] / k["us"] * 100 if h.get("us") else None  # % of the hand kernel's throughput
            f = lambda v, fmt: (fmt % v) if isinstance(v, (int, float)) else "-"
            print(f"{op:10s} {dt:5s} {n:6d} | {k['us']:8.1f} {f'{block}/{threads}':>13s} | {f(h.get('us'), '%8.1f')}"
                  f" {f(ratio, '%8.1f%%')} | {t_best:8.1f} {which:7s}"
                  f" {t_best / k['us']:12.2f}x | {f(k.get('pct_copy'), '%5.1f%%')}", flush=True)
            log({"op": op, "dtype": dt, "n": n, "best": {"block": block, "threads": threads, "us": k["us"]},
                 "hand": h, "torch_us": t_best, "torch_which": which})


# ---- matmul ------------------------------------------------------------------

def cublas_ms(s, transpose_b=False):
    a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    t = gallery.time_op((lambda: torch.matmul(a, b.T)) if transpose_b else (lambda: torch.matmul(a, b)),
                        reps=20)
    del a, b
    torch.cuda.empty_cache()
    return t


def matmul():
    header("matmul.tile (bf16, f32 accumulate) vs torch.matmul (cuBLAS), L2 flushed")
    print(f"{'size':>6s} {'BM':>4s} {'BK':>3s} {'STAGES':>6s} {'verdict':9s} {'tile us':>9s} {'TFLOP/s':>8s} |"
          f" {'cuBLAS us':>9s} {'TFLOP/s':>8s} | {'% of cuBLAS':>11s}")
    for s in (4096, 8192):
        cb = cublas_ms(s) * 1e3
        flops = 2 * s ** 3
        # the tune lines' eight points at 8192^3 (BN follows BM: 8 warps of
        # 64 x 64), the two tile shapes at 4096^3; one runner, so the CPU
        # reference (double) of each size is computed once
        points = [(bm, bk, st) for bm in (256, 128) for bk in (64, 32) for st in (4, 3)]
        for bn, bk, stages in (points if s == 8192 else [(256, 64, 4), (128, 64, 4)]):
            cmd = [KB, "run", "kernels/matmul/matmul.tile", "--arg", f"S={s}", "--no-sweep", "--json",
                   "--trials", "1", "--timeout", "300", "--define", f"BM={bn}", "--define", f"BK={bk}",
                   "--define", f"STAGES={stages}"]
            j, p = run_json(cmd)
            r = j or {}
            us = r.get("timing", {}).get("median_us")
            v = verdict(r) if j else f"rc {p.returncode}"
            tf = flops / (us * 1e-6) / 1e12 if us else None
            print(f"{s:6d} {bn:4d} {bk:3d} {stages:6d} {v[:9]:9s} {us if us else float('nan'):9.1f} "
                  f"{tf if tf else float('nan'):8.1f} | {cb:9.1f} {flops / (cb * 1e-6) / 1e12:8.1f} |"
                  f" {(cb / us * 100) if us else float('nan'):10.1f}%", flush=True)
            log({"s": s, "bm": bn, "bk": bk, "stages": stages, "verdict": v, "us": us, "cublas_us": cb,
                 "err": None if j else p.stderr[-400:]})


# ---- hot ---------------------------------------------------------------------

def hot():
    header("kbench profile --hot on a .tile kernel")
    p = subprocess.run([KB, "profile", "kernels/softmax/softmax.tile", "--hot", "--no-sweep",
                        "--arg", "N=8192"], capture_output=True, text=True, timeout=300)
    text = p.stdout + p.stderr
    print(text[-4000:])
    src = open("kernels/softmax/softmax.tile").read().split("\n")
    hot = re.findall(r"^\s+([\d.]+) %  line (\d+)\s+(.*)$", text, re.M)
    ok = [(pct, n) for pct, n, t in hot if 0 < int(n) <= len(src) and src[int(n) - 1].strip() == t.strip()]
    print(f"hot lines: {[(pct, n) for pct, n, _ in hot]}; naming a softmax.tile line with its text: {ok}"
          f"  ->  {'OK' if hot and ok and ok[0] == (hot[0][0], hot[0][1]) else 'NOT OK'}")


if __name__ == "__main__":
    LOG = open(os.path.join(OUT, f"tile-{PART}.jsonl"), "w") if OUT else None
    {"correct": correct, "norms": norms, "matmul": matmul, "hot": hot}[PART]()
