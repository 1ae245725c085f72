#!/usr/bin/env python3
"""ncu_alongside.py - can Nsight Compute profile while a kbench runner stays
open beside it, as kbench-tui keeps one between saves?  For each case a
`kbench serve` is started, given one request, and left open while `ncu`
profiles a kernel in another process; then the runner is asked once more.
Cases: no runner; a runner after a plain run (no CUPTI); after a run with
the quick counter tier (CUPTI initialised, range profiler disabled, as every
collection leaves it).  Also lists the environment ncu gives its target.
Usage: bench/ncu_alongside.py (repository root, GPU machine)."""
import os, subprocess, time

from kbserve import call

KB = os.environ.get("KB", "build/kbench")
NCU = ["ncu", "--metrics", "gpu__time_duration.sum,dram__bytes_read.sum", "--csv",
       "-k", "regex:^softmax_rows$", "--launch-skip", "1", "--launch-count", "1",
       KB, "run", "kernels/softmax.cu", "--no-sweep", "--trials", "1", "--timing", "events"]


def ncu_ok(shared_off=True):
    env = dict(os.environ, KBENCH_NO_SHARED_RUNNER="1") if shared_off else dict(os.environ)
    out = subprocess.run(NCU, capture_output=True, text=True, env=env)
    text = out.stdout + out.stderr
    got = "dram__bytes_read.sum" in out.stdout
    why = "" if got else " | " + " / ".join(l for l in text.splitlines() if "==" in l)[:300]
    return got, why


print("ncu beside an open kbench runner  %s  %s" % (time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
      subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                     text=True).stdout.strip()))
got, why = ncu_ok()
print("no runner: ncu profiled the kernel: %s%s" % (got, why))
base = {"type": "run", "path": "kernels/softmax.cu", "trials": 1}
for name, req, env in (("after a plain run", base, {}),
                       ("after a run with quick counters", dict(base, sections=["quick"]), {})):
    p = subprocess.Popen([KB, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ, **env))
    r, _ = call(p, req)
    got, why = ncu_ok()
    r2, _ = call(p, req)
    ok2 = r2.get("status") == "ok" and ("counters" in r2 or "sections" not in req)
    print("runner open %s: ncu profiled the kernel: %s%s; the runner's next request: %s%s" %
          (name, got, why, "ok" if ok2 else "FAILED", "" if ok2 else " " + str(r2.get("counters_error") or r2.get("message"))[:200]))
    p.stdin.close(); p.wait(timeout=30)
# The shared runner of one-shot commands (src/runner/shared.c) warm, and ncu
# on `kbench run` as a user would type it: kbench must see ncu's injection
# and run the kernel in ncu's process tree, not in the warm runner.
subprocess.run([KB, "run", "kernels/softmax.cu", "--no-sweep", "--trials", "1"], capture_output=True)
warm = subprocess.run(["pgrep", "-f", "serve --listen"], capture_output=True, text=True).stdout.split()
got, why = ncu_ok(shared_off=False)
t0 = time.perf_counter()
after = subprocess.run([KB, "run", "kernels/softmax.cu", "--no-sweep", "--trials", "1"], capture_output=True, text=True)
ms = (time.perf_counter() - t0) * 1e3
still = subprocess.run(["pgrep", "-f", "serve --listen"], capture_output=True, text=True).stdout.split()
print("shared runner warm (pid %s), `ncu ... kbench run` without KBENCH_NO_SHARED_RUNNER: ncu profiled the kernel: %s%s;"
      " the next plain `kbench run` used the same runner: %s (%.0f ms, exit %d)" %
      (",".join(warm) or "none", got, why, bool(warm) and still == warm, ms, after.returncode))
env = subprocess.run(["ncu", "--target-processes", "all", "sh", "-c", "env"], capture_output=True, text=True).stdout
print("environment ncu gives its target (NV/CUDA/INJECT/PRELOAD/NSIGHT):",
      " ".join(sorted(l.split("=")[0] for l in env.splitlines()
                      if any(k in l.upper() for k in ("INJECT", "PRELOAD", "NSIGHT", "NV_", "CUDA", "TREE")))))
