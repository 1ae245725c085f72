#!/usr/bin/env python3
"""result_line.py RESULT.json - a kbench run's verdict and median us as
"VERDICT<TAB>US" ("-" without a time; NO-JSON(...) when the file is not a
Result): the row the GPU scripts' tables are made of."""
import json
import sys

try:
    r = json.load(open(sys.argv[1]))
    r = r.get("result", r)
    us = (r.get("timing") or {}).get("median_us")
    print("%s\t%s" % (r.get("verdict") or r.get("status") or "?", "%.1f" % us if us else "-"))
except Exception as e:
    print("NO-JSON(%s)\t-" % type(e).__name__)
