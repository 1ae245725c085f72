#!/usr/bin/env python3
"""serve_latency.py - the edit loop's cost through a warm runner.

Starts `kbench serve`, sends one run request for kernels/softmax.cu
(4096x8192 f32: compiles, loads, fills, checks 3 trials, times), then the
same request again N times, and reports the wall time of each repeat as the
client sees it (request written -> result read), with the runner's own
phase times.  Usage: bench/serve_latency.py [N]  (from the repository root)
"""
import os, subprocess, sys, time

from kbserve import call

KB = os.environ.get("KB", "build/kbench")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 10


def main():
    p = subprocess.Popen([KB, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    req = {"type": "run", "path": "kernels/softmax.cu", "args": {"M": 4096, "N": 8192}}
    first, ms0 = call(p, req)
    assert first["status"] == "ok", first
    print("kbench serve latency  %s  %s" % (time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
                                           first["env"]["device"]["name"]))
    print("first request (cold runner: GPU open, compile, module load): %.0f ms" % ms0)
    walls = []
    for _ in range(N):
        r, ms = call(p, req)
        assert r["status"] == "ok" and r["verdict"] == "CORRECT", r.get("verdict")
        walls.append(ms)
        t = r["timing"]
    walls.sort()
    med = walls[len(walls) // 2]
    print("re-run of the unchanged kernel, %d times: median %.0f ms, min %.0f, max %.0f" %
          (N, med, walls[0], walls[-1]))
    ck = r["check"]["ms"]
    print("  last re-run: 3 trials checked in %.0f ms (GPU %.0f, read-back %.0f, CPU reference %.0f,"
          " compare %.0f); timed loop of %d reps in %.0f ms; kernel median %.1f us" %
          (ck["total"], ck["gpu"], ck["readback"], ck["reference"], ck["compare"], t["reps"],
           t["loop_ms"], t["median_us"]))
    print("target: under 300 ms -> %s" % ("MET" if med < 300 else "NOT MET"))
    p.stdin.close()  # EOF: the runner exits
    p.wait(timeout=10)


if __name__ == "__main__":
    main()
