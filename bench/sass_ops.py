#!/usr/bin/env python3
"""sass_ops.py - the instruction mix of an sm_90 cubin's main loop, without
nvdisasm or cuobjdump (neither is on the CPU VM): each 128-bit instruction's
opcode is its low 9 bits (bits 9-11 pick the operand form: register,
immediate, constant), as calibrated on this VM by compiling probes of K
copies of one PTX instruction with nvcc 13.0 for sm_90 and diffing the
histograms (ex2.approx -> MUFU, mma.sync -> HMMA, ldmatrix -> LDSM, a
local array -> LDL and STL, ...).
The main loop is the longest backward BRA whose body holds an HMMA; its
body's inner backward loops (the element-by-element copy fallback, never
run at aligned rows) are left out of the counts and reported apart.
A kernel without HMMA (a row kernel) has no such loop: --whole counts its
whole text instead (every path: fast, fallback and tail), and --key LDG
takes the longest backward BRA whose body holds an LDG as the main loop.
LDG and STG count instructions, not their width (the width bits are not
calibrated).  --overlap: the main loop's MUFU and how many come after the
first HMMA that follows the first MUFU (attention's exponentials among the
mmas of its second product).
--outside: each kernel's text before its main loop and after it (the
prologue and the epilogue; every path, cold ones too).
Usage: python3 bench/sass_ops.py [--whole | --key OP | --overlap | --outside] FILE.cubin...  (kbench
compile leaves the cubin in $XDG_CACHE_HOME/kbench/compile/*/*/out.cubin)"""
import collections
import struct
import sys

OPS = {0x03c: 'HMMA', 0x03b: 'LDSM', 0x184: 'LDS', 0x188: 'STS', 0x108: 'MUFU', 0x023: 'FFMA',
       0x020: 'FMUL', 0x021: 'FADD', 0x009: 'FMNMX', 0x03e: 'F2FP', 0x11d: 'BAR', 0x189: 'SHFL',
       0x1ae: 'LDGSTS', 0x11a: 'DEPBAR', 0x006: 'VOTE', 0x008: 'FSEL', 0x00b: 'FSETP', 0x147: 'BRA',
       0x118: 'NOP', 0x181: 'LDG', 0x186: 'STG', 0x1af: 'LDGDEPBAR', 0x183: 'LDL', 0x187: 'STL'}
INT = {0x024: 'IMAD', 0x025: 'IMAD.WIDE', 0x010: 'IADD3', 0x036: 'VIADD', 0x012: 'LOP3', 0x011: 'LEA',
       0x019: 'SHF', 0x00c: 'ISETP', 0x007: 'SEL', 0x002: 'MOV', 0x016: 'PRMT', 0x013: 'IABS',
       0x027: 'IMAD.HI', 0x01c: 'PLOP3', 0x003: 'P2R', 0x004: 'R2P'}
COLS = ['HMMA', 'LDSM', 'LDS', 'STS', 'MUFU', 'FFMA', 'FMUL', 'FADD', 'FMNMX', 'F2FP', 'FSEL', 'FSETP',
        'SHFL', 'VOTE', 'BAR', 'LDGSTS', 'LDL', 'STL', 'int/addr', 'other']
ROW_COLS = ['LDG', 'STG', 'MUFU', 'FFMA', 'FMUL', 'FADD', 'FMNMX', 'FSEL', 'FSETP', 'SHFL', 'BAR', 'LDS',
            'STS', 'BRA', 'int/addr', 'other']


def texts(path):
    b = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    secs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
    so = secs[shstrndx][4]
    for s in secs:
        name = b[so + s[0]: b.index(b'\0', so + s[0])].decode()
        if name.startswith('.text.'):
            yield name[6:], [struct.unpack_from('<QQ', b, s[4] + i) for i in range(0, s[5], 16)]


def target(i, lo, hi):
    """A BRA's target index: offset / 4 in bits 16-23 and 34-81 (signed)."""
    up = (lo >> 34) | ((hi & 0x3ffff) << 30)
    if up >> 47:
        up -= 1 << 48
    return i + 1 + (((lo >> 16) & 0xff) | (up << 8)) // 4


def name(op):
    op &= 0x1ff
    if op in OPS:
        return OPS[op]
    return 'int/addr' if op in INT else 'other'


