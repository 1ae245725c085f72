#!/usr/bin/env python3
"""cpu_samples.py - read bench/cpu_sampler.c's samples of one process and
say where its CPU went inside a window of $KBENCH_LOG.

  cpu_samples.py SAMPLES LOG [WHAT]

WHAT picks the window from the log (default "first Start": CUPTI's first
cuptiRangeProfilerStart, from the "pass 1: ... start S ... launch L  stop P"
line, which is logged after the Stop).  "all" takes every sample.  Prints,
for the samples in the window: per thread, and for the busiest thread the
libraries by self time and by inclusive time, and the top self frames."""
import collections
import re
import sys


def window(log, what):
    if what == "all":
        return None
    for line in open(log):
        m = re.match(r"\[(\d+\.\d+)\] pass 1: .*start ([\d.]+) .*launch ([\d.]+)\s+stop ([\d.]+)", line)
        if m:
            end_s, start, launch, stop = (float(x) for x in m.groups())
            # the log's seconds are CLOCK_MONOTONIC with 3 decimals
            t_end = end_s * 1e3 - launch - stop
            return (t_end - start - 1.0, t_end + 1.0)
    sys.exit("no 'pass 1' line in " + log)


def main():
    samples_path, log = sys.argv[1], sys.argv[2]
    what = sys.argv[3] if len(sys.argv) > 3 else "first Start"
    win = window(log, what)
    rows = []
    for line in open(samples_path):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) < 3:
            continue
        ms, tid, stack = float(parts[0]), int(parts[1]), parts[2]
        if win and not (win[0] <= ms <= win[1]):
            continue
        rows.append((tid, stack.split("<")))
    if not rows:
        sys.exit("no samples in the window")
    if win:
        print(f"window {what}: {win[1] - win[0]:.0f} ms, {len(rows)} samples (1 per ms of CPU)")
    per_tid = collections.Counter(tid for tid, _ in rows)
    print("threads:", ", ".join(f"{t}: {n}" for t, n in per_tid.most_common()))
    busiest = per_tid.most_common(1)[0][0]
    frames = [f for t, f in rows if t == busiest]
    lib = lambda fr: fr.split("!", 1)[0]
    self_lib = collections.Counter(lib(f[0]) for f in frames if f)
    incl_lib = collections.Counter()
    for f in frames:
        for name in {lib(x) for x in f}:
            incl_lib[name] += 1
    n = len(frames)
    print(f"thread {busiest}, {n} samples; libraries by self time:")
    for name, c in self_lib.most_common(10):
        print(f"  {100 * c / n:5.1f}%  {name}")
    print("libraries by inclusive time:")
    for name, c in incl_lib.most_common(12):
        print(f"  {100 * c / n:5.1f}%  {name}")
    print("top self frames:")
    for name, c in collections.Counter(f[0] for f in frames if f).most_common(15):
        print(f"  {100 * c / n:5.1f}%  {name}")
    print("top frames two deep (self < caller):")
    for name, c in collections.Counter("<".join(f[:2]) for f in frames if f).most_common(10):
        print(f"  {100 * c / n:5.1f}%  {name}")
    # the libraries from the outermost call in: which one calls which
    chains = collections.Counter()
    for f in frames:
        seq = []
        for x in reversed(f):
            if not seq or seq[-1] != lib(x):
                seq.append(lib(x))
        chains[" > ".join(seq)] += 1
    print("library chains, outermost first:")
    for name, c in chains.most_common(8):
        print(f"  {100 * c / n:5.1f}%  {name}")
    # the first frame outside libc/libstdc++/libgcc: who does the work
    skip = ("libc.so", "libstdc++", "libgcc", "libm.so", "ld-linux")
    owner = collections.Counter()
    for f in frames:
        for x in f:
            if not lib(x).startswith(skip):
                owner[x] += 1
                break
    print("first frame outside the C/C++ runtime:")
    for name, c in owner.most_common(10):
        print(f"  {100 * c / n:5.1f}%  {name}")


if __name__ == "__main__":
    main()
