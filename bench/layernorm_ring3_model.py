#!/usr/bin/env python3
"""A CPU model of the cluster side of layernorm/07_ring.cu and
layernorm_bf16_ring2.cu (issue 31, lnring3): the host emulator runs these
rings at CLUSTER = 1 only (its cluster is one block), so what only a
cluster of several blocks does is checked here, in f32 as the kernel
rounds it:
  - each rank's share of a row (split(): the head on rank 0, the rank's
    whole vectors from g0, the tail on the last rank) and count(), which
    every rank computes for every rank: equal, and every element in exactly
    one rank;
  - each rank's shift K (the median of its slice's first three elements,
    else its head's or tail's first element, else 0), its sums of x - K and
    (x - K)^2, its (mean, M2) message; the receivers' sums about one shift g
    (rank 0's mean, or the last rank's where rank 0 has no element) with
    each rank's count; mean = g + S1 / N, var = S2 / N - (S1 / N)^2;
  - the weights a vector reads: aligned vector j = g0 + gi (always whole:
    no load past w) and, at a head H > 0, vector j + 1, element by element
    where it reaches past N, whose first H elements are all inside w;
  - WS = 1 / 2 (lnring4): those vectors j and j + 1 inside the rank's window
    in shared memory, WSPAN = per + CLUSTER vectors from lo, the least g0
    over the heads 0..EPV - 1 (win_load()).
Rows of mean 0 and 100 and with an outlier (+3000) at element 0, at widths
1..50257, clusters 1..16, f32 (4 a vector) and bf16 (8, values rounded to
bf16), every head.  The statistics must be within 1e-6 relative (mean, plus
2e-6 standard deviations) and 2e-5 relative (variance) of double's.  The
kernel's text is not read: a change to its indexing needs the same change
here.  --mutant NAME breaks one rule (each must make the model fail):
  nohead     count() leaves the head out;
  g0rank0    g is always rank 0's mean (wrong where rank 0 is empty);
  nocenter   the ranks' M2 added without n d^2 (no parallel-axis term);
  kzero      K = 0 in every rank (the variance's digits lost at mean 100);
  winhead0   the window's lo from head 0's split only;
  winspan    the window CLUSTER - 1 vectors shorter.
Usage: python3 bench/layernorm_ring3_model.py [--mutant NAME]; prints one
line a failure and exits 1 on any.
"""
import random
import struct
import sys

MUT = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--mutant" else ""
THREADS, U = 512, 2  # the kernels' defaults: a chunk is THREADS * U vectors


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def bf16(x):
    u = struct.unpack("I", struct.pack("f", x))[0]
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("f", struct.pack("I", u))[0]


def split(head_off, n, rank, c, epv):
    """The kernel's split(): head_off is the row's first element's offset
    from a 16-byte boundary, in elements."""
    head = min(n, (epv - head_off) % epv)
    nv = (n - head) // epv
    tail = n - head - epv * nv
    per = (nv + c - 1) // c
    g0 = rank * per
    ng = max(0, min(nv - g0, per))
    return head, nv, tail, g0, ng


def count(head, nv, tail, r, c, epv):
    per = (nv + c - 1) // c
    return epv * max(0, min(nv - r * per, per)) + ((r == 0) * head if MUT != "nohead" else 0) + (r == c - 1) * tail


def med3(a, b, c):
    return max(min(a, b), min(max(a, b), c))


