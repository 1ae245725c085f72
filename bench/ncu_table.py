#!/usr/bin/env python3
"""ncu_table.py FILE... - one kbench-vs-ncu table from the outputs of
bench/ncu_gallery.sh runs (several shards or calls on one machine kind):
each entry's last row in the order given, sorted by file, with the run that
gave it, then how many rows are within 2% of ncu and which are not.

Usage: bench/ncu_table.py [--entries LIST] all1.txt all2.txt   (prints the
table; LIST: the entries to show, e.g. `bench/ncu_gallery.sh --list`'s,
the others dropped and the missing ones named)
"""
import re
import sys

HEADER = re.compile(r"^kbench vs ncu\s+(\S+)\s+(.*)$")
ROW = re.compile(r"^(kernels/\S+)\s+(.*)$")


def rows(paths):
    """{entry: (row text, run stamp)}: the last row of each entry."""
    out, gpu = {}, None
    for path in paths:
        stamp = "?"
        for line in open(path, errors="replace"):
            line = line.rstrip("\n")
            h = HEADER.match(line)
            if h:
                stamp = h.group(1)
                gpu = gpu or h.group(2).split("  ")[0]
                continue
            r = ROW.match(line)
            if r and ("(ncu n=" in line or "not timed:" in line):
                out[r.group(1)] = (line, stamp)
    return out, gpu


def diff(line):
    """The default column's difference from ncu, percent, or None."""
    m = re.search(r"\s[\d.]+\s+[\d.]+\s+([+-][\d.]+)%", line)
    return float(m.group(1)) if m else None


def main():
    args, want = sys.argv[1:], None
    if args[:1] == ["--entries"]:
        want = [l.strip() for l in open(args[1]) if l.strip()]
        args = args[2:]
    got, gpu = rows(args)
    if want is not None:
        got = {e: got[e] for e in got if e in want}
    print("kbench vs ncu, every kernels/ entry (bench/ncu_gallery.sh REPS=1 NCU_COUNT=20 CLOCKS=1), %s" % gpu)
    print("%-44s %-24s %10s %12s %7s %8s %8s  %s" % ("file", "kernel", "ncu us", "default", "diff",
                                                      "ncu MHz", "kb MHz", "run"))
    inside, outside, untimed = 0, [], []
    for entry in sorted(got):
        line, stamp = got[entry]
        print("%s  %s" % (line.split("   (ncu")[0], stamp))
        d = diff(line)
        if d is None:
            untimed.append(entry)
        elif abs(d) <= 2.0:
            inside += 1
        else:
            outside.append("%s %+.1f%%" % (entry, d))
    print("within 2%% of ncu: %d of %d timed; outside: %s; not timed: %s" % (
        inside, inside + len(outside), ", ".join(outside) or "none", ", ".join(untimed) or "none"))
    if want is not None:
        missing = [e for e in want if e not in got]
        print("not measured: %s" % (", ".join(missing) or "none"))


if __name__ == "__main__":
    main()
