#!/usr/bin/env python3
"""gallery.py - every gallery op at every size, its best kernel beside PyTorch.

For each op x dtype (softmax, LayerNorm, RMSNorm, row sum and max, the sum
across rows, transpose; f32 and bf16) and each size (powers of two, N = 5003
whose rows start off a 16-byte boundary, GPT-2's vocabulary 8192 x 50257,
the long rows 4096 x 65536..262144 and 200003), runs every kernel of the
CANDIDATES table that can take that size (`kbench run FILE --arg ...
--no-sweep --json --trials 1`), keeps the fastest CORRECT one, and prints
its verdict, median time, bandwidth and share of this GPU's measured copy
bandwidth, the others' shares after it; then times the same operation in
PyTorch in this process on the same GPU (eager, and torch.compile for
softmax and the norms: the best of the two), the way kbench times: the L2
flushed (a write of 2x its size) before every launch, CUDA events, warm-up
first, the median of the repetitions.  The JSON of every kernel run goes to
$OUT/gallery.jsonl when OUT is set.  A size no kernel takes prints
"no kernel".

Usage: bench/gallery.py [OPS [DTYPES [SIZES]]]   (repo root, GPU machine;
each a comma list, or all: softmax,sum f32 5003,50257; GALLERY_COMPILE=0
skips torch.compile; GALLERY_SKIP=REGEX skips each candidate whose name,
the file and defines as the table prints them, it matches)
"""
import json, os, re, statistics, subprocess, sys, time

import torch
import torch.nn.functional as F

KB = os.environ.get("KB", "build/kbench")
ROWS = [(32768, 4096), (32768, 8192), (32768, 16384), (32768, 5003), (8192, 50257)]
LONG = [(4096, 65536), (4096, 131072), (4096, 262144), (4096, 200003)]
REDUCE = [(32768, 8192), (32768, 5003), (8192, 50257), (4096, 200003)]
SIZES = {"softmax": ROWS + LONG, "layernorm": ROWS + LONG, "rmsnorm": ROWS, "sum": REDUCE, "max": REDUCE,
         "colsum": [(32768, 8192), (32768, 5003), (8192, 50257)],
         "transpose": [(32768, 8192), (32768, 5003), (8192, 50257)]}


def cluster(n, per):
    """The cluster size for a row of n, per elements a block: 2, 4, 8 or 16."""
    c = 2
    while c * per < n:
        c *= 2
    return c if c <= 16 else None


def regs(vpt, per_vec):
    """Defines for a one-block-a-row kernel holding VPT vectors a thread."""
    return lambda n: ["--define", f"VPT={vpt}"] if n <= 1024 * per_vec * vpt else None


def pow8(f):
    """Only rows that are a multiple of 8 elements (else the kernel's scalar path)."""
    return lambda n: f(n) if n % 8 == 0 else None


def fixed(limit):
    return lambda n: [] if n <= limit else None


def clus(per, extra=()):
    def f(n):
        c = cluster(n, per)
        return ["--define", f"CLUSTER={c}", *extra] if c and n > 16384 else None
    return f


