#!/usr/bin/env python3
"""A CPU model of layernorm/04_ring.cu's SUMS = 1 and WN = 1 (issue 31; the
host emulator has no mbarriers, bulk copies or clusters, so the ring cannot
run there):
  SUMS = 1  (and layernorm_bf16_ring.cu's, 8 bf16 a vector, heads 0..7,
            the values rounded to bf16) every rank's consumers sum x - K and (x - K)^2 over their part
            of the slice (the padding past ng left out), rank 0's head and
            the last rank's tail beside them; the sums are added in the
            warp (a butterfly), the block (warp 0 over the warps' sums) and
            the cluster (every rank's pair); K is the median of the row's
            elements 0, (N - 1) / 2 and twice that, which every rank's
            producer loads and leaves in edge[][7] beside the first chunk
            (after the last chunk's edges, which a one-chunk row shares): the
            same K in every rank, near the mean where element 0 is a channel
            of outliers.  mean = K + S1 / N, var =
            S2 / N - (S1 / N)^2, in f32 as the kernel rounds them.
  WN = 1    (OUT = 1) a thread's weights for vector gi at head H: its own
            aligned float4 j = g0 + min(gi, ng - 1) and, for H > 0, the next
            lane's (a shuffle down: j + 1 where that lane's vector is gi + 1)
            or, on lane 31 and the slice's last vector (`own`), its own load
            of vector j + 1 (wnext: the whole float4 where inside w, else its
            first H floats).
Checks, for widths, clusters, chunk sizes (U = 1, 2, 4) and every head:
every element of the row is summed once (rank slices, head, tail); the
statistics are within 2e-6 standard deviations plus 1e-6 relative (mean:
f32's rounding of 100) and 2e-5 relative (variance) of double's, rows with
mean 0 and 100 and with element 0 raised by 3000; every weight load is inside
w and every used vector's 4 weights are w[head + 4 * (g0 + gi) + i].  The
kernel's text is not read: a change to its indexing needs the same change
here.  --mutant NAME breaks one rule the way a slip in the kernel would
(each must make the model fail):
  k0         K = 0 (no shift): the variance's digits lost at mean 100;
  kfirst     K = element 0 alone: lost where it is an outlier (+3000);
  korder     K written before the edges: a one-chunk row's K overwritten;
  krank      K each rank's own first element: the ranks' sums disagree;
  nopad      the padding past ng summed (its 0 - K and square);
  noown      only lane 31 loads its own next (not the slice's last vector);
  nolane31   only the slice's last vector loads its own next;
  fitfloor   fit3's THREADS rounded down (bench/gallery.py): a 4th chunk.
FIT (lnodd2, bench/gallery.py fit3): at 50257 and 200003 THREADS = 32 *
ceil(per / (96 U)) (544 at U = 4, 352 at U = 6), 6 slots: every rank's
slice, at every head, in at most 3 chunks of THREADS * U (2 rows in the
ring), and the cases above run again at those THREADS and U (11 and 17
warps: no power of two).
Usage: python3 bench/layernorm_sums_model.py [--mutant NAME]   (a line a
case, `ok` or the first mismatch; exits 1 on any)"""
import math
import random
import struct
import sys

MUT = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--mutant" else ""


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def bf16(v):
    """v rounded to bf16 (nearest, ties to even), as f32."""
    u = struct.unpack("I", struct.pack("f", v))[0]
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("f", struct.pack("I", u))[0]


