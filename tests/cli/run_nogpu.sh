#!/bin/sh
# run_nogpu.sh - `kbench run` where no GPU can be used: a clear message and
# a non-zero exit, never a crash.  CUDA_VISIBLE_DEVICES= hides any GPU, so
# this runs the same on CPU-only machines and on GPU machines.
. tests/cli/lib.sh

run env CUDA_VISIBLE_DEVICES= "$KB" run kernels/vector_add.cu
expect_rc nogpu_exit 3
expect_in nogpu_says out "NO GPU"
run env CUDA_VISIBLE_DEVICES= "$KB" run kernels/vector_add.cu --json
expect_json nogpu_json "j['status'] == 'no_gpu' and len(j['message']) > 10"
run env CUDA_VISIBLE_DEVICES= "$KB" devices
expect_rc nogpu_devices 3
# a spec error is the kernel's, GPU or not: reported first, exit 1 (issue 25)
sed 's/a : f32\[n\]/a : f31[n]/' kernels/vector_add.cu >"$T_TMP/f31.cu"
run env CUDA_VISIBLE_DEVICES= "$KB" run "$T_TMP/f31.cu"
expect_rc spec_error_rc 1
expect_in spec_error_verdict out "SPEC ERROR"
expect_in spec_error_at out "f31.cu:4:17: error: unknown dtype 'f31'; did you mean 'f32'?"
expect_not_in spec_error_not_nogpu out "NO GPU"
run env CUDA_VISIBLE_DEVICES= "$KB" profile "$T_TMP/f31.cu" --json
expect_rc spec_error_profile_rc 1
expect_json spec_error_json "j['status'] == 'spec_error' and j['diagnostics'][0]['line'] == 4"
# a launch no GPU takes is a spec error here too, with the run's --arg values
sed 's/block=(256)/block=(256, 8, 8)/' kernels/vector_add.cu >"$T_TMP/b3.cu"
run env CUDA_VISIBLE_DEVICES= "$KB" run "$T_TMP/b3.cu"
expect_rc cannot_launch_run_rc 1
expect_in cannot_launch_run_says out "b3.cu:7:5: error: CANNOT LAUNCH"
sed 's/block=(256)/block=(n)/; s/n = 64 \* 1024 \* 1024/n = 2048/' kernels/vector_add.cu >"$T_TMP/bn.cu"
run env CUDA_VISIBLE_DEVICES= "$KB" run "$T_TMP/bn.cu"
expect_rc block_arg_rc 1
run env CUDA_VISIBLE_DEVICES= "$KB" run "$T_TMP/bn.cu" --arg n=256
expect_rc block_arg_fixed_rc 3
expect_in block_arg_fixed_nogpu out "NO GPU"
run env CUDA_VISIBLE_DEVICES= "$KB" run kernels/vector_add.cu --arg n=1099511627776
expect_rc arg_overflow_run_rc 1
expect_in arg_overflow_run_says out "which overflows parameter 'n' of vector_add(): 'int' holds"
{ printf '// \377\n'; cat kernels/vector_add.cu; } >"$T_TMP/ff.cu"
run env CUDA_VISIBLE_DEVICES= "$KB" run "$T_TMP/ff.cu"
expect_rc not_utf8_run_rc 2   # as compile: the file, not the machine
expect_in not_utf8_run_at err "ff.cu:1:4: error: byte 0xFF is not UTF-8"
run env CUDA_VISIBLE_DEVICES= "$KB" run kernels/vector_add.cu --option -G
expect_rc refused_option_rc 1
expect_in refused_option_says out "--option -G (command line): kbench does not take -G"
run "$KB" run no/such.cu
expect_rc run_missing_file_rc 3
run "$KB" run
expect_rc run_usage 2
run "$KB" run --help
expect_rc run_help 0
expect_in run_help_text out "--trials N"
# every option a verb takes is in its help (issue 25): main takes these
# out of every verb's argv (kb_app_target_parse)
for verb in run profile replay; do
	run "$KB" $verb --help
	for flag in --remote --gpus --hosts --launcher --workers; do
		expect_in "${verb}_help_$flag" out "  $flag "
	done
done
run "$KB" compile --help
expect_in compile_help_remote out "  --remote HOST"
# over two GPUs' workers the base run is the queue's first job: no GPU is
# still NO GPU, exit 3, not a hang or a sweep of failures (GPUs 0 and 1 are
# the entries of CUDA_VISIBLE_DEVICES, ids no driver has)
run env CUDA_VISIBLE_DEVICES=nogpu0,nogpu1 "$KB" run kernels/reduce/02_vec4.cu --gpus 0,1
expect_rc run_gpus_nogpu_rc 3
expect_in run_gpus_nogpu out "NO GPU"
expect_not_in run_gpus_nogpu_no_sweep out "sweep"
finish
