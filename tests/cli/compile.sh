#!/bin/sh
# compile.sh - `kbench compile` as a user runs it: help, version, exit codes,
# the human summary, --json, spec errors, compiler errors, the cache.
. tests/cli/lib.sh

run "$KB" --help;                      expect_rc help 0; expect_in help_lists_compile out "compile FILE"
run "$KB" --version;                   expect_rc version 0; expect_in version_text out "kbench "
run "$KB" frobnicate;                  expect_rc unknown_verb 2; expect_in unknown_verb_msg err "unknown command 'frobnicate'"
run "$KB";                             expect_rc no_verb 2
run "$KB" compile --help;              expect_rc compile_help 0; expect_in compile_help_text out "--arch sm_XX"; expect_in compile_help_option out "--option OPT"
run "$KB" compile;                     expect_rc compile_no_file 2
run "$KB" compile kernels/softmax.cu --arch sm_9x; expect_rc bad_arch 2
# an arch this NVRTC does not know: exit 2, naming the ones it does (issue 25)
run "$KB" compile kernels/vector_add.cu --arch sm_999 --no-cache
expect_rc unknown_arch_rc 2
expect_in unknown_arch_says err "sm_999 is not an arch nvrtc 13."
expect_in unknown_arch_lists err ", sm_90, "
run "$KB" compile no/such/file.cu;     expect_rc missing_file 3; expect_in missing_file_msg err "no/such/file.cu"
run "$KB" compile README.md;           expect_rc wrong_kind 2

# The human summary.
run "$KB" compile kernels/softmax.cu --arch sm_90
expect_rc softmax 0
expect_in softmax_kernel out "softmax_rows  sm_90"
expect_in softmax_regs out "registers"
expect_in softmax_occ out "limited by"
expect_in softmax_cache_miss out "cache miss"
run "$KB" compile kernels/softmax.cu --arch sm_90
expect_in softmax_cache_hit out "cache hit"
expect_in softmax_hit_compiler out "nvrtc 13."

# Without a disassembler the compile says so in one line (issue 25: six,
# in every compile, diff and pane); `kbench devices` has the whole advice,
# GPU or not.
run env CUDA_VISIBLE_DEVICES= "$KB" devices
expect_in devices_sass out "  SASS        "
if grep -q "SASS        not shown" "$T_TMP/out"; then
	expect_in devices_sass_advice out "looked in"
	expect_in devices_sass_how out "KBENCH_NVDISASM to the program"
	run "$KB" compile kernels/softmax.cu --arch sm_90
	expect_in no_sass_one_line out "  SASS        not shown: no nvdisasm (nor cuobjdump) here; \`kbench devices\` says"
	expect_not_in no_sass_no_advice out "looked in"
else
	expect_in devices_sass_found out "nvdisasm"
	skip no_sass_one_line "a disassembler is here (the one-line note is for machines without one)"
fi

# NVRTC and nvJitLink (~100 MB each) are loaded only by a compile that
# misses the cache: the dynamic loader's own log of the files it opens.
run env LD_DEBUG=files "$KB" --version
expect_not_in version_no_nvrtc err "libnvrtc"
expect_not_in version_no_nvjitlink err "libnvJitLink"
expect_in version_loader_log err "file=libc.so.6" # the log is there to be read
run env LD_DEBUG=files "$KB" compile kernels/softmax.cu --arch sm_90
expect_in hit_is_hit out "cache hit"
expect_not_in hit_no_nvrtc err "libnvrtc"
expect_not_in hit_no_nvjitlink err "libnvJitLink"
run env LD_DEBUG=files "$KB" compile kernels/softmax.cu --arch sm_90 --no-cache
expect_in miss_loads_nvrtc err "libnvrtc.so"
run "$KB" compile kernels/saxpy.ptx --arch sm_90
run env LD_DEBUG=files "$KB" compile kernels/saxpy.ptx --arch sm_90
expect_in ptx_hit_is_hit out "cache hit"
expect_not_in ptx_hit_no_nvjitlink err "libnvJitLink"
run env LD_DEBUG=files "$KB" log
expect_not_in log_no_nvrtc err "libnvrtc"

