"""gpu-clockgap.py - issue 24's question for the wgmma .tile kernels that
read 2-3% slower under ncu than under kbench (bench/ncu_gallery_h200.txt):
does a compute-bound kernel run slower when the GPU idles before each
launch, as it does under ncu's serialized, one-launch-a-pass replay?
torch.mm (cuBLAS) bf16 at 4096^3 and 8192^3, L2 flushed before every
launch as kbench does, timed by CUDA events, with an idle wait of 0, 1, 5,
20 and 100 ms on the host before each launch (synchronized, so the GPU has
nothing queued), each launch's kernel duration from CUPTI (torch.profiler:
an event pair on an idle stream would hold the host's launch latency
too), and the SM clock the driver reports (nvidia-smi clocks.sm) sampled
after some launches.  Prints a row a (size,
gap): median us, spread, the median as % of gap 0, the clocks seen.
Usage: python3 scripts/gpu-clockgap.py [REPS] (GPU machine, PyTorch)."""
import statistics
import subprocess
import sys
import time

import torch

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
GAPS_MS = [0, 1, 5, 20, 100]


def smi_clock():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=5).stdout
        return int(out.split()[0])
    except Exception:
        return -1


def run(n, gap_ms):
    """The mm kernel's own durations (CUPTI, through torch.profiler: the
    host's launch latency after an idle wait is not in them, as it is in
    events recorded on an idle stream) over REPS launches, each after an
    L2 flush and gap_ms of idle."""
    from torch.profiler import profile, ProfilerActivity
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(5):
        torch.mm(a, b)
    torch.cuda.synchronize()
    clocks = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for r in range(REPS):
            if gap_ms:
                torch.cuda.synchronize()
                time.sleep(gap_ms / 1000.0)
            flush.zero_()
            torch.mm(a, b)
            if r % 8 == 0 and gap_ms:
                clocks.append(smi_clock())
        torch.cuda.synchronize()
    times = [e.time_range.elapsed_us() for e in prof.events()
             if str(e.device_type).endswith("CUDA") and any(k in e.name.lower() for k in ("gemm", "nvjet", "xmma"))]
    if not times:
        return float("nan"), float("nan"), float("nan"), clocks
    return statistics.median(times), min(times), max(times), clocks


print("clock-gap  %s  torch %s  %s" % (torch.cuda.get_device_name(), torch.__version__,
                                       time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())))
print("%-6s %7s %10s %10s %10s %8s  %s" % ("n", "gap ms", "median us", "min", "max", "% gap0", "nvidia-smi MHz after"))
for n in (4096, 8192):
    base = None
    for g in GAPS_MS:
        med, lo, hi, clk = run(n, g)
        base = base or med
        print("%-6d %7d %10.1f %10.1f %10.1f %7.1f%%  %s" % (n, g, med, lo, hi, 100.0 * med / base,
                                                           " ".join(map(str, clk))), flush=True)
