#!/usr/bin/env python3
"""ncu_values.py REPORT.ncu-rep [CSV] - the metrics of the first profiled
kernel in an Nsight Compute report as JSON {name: value}, at full double
precision (ncu's CSV prints ratios with 2 decimals, too coarse to compare
within 5%).  Uses ncu's own ncu_report module (extras/python beside ncu);
without it, falls back to the CSV file given second."""
import csv, glob, json, os, shutil, sys


def ncu_report_module():
    ncu = shutil.which("ncu")
    if not ncu:
        return None
    root = os.path.dirname(os.path.realpath(ncu))
    for d in [os.path.join(root, "extras", "python")] + glob.glob("/usr/local/cuda*/nsight-compute*/extras/python") + \
            glob.glob("/opt/nvidia/nsight-compute/*/extras/python"):
        if os.path.exists(os.path.join(d, "ncu_report.py")):
            sys.path.insert(0, d)
            try:
                import ncu_report
                return ncu_report
            except Exception:
                sys.path.pop(0)
    return None


def from_report(path, mod):
    ctx = mod.load_report(path)
    act = ctx.range_by_idx(0).action_by_idx(0)
    out = {}
    for name in act.metric_names():
        m = act.metric_by_name(name)
        try:
            out[name] = float(m.as_double())
        except Exception:
            pass
    return out


def from_csv(path):
    rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
    h = rows[0]
    ni, vi = h.index("Metric Name"), h.index("Metric Value")
    out = {}
    for r in rows[1:]:
        try:
            out[r[ni]] = float(r[vi].replace(",", ""))
        except ValueError:
            pass
    return out


mod = ncu_report_module()
if mod and os.path.exists(sys.argv[1]):
    vals, how = from_report(sys.argv[1], mod), "ncu_report"
else:
    vals, how = from_csv(sys.argv[2]), "csv"
json.dump({"source": how, "metrics": vals}, sys.stdout)
