"""gpu-clockgap.py - issue 24's question for the wgmma .tile kernels that
read 2-3% slower under ncu than under kbench (bench/ncu_gallery_h200.txt):
does a compute-bound kernel run slower when the GPU idles before each
launch, as it does under ncu's serialized, one-launch-a-pass replay?
torch.mm (cuBLAS) bf16 at 4096^3 and 8192^3, L2 flushed before every
launch as kbench does, timed by CUDA events, with an idle wait of 0, 1, 5,
20 and 100 ms on the host before each launch (synchronized, so the GPU has
nothing queued), and the SM clock the driver reports (nvidia-smi
clocks.sm) sampled right after the launch ends.  Prints a row a (size,
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
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(5):
        torch.mm(a, b)
    torch.cuda.synchronize()
    times, clocks = [], []
    for r in range(REPS):
        flush.zero_()
        torch.cuda.synchronize()
        if gap_ms:
            time.sleep(gap_ms / 1000.0)
            flush.zero_()  # the flush right before, as kbench's: the gap is before the flush
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.mm(a, b)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1000.0)
        if r % 8 == 0:
            clocks.append(smi_clock())
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
