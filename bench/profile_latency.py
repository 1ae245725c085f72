#!/usr/bin/env python3
"""profile_latency.py - what the single-pass counter tier adds to a run
through a warm `kbench serve`: the same softmax request 10 times without
counters and 10 times with `"sections": ["quick"]`, alternating; median
wall time of each, as the client sees it.  Target: under 200 ms added.
Usage: bench/profile_latency.py [N]   (repository root, GPU machine)"""
import json, os, struct, subprocess, sys, time

KB = os.environ.get("KB", "build/kbench")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 10


def call(p, req):
    b = json.dumps(req).encode()
    t0 = time.perf_counter()
    p.stdin.write(struct.pack("<I", len(b)) + b)
    p.stdin.flush()
    while True:
        n = struct.unpack("<I", p.stdout.read(4))[0]
        m = json.loads(p.stdout.read(n))
        if m["type"] != "progress":
            return m, (time.perf_counter() - t0) * 1e3


p = subprocess.Popen([KB, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
base = {"type": "run", "path": "kernels/softmax.cu"}
quick = dict(base, sections=["quick"])
call(p, base)
r, _ = call(p, quick)  # warm: CUPTI opened once per runner
assert r["status"] == "ok" and "counters" in r, r.get("counters_error") or r.get("message")
plain, counted = [], []
for _ in range(N):
    plain.append(call(p, base)[1])
    r, ms = call(p, quick)
    counted.append(ms)
plain.sort(); counted.sort()
mp, mc = plain[N // 2], counted[N // 2]
print("kbench quick counter tier  %s  %s" % (time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
                                            r["env"]["device"]["name"]))
print("warm runner, softmax 4096x8192 f32, %d runs each: run %.0f ms, run + quick counters %.0f ms"
      " -> +%.0f ms (%d pass(es), counters %.0f ms in the runner)" %
      (N, mp, mc, mc - mp, r.get("counters_passes", 0), r.get("counters_ms", 0)))
print("target: under 200 ms added -> %s" % ("MET" if mc - mp < 200 else "NOT MET"))
# The whole default profile (every section) through the same warm runner,
# for comparison with `ncu` on the same metrics (bench/profile_vs_ncu.txt).
full = dict(base, sections=["sol", "memory", "compute", "occupancy", "stalls", "roofline"], trials=1)
walls = []
for _ in range(3):
    r, ms = call(p, full)
    walls.append(ms)
walls.sort()
print("every section (%d metrics, %d passes) through the warm runner: %.0f ms median of 3"
      " (counters %.0f ms)" % (len(r.get("counters", {})), r.get("counters_passes", 0), walls[1],
                               r.get("counters_ms", 0)))
p.stdin.close(); p.wait(timeout=20)


def save_loop(env_extra, req=quick):
    """The TUI's loop: every request a run + quick counters; returns the wall
    ms and the kernel's timed median (us) of each."""
    q = subprocess.Popen([KB, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, **env_extra))
    call(q, req)
    walls, medians, counters = [], [], []
    for _ in range(N):
        r, ms = call(q, req)
        walls.append(ms)
        medians.append(r["timing"]["median_us"])
        counters.append(r["counters"])
    q.stdin.close(); q.wait(timeout=20)
    return sorted(walls), sorted(medians), counters


def spread(cs):
    """Largest (max-min)/median over the requests, per counter, in %."""
    out = {}
    for k in cs[0]:
        v = sorted(c[k] for c in cs if c.get(k) is not None)
        if v and v[len(v) // 2]:
            out[k] = (v[-1] - v[0]) / abs(v[len(v) // 2]) * 100
    return out


# Kept enabled between requests, the range profiler would cost one cheap
# Start instead of a first Start per request; but the next request's timed
# launches then run under an enabled (not started) profiler.  Both measured.
w0, m0, c0 = save_loop({"KBENCH_IDLE_PROFILER": "1"})
w1, m1, c1 = save_loop({})
for name, w, m in (("profiler disabled between requests (KBENCH_IDLE_PROFILER=1)", w0, m0),
                   ("profiler kept enabled between counter requests (default)", w1, m1)):
    print("save loop, %s: run + quick counters %.0f ms median; kernel time %.2f us median"
          " (min %.2f, max %.2f)" % (name, w[N // 2], m[N // 2], m[0], m[-1]))
# the counters must not change with it: every quick counter, kept vs not
print("quick counters, kept vs disabled (median of %d each):" % N)
for k in sorted(c0[0]):
    a = sorted(c[k] for c in c0)[N // 2]
    b = sorted(c[k] for c in c1)[N // 2]
    d = 0.0 if a == b else (b - a) / max(abs(a), 1e-30) * 100
    print("  %-64s %14.6g %14.6g %7.2f%%" % (k, a, b, d))
# A kernel short enough to be timed as a CUDA graph (about 4 us): the same
# comparison, for the other timing mode.
short = {"type": "run", "path": "tests/fixtures/session/v1.cu", "sections": ["quick"]}
ws0, ms0, _ = save_loop({"KBENCH_IDLE_PROFILER": "1"}, short)
ws1, ms1, _ = save_loop({}, short)
for name, w, m in (("disabled", ws0, ms0), ("kept enabled", ws1, ms1)):
    print("short kernel (graph timing), profiler %s: %.0f ms per save; kernel time %.3f us median"
          " (min %.3f, max %.3f)" % (name, w[N // 2], m[N // 2], m[0], m[-1]))