# --json: valid, with registers, smem, spills, occupancy + limiter, SASS or why not.
run "$KB" compile kernels/softmax.cu --arch sm_90 --json
expect_rc softmax_json_rc 0
expect_json softmax_json_kernel "j['kernel'] == 'softmax_rows' and j['status'] == 'ok'"
expect_json softmax_json_resources "all(k in j['build']['kernels'][0]['resources'] for k in ('registers','shared_static_bytes','spill_store_bytes','local_bytes'))"
expect_json softmax_json_occupancy "[k for k in j['build']['kernels'] if k['name']=='softmax_rows'][0]['occupancy']['limiter'] in ('warps','registers','shared memory','block slots','barriers')"
expect_json softmax_json_sass "'available' in j['build']['sass'] and (j['build']['sass']['available'] or 'nvdisasm' in j['build']['sass']['why'])"
expect_json softmax_json_ptx "'.entry' in j['build']['ptx']"

run "$KB" compile kernels/saxpy.ptx --arch sm_90 --json
expect_rc ptx_json_rc 0
expect_json ptx_json "j['build']['compiler'].startswith('nvjitlink') and j['build']['kernels'][0]['resources']['registers'] > 0"
run "$KB" compile kernels/vector_add.cu --arch sm_80
expect_rc vector_add_sm80 0

# A spec with three mistakes: all three, with line:col and carets, exit 1.
run "$KB" compile tests/fixtures/kernels/three_mistakes.cu --arch sm_90
expect_rc three_mistakes_rc 1
expect_in three_dtype err "three_mistakes.cu:4:"
expect_in three_undefined err "three_mistakes.cu:5:"
expect_in three_directive err "three_mistakes.cu:6:"
if [ "$(grep -c '^ *| *\^' "$T_TMP/err")" -ge 3 ]; then pass three_carets; else fail three_carets "fewer than 3 caret lines: $(cat "$T_TMP/err")"; fi

# A C++ syntax error: the compiler's message at the user's file and line.
run "$KB" compile tests/fixtures/kernels/syntax_error.cu --arch sm_90
expect_rc syntax_rc 1
expect_in syntax_line err "tests/fixtures/kernels/syntax_error.cu:13:1: error: expected a \";\""
expect_not_in syntax_no_tmp err "/tmp/"
run "$KB" compile tests/fixtures/kernels/bad.ptx --arch sm_90
expect_rc ptx_error_rc 1
expect_in ptx_error_line err "tests/fixtures/kernels/bad.ptx:12: error:"

