# gpu-attn-lib.sh - what issue 30's attention timing scripts share
# (gpu-attn-speed.sh, gpu-attnwg.sh, gpu-attnwg2.sh): sourced, not run.
# The caller sets NAME (its output files' stem) and BUDGET (seconds), and
# WG (options every attention.tile run takes, e.g. --arch sm_90a; may be
# empty); this file goes to the repo root, unpacks the make dist tarball
# where nothing is built, and sets T0, OUT, KB, LOG ($OUT/NAME.txt), TAB
# ($OUT/NAME-table.txt, a tab-separated row a run) and A; ragged and
# memcheck run what every script checks.
# shellcheck shell=sh
cd "$(dirname "$0")/.." || exit
T0=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc-$NAME} KBENCH_NO_SESSION=1
KB=build/kbench
LOG=$OUT/$NAME.txt
TAB=$OUT/$NAME-table.txt
: >"$LOG"; : >"$TAB"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$LOG" 2>&1
date -u +%Y-%m-%dT%H:%MZ >>"$LOG"
A=kernels/attention
WG=${WG:-}

# seconds left of BUDGET (at most 40 a run)
left() {
	l=$((BUDGET - ($(date +%s) - T0)))
	[ "$l" -le 40 ] || l=40
	echo "$l"
}

# one kbench run: NAME D N B H CAUSAL FILE [OPTIONS...] -> a table row each
# size (B, H "-": the spec's; SWEEP=1: also the spec's sweep sizes)
one() {
	kern=$1 d=$2 n=$3 b=$4 h=$5 c=$6 file=$7
	shift 7
	t=$(left)
	if [ "$t" -lt 8 ]; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\tSKIPPED\t-\n' "$kern" "$d" "$n" "$b" "$h" "$c" >>"$TAB"
		return
	fi
	j="$OUT/$NAME-run.json"
	bh=""
	[ "$b" = - ] || bh="--arg B=$b --arg H=$h"
	sw=--no-sweep
	[ "${SWEEP:-0}" = 0 ] || sw=""
	# shellcheck disable=SC2086
	timeout "$t" $KB run "$file" "$@" --arg N="$n" $bh --arg CAUSAL="$c" $sw --trials 1 \
		--seed 1 --timeout 20 --json >"$j" 2>>"$LOG"
	echo "$kern D=$d N=$n B=$b H=$h CAUSAL=$c rc $?" >>"$LOG"
	python3 - "$j" "$kern" "$d" "$c" "$n" "$b" "$h" >>"$TAB" 2>>"$LOG" <<'EOF'
import json, sys
j, kern, d, c, n, b, h = sys.argv[1:]
try:
    top = json.load(open(j))
except Exception as e:
    print("\t".join([kern, d, n, b, h, c, "NO-JSON(%s)" % type(e).__name__, "-"]))
    sys.exit()
rows = [(top.get("result", top), {"N": n, "B": b, "H": h})]
rows += [(s.get("result") or {}, s.get("args") or {}) for s in top.get("sweep") or []]
for r, a in rows:
    us = (r.get("timing") or {}).get("median_us")
    print("\t".join([kern, d, str(a.get("N", "?")), str(a.get("B", "-")), str(a.get("H", "-")), c,
                     r.get("verdict") or r.get("status") or "?", "%.1f" % us if us else "-"]))
EOF
}
# attention.tile at head dim D (its const HD and the spec's arg D), with
# WG; a name suffix and its options follow
tile() {
	sfx=$1 d=$2 n=$3 b=$4 h=$5 c=$6
	shift 6
	# shellcheck disable=SC2086
	one "attention.tile$sfx" "$d" "$n" "$b" "$h" "$c" $A/attention.tile $WG --define HD="$d" --arg D="$d" "$@"
}
# the ragged sizes, CORRECT or not: attention.tile at N = 4097 and its
# spec's sweep (1024, 1000), the spec's B and H, D = 64 and 128, causal
# and not; a name suffix and its options follow
ragged() {
	rsfx=$1
	shift
	SWEEP=1
	for d in 64 128; do
		for c in 0 1; do
			tile "$rsfx" "$d" 4097 - - "$c" "$@"
		done
	done
	SWEEP=0
}
# compute-sanitizer memcheck of attention.tile at N = 300 (B = H = 1,
# causal: the last trip's k and v rows past the tensors, zero-filled; o's
# rows past 300 not stored), D = 64 and 128, time left: "D=64: ERROR
# SUMMARY: 0 error..." each into MC (0 errors expected)
memcheck() {
	CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	MC=""
	for d in 64 128; do
		[ "$(left)" -ge 30 ] || break
		# shellcheck disable=SC2086
		MC="$MC D=$d: $(timeout 30 "$CS" --tool memcheck --target-processes all $KB run $A/attention.tile $WG \
			--define HD=$d --arg D=$d --arg N=300 --arg B=1 --arg H=1 --arg CAUSAL=1 --no-sweep --trials 1 \
			--timeout 25 2>&1 | tee -a "$LOG" | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' || echo "no summary");"
	done
}
# the hand kernels at head dim D: a name suffix, then D N B H CAUSAL and options
fa2() {
	sfx=$1 d=$2 n=$3 b=$4 h=$5 c=$6
	shift 6
	one "02_fa2$sfx" "$d" "$n" "$b" "$h" "$c" $A/02_fa2.cu --define D="$d" "$@"
}
fa3() {
	sfx=$1 d=$2 n=$3 b=$4 h=$5 c=$6
	shift 6
	one "03_fa3$sfx" "$d" "$n" "$b" "$h" "$c" $A/03_fa3.cu --define D="$d" "$@"
}