def ring_of(per16):
    """A ring kernel past 16384 (softmax_bf16_ring.cu, layernorm_bf16_ring.cu,
    layernorm/04_ring.cu; per16 elements a 16-byte vector): the smallest
    cluster whose slices are at most 8 of its 16 KiB chunks (5 of the 13 left
    to load the next row).  (The LayerNorm rings' WS = 1, weights in shared
    memory, needs slices a quarter the size: 26.8-32.8% of copy on an H200,
    bench/layernorm_ring_h200.txt, and 41-61% with OUT = 1 STATS = 1,
    2026-11-28, lost at every long row.)"""
    def f(n):
        c = 1
        while c <= 16 and -(-(n // per16) // c) > 8 * 1024:
            c *= 2
        return ["--define", f"CLUSTER={c}"] if c <= 16 and n > 16384 else None
    return f


ring, ring_f32 = ring_of(8), ring_of(4)


def ring32(twice=False, extra=()):
    """softmax/09_ring.cu, rmsnorm/04_ring.cu: ring_f32's cluster (4 elements
    a uint4, so twice the bf16 one); twice: the next cluster up."""
    def f(n):
        a = ring_f32(n)
        c = int(a[1].split("=")[1]) * (2 if twice else 1) if a else 32
        return ["--define", f"CLUSTER={c}", *extra] if c <= 16 else None
    return f


# (issue 31: the rings' OUT = 1 STATS = 1 lost at every long row on the H200
# of 2026-11-28T11:49Z, 57-71% of copy; so did softmax's ring with
# LayerNorm's arithmetic, 07_ring.cu and layernorm_bf16_ring2.cu, 56-71% at
# 13:38Z, and the same with w and b in a shared-memory window, WS = 1 or 2,
# 36-75% at 13:53Z, its larger clusters and fewer slots costing more than
# the L2 reads it saves: bench/layernorm_ring3_h200.txt.  None is a
# candidate; the files stay in kernels/layernorm as the record.)
# issue 31's per-row protocol of RMSNorm (layernorm/04_ring.cu SUMS = 1:
# one shift a row, sums added), with one load of w and b a vector (WN), or
# in 32 KiB chunks (U4: half the chunks a row, so half the output pass's
# serial L2 round trips for w and b; 7 slots, 224 KiB)
SUMS = ("--define", "OUT=1", "--define", "SUMS=1")


U4 = ("--define", "U=4", "--define", "NSLOT=7")


# PF = 1: the slice a wave of clusters ahead prefetched into L2, by bulk
# prefetches (PFB = 1: equal or up to 1.7% faster than a prefetch a line at
# every LayerNorm row, H200 2026-11-28T23:06Z, bench/layernorm_wsm_h200.txt)
PF = ("--define", "PF=1", "--define", "PFB=1")
# XA = 1: the cluster's pairs by st.async into the peers' slots, no cluster
# barrier a row (whose arrive.release waits for every warp's stores of y):
# one row a cluster (PIPE = 0) 3-5 points faster at bf16 8192 x 50257 (78 ->
# 81% of copy), 4096 x 131072 (86 -> 90%) and 262144 (80 -> 85%) and f32
# 8192 x 50257 at four blocks an SM (80 -> 85%); slower with the window
# (PIPE = 1) too since its wait spills no more: f32 4096 x 200003 73 -> 78%,
# bf16 72 -> 76%, the 50257 rows even with one row a cluster: H200
# 2026-11-28T23:34Z, 23:37Z and 23:49Z, bench/layernorm_wsm_h200.txt
XA = ("--define", "XA=1")
MINB4 = ("--define", "MINB=4")
# MAXR = 48: layernorm_bf16_aligned.cu capped at 48 registers, 8 blocks of
# 160 threads an SM where NVRTC's 55 fit 7: 32768 x 5003 83 -> 86% of copy
# (H200 2026-11-29T01:32Z, bench/layernorm_wsm_h200.txt); FZ = 1 its output
# as two fmas (1% faster beside another option in that run)
MAXR48 = ("--define", "MAXR=48")
FZ = ("--define", "FZ=1")
# (issue 31: rows a cluster, layernorm/10_rows.cu and layernorm_bf16_rows.cu,
# w and b read once for 2 or 4 rows, lost at all six rows under target on
# the H200 of 2026-11-28T20:42Z: 43-73% of copy against the best's 68-83%,
# and 63-79% at ROWS = 1, the same file's overhead alone:
# bench/layernorm_rows_h200.txt.  Not candidates; the files were removed
# after that run, b7a9c88 has them.)


def clu(per16, vpt, extra=(), most=512):
    """layernorm/06_cluster.cu, layernorm_bf16_cluster.cu (issue 31: a row
    in registers across a cluster, two blocks an SM) past 16384: the smallest
    cluster (2..16) whose ranks hold a slice at VPT vectors a thread in at
    most 512 threads, and the fewest warps that hold it (416 at 50257 and
    200003, 512 at the powers of two); extra: PF = 1, the slice a wave of
    clusters ahead prefetched into L2, and PRE = 1, w and b prefetched into
    L1 through the cluster's wait.  most: the threads a block may take
    (256 with MINB = 4: four blocks an SM, each one's barriers covered by
    three others; bf16 4096 x 131072 85% of copy against 83% at 512 x 2,
    H200 2026-11-28T21:04Z, bench/layernorm_wsm_h200.txt)."""
    def f(n):
        if n <= 16384:
            return None
        c = 2
        while c <= 16 and -(-(n // per16) // c) > most * vpt:
            c *= 2
        if c > 16:
            return None
        t = 32 * -(-(-(-(n // per16) // c)) // (32 * vpt))
        return ["--define", f"CLUSTER={c}", "--define", f"VPT={vpt}", "--define", f"THREADS={t}", *extra]
    return f


def wsm(per16, minb=2, vpt=8):
    """The same files at WSM = 1 (issue 31): persistent clusters (PIPE = 1,
    LOOK = 0, WAVE = 0: sm_count x MINB / CLUSTER of them), each block's
    window of w and b read from L2 once into shared memory, 32 (PER + 1)
    bytes, at VPT vectors a thread and PF = 1: the smallest cluster (2..16)
    whose window leaves room for MINB blocks an SM (PER <= 3500 vectors a
    rank at 2, 1700 at 4), the fewest warps that hold the slice.  On the
    H200 (bench/layernorm_wsm_h200.txt) MINB = 2 leads at f32 4096 x 200003
    and the bf16 odd rows, MINB = 4 at f32 8192 x 50257 (80% of copy).
    VPT = 7: a rank's 3126 vectors at 200003 in 448 x 7 (99.7% of them
    used) where VPT = 8 takes 416 x 8 (94%), and no spill in f32 (VPT = 8
    spills 12 bytes there): f32 4096 x 200003 78 -> 82% of copy on the
    H200 of 2026-11-29T01:03Z and 01:05Z (bench/layernorm_wsm_h200.txt,
    twelfth run)."""
    most = 3500 if minb == 2 else 1700
    def f(n):
        if n <= 16384:
            return None
        c = 2
        while c <= 16 and -(-(n // per16) // c) > most:
            c *= 2
        if c > 16:
            return None
        t = 32 * -(-(-(-(n // per16) // c)) // (32 * vpt))
        return ["--define", f"CLUSTER={c}", "--define", f"VPT={vpt}", "--define", f"THREADS={t}", "--define", f"MINB={minb}",
                *PF, *XA, "--define", "PIPE=1", "--define", "LOOK=0", "--define", "WSM=1", "--define", "WAVE=0"]
    return f


def twopass(vec, threads, limit=16384, extra=()):
    """The two-pass kernels (05_twopass.cu, 08_twopass.cu and their bf16
    twins: the row read again from cache, as torch.compile's Triton does)
    at THREADS threads with the whole row's loads in flight in one step
    (U = n / (THREADS vec), 1 to 8: the best tune point, or within 1% of
    it, at the rows scripts/gpu-twopass.sh tuned on an H200), for rows a
    multiple of their vector up to limit elements (past it the rows in
    flight outgrow L2)."""
    def f(n):
        u = n // (threads * vec)
        if n % vec or n > limit or u not in (1, 2, 4, 8) or u * threads * vec != n:
            return None
        return ["--define", f"THREADS={threads}", "--define", f"U={u}", *extra]
    return f


def twopasses(path, vec, limit=16384, extra=()):
    """A two-pass file at 256, 512 and 1024 threads (H200, 13:23Z: the
    best block size was 512 at rows of 16 and 32 KB, 1024 at 64 KB, 256
    for LayerNorm f32 at 16 KB); extra: its other defines (U2 = 2, the
    second pass's loads two a thread, for LayerNorm f32: 249.1 against
    259.3 us at 32768 x 4096)."""
    return [(path, twopass(vec, t, limit, extra)) for t in (256, 512, 1024)]


def warp_rows(n):
    """A warp a row (ROWS = 8 of 256 threads) for rows up to 16384 bf16."""
    return ["--define", "ROWS=8"] if n <= 16384 else None


def col_cluster(n):
    """col_sum_bf16_vec.cu: 16 blocks a 248-column strip where strips are
    few (N = 5003: 21 strips, 336 blocks), 4 where they are many."""
    return ["--define", f"CLUSTER={16 if n <= 16384 else 4}"]


def col_deep(n):
    """col_sum_f32.cu with 16 loads in flight a thread (still 32 registers,
    two blocks of 1024 an SM): 64 KB a block, 10 MB over N = 5003's 157
    blocks where UNROLL = 8's 5 MB gave 78.5% of copy (H200)."""
    return ["--define", "UNROLL=16"]


def col_vec(n):
    """col_sum_f32_vec.cu (512 threads, 32 KB in flight a block, 4 blocks an
    SM): the largest cluster whose blocks all fit at once on 132 SMs (528):
    N = 5003's 41 strips of 124 columns x 8, 8192's 67 x 4, 50257's 406 x 1."""
    strips, c = -(-n // 124), 16
    while c > 1 and strips * c > 528:
        c //= 2
    return ["--define", f"CLUSTER={c}"]


def col_full(n):
    """col_sum_bf16_vec.cu at CLUSTER = 8 x 1024 threads where strips are
    few enough that every block is in at once (33 strips at 8192: 264
    blocks, 2 an SM at 32 registers): twice 8 x 512's warps an SM.  Under
    ncu (L2 flushed, clocks free, H200 2026-11-29T03:38Z) 8 x 512 read 78%
    of DRAM's peak at 32768 x 8192, 143 us, where PyTorch's reduce_kernel
    (2112 blocks of 128, 16 an SM) read 83%, 134 us: loads in flight.
    In the table (03:44Z) it lost there (76.2% of copy against CLUSTER = 16
    U = 8's 89.7%) and led at 32768 x 5003 by half a point (89.8%)."""
    return ["--define", "CLUSTER=8", "--define", "THREADS=1024"] if n <= 8192 else None


def col_wide(extra, limit):
    """col_sum_bf16_vec.cu at CLUSTER = 16 with twice the default's 16 KB in
    flight a block (THREADS = 512 at 32 registers: 4 blocks an SM, or U = 8
    at 40: 6 of 256 threads), up to limit columns (past it the clusters
    would not all fit at once: 33 strips of 16 x 512 threads at 8192, 203
    of 4 at 50257): N = 5003's 21 strips x 16 = 336 blocks keep 10.7 MB in
    flight, where the 5.4 MB of CLUSTER = 16 (or 8 x 512) gave 68.7%."""
    return lambda n: ["--define", "CLUSTER=16", *extra] if n <= limit else None


S, L, R, N_, T = "kernels/softmax/", "kernels/layernorm/", "kernels/rmsnorm/", "kernels/reduce/", "kernels/transpose/"
# (op, dtype) -> [(file, defines(n) -> kbench arguments, or None where it cannot run n)]
# Not candidates since 2026-11-29 (each at least 10 points of copy under the
# best at every size it ran in the one-run H200 table of 2026-11-28T21:11Z,
# bench/gallery_h200.txt; dropped so that every op fits one device call on
# one GPU): softmax f32 08_bulk.cu at clus(8192) and at VPT = 8 (11-15
# points under), 09_ring.cu at twice its cluster (17); softmax bf16
# softmax_bf16_cluster_async.cu and its PIPE = 1 (25-38), softmax_bf16_bulk.cu,
# its LEAN = 1 and its VPT = 3 at two blocks an SM (16-35),
# softmax_bf16_aligned.cu at VPT = 8 (22); rmsnorm f32 04_ring.cu at twice
# its cluster with NSLOT = 8 (17).  The files stay, with their emulator
# cases and sessions.  Nor, since the two one-run tables of 2026-11-29
# (01:40Z and 03:13Z, two H200s) put each 10 or more points under the best
# at every size: LayerNorm's rings without U4 (plain, and WN = 1) and in
# shapes cutting an odd slice into 3 whole chunks (NSLOT = 6, 544 threads x
# U = 4 or 352 x 6), f32 and bf16 (12-22 points under).  04_ring.cu in
# clusters of 6 (3 to a GPC of 18 SMs, where 8 fit 2) read 68.5% of copy
# at f32 4096 x 262144 and 64.5% at 200003 beside clusters of 8's 86.5% and
# 64.0% (2026-11-29T03:32Z, GPU-ecd5814b: 17 clusters of 6 at once, 102
# SMs, against 15 of 8): not a candidate.  Nor LayerNorm bf16's two-pass
# kernel with U2 = 2 (the f32 one's second pass): 95.2% against 96.5% at
# 32768 x 16384, 83.1 against 83.4% and 57.9 against 57.4% at 8192 and
# 4096 (03:44Z).
CANDIDATES = {
    ("softmax", "f32"): [(S + "05_registers.cu", regs(4, 4)), (S + "05_registers.cu", lambda n: ["--define", "VPT=8"] if 16384 < n <= 32768 else None),
                         (S + "07_cluster_async.cu", clus(16384)),
                         (S + "08_bulk.cu", lambda n: clus(16384, ("--define", "VPT=8", "--define", "NBUF=2"))(n) if n > 131072 else None),
                         (S + "09_ring.cu", ring32())],
    ("softmax", "bf16"): [(S + "softmax_bf16.cu", pow8(fixed(32768))), (S + "softmax_bf16_aligned.cu", regs(4, 8)),
                          (S + "softmax_bf16_ring.cu", ring)],
    ("layernorm", "f32"): [(L + "02_registers.cu", fixed(16384)),
                           (L + "02_registers.cu", lambda n: ["--define", "VPT=8"] if 8192 < n <= 16384 else None),
                           (L + "04_ring.cu", ring32(False, SUMS + U4)),
                           (L + "06_cluster.cu", clu(4, 8, PF)), (L + "06_cluster.cu", clu(4, 8, PF + XA)),
                           (L + "06_cluster.cu", clu(4, 8, PF + XA + MINB4, 256)),
                           (L + "06_cluster.cu", wsm(4)), (L + "06_cluster.cu", wsm(4, 4)),
                           (L + "06_cluster.cu", wsm(4, vpt=7)),
                           *twopasses(L + "08_twopass.cu", 4, extra=("--define", "U2=2"))],
    ("layernorm", "bf16"): [(L + "layernorm_bf16.cu", pow8(fixed(32768))), (L + "layernorm_bf16_aligned.cu", regs(4, 8)),
                            (L + "layernorm_bf16_aligned.cu", lambda n: ["--define", "VPT=4", "--define", "OUT=1"]
                             if n <= 32768 and n % 8 else None),
                            (L + "layernorm_bf16_aligned.cu", lambda n: [*MAXR48, "--define", "VPT=4", "--define", "OUT=1"]
                             if n <= 32768 and n % 8 else None),
                            (L + "layernorm_bf16_aligned.cu", lambda n: [*MAXR48, *FZ, "--define", "VPT=4", "--define", "OUT=1"]
                             if n <= 32768 and n % 8 else None),
                            (L + "layernorm_bf16_ring.cu", lambda n: ring(n) and ring(n) + [*SUMS, *U4]),
                            (L + "layernorm_bf16_cluster.cu", clu(8, 8, PF)),
                            (L + "layernorm_bf16_cluster.cu", clu(8, 8, PF + XA)),
                            (L + "layernorm_bf16_cluster.cu", clu(8, 8, PF + XA + MINB4, 256)),
                            (L + "layernorm_bf16_cluster.cu", wsm(8)), (L + "layernorm_bf16_cluster.cu", wsm(8, vpt=7)),
                            *twopasses(L + "layernorm_bf16_twopass.cu", 8, 32768)],
    ("rmsnorm", "f32"): [(R + "02_registers.cu", fixed(16384)), (R + "03_bulk.cu", clus(8192)),
                         (R + "04_ring.cu", ring32()),
                         (R + "04_ring.cu", ring32(False, ("--define", "PF=1"))),
                         *twopasses(R + "05_twopass.cu", 4)],
    ("rmsnorm", "bf16"): [(R + "rmsnorm_bf16.cu", pow8(fixed(32768))), (R + "rmsnorm_bf16_aligned.cu", regs(4, 8)),
                          (R + "rmsnorm_bf16_aligned.cu", lambda n: ["--define", "VPT=8"] if 32768 < n <= 65536 else None),
                          *twopasses(R + "rmsnorm_bf16_twopass.cu", 8, 32768)],
    ("sum", "f32"): [(N_ + "02_vec4.cu", lambda n: [] if n % 4 == 0 else None), (N_ + "03_aligned.cu", fixed(1 << 30))],
    ("sum", "bf16"): [(N_ + "row_sum_bf16.cu", pow8(fixed(1 << 30))), (N_ + "row_sum_bf16_aligned.cu", fixed(1 << 30)),
                      (N_ + "row_sum_bf16_aligned.cu", warp_rows)],
    ("max", "f32"): [(N_ + "row_max_f32.cu", lambda n: [] if n % 4 == 0 else None), (N_ + "row_max_f32_aligned.cu", fixed(1 << 30))],
    ("max", "bf16"): [(N_ + "row_max_bf16_aligned.cu", fixed(1 << 30)), (N_ + "row_max_bf16_aligned.cu", warp_rows)],
    ("colsum", "f32"): [(N_ + "col_sum_f32.cu", fixed(1 << 30)), (N_ + "col_sum_f32.cu", col_deep),
                        (N_ + "col_sum_f32_vec.cu", col_vec)],
    ("colsum", "bf16"): [(N_ + "col_sum_bf16.cu", fixed(1 << 30)), (N_ + "col_sum_bf16_vec.cu", col_cluster),
                         (N_ + "col_sum_bf16_vec.cu", lambda n: ["--define", "CLUSTER=8", "--define", "THREADS=512"]
                          if n <= 16384 else None),
                         (N_ + "col_sum_bf16_vec.cu", col_wide(["--define", "THREADS=512"], 8191)),
                         (N_ + "col_sum_bf16_vec.cu", col_wide(["--define", "U=8"], 16384)),
                         (N_ + "col_sum_bf16_vec.cu", col_full)],
    ("transpose", "f32"): [(T + "03_tile64.cu", fixed(1 << 30))],
    ("transpose", "bf16"): [(T + "transpose_bf16.cu", fixed(1 << 30)), (T + "transpose_bf16_aligned.cu", fixed(1 << 30))],
}


def log_tail(message, lines=12):
    """The last lines of the runner log a crash's message names ("its log,
    PATH, ends: ..."; before 2026-11-29 "see its log in PATH"), where this
    machine still has it."""
    m = re.search(r"(?:log in|its log,) (\S+?\.log)", message or "")
    try:
        with open(m.group(1), errors="replace") as f:
            return [l.rstrip() for l in f.readlines()[-lines:]]
    except (AttributeError, OSError):
        return []


def kbench(path, m, n, op, extra):
    rows, cols = ("R", "C") if op == "transpose" else ("M", "N")
    cmd = [KB, "run", path, "--arg", f"{rows}={m}", "--arg", f"{cols}={n}", "--no-sweep",
           "--json", "--trials", "1", "--timeout", "120"] + list(extra or [])
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        r = json.loads(p.stdout)
    except Exception:
        return {"verdict": f"NO JSON (rc {p.returncode}): {p.stderr.strip()[-200:]}"}
    rf, t = r.get("roofline", {}), r.get("timing", {})
    return {"verdict": r.get("verdict") or r.get("status"), "message": (r.get("message") or "")[:300] or None,
            "us": t.get("median_us"),
            "cv": t.get("cv"), "GBps": rf.get("GBps"), "bytes": rf.get("bytes"),
            "pct_copy": rf.get("pct_of_measured_copy"), "wall_s": round(time.time() - t0, 1),
            "gpu": r.get("env", {}).get("device", {}).get("name")}


# ---- PyTorch ---------------------------------------------------------------

L2 = torch.cuda.get_device_properties(0).L2_cache_size
FLUSH = torch.empty(2 * L2 // 4, dtype=torch.float32, device="cuda")


# torch.cuda._sleep's cycles for PAD_US: the GPU kept busy after the flush
# while the host queues the first event, the operation and the second
PAD_US = 300
CLOCK_KHZ = getattr(torch.cuda.get_device_properties(0), "clock_rate", 1980000)  # _sleep counts cycles


def time_op(fn, reps=30, pad_us=PAD_US):
    """Median ms of fn over reps launches, each after an L2 flush.  The GPU
    spins pad_us after the flush (one block, no memory traffic), so the
    whole operation is queued before the first event is reached: the span
    is the GPU's time for it, not PyTorch's host dispatch as well.  Without
    the pad, an operation whose first kernel took the host longer to queue
    than the flush took to run was charged for the wait: SDPA at 16 x 16 x
    1024 x 128 read 6.8% slower, torch.mm 4096^3 1.9% (H200, 2026-11-28,
    bench/torch_timing_check.py; pad_us = 0 times as before)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        FLUSH.zero_()
        if pad_us:
            torch.cuda._sleep(int(pad_us * CLOCK_KHZ / 1000))
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
    if op == "colsum":
        return lambda: torch.sum(x, dim=0, dtype=torch.float32)
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


def pick(arg, every):
    return every if arg in (None, "", "all") else [type(every[0])(a) for a in arg.split(",")]


def main():
    out = os.environ.get("OUT")
    log = open(os.path.join(out, "gallery.jsonl"), "w") if out else None
    ops = pick(sys.argv[1] if len(sys.argv) > 1 else None, list(SIZES))
    dts = pick(sys.argv[2] if len(sys.argv) > 2 else None, ["f32", "bf16"])
    ns = pick(sys.argv[3] if len(sys.argv) > 3 else None, [0])
    skip = os.environ.get("GALLERY_SKIP")  # a regex: the candidates whose name it matches are not run
    print(f"kbench gallery vs PyTorch {torch.__version__}  {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}"
          f"  {torch.cuda.get_device_name(0)}  (L2 flushed before every launch, medians; the best"
          f" CORRECT kernel of bench/gallery.py's CANDIDATES, the others' %copy after |)")
    print(f"{'op':9s} {'dtype':5s} {'size':>12s} {'best kernel':50s} {'verdict':9s} {'kbench us':>10s} {'GB/s':>6s}"
          f" {'%copy':>6s} | {'torch us':>9s} {'%copy':>6s} {'which':7s} {'speedup':>7s} | others")
    for op in ops:
        for dt in dts:
            for m, n in SIZES[op]:
                if ns != [0] and n not in ns:
                    continue
                runs, notes = [], []
                for path, defs in CANDIDATES[(op, dt)]:
                    extra = defs(n)
                    if extra is None or not os.path.exists(path):
                        continue
                    name = os.path.basename(path) + "".join(" " + a.split("=")[0] + "=" + a.split("=")[1]
                                                            for a in extra if "=" in a)
                    if skip and re.search(skip, name):
                        continue
                    k = kbench(path, m, n, op, extra)
                    if k.get("verdict") == "crash":
                        # kbench's runner died (a verdict of the harness, not
                        # of the kernel): run it once more, and say so under
                        # the row with what the crash said
                        first = k
                        k = kbench(path, m, n, op, extra)
                        k["crashed_first"] = {"verdict": "crash", "message": first.get("message")}
                        notes.append(f"  ^ {name}: kbench's runner crashed on the first run ({first.get('message')});"
                                     f" run again: {k.get('verdict')}")
                        notes += [f"  ^   {line}" for line in log_tail(first.get("message"))]
                    runs.append((name, k))
                    if log:
                        log.write(json.dumps({"file": path, "args": extra, "op": op, "dtype": dt, "m": m, "n": n,
                                              "kbench": k}) + "\n")
                        log.flush()
                f = lambda v, fmt: (fmt % v) if isinstance(v, (int, float)) else "-"
                if not runs:
                    print(f"{op:9s} {dt:5s} {f'{m}x{n}':>12s} {'no kernel':50s}", flush=True)
                    continue
                good = [r for r in runs if r[1].get("verdict") == "CORRECT" and r[1].get("us")]
                name, k = min(good, key=lambda r: r[1]["us"]) if good else runs[0]
                others = "  ".join(f"{nm}:{f(o.get('pct_copy'), '%.1f%%') if o.get('verdict') == 'CORRECT' else str(o.get('verdict'))[:12]}"
                                   for nm, o in runs if o is not k)
                try:
                    t_eager, t_comp = torch_times(op, dt, m, n)
                except Exception as e:  # out of memory, an op PyTorch lacks: the kbench side still prints
                    print(f"  (torch {op} {dt} {m}x{n}: {type(e).__name__}: {str(e)[:100]})", file=sys.stderr)
                    t_eager, t_comp = None, None
                ts = [t for t in (t_eager, t_comp) if t is not None]
                t_best = min(ts) * 1e3 if ts else None
                which = "-" if t_best is None else "compile" if t_comp is not None and t_comp * 1e3 <= t_best else "eager"
                copy = k["GBps"] * 100 / k["pct_copy"] if k.get("pct_copy") else None
                tpct = k["bytes"] / (t_best * 1e-6) / 1e9 * 100 / copy if copy and k.get("bytes") and t_best else None
                sp = t_best / k["us"] if k.get("us") and t_best else None
                print(f"{op:9s} {dt:5s} {f'{m}x{n}':>12s} {name:50s} {str(k['verdict'])[:9]:9s}"
                      f" {f(k.get('us'), '%10.1f')} {f(k.get('GBps'), '%6.0f')} {f(k.get('pct_copy'), '%5.1f%%')}"
                      f" | {f(t_best, '%9.1f')} {f(tpct, '%5.1f%%')} {which:7s} {f(sp, '%6.2fx')} | {others}", flush=True)
                for line in notes:
                    print(line, flush=True)
                if log:
                    log.write(json.dumps({"row": True, "op": op, "dtype": dt, "m": m, "n": n, "best": name,
                                          "kbench": k, "torch_eager_us": t_eager * 1e3 if t_eager else None,
                                          "torch_compile_us": t_comp * 1e3 if t_comp else None}) + "\n")
                    log.flush()


if __name__ == "__main__":
    main()