# Compiler options: //! options and --option, in the summary, the JSON, the
# cache key; a misspelt one is an error at its column with a caret.
F=tests/fixtures/kernels
run "$KB" compile $F/fast_exp.cu --arch sm_90
expect_rc options_rc 0
expect_in options_summary out "  options     -use_fast_math -maxrregcount=64"
run "$KB" compile $F/fast_exp.cu --arch sm_90 --option -ftz=true --json
expect_json options_json "j['build']['options'] == ['-use_fast_math', '-maxrregcount=64', '-ftz=true'] and '.approx.ftz.f32' in j['build']['ptx']"
key_cli=$(python3 -c "import json; print(json.load(open('$T_TMP/out'))['build']['cache_key'])")
run "$KB" compile $F/fast_exp.cu --arch sm_90 --json
key_spec=$(python3 -c "import json; print(json.load(open('$T_TMP/out'))['build']['cache_key'])")
if [ -n "$key_cli" ] && [ "$key_cli" != "$key_spec" ]; then pass options_key; else fail options_key "same key with and without --option: $key_cli"; fi
run "$KB" compile kernels/vector_add.cu --arch sm_90 --option=-maxrregcount=32 --option -use_fast_math
expect_rc option_cli_rc 0
expect_in option_cli_summary out "  options     -maxrregcount=32 -use_fast_math"
run "$KB" compile $F/bad_option.cu --arch sm_90
expect_rc bad_option_rc 1
expect_in bad_option_col err "bad_option.cu:7:23: error: NVRTC: unrecognized option -use_fast_mth found; did you mean '-use_fast_math'?"
expect_in bad_option_caret err "   |                       ^~~~~~~~~~~~~"
run "$KB" compile kernels/vector_add.cu --arch sm_90 --option -use_fast_mth
expect_rc bad_cli_option_rc 1
expect_in bad_cli_option err "vector_add.cu: error: --option -use_fast_mth (command line): NVRTC: unrecognized option -use_fast_mth found; did you mean '-use_fast_math'?"
run "$KB" compile kernels/vector_add.cu --arch sm_90 --option -arch=sm_80
expect_rc refused_cli_option_rc 1
expect_in refused_cli_option err "--option -arch=sm_80 (command line): kbench does not take -arch: it sets the target itself (use --arch sm_XX)"
run "$KB" compile kernels/saxpy.ptx --arch sm_90 --option -use_fast_math
expect_rc ptx_option_rc 1
expect_in ptx_option err "nvJitLink: unrecognized option: -use_fast_math; it is NVRTC's (for .cu files)"

# `//! require`: a malformed line is an error at its column with a caret; a
# false one at the defaults (or at --define values) is a warning naming the
# requirement and its values, and the compile still succeeds.
run "$KB" compile $F/bad_require.cu --arch sm_90
expect_rc bad_require_rc 1
expect_in bad_require_eq err "bad_require.cu:8:15: error: '=' is not a comparison; did you mean '=='?"
expect_in bad_require_caret err "   |               ^"
expect_in bad_require_operand err "bad_require.cu:9:16: error: expected an expression at end of line"
expect_in bad_require_name err "bad_require.cu:10:22: error: undefined name 'BLOCK'"
run "$KB" compile $F/require_unsupported.cu --arch sm_90
expect_rc require_warn_rc 0
expect_in require_warn err "require_unsupported.cu:11:13: warning: requires n <= BLOCKS * 256 * 4: n = 8192, BLOCKS * 256 * 4 = 4096 (BLOCKS = 4): a run at these values is UNSUPPORTED"
expect_in require_warn_caret err "   |             ^~~~~~~~~~~~~~~~~~~~~"
expect_in require_warn_summary out "copy4  sm_90"
run "$KB" compile $F/require_unsupported.cu --arch sm_90 --define BLOCKS=8
expect_rc require_define_rc 0
expect_not_in require_define_ok err "warning"
run "$KB" compile $F/require.cu --arch sm_90
expect_rc require_ok_rc 0
expect_not_in require_ok err "warning"
run "$KB" compile $F/require.cu --arch sm_90 --define BLOCKS=2 --json
expect_json require_json "j['status'] == 'ok' and j['unsupported'].startswith('requires n <= BLOCKS * 256 * 4: n = 4096') and [g['level'] for g in j['diagnostics']] == ['warning']"

# file() inputs come from below the kernel's directory only (issue 18): a
# path out of it, by "..", absolutely or through a symbolic link, is an
# error at the path; KBENCH_FILE_DIRS names more directories.
mkdir -p "$T_TMP/fk/k/data" "$T_TMP/fk/outside"
cp $F/ramp_4096.npy "$T_TMP/fk/k/data/" && cp $F/ramp_4096.npy "$T_TMP/fk/outside/"
ln -s ../outside "$T_TMP/fk/k/link"
for c in "up:../outside/ramp_4096.npy" "abs:$T_TMP/fk/outside/ramp_4096.npy" \
	 "link:link/ramp_4096.npy" "inside:data/ramp_4096.npy"; do
	sed "s|file(\"tests/fixtures/kernels/ramp_4096.npy\")|file(\"${c#*:}\")|" \
		$F/file_input.cu >"$T_TMP/fk/k/${c%%:*}.cu"