def split(N, head, CLUSTER, rank, CH, EPV=4):
    """04_ring.cu's split() (EPV 8: layernorm_bf16_ring.cu's): head, whole
    vectors n4, tail, g0, ng, nc."""
    head = min(N, head)
    n4 = (N - head) // EPV
    tail = N - head - EPV * n4
    per = (N // EPV + CLUSTER - 1) // CLUSTER
    g0 = rank * per
    ng = max(0, min(n4 - g0, per))
    nc = max(1, (ng + CH - 1) // CH)
    return head, n4, tail, g0, ng, nc


def butterfly(vals):
    """warp_reduce by xor shuffles: lane i adds lane i ^ o, o = 16 .. 1 (every
    lane ends with the same sum, in this order); vals: 32 pairs."""
    v = list(vals)
    o = 16
    while o:
        v = [(f32(v[i][0] + v[i ^ o][0]), f32(v[i][1] + v[i ^ o][1])) for i in range(32)]
        o //= 2
    return v[0]


def producer_edges(row, h, n4, tail, rank, CLUSTER, nc, EPV):
    """What the producer leaves in edge[] beside a row's chunks (by chunk
    index), in its order: at the last chunk, lanes 0..15's e (the head on
    rank 0, lanes 0..h-1; the tail on the last rank, lanes 8..); then at
    the first, K in edge[][7]: the median of elements 0, (N - 1) / 2 and
    twice that, loaded by lanes 16..18 (K = 0 where nothing set it)."""
    N = len(row)
    e = [0.0] * 19
    for lane in range(8):
        if rank == 0 and lane < h:
            e[lane] = row[lane]
        if rank == CLUSTER - 1 and lane < tail:
            e[8 + lane] = row[h + EPV * n4 + lane]
    for lane in range(16, 19):
        e[lane] = row[(lane - 16) * ((N - 1) // 2)]
    a, b, c = e[16:19]
    k = max(min(a, b), min(max(a, b), c))
    if MUT == "k0":
        k = 0.0
    if MUT == "kfirst":
        k = a
    edge = {c: [0.0] * 16 for c in range(nc)}
    for c in range(nc):
        if MUT == "korder" and c == 0:
            edge[c][7] = k
        if c == nc - 1:
            edge[c][:] = e[:16]
        if MUT != "korder" and c == 0:
            edge[c][7] = k
    return edge


def sums_stats(x, CLUSTER, THREADS, U, EPV=4):
    """SUMS = 1's (mean, var) of row x (its head is x's own: the row starts at
    element 0 of an array whose first 16-byte boundary is `head` on, given
    as x[0] of the pair) in f32, and the elements it summed (index -> count)."""
    head, row = x
    N = len(row)
    CH = THREADS * U
    seen = [0] * N
    ranks = []
    for rank in range(CLUSTER):
        h, n4, tail, g0, ng, nc = split(N, head, CLUSTER, rank, CH, EPV)
        edge = producer_edges(row, h, n4, tail, rank, CLUSTER, nc, EPV)
        k = edge[0][7]  # the consumers' K: beside the row's first chunk
        if MUT == "krank":
            k = row[h + EPV * g0] if ng else row[0]
        thread = []
        for t in range(THREADS):
            s1 = s2 = 0.0
            for c in range(nc):
                for u in range(U):
                    gi = c * CH + t + u * THREADS
                    if gi >= ng and MUT != "nopad":
                        continue
                    e = h + EPV * (g0 + gi)
                    v = [row[e + i] if gi < ng else 0.0 for i in range(EPV)]
                    if gi < ng:
                        for i in range(EPV):
                            seen[e + i] += 1
                    d = [f32(vi - k) for vi in v]
                    if EPV == 4:
                        s1 = f32(s1 + f32(f32(d[0] + d[1]) + f32(d[2] + d[3])))
                        for di in reversed(d):  # fmaf(d0, d0, fmaf(d1, .. fmaf(d3, d3, s2)))
                            s2 = f32(di * di + s2)
                    else:  # a word (2 elements) at a time: a1 += d0 + d1, s2 = fmaf(d0, d0, fmaf(d1, d1, s2))
                        a1 = 0.0
                        for j in range(0, 8, 2):
                            a1 = f32(a1 + f32(d[j] + d[j + 1]))
                            s2 = f32(d[j] * d[j] + f32(d[j + 1] * d[j + 1] + s2))
                        s1 = f32(s1 + a1)
                if c == nc - 1:
                    for ok, idx, v in ((rank == 0 and t < h, t, edge[nc - 1][t] if t < 8 else 0),
                                       (rank == CLUSTER - 1 and t < tail, h + EPV * n4 + t, edge[nc - 1][8 + t] if t < 8 else 0)):
                        if ok:
                            d = f32(v - k)
                            seen[idx] += 1
                            s1, s2 = f32(s1 + d), f32(d * d + s2)
            thread.append((s1, s2))
        warps = [butterfly(thread[32 * i:32 * i + 32]) for i in range(THREADS // 32)]
        ranks.append(butterfly(warps + [(0.0, 0.0)] * (32 - len(warps))))
    g = butterfly(ranks + [(0.0, 0.0)] * (32 - CLUSTER))
    dm = f32(g[0] / N)
    mean = f32(k + dm)
    var = max(f32(f32(g[1] / N) - f32(dm * dm)), 0.0)
    return mean, var, seen


def check_sums(N, CLUSTER, THREADS, U, heads, mu, EPV=4, spike=0.0):
    """spike: added to element 0 (a channel of massive activations)."""
    for head in heads:
        rng = random.Random(N * 31 + head)
        row = [(f32 if EPV == 4 else bf16)(rng.gauss(mu, 1.0)) for _ in range(N)]
        row[0] = (f32 if EPV == 4 else bf16)(row[0] + spike)
        mean, var, seen = sums_stats((head, row), CLUSTER, THREADS, U, EPV)
        bad = [i for i in range(N) if seen[i] != 1]
        if bad:
            return f"head {head}: element {bad[0]} summed {seen[bad[0]]} times"
        m = math.fsum(row) / N
        v = math.fsum((r - m) ** 2 for r in row) / N
        if abs(mean - m) > 2e-6 * math.sqrt(v) + 1e-6 * abs(m) or abs(var - v) > 2e-5 * v:
            return f"head {head} mean {mu}: mean {mean} var {var}, double's {m} {v}"
    return ""


def wnext(w, j, H):
    """wnext<H>: vector j + 1, or its first H floats where it reaches past N."""
    N, e = len(w), 4 * j + 4
    if e + 4 <= N:
        return w[e:e + 4]
    for i in range(H):
        assert e + i < N, ("scalar past N", e + i, N)
    return [w[e + i] if i < H else 0 for i in range(4)]


def check_wn(N, CLUSTER, THREADS, U, heads):
    """WN = 1's weights of every used vector, warp by warp."""
    w = list(range(1, N + 1))
    CH = THREADS * U
    for rank in range(CLUSTER):
        for head in heads:
            h, n4, tail, g0, ng, nc = split(N, head, CLUSTER, rank, CH)
            if ng == 0:
                continue  # the generic loop
            for c in range(nc):
                for u in range(U):
                    for wp in range(THREADS // 32):
                        a, own, nxt = [], [], []
                        for lane in range(32):
                            gi = c * CH + 32 * wp + lane + u * THREADS
                            j = g0 + min(gi, ng - 1)
                            if not (0 <= j and 4 * j + 4 <= N):
                                return f"rank {rank} head {h}: vector {j} outside w ({N})"
                            a.append(w[4 * j:4 * j + 4])
                            o = lane == 31 or gi + 1 >= ng
                            if MUT == "noown":
                                o = lane == 31
                            if MUT == "nolane31":
                                o = gi + 1 >= ng
                            own.append(o)
                            try:
                                nxt.append(wnext(w, j, h) if h and o else [0] * 4)
                            except AssertionError as err:
                                return f"rank {rank} head {h} lane {lane}: {err}"
                        for lane in range(32):
                            gi = c * CH + 32 * wp + lane + u * THREADS
                            if gi >= ng or h == 0:
                                continue
                            down = a[lane + 1] if lane < 31 else a[lane]  # shfl_down: lane 31 its own
                            got = (a[lane] + (nxt[lane] if own[lane] else down[:h] + [0] * (4 - h)))[h:h + 4]
                            e = h + 4 * (g0 + gi)
                            if got != w[e:e + 4]:
                                return f"rank {rank} head {h} chunk {c} lane {lane}: {got} for w[{e}..]"
    return ""


def fit_threads(N, per16, c, u):
    """bench/gallery.py fit3's THREADS for a row of N at cluster c."""
    per = -(-(N // per16) // c)
    if MUT == "fitfloor":
        return 32 * (per // (3 * u * 32))
    return 32 * -(-per // (3 * u * 32))


def check_fit(N, CLUSTER, u, EPV):
    """fit3's config: every rank's slice at every head in at most 3 chunks,
    so 2 rows fit the 6 slots; the thread count a multiple of 32 that fits a
    block with the producer warp."""
    t = fit_threads(N, EPV, CLUSTER, u)
    if t % 32 or t + 32 > 1024 or 6 * t * u * 16 > 210 * 1024:
        return t, f"THREADS {t} U {u}: no block"
    for rank in range(CLUSTER):
        for head in range(EPV):
            h, n4, tail, g0, ng, nc = split(N, head, CLUSTER, rank, t * u, EPV)
            if nc > 3:
                return t, f"rank {rank} head {head}: {ng} vectors in {nc} chunks of {t * u}"
    return t, ""


def main():
    bad = 0
    # fit3's configs (f32 50257 / 200003 at clusters 2 / 8; bf16 at 1 / 4):
    # the chunks, then the sums and weights at those THREADS and U
    fits = []
    for N, CLUSTER, u, EPV in [(50257, 2, 4, 4), (50257, 2, 6, 4), (200003, 8, 4, 4), (200003, 8, 6, 4),
                               (50257, 1, 4, 8), (50257, 1, 6, 8), (200003, 4, 6, 8)]:
        t, err = check_fit(N, CLUSTER, u, EPV)
        print(f"{'bf16 ' if EPV == 8 else ''}N={N} CLUSTER={CLUSTER} THREADS={t} U={u} FIT: {err or 'ok'}")
        bad += bool(err)
        fits.append((N, CLUSTER, t, u, EPV))
    for N, CLUSTER, THREADS, U, EPV in fits:
        tag = f"{'bf16 ' if EPV == 8 else ''}N={N} CLUSTER={CLUSTER} THREADS={THREADS} U={U}"
        if EPV == 4:
            wn = check_wn(N, CLUSTER, THREADS, U, list(range(4)))
            print(f"{tag} WN: {wn or 'ok'}")
            bad += bool(wn)
        err = check_sums(N, CLUSTER, THREADS, U, [1 if EPV == 4 else 5], 100.0, EPV)
        print(f"{tag} SUMS mean 100: {err or 'ok'}")
        bad += bool(err)
    for N, CLUSTER, THREADS, U in [(13, 2, 512, 2), (7, 1, 32, 2), (3, 2, 32, 1), (5003, 2, 512, 2),
                                   (5003, 8, 64, 2), (4099, 4, 32, 1), (50257, 2, 512, 2), (200003, 8, 512, 2),
                                   (50257, 2, 512, 4), (200003, 8, 512, 4), (5003, 2, 64, 4)]:
        heads = [h for h in range(4) if h <= N]
        wn = check_wn(N, CLUSTER, THREADS, U, heads)
        print(f"N={N} CLUSTER={CLUSTER} THREADS={THREADS} U={U} WN: {wn or 'ok'}")
        bad += bool(wn)
        for mu in (0.0, 100.0):
            if N > 60000 and mu == 0.0:
                continue  # the long rows at mean 100 only (time)
            err = check_sums(N, CLUSTER, THREADS, U, heads if N < 60000 else heads[1:2], mu)
            print(f"N={N} CLUSTER={CLUSTER} THREADS={THREADS} U={U} SUMS mean {mu:g}: {err or 'ok'}")
            bad += bool(err)
        if N > 1000:
            err = check_sums(N, CLUSTER, THREADS, U, heads[:1], 0.0, 4, 3000.0)
            print(f"N={N} CLUSTER={CLUSTER} THREADS={THREADS} U={U} SUMS element 0 + 3000: {err or 'ok'}")
            bad += bool(err)
    # layernorm_bf16_ring.cu SUMS = 1: 8 bf16 a vector, heads 0..7
    for N, CLUSTER, THREADS, U in [(13, 2, 512, 2), (7, 1, 32, 2), (5003, 2, 512, 2), (4099, 4, 32, 1),
                                   (50257, 1, 512, 2), (200003, 4, 512, 2), (50257, 1, 512, 4), (5003, 1, 64, 4)]:
        heads = [h for h in range(8) if h <= N]
        for mu in (0.0, 100.0):
            if N > 60000 and mu == 0.0:
                continue
            err = check_sums(N, CLUSTER, THREADS, U, heads if N < 60000 else heads[5:6], mu, 8)
            print(f"bf16 N={N} CLUSTER={CLUSTER} THREADS={THREADS} U={U} SUMS mean {mu:g}: {err or 'ok'}")
            bad += bool(err)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
