#!/usr/bin/env python3
"""A CPU model of where the LayerNorm and RMSNorm rings' output passes read
their weights under the defines of issue 31 (the host emulator has no
mbarriers, bulk copies or clusters, so these kernels cannot run there):
  layernorm/04_ring.cu, layernorm_bf16_ring.cu (EPV = 4 f32, 8 bf16):
    OUT = 1 PF = 1  each chunk's aligned vectors j and j + 1 of w and b
                    loaded during the chunk before, the next row's first
                    chunk's during this row's last (the registers carried
                    across rows: their vectors must not depend on the
                    row's head), vector j clamped to jlim;
    OUT = 1 WS = 1  window vectors min(gi, ng - 1) and the next, the window
                    PER + 1 vectors from element EPV * g0, 0 past N;
  rmsnorm/04_ring.cu PF = 1: 4 floats at w + head + 4 * (g0 + min(gi, ng - 1)).
For every width, cluster, rank and chunk size given, rows of random heads
(every head the width allows) go through the pipeline as the kernel runs
it; checks that every load is inside w (whole vectors inside, the guarded
scalars of the next vector past N read as 0), that the registers a chunk
uses hold the vectors its own index asks for, and that the shifted weights
of every used vector are w[head + EPV * (g0 + gi) + i].  The kernels' text
is not read: a change to their indexing needs the same change here.
Usage: python3 bench/layernorm_weights_model.py   (prints a line a case and
`ok` or the first mismatch; exits 1 on any)"""
import random
import sys


def split(N, head, EPV, CLUSTER, rank, CH):
    """The kernels' split(): head, whole vectors, this rank's g0, ng, nc."""
    head = min(N, head)
    nv = (N - head) // EPV
    per = (N // EPV + CLUSTER - 1) // CLUSTER
    g0 = rank * per
    ng = max(0, min(nv - g0, per))
    nc = max(1, (ng + CH - 1) // CH)
    return head, nv, per, g0, ng, nc


def next_vec(w, j, EPV):
    """next4 / next8: vector j + 1, or its elements inside w (0 past N)."""
    N = len(w)
    e = EPV * j + EPV
    if e + EPV <= N:
        return w[e:e + EPV]
    return [w[e + i] if i < EPV - 1 and e + i < N else 0 for i in range(EPV)]


def wt_load(w, j, EPV):
    N = len(w)
    assert 0 <= j and EPV * j + EPV <= N, ("vector j outside w", j, N)
    return w[EPV * j:EPV * j + EPV] + next_vec(w, j, EPV)


def check_pf(N, EPV, CLUSTER, THREADS, U, rows):
    """OUT = 1 PF = 1: returns an error text or ''."""
    w = list(range(1, N + 1))
    CH = THREADS * U
    per = (N // EPV + CLUSTER - 1) // CLUSTER
    for rank in range(CLUSTER):
        jlim = min(rank * per + per, N // EPV) - 1
        if jlim < 0:
            continue  # no row has a vector: out_pass never runs
        pos = lambda c, k, t: min(rank * per + c * CH + t + k * THREADS, jlim)
        for t in range(THREADS):
            pw = {k: (pos(0, k, t), wt_load(w, pos(0, k, t), EPV)) for k in range(U)}
            for head in rows:
                h, nv, _, g0, ng, nc = split(N, head, EPV, CLUSTER, rank, CH)
                if ng == 0:
                    continue  # the generic loop: pw untouched
                for c in range(nc):
                    cn = c + 1 if c + 1 < nc else 0
                    for k in range(U):
                        (j, cur) = pw[k]
                        pw[k] = (pos(cn, k, t), wt_load(w, pos(cn, k, t), EPV))
                        gi = c * CH + t + k * THREADS
                        if gi >= ng:
                            continue
                        if j != g0 + gi:
                            return f"rank {rank} head {h} chunk {c}: vector {j} for {g0 + gi}"
                        e = h + EPV * (g0 + gi)
                        if cur[h:h + EPV] != w[e:e + EPV]:
                            return f"rank {rank} head {h} chunk {c} thread {t}: {cur[h:h + EPV]} for w[{e}..]"
    return ""


def vectors(N, EPV, CLUSTER, THREADS, U, rows):
    """Every (rank, head, g0, ng, chunk, thread, gi) of the output passes of
    rows (their heads) that have a vector on that rank."""
    CH = THREADS * U
    for rank in range(CLUSTER):
        for head in rows:
            h, nv, per, g0, ng, nc = split(N, head, EPV, CLUSTER, rank, CH)
            for c in range(nc if ng else 0):
                for k in range(U):
                    for t in range(THREADS):
                        yield rank, h, g0, ng, c, t, c * CH + t + k * THREADS


def check_ws(N, EPV, CLUSTER, THREADS, U, rows):
    """OUT = 1 WS = 1: window reads inside the window and the right weights."""
    w = list(range(1, N + 1))
    per = (N // EPV + CLUSTER - 1) // CLUSTER
    wins = []
    for rank in range(CLUSTER):
        e0, n = EPV * rank * per, EPV * (per + 1)
        wins.append([w[e0 + i] if e0 + i < N else 0 for i in range(n)])
    for rank, h, g0, ng, c, t, gi in vectors(N, EPV, CLUSTER, THREADS, U, rows):
        gc = min(gi, ng - 1)
        if gc + 1 > per:
            return f"rank {rank} chunk {c}: window vector {gc + 1} of {per + 1}"
        got, e = wins[rank][EPV * gc + h:EPV * gc + h + EPV], h + EPV * (g0 + gi)
        if gi < ng and got != w[e:e + EPV]:
            return f"rank {rank} head {h} chunk {c} thread {t}: {got} for w[{e}..]"
    return ""


def check_rms(N, CLUSTER, THREADS, U, rows):
    """rmsnorm/04_ring.cu PF = 1: every scalar load inside w, the used ones right."""
    for rank, h, g0, ng, c, t, gi in vectors(N, 4, CLUSTER, THREADS, U, rows):
        e = h + 4 * (g0 + min(gi, ng - 1))
        if e < 0 or e + 3 >= N:
            return f"rank {rank} head {h} chunk {c}: load at {e} of {N}"
        if gi < ng and e != h + 4 * (g0 + gi):
            return f"rank {rank} head {h} chunk {c}: a used vector clamped"
    return ""


def main():
    random.seed(1)
    bad = 0
    cases = []
    for EPV in (4, 8):
        for N, CLUSTER, THREADS, U in [(13, 2, 512, 2), (5003, 2, 512, 2), (5003, 8, 64, 2), (50257, 2, 512, 2),
                                       (50257, 4, 544, 2), (65536, 4, 512, 2), (200003, 8, 512, 2),
                                       (200003, 8, 544, 2), (4099, 4, 32, 1), (7, 1, 32, 2), (3, 2, 32, 1)]:
            cases.append((EPV, N, CLUSTER, THREADS, U))
    for EPV, N, CLUSTER, THREADS, U in cases:
        heads = [h for h in range(EPV) if h <= N]
        rows = heads + [random.choice(heads) for _ in range(4)]
        for name, f in (("PF", lambda: check_pf(N, EPV, CLUSTER, THREADS, U, rows)),
                        ("WS", lambda: check_ws(N, EPV, CLUSTER, THREADS, U, rows)),
                        ("RMS PF", lambda: check_rms(N, CLUSTER, THREADS, U, rows) if EPV == 4 else "")):
            err = f()
            bad += bool(err)
            print(f"{'f32' if EPV == 4 else 'bf16'} N={N} CLUSTER={CLUSTER} THREADS={THREADS} U={U} {name}: {err or 'ok'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