done
cd "$T_TMP/fk/k"
run "$KB" compile up.cu --arch sm_90 --no-sass
expect_rc file_up_rc 1
expect_in file_up_at err "up.cu:3:31: error: file() reads only below the kernel's directory $T_TMP/fk/k, and $T_TMP/fk/outside/ramp_4096.npy is not"
expect_in file_up_caret err "   |                               ^~~~~~~~~~~~~~~~~~~~~~~~~~"
run "$KB" compile abs.cu --arch sm_90 --no-sass;  expect_rc file_abs_rc 1
expect_in file_abs_at err "abs.cu:3:31: error: file() reads only below"
run "$KB" compile link.cu --arch sm_90 --no-sass; expect_rc file_link_rc 1
expect_in file_link_at err "link.cu:3:31: error: file() reads only below the kernel's directory $T_TMP/fk/k, and $T_TMP/fk/outside/ramp_4096.npy"
run "$KB" compile inside.cu --arch sm_90 --no-sass; expect_rc file_inside_rc 0
run env KBENCH_FILE_DIRS="/nonexistent:$T_TMP/fk/outside" "$KB" compile link.cu --arch sm_90 --no-sass
expect_rc file_allowed_rc 0
expect_not_in file_allowed_quiet err "file() reads only"
cd - >/dev/null

# Text encodings: a UTF-8 byte order mark is dropped (the kernel and its
# spec are found, line 1's columns are the editor's); UTF-16 or a NUL byte
# is refused, saying where, instead of compiling what came before it.
printf '\357\273\277' >"$T_TMP/bom.cu"; cat kernels/vector_add.cu >>"$T_TMP/bom.cu"
run "$KB" compile "$T_TMP/bom.cu" --no-sass
expect_rc utf8_bom_rc 0
expect_in utf8_bom_kernel out "vector_add  sm_"
expect_in utf8_bom_occupancy out "8 blocks x 256 threads"
iconv -f utf-8 -t utf-16 kernels/vector_add.cu >"$T_TMP/u16.cu"
run "$KB" compile "$T_TMP/u16.cu" --no-sass
expect_rc utf16_rc 2
expect_in utf16_says err "the file is UTF-16 (it starts with a byte order mark FF FE); save it as UTF-8"
printf '__global__ void k(float *x)\n{ x[0] = 1; }\000junk' >"$T_TMP/nul.cu"
run "$KB" compile "$T_TMP/nul.cu" --no-sass
expect_rc nul_rc 2
expect_in nul_says err "nul.cu:2:14: error: a NUL byte"
expect_in nul_caret err "   |              ^"
# A byte that is not UTF-8 (NVRTC stops reading at it: an empty compile of
# "0 registers", exit 0) is refused at its line and column (issue 25).
{ printf '//! arg N = 1024\n// caf\303\251 \377\n'; cat kernels/vector_add.cu; } >"$T_TMP/ff.cu"
run "$KB" compile "$T_TMP/ff.cu" --no-sass
expect_rc not_utf8_rc 2
expect_in not_utf8_says err "ff.cu:2:9: error: byte 0xFF is not UTF-8"
expect_in not_utf8_caret err "   |         ^"
expect_not_in not_utf8_no_result out "registers"
for seq in overlong:'\300\200' surrogate:'\355\240\200' past_10ffff:'\364\220\200\200' \
	   truncated:'\342\202'; do
	{ printf "// ${seq#*:}\n"; cat kernels/vector_add.cu; } >"$T_TMP/bad8.cu"
	run "$KB" compile "$T_TMP/bad8.cu" --no-sass
	expect_rc "not_utf8_${seq%%:*}" 2
done
# A kernel the spec names that the compiler never saw is an error at its
# line, never "registers 0/thread".
{ sed -n '1,9p' kernels/vector_add.cu; echo '#if 0'; sed -n '10,$p' kernels/vector_add.cu; echo '#endif'; } \
	>"$T_TMP/if0.cu"