def loop(ins, key=0x03c):
    """(first, last) of the main loop (the longest backward BRA around a
    key opcode), and the inner loops' (first, last)."""
    back = [(target(i, lo, hi), i) for i, (lo, hi) in enumerate(ins)
            if lo & 0x1ff == 0x147 and target(i, lo, hi) < i]
    main = max(((t, i) for t, i in back if any(ins[j][0] & 0x1ff == key for j in range(t, i))),
               key=lambda x: x[1] - x[0], default=None)
    if not main:
        return None, []
    return main, [(t, i) for t, i in back if main[0] <= t and i < main[1]]


def whole(path):
    """Each kernel's whole text: its length, backward branches, mix."""
    for kern, ins in texts(path):
        back = sum(1 for i, (lo, hi) in enumerate(ins) if lo & 0x1ff == 0x147 and target(i, lo, hi) < i)
        c = collections.Counter(name(lo) for lo, hi in ins if lo & 0x1ff != 0x118)
        yield kern, len(ins), back, c


def count(path, key=0x03c):
    for kern, ins in texts(path):
        main, inner = loop(ins, key)
        if not main:
            continue
        cold = set(j for t, i in inner for j in range(t, i + 1))
        c = collections.Counter(name(ins[j][0]) for j in range(main[0], main[1] + 1)
                                if j not in cold and ins[j][0] & 0x1ff != 0x118)
        yield kern, main[1] - main[0] + 1 - len(cold), len(cold), c


def overlap(path):
    """Each kernel's main loop: its MUFU, and how many of them come after
    the first HMMA that follows the first MUFU (attention: the exponentials
    issued among the second product's mmas, not all before them)."""
    for kern, ins in texts(path):
        main, inner = loop(ins)
        if not main:
            continue
        ops = [name(ins[j][0]) for j in range(main[0], main[1] + 1)]
        if 'MUFU' not in ops:
            continue
        first = ops.index('MUFU')
        hmma = next((i for i in range(first, len(ops)) if ops[i] == 'HMMA'), len(ops))
        yield kern, ops.count('MUFU'), ops[hmma:].count('MUFU')


def outside(path):
    """Each kernel's text before its main loop and after it (the
    prologue: setup and the first copies; the epilogue: the stores), each
    path counted, cold ones too."""
    for kern, ins in texts(path):
        main, inner = loop(ins)
        if not main:
            continue
        for part, rng in (('before', range(0, main[0])), ('after', range(main[1] + 1, len(ins)))):
            c = collections.Counter(name(ins[j][0]) for j in rng if ins[j][0] & 0x1ff != 0x118)
            yield kern, part, sum(c.values()), c


if __name__ == '__main__':
    args = sys.argv[1:]
    if args[:1] == ['--outside']:
        print('%-26s %6s %5s ' % ('kernel', 'part', 'insts') + ' '.join('%6s' % c[:6] for c in ROW_COLS))
        for p in args[1:]:
            for kern, part, n, c in outside(p):
                print('%-26s %6s %5d ' % (kern[:26], part, n) + ' '.join('%6d' % c[k] for k in ROW_COLS))
        sys.exit(0)
    if args[:1] == ['--overlap']:
        print('%-26s %5s %13s' % ('kernel', 'MUFU', 'after 1st mma'))
        for p in args[1:]:
            for kern, n, after in overlap(p):
                print('%-26s %5d %6d (%3.0f%%)' % (kern[:26], n, after, 100.0 * after / n))
        sys.exit(0)
    if args[:1] == ['--whole']:
        print('%-26s %5s %5s ' % ('kernel', 'insts', 'loops') + ' '.join('%6s' % c[:6] for c in ROW_COLS))
        for p in args[1:]:
            for kern, n, back, c in whole(p):
                print('%-26s %5d %5d ' % (kern[:26], n, back) + ' '.join('%6d' % c[k] for k in ROW_COLS))
        sys.exit(0)
    key, cols = 0x03c, COLS
    if args[:1] == ['--key']:
        key = [k for k, v in OPS.items() if v == args[1]][0]
        args, cols = args[2:], ROW_COLS
    print('%-26s %5s %5s ' % ('cubin', 'loop', 'cold') + ' '.join('%6s' % c[:6] for c in cols))
    for p in args:
        for kern, n, cold, c in count(p, key):
            print('%-26s %5d %5d ' % (kern[:26], n, cold) + ' '.join('%6d' % c[k] for k in cols))
