#!/bin/sh
# profile_breakdown.sh - where a cold `kbench profile` spends its time (the
# runner's phase times in the Result), and how well ncu repeats itself on the
# sampled warp-state metrics next to kbench (two runs of each).  Run from a
# checkout on a GPU machine with the `make dist` tarball beside it.
set -u
tar xzf build/dist/kbench-*.tar.gz
export XDG_CACHE_HOME=/tmp/c
build/kbench calibrate > /dev/null 2>&1
build/kbench profile kernels/softmax.cu --json > /tmp/p0.json 2>/dev/null
for i in 1 2; do
  s=$(date +%s%N); build/kbench profile kernels/softmax.cu --json > /tmp/p$i.json 2>/dev/null; e=$(date +%s%N)
  echo "cold kbench profile wall: $(( (e-s)/1000000 )) ms"
done
python3 -c "
import json; j=json.load(open('/tmp/p2.json'))
print('runner_ms', j.get('runner_ms')); print('cupti_open_ms', j.get('cupti_open_ms'), 'counters_ms', j.get('counters_ms'), 'passes', j.get('counters_passes'))
print('compile_ms', j.get('compile_ms'), 'check', j['check'].get('ms'), 'timing loop', j['timing']['loop_ms'])"
M=$(python3 -c "import json; print(','.join(k for k in json.load(open('/tmp/p2.json'))['counters'] if 'stalled' in k or 'eligible' in k or 'bank' in k))")
for i in 1 2; do
  ncu --csv --print-units base --metrics "$M" --clock-control none --cache-control none --target-processes all -k regex:^softmax_rows$ --launch-skip 1 --launch-count 1 build/kbench run kernels/softmax.cu --no-sweep --trials 1 --timing events --timeout 300 > /tmp/n$i.csv 2>/dev/null
done
python3 - <<'PY'
import csv, json
def load(p):
    rows=[r for r in csv.reader(l for l in open(p) if l.startswith('"'))]; h=rows[0]; ni,vi=h.index("Metric Name"),h.index("Metric Value")
    return {r[ni]: float(r[vi].replace(',','')) for r in rows[1:]}
a,b=load('/tmp/n1.csv'),load('/tmp/n2.csv'); k=json.load(open('/tmp/p2.json'))['counters']; k1=json.load(open('/tmp/p1.json'))['counters']
print('%-72s %10s %10s %10s %10s' % ('metric','ncu#1','ncu#2','kb#1','kb#2'))
for m in sorted(a): print('%-72s %10.4g %10.4g %10.4g %10.4g' % (m, a[m], b.get(m,float('nan')), k1.get(m) or 0, k.get(m) or 0))
PY
