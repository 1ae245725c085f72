#!/usr/bin/env python3
"""sass_loops.py - the instruction mix of every loop of an sm_90 cubin, for
kernels with no HMMA (the row kernels), on sass_ops.py's opcode table (read
its header: no nvdisasm here, an opcode is an instruction's low 9 bits).
A loop is a backward BRA and the instructions from its target to it; loops
of at most 8 instructions (the mbarrier try_wait spins) are left out, and
so is every loop that holds another (the row loop): what is left are the
per-chunk loops, the statistics pass (LDS, no STG) and the output pass (STG).
Each row: where the loop is (first and last instruction), its length, and
the count of each column in its body, NOPs not counted.  The count is every
path of the body: branches inside it (load4's shifts, the unaligned
stores) are not all taken, so a row is an upper bound on what one trip
issues.  Memory columns count instructions, not bytes (an LDG.128 is one).
Usage: python3 bench/sass_loops.py FILE.cubin... (kbench compile leaves the
cubin in $XDG_CACHE_HOME/kbench/compile/*/*/out.cubin)"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_ops import OPS, INT, texts, target  # noqa: E402

NAMES = {**OPS, **INT}
COLS = ['LDS', 'STS', 'LDG', 'STG', 'FFMA', 'FMUL', 'FADD', 'MUFU', 'FSETP', 'FSEL', 'SHFL', 'BAR', 'SEL',
        'ISETP', 'int', 'other']
INTS = set(INT.values()) - {'SEL', 'ISETP'}


def col(op):
    n = NAMES.get(op & 0x1ff)
    if n in COLS:
        return n
    return 'int' if n in INTS else 'other'


def loops(ins):
    for i, (lo, hi) in enumerate(ins):
        if lo & 0x1ff == 0x147:
            t = target(i, lo, hi)
            if t < i - 8:
                yield t, i


if __name__ == '__main__':
    print('%-24s %-12s %5s ' % ('cubin', 'loop', 'n') + ' '.join('%5s' % c for c in COLS))
    for p in sys.argv[1:]:
        for kern, ins in texts(p):
            ls = sorted(loops(ins))
            for t, i in ls:
                if any(t <= a and b <= i and (a, b) != (t, i) for a, b in ls):
                    continue
                c = collections.Counter(col(ins[j][0]) for j in range(t, i + 1) if ins[j][0] & 0x1ff != 0x118)
                print('%-24s %5d-%-6d %5d ' % (kern[:24], t, i, sum(c.values())) +
                      ' '.join('%5d' % c[k] for k in COLS))
