#!/usr/bin/env python3
"""profile_row.py LABEL PROFILE.json TABLE - one `kbench profile --json`
result as a row appended to TABLE (and printed), its counters whole on
stdout first: label, verdict, % of copy | DRAM%, L2%, L1% and SM%
throughput, issue slots busy, IPC, eligible warps a scheduler | L1 and L2
sector hit rates, global-load sectors a request | the three largest stall
reasons a issue.  A counter its sections did not collect prints nan.  The
GPU scripts' profile tables (gpu-gallery.sh's prof) are made of these."""
import json
import sys

label, path, table = sys.argv[1:4]
try:
    r = json.load(open(path))
except ValueError as e:
    print('no JSON:', e, open(path).read()[-400:])
    open(table, 'a').write('%-22s no result\n' % label)
    sys.exit()

def find(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        o = list(o.values())
    if isinstance(o, list):
        for v in o:
            x = find(v, key)
            if x is not None:
                return x
    return None

def verdict(o):
    ok = find(o, 'correct')
    if isinstance(ok, bool):
        return 'CORRECT' if ok else 'INCORRECT'
    return word(o)

def word(o):
    if isinstance(o, str) and o.upper() in ('CORRECT', 'INCORRECT', 'FAULT', 'TIMEOUT', 'UNSUPPORTED'):
        return o.upper()
    for v in (o.values() if isinstance(o, dict) else o if isinstance(o, list) else []):
        x = word(v)
        if x:
            return x
    return None

c = find(r, 'counters') or {}
for k in sorted(c):
    print('  %-72s %s' % (k, c[k]))
g = lambda k: c.get(k) if isinstance(c.get(k), (int, float)) else float('nan')
pre, post = 'smsp__average_warps_issue_stalled_', '_per_issue_active.ratio'
st = sorted(((v, k[len(pre):-len(post)]) for k, v in c.items()
             if k.startswith(pre) and not k.startswith(pre + 'selected') and isinstance(v, (int, float))),
            reverse=True)[:3]
cp = find(r, 'pct_of_measured_copy')
ld = 'l1tex__t_%s_pipe_lsu_mem_global_op_ld.sum'
row = '%-22s %-9s %5s %5.1f %5.1f %5.1f %5.1f %6.1f %5.2f %5.2f %5.1f %5.1f %5.1f  %s\n' % (
    label, verdict(r) or '?', '%.1f' % cp if isinstance(cp, (int, float)) else '-',
    g('gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed'), g('lts__throughput.avg.pct_of_peak_sustained_elapsed'),
    g('l1tex__throughput.avg.pct_of_peak_sustained_active'), g('sm__throughput.avg.pct_of_peak_sustained_elapsed'),
    g('smsp__issue_active.avg.pct_of_peak_sustained_active'), g('sm__inst_executed.avg.per_cycle_active'),
    g('smsp__warps_eligible.avg.per_cycle_active'), g('l1tex__t_sector_hit_rate.pct'), g('lts__t_sector_hit_rate.pct'),
    g(ld % 'sectors') / g(ld % 'requests') if g(ld % 'requests') else float('nan'),
    ' '.join('%s %.1f' % (k, v) for v, k in st))
open(table, 'a').write(row)
print(row, end='')