def row_stats(x, head_off, c, epv):
    """What the kernel computes for row x: (mean, var, problems)."""
    n = len(x)
    bad = []
    seen = [0] * n
    msgs = []
    for r in range(c):
        head, nv, tail, g0, ng = split(head_off, n, r, c, epv)
        idx = []
        if r == 0:
            idx += range(head)
        idx += range(head + epv * g0, head + epv * (g0 + ng))
        if r == c - 1:
            idx += range(head + epv * nv, n)
        for i in idx:
            seen[i] += 1
        nb = count(head, nv, tail, r, c, epv)
        if nb != len(idx):
            bad.append(f"rank {r}: count {nb}, elements {len(idx)}")
        if MUT == "kzero":
            k = 0.0
        elif ng > 0:
            s0 = head + epv * g0
            k = med3(x[s0], x[s0 + 1], x[s0 + 2])
        elif r == 0 and head > 0:
            k = x[0]
        elif r == c - 1 and tail > 0:
            k = x[head + epv * nv]
        else:
            k = 0.0
        # each thread's sums as the kernel orders them (thread t: vectors gi
        # with gi % CH % THREADS == t, chunk by chunk; the head and tail on
        # threads 0..7 at the last chunk), then a pairwise tree (the warps'
        # butterflies and warp 0's over the warps)
        acc = [[0.0, 0.0] for _ in range(THREADS)]

        def add(t, v):
            d = f32(v - k)
            acc[t][0] = f32(acc[t][0] + d)
            acc[t][1] = f32(acc[t][1] + f32(d * d))

        for gi in range(ng):
            for e in range(epv):
                add(gi % (THREADS * U) % THREADS, x[head + epv * (g0 + gi) + e])
        if r == 0:
            for t in range(head):
                add(t, x[t])
        if r == c - 1:
            for t in range(tail):
                add(t, x[head + epv * nv + t])
        while len(acc) > 1:
            acc = [[f32(a[0] + b[0]), f32(a[1] + b[1])] for a, b in zip(acc[0::2], acc[1::2])]
        s1, s2 = acc[0]
        d = f32(s1 / nb) if nb > 0 else 0.0
        msgs.append((f32(k + d), max(f32(s2 - f32(s1 * d)), 0.0)))
        # the weights of each of the rank's vectors at this head, and the
        # window of WS = 1 / 2 they must lie in
        heads = range(1 if MUT == "winhead0" else epv)
        lo = min(r * (((n - min(n, h)) // epv + c - 1) // c) for h in heads)
        span = (n // epv + c - 1) // c + (1 if MUT == "winspan" else c)
        for gi in range(ng):
            j = g0 + gi
            if not lo <= j < lo + span or (head > 0 and not j + 1 < lo + span):
                bad.append(f"rank {r}: vectors {j}, {j + 1} outside the window {lo} .. {lo + span - 1}")
            if epv * (j + 1) > n:
                bad.append(f"rank {r}: w's vector {j} reaches past N = {n}")
            for e in range(epv):
                col = head + epv * (g0 + gi) + e
                src = epv * j + e + head  # element e + H of vectors j, j + 1
                if src != col or (e + head >= epv and src >= n):
                    bad.append(f"rank {r}: vector {gi} element {e} reads w[{src}] for column {col}")
    if any(v != 1 for v in seen):
        bad.append(f"elements not summed once: {[i for i, v in enumerate(seen) if v != 1][:5]}")
    h0, nv0, t0 = split(head_off, n, 0, c, epv)[:3]
    gsrc = 0 if (count(h0, nv0, t0, 0, c, epv) > 0 or MUT == "g0rank0") else c - 1
    g = msgs[gsrc][0]
    s1 = s2 = 0.0
    for r in range(c):
        cnt = float(count(h0, nv0, t0, r, c, epv))
        d = f32(msgs[r][0] - g)
        nd = f32(cnt * d)
        s1 = f32(s1 + nd)
        s2 = f32(s2 + (msgs[r][1] if MUT == "nocenter" else f32(nd * d + msgs[r][1])))
    dm = f32(s1 / n)
    return f32(g + dm), max(f32(f32(s2 / n) - f32(dm * dm)), 0.0), bad


def main():
    rnd = random.Random(7)
    fails = 0
    for epv, cast in ((4, f32), (8, bf16)):
        for n in (1, 2, 3, 5, 7, 9, 13, 17, 100, 5003, 50257):
            for c in (1, 2, 4, 8, 16):
                for mean, outlier in ((0.0, 0.0), (100.0, 0.0), (0.0, 3000.0)):
                    for head_off in range(epv):
                        if n > 5003 and (head_off % 3 or c in (4, 16)):
                            continue
                        x = [cast(rnd.gauss(mean, 1.0)) for _ in range(n)]
                        x[0] = cast(x[0] + outlier)
                        m, v, bad = row_stats(x, head_off, c, epv)
                        em = sum(x) / n
                        ev = sum((t - em) ** 2 for t in x) / n
                        sd = ev ** 0.5
                        ok_m = abs(m - em) <= 1e-6 * abs(em) + 2e-6 * sd + 1e-30
                        ok_v = abs(v - ev) <= 2e-5 * ev + 1e-30
                        where = f"epv {epv} N {n} CLUSTER {c} mean {mean} outlier {outlier} head offset {head_off}"
                        for b in bad:
                            print(f"FAIL {where}: {b}")
                        if not (ok_m and ok_v):
                            print(f"FAIL {where}: mean {m} (double {em}), var {v} (double {ev})")
                        fails += len(bad) + (not (ok_m and ok_v))
    print(f"{'FAIL' if fails else 'ok'}: {fails} failures{' (mutant ' + MUT + ')' if MUT else ''}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