run "$KB" compile "$T_TMP/if0.cu" --no-sass
expect_rc missing_kernel_rc 1
expect_in missing_kernel_says err "if0.cu:12:28: error: kernel 'vector_add' is not in the compiled code"
expect_not_in missing_kernel_no_regs out "registers"

# A compile that can never launch is not a success (issue 25): a block over
# the arch's limit, by the spec or a -D, an arg its int parameter cannot
# hold, a launch line that cannot be evaluated (saying what failed).
sed 's/block=(256)/block=(256, 8, 8)/' kernels/vector_add.cu >"$T_TMP/b3.cu"
run "$KB" compile "$T_TMP/b3.cu" --no-sass
expect_rc cannot_launch_rc 1
expect_in cannot_launch_says err "b3.cu:7:5: error: CANNOT LAUNCH on sm_"
expect_in cannot_launch_why err "a block of 16384 threads is outside 1..1024"
sed 's/__global__ void vector_add/__global__ void __launch_bounds__(128) vector_add/' \
	kernels/vector_add.cu >"$T_TMP/lb.cu"
run "$KB" compile "$T_TMP/lb.cu" --no-sass
expect_rc launch_bounds_rc 1
expect_in launch_bounds_says err "lb.cu:7:5: error: CANNOT LAUNCH on sm_90: a block of 256 threads exceeds the kernel's own limit of 128"
sed 's/block=(256)/block=(BLOCK)/; s/cdiv(n, 256)/cdiv(n, BLOCK)/; s|^//! tol.*|&\n//! tune    BLOCK = 256, 512|' \
	kernels/vector_add.cu >"$T_TMP/tb.cu"
run "$KB" compile "$T_TMP/tb.cu" --no-sass
expect_rc tune_ok_rc 0
run "$KB" compile "$T_TMP/tb.cu" --no-sass -D BLOCK=2048
expect_rc define_block_rc 1
expect_in define_block_says err "a block of 2048 threads is outside 1..1024"
run "$KB" compile "$T_TMP/tb.cu" --no-sass -D BLOCK=0
expect_rc block_zero_rc 1
expect_in block_zero_says err "tb.cu:7:42: error: block.x must be positive (it is 0)"
expect_not_in block_zero_no_launch_line out "no //! launch line"
expect_in block_zero_occ out "the //! launch line could not be evaluated"
run "$KB" compile "$T_TMP/tb.cu" --no-sass -D BLOCK=abc
expect_rc block_abc_rc 1
expect_in block_abc_says err "tb.cu:7:42: error: tune 'BLOCK' is 'abc' here, not a number"
sed 's/n = 64 \* 1024 \* 1024/n = 1099511627776/' kernels/vector_add.cu >"$T_TMP/big.cu"
run "$KB" compile "$T_TMP/big.cu" --no-sass
expect_rc int_overflow_rc 1
expect_in int_overflow_says err "big.cu:3:13: error: arg 'n' is 1099511627776, which overflows parameter 'n' of vector_add(): 'int' holds -2147483648..2147483647"
sed 's/n = 64 \* 1024 \* 1024/n = -5/' kernels/vector_add.cu >"$T_TMP/neg.cu"
run "$KB" compile "$T_TMP/neg.cu" --no-sass
expect_rc negative_rc 1
expect_in negative_says err "neg.cu:7:19: error: grid.x must be positive (it is 0)"
expect_not_in negative_no_launch_line out "no //! launch line"
run "$KB" compile kernels/vector_add.cu --arch sm_90 --option -G
expect_rc refused_g_rc 1
expect_in refused_g_says err "--option -G (command line): kbench does not take -G"
expect_not_in refused_g_no_result out "registers"
expect_not_in refused_g_no_result_err err "registers"

