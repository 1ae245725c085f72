#!/usr/bin/env python3
"""profile_latency.py - what the single-pass counter tier adds to a run
through a warm `kbench serve`: the same softmax request 10 times without
counters and 10 times with `"sections": ["quick"]`, alternating; median
wall time of each, as the client sees it.  Target: under 200 ms added.
Usage: bench/profile_latency.py [N]   (repository root, GPU machine)"""
import os, subprocess, sys, time

from kbserve import call

KB = os.environ.get("KB", "build/kbench")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 10


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
