#!/usr/bin/env python3
"""gemm.py - issue 15's GPU figures for kernels/gemm/ (bf16 in, f32 sums, bf16 out).

  cuBLAS    torch.matmul bf16 at 4096^3 and 8192^3, timed in this process on
            this GPU as kbench times (bench/gallery.py's time_op: warm-up,
            the L2 flushed before every launch, CUDA events, median of 30).
  03, 04    kernels/gemm/03_pipeline.cu's and 04_wgmma.cu's specs in full, one `kbench run
            --arg S=8192 --json --trials 1 --seed 1`: the base run, the
            sweep (S = 4096, 8192, 4000, 1001: CORRECT at every shape?) and
            every tune point (BM, BK, STAGES) at 8192^3.  One runner
            process, so the CPU reference of 8192^3 (double) is computed once.
  steps     01_smem.cu, 02_mma.cu and the tile DSL's matmul.tile at 4096^3
            and 8192^3 (`--no-sweep`, the file's defaults).

Every row: verdict, median us, TFLOP/s (2 M N K / time) and % of cuBLAS at
the same size.  No kbench run starts once BUDGET seconds (default 420) have
passed, and each is cut at what is left, so the whole fits a device call of
8 minutes; what was skipped is printed.  Usage: bench/gemm.py (repo root,
GPU machine).  The JSON of each row goes to $OUT/gemm.jsonl when OUT is set.
"""
import json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tile  # noqa: E402  (run_json, verdict, cublas_ms, header; gallery.time_op)

KB = tile.KB
T0 = time.time()
BUDGET = float(os.environ.get("BUDGET", "420"))
SIZES = (4096, 8192)
OUT = os.environ.get("OUT")
LOG = open(os.path.join(OUT, "gemm.jsonl"), "w") if OUT else None


def log(row):
    if LOG:
        LOG.write(json.dumps(row) + "\n")
        LOG.flush()


def left():
    return BUDGET - (time.time() - T0)


def kbench(args, what):
    """The JSON of `kbench run ARGS --json`, or None (printed why)."""
    if left() < 20:
        print(f"  skipped {what}: the time budget ({BUDGET:.0f} s) is spent", flush=True)
        return None
    try:
        j, p = tile.run_json([KB, "run", *args, "--json"], timeout=left())
    except Exception as e:  # a run past the budget
        print(f"  {what}: {type(e).__name__}", flush=True)
        return None
    if not j:
        print(f"  {what}: no JSON, rc {p.returncode}: {p.stderr.strip()[-300:]}", flush=True)
    return j


def row(label, s, res, cublas_us, extra=""):
    us = (res or {}).get("timing", {}).get("median_us")
    tf = 2 * s ** 3 / (us * 1e-6) / 1e12 if us else None
    pct = cublas_us[s] / us * 100 if us and s in cublas_us else None  # % of cuBLAS's throughput
    f = lambda v, fmt, w: (fmt % v) if isinstance(v, (int, float)) else "-".rjust(w)
    print(f"{label:34s} {s:5d} {tile.verdict(res)[:10]:10s} {f(us, '%10.1f', 10)} {f(tf, '%8.1f', 8)}"
          f" {f(pct, '%9.1f%%', 10)}  {extra}", flush=True)
    log({"kernel": label, "S": s, "verdict": tile.verdict(res), "median_us": us, "TFLOPs": tf,
         "pct_of_cublas": pct, "extra": extra})


def full_spec(path, head, cublas_us):
    """PATH's spec in full at S = 8192: the base run, the sweep, every tune point."""
    name = os.path.basename(path)
    print(f"\n{name}, its spec in full at S = 8192 (sweep, then tune points)\n{head}")
    j = kbench([path, "--arg", "S=8192", "--trials", "1", "--seed", "1", "--timeout", "120"], name)
    if not j:
        return
    row(f"{name} (defaults)", 8192, j.get("result", j), cublas_us)
    for r in j.get("sweep", []):
        s = int((r.get("args") or {}).get("S", 0))
        row(f"{name} sweep", s, r.get("result"), cublas_us)
    best = j.get("best_tune")
    for i, r in enumerate(j.get("tune", [])):
        row(name[:2] + " " + " ".join(r.get("defines", [])), 8192, r.get("result"), cublas_us,
            "<- best" if i == best else "")


def main():
    tile.header("kernels/gemm (bf16, f32 accumulate) vs torch.matmul (cuBLAS), L2 flushed")
    cublas_us = {}
    for s in SIZES:
        cublas_us[s] = tile.cublas_ms(s) * 1e3
        print(f"cuBLAS (torch.matmul bf16) {s}^3: {cublas_us[s]:.1f} us, "
              f"{2 * s ** 3 / (cublas_us[s] * 1e-6) / 1e12:.1f} TFLOP/s", flush=True)
        bt = tile.cublas_ms(s, transpose_b=True) * 1e3  # 04_wgmma's layout: B given as [N, K]
        print(f"cuBLAS with B as [N, K] (a @ b.T)   {s}^3: {bt:.1f} us, "
              f"{2 * s ** 3 / (bt * 1e-6) / 1e12:.1f} TFLOP/s", flush=True)
        log({"kernel": "cublas_bT", "S": s, "median_us": bt})
        log({"kernel": "cublas", "S": s, "median_us": cublas_us[s]})
    head = f"{'kernel':34s} {'S':>5s} {'verdict':10s} {'median us':>10s} {'TFLOP/s':>8s} {'% cuBLAS':>10s}"

    for path in ("kernels/gemm/03_pipeline.cu", "kernels/gemm/04_wgmma.cu"):
        full_spec(path, head, cublas_us)

    print(f"\nthe other steps, and the tile DSL's matmul, at their defaults\n{head}")
    for path in ("kernels/gemm/01_smem.cu", "kernels/gemm/02_mma.cu", "kernels/matmul/matmul.tile"):
        for s in SIZES:
            j = kbench([path, "--arg", f"S={s}", "--no-sweep", "--trials", "1", "--seed", "1",
                        "--timeout", "120"], f"{path} S={s}")
            if j:
                row(os.path.basename(path), s, j, cublas_us)
    print(f"\n{time.time() - T0:.0f} s")


if __name__ == "__main__":
    main()