# Every compile is kept, errors too, with its true verdict (issue 25): a
# spec error was "compiled" in log and the export, a compile error absent.
# (A folder outside this repository: its refs go to the private store.)
REPO=$PWD
mkdir -p "$T_TMP/rec" && cp kernels/vector_add.cu "$T_TMP/rec/k.cu" && cd "$T_TMP/rec"
export XDG_DATA_HOME="$T_TMP/recdata"
run env -u KBENCH_NO_SESSION "$KB" compile k.cu --no-sass
sed -i 's/n = 64 \* 1024 \* 1024/n = abc/' k.cu
run env -u KBENCH_NO_SESSION "$KB" compile k.cu --no-sass; expect_rc rec_spec_rc 1
sed -i 's/n = abc/n = 1024/; s/c\[i\] = a\[i\] + b\[i\];/int q = ;/' k.cu
run env -u KBENCH_NO_SESSION "$KB" compile k.cu --no-sass; expect_rc rec_compile_rc 1
run env -u KBENCH_NO_SESSION "$KB" log k.cu
expect_in rec_log_v1 out "  v1                 compiled"
expect_in rec_log_spec out "  v2                 SPEC ERROR"
expect_in rec_log_compile out "  v3                 COMPILE ERROR"
run env -u KBENCH_NO_SESSION "$KB" show v3
expect_in rec_show_text out "int q = ;"
run env -u KBENCH_NO_SESSION "$KB" session export "$(ls "$XDG_DATA_HOME/kbench/sessions")" -o "$T_TMP/recexp"
expect_rc rec_export_rc 0
if grep -q "| SPEC ERROR | .*SPEC ERROR: line 3: " "$T_TMP/recexp/README.md" &&
   grep -q "| COMPILE ERROR | .*COMPILE ERROR: line 16: " "$T_TMP/recexp/README.md"; then
	pass rec_export_verdicts
else
	fail rec_export_verdicts "$(cat "$T_TMP/recexp/README.md")"
fi
# the same text compiled again without the error (-G refused, then not)
cp "$REPO/kernels/vector_add.cu" k.cu
run env -u KBENCH_NO_SESSION "$KB" compile k.cu --no-sass --option -G; expect_rc rec_g_rc 1
run env -u KBENCH_NO_SESSION "$KB" compile k.cu --no-sass; expect_rc rec_after_g_rc 0
run env -u KBENCH_NO_SESSION "$KB" log k.cu
expect_in rec_log_g_cleared out "  v4                 compiled"
cd - >/dev/null


# a kernel past the 48 KiB of static __shared__ a block may declare: NVRTC
# fails with only ptxas's info lines ("0 bytes gmem" first) in its log, and
# the error says why, not the log's first line
cat >"$T_TMP/bigsmem.cu" <<'EOF'
//! kernel  big
//! arg     N = 1024
//! in      x : f32[N] = randn(seed=1)
//! out     y : f32[N]
//! ref     copy(x) -> y
//! launch  grid=(cdiv(N, 256)) block=(256)
__global__ void big(const float *x, float *y, int N)
{
	__shared__ float a[100000];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	a[threadIdx.x] = i < N ? x[i] : 0.f;
	__syncthreads();
	if (i < N)
		y[i] = a[(threadIdx.x * 7) % 256];
}
EOF
run "$KB" compile "$T_TMP/bigsmem.cu" --no-sass
expect_rc big_static_smem_fails 1
expect_in big_static_smem_says_why err "declares 400000 bytes of static __shared__ memory, past the 48 KiB"
expect_not_in big_static_smem_not_info err "0 bytes gmem"
# a kernel its parser cannot read (a macro before the name): the error, and
# a note at the declaration with the reason
run "$KB" compile tests/fixtures/kernels/macro_decl.cu --arch sm_90 --no-sass
expect_rc macro_decl_fails 1
expect_in macro_decl_error err "no kernel named 'scale'"
expect_in macro_decl_note err "macro_decl.cu:11:1: note: 'scale' looks declared here"

finish
