#!/bin/sh
# kernelbench_level1.sh - every KernelBench level-1 problem opened with
# `kbench new --from-kernelbench`, then its reference computed at the
# problem's own sizes with `kbench ref` (this machine's CPU, PyTorch in
# float64, through kbench's reference server), smallest problems first,
# until a deadline: bench/kernelbench_level1.txt, one row a problem.
#
#   sh bench/kernelbench_level1.sh DIR/KernelBench/level1 [OUT.txt]
#
# KernelBench itself is not in this repository: fetch it
# (github.com/ScalingIntelligence/KernelBench) and point at its level1/.
# KBENCH_PYREF_TIMEOUT (default 60 s) bounds each reference; TABLE_UNTIL
# (epoch seconds) stops starting references (the rest say so); a reference
# too big for half this machine's available memory is said so, not run.
L=${1:?usage: kernelbench_level1.sh KernelBench/level1 [OUT.txt]}
OUT=${2:-bench/kernelbench_level1.txt}
KB=${KB:-$PWD/build/kbench}
PY=${KBENCH_PYTHON:-/usr/bin/python3}
export KBENCH_PYTHON=$PY KBENCH_PYREF_TIMEOUT=${KBENCH_PYREF_TIMEOUT:-60}
UNTIL=${TABLE_UNTIL:-0}
W=${TABLE_WORK:-$(mktemp -d)}
mkdir -p "$W"
t_start=$(date +%s)
# 1. open every problem
for p in $(ls "$L"/*.py | sort -V); do
	stem=$(basename "$p" .py)
	d="$W/$stem"
	[ -f "$d/opened" ] && continue
	mkdir -p "$d"
	if (cd "$d" && "$KB" new --from-kernelbench "$p" -o k.cu >"$d/new.out" 2>"$d/new.err"); then
		# elements of every tensor, to run the small ones first
		sed -n 's/^\/\/! \(in\|out\) .*\[\(.*\)\].*/\2/p' "$d/k.cu" |
			awk -F', ' '{ n = 1; for (i = 1; i <= NF; i++) n *= $i; s += n } END { printf "%.0f\n", s }' >"$d/size"
		: >"$d/opened"
	else
		echo 1e30 >"$d/size"
		: >"$d/failed"
	fi
done
t_open=$(date +%s)
# 2. the references, smallest first
for d in $(for d in "$W"/*/; do echo "$(cat "$d/size") $d"; done | sort -g | cut -d' ' -f2); do
	[ -f "$d/opened" ] && [ ! -f "$d/ref.json" ] || continue
	if [ "$UNTIL" -gt 0 ] && [ "$(date +%s)" -ge "$UNTIL" ]; then break; fi
	(cd "$d" && timeout $((KBENCH_PYREF_TIMEOUT + 120)) "$KB" ref k.cu --json >"$d/ref.json.tmp" 2>"$d/ref.err")
	mv "$d/ref.json.tmp" "$d/ref.json"
done
t_end=$(date +%s)
# 3. the table
"$PY" - "$W" "$OUT" "$L" "$KBENCH_PYREF_TIMEOUT" $((t_open - t_start)) $((t_end - t_open)) <<'PYEOF'
import json, os, re, subprocess, sys, time
W, out, L, limit, s_open, s_ref = sys.argv[1:7]
rows, n_open, n_ran = [], 0, 0
avail = int([l for l in open("/proc/meminfo") if l.startswith("MemAvailable")][0].split()[1]) * 1024
def key(s):
    return int(s.split("_")[0])
for stem in sorted(os.listdir(W), key=key):
    d = os.path.join(W, stem)
    if os.path.exists(os.path.join(d, "failed")):
        err = open(os.path.join(d, "new.err")).read().strip().splitlines()
        rows.append((stem, "no", "no", "-", (err[-1] if err else "?")[:150], ""))
        continue
    n_open += 1
    new = open(os.path.join(d, "new.out")).read()
    ins = re.search(r"^  inputs   (.*) \(", new, re.M)
    outs = re.search(r"^  outputs  (.*)$", new, re.M)
    shapes = "%s -> %s" % (ins.group(1) if ins else "?", outs.group(1) if outs else "?")
    rj = os.path.join(d, "ref.json")
    if not os.path.exists(rj):
        # what kbench ref would have said at once (refcheck.c's estimate)
        need = 0
        for m in re.finditer(r"^//! (in|out) +\w+ : (\w+)\[(.*)\]", open(os.path.join(d, "k.cu")).read(), re.M):
            n = 1
            for x in m.group(3).split(","):
                n *= int(x)
            size = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2}.get(m.group(2), 1)
            need += n * (24 if m.group(1) == "out" else size + 8)
        if need > 0.5 * avail:
            why = "too big for this machine: needs about %.1f GB here (inputs, their float64 copies and the outputs), and %.1f GB are available" % (need / 1e9, avail / 1e9)
        else:
            why = "not run: the table's time ran out first (needs about %.1f GB)" % (need / 1e9)
        rows.append((stem, "yes", "-", "-", why, shapes))
        continue
    try:
        r = json.load(open(rj))
    except Exception:
        e = open(os.path.join(d, "ref.err")).read().strip()
        rows.append((stem, "yes", "no", "-", "kbench ref gave no result: %s" % (e[-120:] or "killed"), shapes))
        continue
    if r.get("status") == "ok":
        n_ran += 1
        o = r["outputs"][0]
        rows.append((stem, "yes", "yes", "%.1f s" % (r["reference_ms"] / 1e3),
                     "%s in [%.3g, %.3g], %d NaN" % (o["name"], o["min"], o["max"], o["nan"]), shapes))
        continue
    msg = r.get("message", "?").replace("\n", " ")
    if "no answer from the Python reference in" in msg:
        msg = "not done in %s s here (the limit)" % limit
    elif "needs about" in msg:
        msg = "too big for this machine: " + msg.split("sizes ")[1].split(": try")[0]
    else:
        msg = re.sub(r"^\S+:\d+:\d+: ref torch \S+: ", "", msg)[:170]
    rows.append((stem, "yes", "no", "-", msg, shapes))
mem = [l for l in open("/proc/meminfo") if l.startswith("MemTotal")][0].split()[1]
try:
    v = subprocess.run([os.environ["KBENCH_PYTHON"], "-c", "import torch, numpy; print(torch.__version__, numpy.__version__)"],
                       capture_output=True, text=True).stdout.split()
except Exception:
    v = ["?", "?"]
with open(out, "w") as f:
    f.write("# KernelBench level 1: each problem opened by `kbench new --from-kernelbench`, then its\n")
    f.write("# reference run by `kbench ref` at the problem's own sizes (PyTorch %s, NumPy %s, float64,\n" % (v[0], v[1]))
    f.write("# on the CPU of %s: %d cores shared with other work, load %.0f, %.0f GB; %s UTC),\n"
            % (os.uname().nodename, os.cpu_count(), os.getloadavg()[0], int(mem) / 1e6, time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
    f.write("# smallest problems first, %s s a reference at most; opening took %s s, the references %s s.\n" % (limit, s_open, s_ref))
    f.write("# opened: %d of %d; reference ran: %d\n#\n" % (n_open, len(rows), n_ran))
    f.write("%-55s %-5s %-4s %-8s %s\n" % ("problem", "opens", "runs", "time", "result, or why not    [inputs -> outputs]"))
    for r in rows:
        f.write("%-55s %-5s %-4s %-8s %s    [%s]\n" % r)
print(open(out).read()[:600])
PYEOF