# The table of TAB against 02_fa2 and 03_fa3 (each attention.tile row's time
# as a % of theirs at the same D, N, B, H and causal: 100% is as fast), then
# for each variant named (and each D) its range as % of 03_fa3 (issue 30:
# >= 80%); into LOG too.
fa_table() {
	python3 - "$TAB" "$@" <<'EOF' | tee -a "$LOG"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.count("\t") == 7]
# D, N, B, H, causal: the same shape (B, H "-": each file's spec's, no match)
key = lambda r: (r[1], r[2], r[3], r[4], r[5]) if r[3] != "-" else None
fa2 = {key(r): r[7] for r in rows if r[0] == "02_fa2"}
fa3 = {key(r): r[7] for r in rows if r[0] == "03_fa3"}
def pct(r, f):
    if not r[0].startswith("attention.tile") or not key(r) or not f or f == "-" or r[7] == "-":
        return ""
    return "%.1f%%" % (100.0 * float(f) / float(r[7]))
print("%-20s %4s %6s %3s %3s %6s  %-12s %10s %9s %9s" % ("kernel", "D", "N", "B", "H", "causal", "verdict",
                                                          "median us", "% of fa2", "% of fa3"))
for r in rows:
    k = key(r)
    print("%-20s %4s %6s %3s %3s %6s  %-12s %10s %9s %9s" % (r[0], r[1], r[2], r[3], r[4], r[5], r[6][:12],
                                                              r[7], pct(r, fa2.get(k)), pct(r, fa3.get(k))))
ok = sum(r[6] == "CORRECT" for r in rows)
print("%d of %d CORRECT" % (ok, len(rows)))
print("as % of 03_fa3 (issue 30: >= 80%):")
for name in sys.argv[2:]:
    for d in ("64", "128"):
        p = [100.0 * float(fa3[key(r)]) / float(r[7]) for r in rows
             if r[0] == name and r[1] == d and key(r) and fa3.get(key(r), "-") != "-" and r[7] != "-"]
        if p:
            print("  %-21s D=%-3s %5.1f-%5.1f%% over %2d rows, %2d at >= 80%%" %
                  (name, d, min(p), max(p), len(p), sum(x >= 80 for x in p)))
EOF
}
