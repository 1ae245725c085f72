#!/bin/sh
# gpu-attn.sh - issue 30's GPU figures (bench/attention.py), in under 8
# minutes, each part under its own timeout so that one failing part does
# not stop the others:
#   correct  kernels/attention/*.cu at D = 64 and 128, causal and not, at
#            N = 4096, 1024, 1000, 4097 (and their tune points), every row
#            checked: CORRECT everywhere?                     (~160 s at most)
#   table    the kbench kernels (best BM) beside PyTorch SDPA's flash, cuDNN
#            and memory-efficient backends, D = 64/128, N = 1024..16384,
#            causal and not, L2 flushed; then each row's check: rows
#            compared and the check's wall time                (~230 s at most)
#   warm     kbench run wall time at N = 8192, D = 128, cold then warm (~45 s)
#   profile  kbench profile --hot of 02_fa2.cu at N = 8192, D = 128  (~45 s)
# Output: $OUT/attn-PART.txt, $OUT/attention-PART.jsonl (5 + 3 files), and a
# summary last.
# Usage: scripts/gpu-attn.sh [PART...]  (repo root, GPU machine, a make dist
# tarball under build/dist*/; the parts named, all four by default)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc} KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
: >"$OUT/summary.txt"
part() { # NAME SECONDS [ENV=V...]
	name=$1 secs=$2
	shift 2
	t0=$(date +%s)
	env "$@" timeout "$secs" python3 bench/attention.py "$name" >"$OUT/attn-$name.txt" 2>&1
	echo "$name: rc $?, $(( $(date +%s) - t0 )) s" >>"$OUT/summary.txt"
}
PARTS=${*:-correct table warm profile}
case " $PARTS " in *" correct "*) part correct 160 BUDGET=150 ;; esac
case " $PARTS " in *" table "*) part table 230 BUDGET=190 ;; esac
case " $PARTS " in *" warm "*) part warm 45 BUDGET=40 ;; esac
# 02_fa2's counters for phase 2's tuning: tensor pipe, issue slots, stalls, hot lines
case " $PARTS " in *" profile "*)
	t0=$(date +%s)
	timeout 45 build/kbench profile kernels/attention/02_fa2.cu --define D=128 --arg N=8192 --arg B=2 \
		--arg H=16 --no-sweep --trials 1 --hot >"$OUT/attn-profile.txt" 2>&1
	echo "profile: rc $?, $(( $(date +%s) - t0 )) s" >>"$OUT/summary.txt" ;;
esac
for p in $PARTS; do
	echo "==== $p"
	grep -v '^W11' "$OUT/attn-$p.txt" | tail -50
done
echo "==== summary"
cat "$OUT/summary.txt"
grep -h '^not CORRECT' "$OUT/attn-correct.txt"
echo "table rows: $(grep -c ' | ' "$OUT/attn-table.txt") (header included); not CORRECT in the checks:" \
	"$(awk '/^the checks/{f=1;next} f && NF>6 && $6!="CORRECT" && $1!="kernel"' "$OUT/attn-table.txt" | wc -l)"
grep -h 'kbench run 02_fa2' "$OUT/attn-warm.txt"
