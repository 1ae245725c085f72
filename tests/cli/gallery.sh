#!/bin/sh
# gallery.sh - the kernel gallery as a fresh clone has it: every file of
# kernels/<op>/ compiles with its spec (no GPU needed); every recorded
# session of sessions/ lists, reports (Markdown and HTML) and, without a
# GPU, says that replay needs one; with a GPU one session file replays;
# `log --counter` tabulates a counter across a session's variants.
. tests/cli/lib.sh
for f in kernels/softmax/*.cu kernels/layernorm/*.cu kernels/rmsnorm/*.cu kernels/reduce/*.cu \
	 kernels/transpose/*.cu; do
	run "$KB" compile "$f" --arch sm_90 --no-sass
	expect_rc "compile_$(basename "$(dirname "$f")")_$(basename "$f" .cu)" 0
done
n=0
for s in sessions/*/; do
	s=${s%/}; name=$(basename "$s"); n=$((n + 1))
	run "$KB" log "$s";                        expect_rc "log_$name" 0
	expect_in "log_${name}_correct" out "CORRECT"
	expect_not_in "log_${name}_nothing_wrong" out "INCORRECT"
	run "$KB" report "$s" -o "$T_TMP/$name.md";   expect_rc "report_md_$name" 0
	run "$KB" report "$s" -o "$T_TMP/$name.html"; expect_rc "report_html_$name" 0
	grep -q '<table' "$T_TMP/$name.html" && ! grep -q -e '<script' -e 'http://' "$T_TMP/$name.html" \
		&& pass "report_html_${name}_selfcontained" || fail "report_html_${name}_selfcontained" "not one page"
done
[ "$n" -ge 5 ] && pass sessions_present || fail sessions_present "only $n sessions under sessions/"
# one counter across a session's variants (recorded with `kbench profile`),
# a Result field beside it, and what a name no variant has gets
run "$KB" log sessions/gemm --counter dram__bytes_read.sum --counter timing.cv --counter dram
expect_rc log_counter_rc 0
expect_in log_counter_heading out "dram__bytes_read.sum"
[ "$(grep -c '^  v[0-9].*[0-9.]G  *0\.0[0-9]*  *-  *[0-9a-f]\{10\}' "$T_TMP/out")" -ge 4 ] && pass log_counter_values \
	|| fail log_counter_values "$(cat "$T_TMP/out")"
expect_in log_counter_suggests out "no variant has 'dram'; counters with it: dram__bytes.sum"
run "$KB" log sessions/gemm --counter a --counter b --counter c --counter d --counter e --counter f --counter g
expect_rc log_counter_too_many 2
run "$KB" log sessions/gemm --counter sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
expect_in log_counter_long_name out "acti~ is sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
grep -q '^  v4 .*04_wgmma.* 9[0-9]\.[0-9]*  [0-9a-f]\{10\}  <- best' "$T_TMP/out" && pass log_counter_tensor_pipe \
	|| fail log_counter_tensor_pipe "$(cat "$T_TMP/out")"
# a file that ran several kernels (01_naive, 02_fa2, 03_fa3): one best, the
# fastest of all; each other kernel's fastest marked as that
run "$KB" log sessions/attention; expect_rc log_kernels_rc 0
[ "$(grep -c '^  v[0-9] *attn_.*<- best$' "$T_TMP/out")" = 1 ] && grep -q "^  v3 .*attn_fa3 .*  <- best$" "$T_TMP/out" \
	&& [ "$(grep -c "<- its kernel's best$" "$T_TMP/out")" = 2 ] && pass log_kernels_one_best \
	|| fail log_kernels_one_best "$(cat "$T_TMP/out")"
if "$KB" devices >/dev/null 2>&1; then
	run "$KB" replay sessions/reduce --file row_max.cu; expect_rc replay_gpu 0
	expect_in replay_gpu_now out "now on"
	rows=$(grep -c '^  v[0-9]' "$T_TMP/out")
	# the same variants over every GPU's worker, each row naming its GPU
	run "$KB" replay sessions/reduce --file row_max.cu --gpus all; expect_rc replay_gpus 0
	[ "$(grep -c '^  v[0-9].*\[gpu [0-9]*\]' "$T_TMP/out")" = "$rows" ] && pass replay_gpus_rows \
		|| fail replay_gpus_rows "not $rows rows with [gpu N]"
else
	run "$KB" replay sessions/reduce;   expect_rc replay_needs_gpu 3
	expect_in replay_says_gpu err "replay re-runs each variant on a GPU"
	run "$KB" replay sessions/reduce --gpus 0,1;   expect_rc replay_gpus_needs_gpu 3
	expect_in replay_gpus_says_gpu err "replay re-runs each variant on a GPU"
fi
finish
