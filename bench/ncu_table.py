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
STAMP = re.compile(r"\s(\d{4}-\d\d-\d\dT\d\d:\d\dZ)$")


def columns(line):
    """A table header's column names after file and kernel ("ncu us",
    "default", "diff", ...): rows are read by name, so the ncux tables'
    extra columns (ncu cc=none, cupti) are not taken for kbench's."""
    return re.split(r"\s{2,}|\s(?=diff\b)", line.strip())[2:]


def parse(line, cols):
    """(kernel, ncu us, kbench us, diff %, ncu MHz, kb MHz) of a row, the
    numbers None where absent; None for a "not timed" row's numbers."""
    tok = line.split()
    kernel, vals = tok[1], tok[2:]
    if "not timed:" in line:
        return kernel, None, None, None, None, None
    num = lambda name: float(vals[cols.index(name)].rstrip("%")) if name in cols and cols.index(name) < len(vals) else None
    try:
        d = vals[cols.index("default") + 1]
        d = float(d.rstrip("%")) if d not in ("+nan%", "nan%") else None
    except (ValueError, IndexError):
        d = None
    return kernel, num("ncu us"), num("default"), d, num("ncu MHz"), num("kb MHz")


def rows(paths):
    """{entry: (parsed row, run stamp)}: the last timed row of each entry, from
    bench/ncu_gallery.sh's output or this script's own table."""
    out, gpu = {}, None
    for path in paths:
        stamp, cols = "?", []
        for line in open(path, errors="replace"):
            line = line.rstrip("\n")
            h = HEADER.match(line)
            if h:
                stamp = h.group(1)
                gpu = gpu or h.group(2).split("  ")[0]
                continue
            if line.startswith("file ") and "ncu us" in line:
                cols = columns(line)
                continue
            r = ROW.match(line)
            if not r or not cols:
                continue
            st = STAMP.search(line)
            if "(ncu n=" in line or "not timed:" in line or st:
                body = line.split("   (ncu")[0]
                if st:
                    body = body[:st.start()]
                row = parse(body, cols)
                old = out.get(r.group(1))
                if row[3] is None and old and old[0][3] is not None:
                    continue  # a later attempt ncu did not profile keeps the timed row
                out[r.group(1)] = (row, st.group(1) if st else stamp)
    return out, gpu


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
        (kernel, ncu, kb, d, nmhz, kmhz), stamp = got[entry]
        f = lambda v, w, p: ("%*.*f" % (w, p, v)) if v is not None else "%*s" % (w, "-")
        print("%-44s %-24s %10s %12s %7s %8s %8s  %s" % (entry, kernel, f(ncu, 10, 2), f(kb, 12, 2),
              ("%+.1f%%" % d) if d is not None else "-", f(nmhz, 8, 0), f(kmhz, 8, 0), stamp))
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
