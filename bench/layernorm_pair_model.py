#!/usr/bin/env python3
"""A CPU model of layernorm/05_pair.cu's protocol and indexing (issue 31):
the producer warp, the ring of NSLOT slots and their mbarrier parities
(full, empty, rowbar, msg as phase counters with try_wait.parity's rule),
ROWS rows handed out a pass, the cluster exchange, the row split (head, n4,
tail, each rank's slice from the same g0 in every row), the chunks and the
weights (the thread's aligned float4 j and j + 1, shifted by the row's
head), bulk copies landing in random order and the processes run in random
order.  Checks that nothing deadlocks and every output element matches
LayerNorm.  No GPU; NumPy.  The kernel's text is not read: a change to its
indexing needs the same change here.
Usage: python3 bench/layernorm_pair_model.py   (prints M N CLUSTER CH NSLOT
ROWS (wrong elements, unwritten elements) a shape; all 0 is a pass)"""
import random

import numpy as np

class Bar:
    def __init__(s, count): s.count, s.pend, s.tx, s.done = count, count, 0, 0
    def arrive(s, tx=0):
        s.pend -= 1; s.tx += tx; s._chk()
    def complete_tx(s, n): s.tx -= n; s._chk()
    def _chk(s):
        if s.pend == 0 and s.tx == 0:
            s.done += 1; s.pend = s.count
    def ready(s, parity): return (s.done & 1) != parity

