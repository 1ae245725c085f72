#!/bin/sh
# farm.sh - scripts/gpu-farm.sh's scheduling without a GPU (a stand-in
# nvidia-smi names two): every job runs once and is summed up once, and its
# nvidia-smi queries name only its GPU; the
# ncu shards split the entries with none lost or twice; a job whose
# estimate passes the call's budget is SKIPPED, not started.  The ncu
# job's kbench runs answer no_gpu here, which ncu_gallery.sh prints as
# "not timed", one line an entry.
. tests/cli/lib.sh

BIN=$T_TMP/bin
mkdir -p "$BIN"
cat >"$BIN/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
*-L*) echo "GPU 0: Stand-in"; echo "GPU 1: Stand-in" ;;
*"-i 0"* | *"-i 1"*) i=${*#*-i }; echo "Stand-in ${i%% *}, 0" ;;
*) echo "Stand-in 0, 0"; echo "Stand-in 1, 0" ;;
esac
EOF
cat >"$BIN/ncu" <<'EOF'
#!/bin/sh
echo "Version 0 (stand-in)"
EOF
chmod +x "$BIN/nvidia-smi" "$BIN/ncu"
printf '%s\n' kernels/softmax.cu kernels/vector_add.cu kernels/saxpy.ptx \
	kernels/kernelbench/97_sdpa.cu@B=4 kernels/reduce/02_vec4.cu >"$T_TMP/list"

farm() { # OUT BUDGET JOB...
	o=$1 b=$2
	shift 2
	PATH="$BIN:$PATH" OUT=$o BUDGET=$b NCU_LIST="$T_TMP/list" NCUX_LIST="$T_TMP/list" KB=$KB \
		sh scripts/gpu-farm.sh "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	RC=$?
}

farm "$T_TMP/o1" 300 ncu0/3 ncu1/3 ncu2/3
expect_rc farm_runs 0
n=$(grep -c ': gpu [01], rc ' "$T_TMP/o1/summary.txt")
[ "$n" -eq 3 ] && pass farm_each_job_once || fail farm_each_job_once "$n summary lines: $(cat "$T_TMP/o1/summary.txt")"
grep -oE '^kernels/[^ ]+' "$T_TMP/o1/all.txt" | sort >"$T_TMP/got"
sort "$T_TMP/list" >"$T_TMP/want"
if cmp -s "$T_TMP/got" "$T_TMP/want"; then pass farm_shards_cover_each_entry_once
else fail farm_shards_cover_each_entry_once "$(diff "$T_TMP/want" "$T_TMP/got" | head -8)"; fi
grep -q 'not timed: ' "$T_TMP/o1/all.txt" && pass farm_no_gpu_is_not_timed ||
	fail farm_no_gpu_is_not_timed "$(head -c 400 "$T_TMP/o1/all.txt")"
[ "$(grep -c '^==== ncu' "$T_TMP/o1/all.txt")" -eq 3 ] && pass farm_sections_in_order ||
	fail farm_sections_in_order "$(grep '^====' "$T_TMP/o1/all.txt")"

# a job's nvidia-smi names its own GPU (a table's header), not the host's two
h=$(grep '^kbench vs ncu' "$T_TMP/o1/all.txt")
if [ "$(echo "$h" | grep -cE 'Stand-in [01], 0')" -eq 3 ] && ! grep -q '^Stand-in' "$T_TMP/o1/all.txt"; then
	pass farm_job_names_its_gpu
else fail farm_job_names_its_gpu "$(grep -A1 '^kbench vs ncu' "$T_TMP/o1/all.txt" | head -6)"; fi

# an estimate past the budget: skipped, named, never started
farm "$T_TMP/o2" 10 ncu0/1
expect_rc farm_skip_runs 0
grep -q '^ncu0/1: SKIPPED' "$T_TMP/o2/summary.txt" && pass farm_skips_past_budget ||
	fail farm_skips_past_budget "$(cat "$T_TMP/o2/summary.txt")"
[ ! -s "$T_TMP/o2/ncu0_1.txt" ] && pass farm_skipped_job_not_started ||
	fail farm_skipped_job_not_started "$(head -c 300 "$T_TMP/o2/ncu0_1.txt")"

# two calls at once (a job may run the farm itself: the test suite's farm.sh
# on a GPU machine): each keeps its own queue, jobs and outputs
for k in 4 5; do
	PATH="$BIN:$PATH" OUT=$T_TMP/o$k BUDGET=300 NCU_LIST="$T_TMP/list" KB=$KB \
		sh scripts/gpu-farm.sh ncu0/2 ncu1/2 >"$T_TMP/out$k" 2>&1 &
done
wait
ok=1
for k in 4 5; do
	[ "$(grep -c ': gpu [01], rc ' "$T_TMP/o$k/summary.txt")" -eq 2 ] || ok=0
	grep -oE '^kernels/[^ ]+' "$T_TMP/o$k/all.txt" | sort | cmp -s - "$T_TMP/want" || ok=0
done
[ $ok = 1 ] && pass farm_two_calls_at_once ||
	fail farm_two_calls_at_once "$(cat "$T_TMP/o4/summary.txt" "$T_TMP/o5/summary.txt")"

# ncux: every entry of a list written a line each
farm "$T_TMP/o3" 400 ncux
grep -oE '^kernels/[^ ]+' "$T_TMP/o3/all.txt" | sort >"$T_TMP/got"
if cmp -s "$T_TMP/got" "$T_TMP/want"; then pass farm_ncux_takes_each_line
else fail farm_ncux_takes_each_line "$(head -c 400 "$T_TMP/o3/all.txt")"; fi

finish