def run(M, N, CLUSTER, THREADS, NSLOT, ROWS, sms=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((M, N)).astype(np.float32) + 3
    w = rng.uniform(0.5, 1.5, N).astype(np.float32); b = rng.standard_normal(N).astype(np.float32)
    y = np.full((M, N), np.nan, np.float32)
    CH = THREADS; PER = (N // 4 + CLUSTER - 1) // CLUSTER
    # rows start at byte offset 4*N*r; head = elements to the 16-byte boundary
    def split(r, rank):
        off = (4 * N * r) % 16
        head = min(N, ((16 - off) % 16) // 4); n4 = (N - head) // 4; tail = N - head - 4 * n4
        g0 = rank * PER; ng = max(0, min(n4 - g0, PER)); nc = max(1, (ng + CH - 1) // CH)
        return dict(head=head, n4=n4, tail=tail, g0=g0, ng=ng, nc=nc)
    counter = [0]
    def vec4(j):
        return np.array([w[4*j+m] if 4*j+m < N else 0 for m in range(4)], np.float32), \
               np.array([b[4*j+m] if 4*j+m < N else 0 for m in range(4)], np.float32)
    clusters = min((M + ROWS - 1) // ROWS, sms // CLUSTER)
    procs = []
    for cl in range(clusters):
        first = counter[0]; counter[0] += ROWS
        blocks = []
        for rank in range(CLUSTER):
            blk = dict(full=[Bar(1) for _ in range(NSLOT)], empty=[Bar(1) for _ in range(NSLOT)],
                       ring=[None]*NSLOT, edge=[None]*NSLOT, msg=[Bar(1), Bar(1)], rowbar=[Bar(1) for _ in range(ROWS)],
                       rowid=[0]*ROWS, slot=[[None]*CLUSTER for _ in range(2)], inflight=[])
            blocks.append(blk)
        def producer(blk, rank, first=first):
            q = 0; i = 0
            while True:
                r = first + i
                if i >= ROWS:
                    while not blk['rowbar'][i % ROWS].ready((i // ROWS + 1) & 1): yield
                    r = blk['rowid'][i % ROWS]
                if r >= M: return
                s = split(r, rank)
                for c in range(s['nc']):
                    sl = q % NSLOT
                    while not blk['empty'][sl].ready(((q // NSLOT) & 1) ^ 1): yield
                    if c == s['nc'] - 1:
                        e = [0.0]*16
                        if rank == 0:
                            for l in range(s['head']): e[l] = x[r, l]
                        if rank == CLUSTER - 1:
                            for l in range(s['tail']): e[8+l] = x[r, s['head'] + 4*s['n4'] + l]
                        blk['edge'][sl] = e
                    n = max(0, min(CH, s['ng'] - c*CH))
                    blk['full'][sl].arrive(16*n)
                    st = s['head'] + 4*(s['g0'] + c*CH)
                    data = x[r, st:st+4*n].reshape(-1, 4).copy() if n else np.zeros((0, 4), np.float32)
                    blk['inflight'].append((random.random(), sl, data, 16*n))
                    q += 1
                i += 1
        def landing(blk):
            while True:
                if blk['inflight']:
                    random.shuffle(blk['inflight'])
                    _, sl, data, nb = blk['inflight'].pop()
                    blk['ring'][sl] = data; blk['full'][sl].complete_tx(nb)
                yield
        def consumer(blk, rank, blocks=blocks, first=first):
            row = first; q = 0; it = 0
            g0 = rank * PER
            while row < M:
                bp, phase = it & 1, (it >> 1) & 1
                further = 0
                if rank == 0: further = counter[0]; counter[0] += ROWS
                S = []; q0 = []; stats = []
                for r in range(ROWS):
                    s = split(min(row + r, M - 1), rank)
                    if row + r >= M: s.update(ng=0, nc=0, head=0, tail=0)
                    q0.append(q0[-1] + S[-1]['nc'] if r else q); S.append(s)
                hvtv = []
                for r in range(ROWS):
                    s = S[r]; vals = []; hv = {}; tv = {}
                    for c in range(s['nc']):
                        sl = (q0[r] + c) % NSLOT
                        while not blk['full'][sl].ready(((q0[r] + c) // NSLOT) & 1): yield
                        d = blk['ring'][sl]; n = max(0, min(CH, s['ng'] - c*CH))
                        if n:
                            assert d.shape[0] == n
                            vals.append(d.ravel())
                        if c == s['nc'] - 1:
                            e = blk['edge'][sl]
                            if rank == 0: hv = {t: e[t] for t in range(s['head'])}; vals.append(np.array(list(hv.values()), np.float32))
                            if rank == CLUSTER - 1: tv = {t: e[8+t] for t in range(s['tail'])}; vals.append(np.array(list(tv.values()), np.float32))
                    v = np.concatenate(vals).astype(np.float64) if vals else np.zeros(0)
                    stats.append((len(v), v.sum(), (v*v).sum())); hvtv.append((hv, tv))
                # exchange: own slot + sends to peers
                for peer in range(CLUSTER):
                    pb = blocks[peer]
                    if pb['slot'][bp][rank] is not None and peer != rank: pass
                    pb['slot'][bp][rank] = (stats, further)
                    if peer == rank: pb['msg'][bp].arrive((CLUSTER - 1) * 16 * ROWS)
                for peer in range(CLUSTER):
                    if peer != rank: blocks[peer]['msg'][bp].complete_tx(16 * ROWS)
                while not blk['msg'][bp].ready(phase): yield
                tot = [[0, 0.0, 0.0] for _ in range(ROWS)]
                for k in range(CLUSTER):
                    st, f = blk['slot'][bp][k]
                    if k == 0: nxt = f
                    for r in range(ROWS):
                        for z in range(3): tot[r][z] += st[r][z]
                for r in range(ROWS):
                    blk['rowid'][r] = nxt + r; blk['rowbar'][r].arrive()
                nc = max(s['nc'] for s in S)
                for c in range(nc):
                    for r in range(ROWS):
                        s = S[r]
                        if c >= s['nc']: continue
                        n_, sm, sq = tot[r]; mean = sm / n_; var = sq / n_ - mean*mean; rstd = 1/np.sqrt(var + 1e-5)
                        d = blk['ring'][(q0[r] + c) % NSLOT]
                        for ii in range(max(0, min(CH, s['ng'] - c*CH))):
                            gi = c*CH + ii; j = g0 + gi
                            wl, bl = vec4(j); wh, bh = vec4(j + 1)
                            h = s['head']
                            gw = np.concatenate([wl, wh])[h:h+4]; gb = np.concatenate([bl, bh])[h:h+4]
                            o = s['head'] + 4*(s['g0'] + gi)
                            y[row + r, o:o+4] = (d[ii] - mean) * rstd * gw + gb
                    for r in range(ROWS):
                        if c < S[r]['nc']: blk['empty'][(q0[r] + c) % NSLOT].arrive()
                for r in range(ROWS):
                    if row + r >= M: continue
                    n_, sm, sq = tot[r]; mean = sm / n_; rstd = 1/np.sqrt(sq/n_ - mean*mean + 1e-5)
                    hv, tv = hvtv[r]
                    for t, v in hv.items(): y[row + r, t] = (v - mean) * rstd * w[t] + b[t]
                    for t, v in tv.items():
                        i2 = S[r]['head'] + 4*S[r]['n4'] + t; y[row + r, i2] = (v - mean) * rstd * w[i2] + b[i2]
                q = q0[-1] + S[-1]['nc']; row = nxt; it += 1
        for rank, blk in enumerate(blocks):
            procs.append(producer(blk, rank)); procs.append(consumer(blk, rank)); procs.append(('land', landing(blk)))
    live = [p for p in procs if not isinstance(p, tuple)]; lands = [p[1] for p in procs if isinstance(p, tuple)]
    steps = 0
    while live:
        random.shuffle(live)
        for p in list(live):
            try: next(p)
            except StopIteration: live.remove(p)
        for l in lands: next(l)
        steps += 1
        if steps > 200000: raise SystemExit(f"DEADLOCK? M={M} N={N} C={CLUSTER} ROWS={ROWS}")
    mu = x.astype(np.float64).mean(1, keepdims=True); sd = np.sqrt(x.astype(np.float64).var(1, keepdims=True) + 1e-5)
    ref = (x - mu) / sd * w + b
    bad = ~np.isclose(y, ref, rtol=1e-4, atol=1e-4)
    return int(bad.sum()), int(np.isnan(y).sum())


SHAPES = [  # M, N, CLUSTER, CH (THREADS * U), NSLOT, ROWS
    (7, 13, 1, 32, 4, 2), (9, 13, 2, 32, 8, 4), (11, 301, 2, 8, 26, 2), (13, 301, 4, 8, 28, 4),
    (10, 203, 1, 8, 14, 2), (15, 999, 2, 32, 26, 2), (17, 999, 4, 16, 28, 4), (6, 1, 1, 8, 4, 2),
    (5, 7, 2, 8, 8, 4), (41, 301, 1, 8, 20, 2), (43, 301, 2, 8, 20, 4), (37, 333, 2, 8, 12, 2),
    (45, 333, 4, 8, 12, 4), (30, 301, 1, 8, 21, 2), (29, 100, 2, 4, 28, 4), (33, 131, 8, 4, 4, 2),
    (41, 301, 1, 8, 10, 1), (23, 333, 2, 8, 6, 1), (19, 13, 2, 4, 2, 1), (31, 999, 4, 16, 8, 1)]

if __name__ == "__main__":
    random.seed(1)
    bad = 0
    for (M, N, C, T, NS, R) in SHAPES:
        PER = (N // 4 + C - 1) // C
        assert R * max(1, -(-PER // T)) <= NS, "the kernel's require: a pass's slices fit the ring"
        r = run(M, N, C, T, NS, R)
        bad += r != (0, 0)
        print(M, N, C, T, NS, R, r)
    print("model:", "PASS" if not bad else f"{bad} shapes FAIL")
    raise SystemExit(1 if bad else 0)
