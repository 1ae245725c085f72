#!/bin/sh
# pyref.sh - Python references (`//! ref numpy|torch`, docs/python-refs.md):
# kernels of our own (tests/pyref/) run on the CPU by the host emulator and
# checked against NumPy and PyTorch references, a deliberately wrong kernel
# caught, a reference that raises never a pass; the spec line's errors at
# their column; a Python reference from a session folder (exported,
# imported, replayed) refused until --trust-python, saying how; `kbench
# optimize` refusing a model's answer that changes the ref line.  The
# reference server's own errors (no interpreter, NumPy or torch, exceptions,
# shapes, dtypes, hangs) are in tests/unit/test_profile_pyref.c.
. tests/cli/lib.sh

EMU=${EMU:-$PWD/build/emu/tile_emu}
P=$PWD/tests/pyref
PY=
for c in "${KBENCH_PYTHON:-}" /usr/bin/python3 python3; do
	[ -n "$c" ] && "$c" -c 'import numpy' >/dev/null 2>&1 && { PY=$c; break; }
done
TORCH=
[ -n "$PY" ] && "$PY" -c 'import torch' >/dev/null 2>&1 && TORCH=1
export KBENCH_PYTHON="$PY"

# emu NAME FILE [ARGS...]: every --size line must be ok
emu() {
	n=$1
	shift
	env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS "$EMU" --work "$T_TMP/emu" "$@" \
		>"$T_TMP/emu.out" 2>&1
	if [ "$(grep -c '^ok   ' "$T_TMP/emu.out")" -gt 0 ] && ! grep -q '^FAIL' "$T_TMP/emu.out"; then
		pass "$n"
	else
		fail "$n" "$(head -c 1500 "$T_TMP/emu.out")"
	fi
}
# emu_fails NAME WANT FILE [ARGS...]: must FAIL, saying WANT
emu_fails() {
	n=$1 want=$2
	shift 2
	env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS "$EMU" --work "$T_TMP/emu" "$@" \
		>"$T_TMP/emu.out" 2>&1
	if grep -q '^FAIL' "$T_TMP/emu.out" && ! grep -q '^ok ' "$T_TMP/emu.out" &&
	   grep -qF -- "$want" "$T_TMP/emu.out"; then
		pass "$n"
	else
		fail "$n" "wanted FAIL and '$want': $(head -c 1500 "$T_TMP/emu.out")"
	fi
}

if [ ! -x "$EMU" ]; then
	skip emu "build/emu/tile_emu is missing (make build-tests builds it)"
elif [ -z "$PY" ]; then
	skip emu "no python3 with NumPy (Debian: apt-get install python3-numpy)"
else
	emu numpy_expression "$P/scan_rows.cu" --size M=7,N=300 --size M=3,N=5
	emu numpy_file_function "$P/softmax_rows.cu" --size M=5,N=333 --size M=3,N=1000
	# a request past shared memory's free space (here: past 1 byte) goes to a
	# folder on disk, $TMPDIR: the same answer, and the log says where
	mkdir -p "$T_TMP/spill"
	KBENCH_PYREF_SHM_MAX=1 TMPDIR="$T_TMP/spill" KBENCH_LOG="$T_TMP/spill.log" \
		emu numpy_data_on_disk "$P/softmax_rows.cu" --size M=5,N=333
	expect_in numpy_data_on_disk_logged spill.log "of data in $T_TMP/spill/kbench-pyref."
	# the same kernel with its scan restarted on every element: caught
	sed 's/s += x/s = x/' "$P/scan_rows.cu" >"$P/.mutant_scan.cu"
	emu_fails numpy_catches_wrong_kernel "y: " "$P/.mutant_scan.cu" --size M=7,N=300
	# a reference that raises: the check fails at the user's line, never passes
	sed 's/softmax_ref/broken_ref/' "$P/softmax_rows.cu" >"$P/.broken.cu"
	emu_fails exception_never_passes "ref.py:13: the reference raised IndexError" \
		"$P/.broken.cu" --size M=5,N=333
	emu_fails exception_traceback "    return y[:, N]  # an index past the row" \
		"$P/.broken.cu" --size M=5,N=333
	rm -f "$P/.mutant_scan.cu" "$P/.broken.cu"
	if [ -n "$TORCH" ]; then
		emu torch_expression "$P/conv1d_torch.cu" --size L=50 --size B=1,L=17,KW=3
		emu torch_file_function "$P/pool_torch.cu" --size M=6,N=96,K=4
	else
		skip torch_expression "$PY has no torch (Debian: apt-get install python3-torch)"
		skip torch_file_function "$PY has no torch (Debian: apt-get install python3-torch)"
	fi
fi

# The hand-written kernels of ten KernelBench level-1 problems
# (kernels/kernelbench/, device=cuda references): on the CPU at small sizes,
# against the same torch expression run here (F.scaled_dot_product_attention,
# which torch 1.13 lacks, written out)
if [ -x "$EMU" ] && [ -n "$TORCH" ]; then
	for c in "19_relu B=3,D=1000" "23_softmax B=3,D=3000" "51_argmax B=2,D1=50,D2=300" \
		 "89_cumsum B=2,D=5000" "100_hinge_loss B=37,D=300,NB=8" "94_mse_loss B=37,D=300,NB=8" \
		 "42_maxpool2d N=2,C=3,H=17,W=19" "50_conv2d N=2,H=30,W=27,CO=5" \
		 "82_depthwise_conv2d N=2,C=3,H=13,W=20" "97_sdpa B=1,NH=2,L=7,E=64"; do
		set -- $c
		sed -e 's/torch device=cuda /torch /' -e \
			's|F.scaled_dot_product_attention(Q, K, V)|torch.softmax(Q @ K.transpose(-1, -2) / Q.shape[-1] ** 0.5, dim=-1) @ V|' \
			"kernels/kernelbench/$1.cu" >"$T_TMP/$1.cu"
		emu "kernelbench_$1" "$T_TMP/$1.cu" --size "$2"
	done
else
	skip kernelbench_kernels "needs build/emu/tile_emu and torch"
fi

# ---- the spec line ----
W="$T_TMP/w"
mkdir -p "$W"
sed 's|^//! ref .*|//! ref numpy device=tpu np.cumsum(x, axis=1) -> y|' "$P/scan_rows.cu" >"$W/bad.cu"
run "$KB" compile "$W/bad.cu"
expect_rc spec_bad_option_rc 1
expect_in spec_bad_option_says err "expected cpu or cuda, found 'tpu'"
sed 's|^//! ref .*|//! ref torch np.cumsum(x, axis=1)|' "$P/scan_rows.cu" >"$W/bad.cu"
run "$KB" compile "$W/bad.cu"
expect_in spec_no_arrow err "expected '->' and the output tensor(s) after the Python call"
run "$KB" compile "$P/scan_rows.cu"
expect_rc spec_python_form_compiles 0

# ---- never someone else's Python unasked ----
# A file in a session folder (what `kbench session export` writes, what a
# pull request's sessions/ holds) is refused before any runner starts.
S="$T_TMP/sessions/theirs"
mkdir -p "$S/k.cu"
cp "$P/scan_rows.cu" "$S/k.cu/v1.cu"
echo '{}' >"$S/manifest.json"
: >"$S/journal.jsonl"
run "$KB" run "$S/k.cu/v1.cu"
expect_rc refused_session_folder_rc 1
expect_in refused_session_folder_verdict out "REFUSED"
expect_in refused_session_folder_why out "lies in a session folder ($S)"
expect_in refused_session_folder_how out "say yes with --trust-python (or KBENCH_TRUST_PYTHON=1)"
run "$KB" run "$S/k.cu/v1.cu" --trust-python
expect_not_in trusted_session_folder out "REFUSED"
KBENCH_TRUST_PYTHON=1 run "$KB" run "$S/k.cu/v1.cu"
expect_not_in trusted_by_env out "REFUSED"
# the user's own file is not refused (here: no GPU, exit 3)
run "$KB" run "$P/scan_rows.cu"
expect_not_in own_file_not_refused out "REFUSED"

# a real session: recorded, exported, imported elsewhere, replayed
(
	T_PASSED=0 T_FAILED=0 T_SKIPPED=0
	unset KBENCH_NO_SESSION
	export GIT_CEILING_DIRECTORIES="$T_TMP"
	cp "$P/scan_rows.cu" "$W/scan.cu"
	cd "$W" || exit 1
	run "$KB" session new py;              expect_rc session_new 0
	run "$KB" compile scan.cu;             expect_rc session_compile 0
	run "$KB" session export py -o "$T_TMP/exported"; expect_rc session_export 0
	run "$KB" replay "$T_TMP/exported"
	expect_in refused_exported_replay out "REFUSED"
	expect_in refused_exported_replay_why out "recorded session's variant (kbench replay)"
	run "$KB" run "$T_TMP/exported/scan.cu/v1.cu"
	expect_in refused_exported_file out "lies in a session folder"
	export XDG_DATA_HOME="$T_TMP/other"
	run "$KB" session import "$T_TMP/exported"; expect_rc session_import 0
	run "$KB" replay py
	expect_in refused_imported_replay out "REFUSED"
	run "$KB" replay py --trust-python
	expect_not_in trusted_imported_replay out "REFUSED"
	echo "# passed=$T_PASSED failed=$T_FAILED skipped=$T_SKIPPED" >"$T_TMP/sub"
)
read -r _ p f s <"$T_TMP/sub"
T_PASSED=$((T_PASSED + ${p#passed=})); T_FAILED=$((T_FAILED + ${f#failed=}))
T_SKIPPED=$((T_SKIPPED + ${s#skipped=}))

# `kbench optimize`: a model's answer that changes the ref line is refused
# (as every spec change is), and its Python never runs
cp "$P/scan_rows.cu" "$W/opt.cu"
cat >"$W/answer.sh" <<EOF
cat >/dev/null
echo '\`\`\`cuda'
sed 's|^//! ref .*|//! ref numpy __import__("os").system("touch $W/pwned") -> y|' "$W/opt.cu"
echo '\`\`\`'
EOF
run "$KB" optimize "$W/opt.cu" --rounds 1 --llm-cmd "sh $W/answer.sh"
expect_in optimize_refuses_ref_change out "the proposal changes the spec"
[ ! -e "$W/pwned" ] && pass optimize_python_not_run || fail optimize_python_not_run "the model's Python ran"
# ---- kbench ref: the reference alone, here ----
if [ -n "$PY" ]; then
	run "$KB" ref "$P/softmax_rows.cu"
	expect_rc ref_numpy_rc 0
	expect_in ref_numpy_says out "reference   python numpy ref.py:softmax_ref"
	expect_in ref_numpy_imports out "(server started; imported numpy, ref.py)"
	expect_in ref_numpy_output out "y           [5, 333]: min "
	sed 's/softmax_ref/broken_ref/' "$P/softmax_rows.cu" >"$P/.broken.cu"
	run "$KB" ref "$P/.broken.cu"
	expect_rc ref_exception_rc 1
	expect_in ref_exception_at_line out "ref.py:13: the reference raised IndexError"
	rm -f "$P/.broken.cu"
	KBENCH_PYTHON=/nonexistent/python3 run "$KB" ref "$P/softmax_rows.cu"
	expect_rc ref_no_python_rc 3
	expect_in ref_no_python_says out "KBENCH_PYTHON=/nonexistent/python3 is not an executable Python"
	run "$KB" ref "$S/k.cu/v1.cu"
	expect_rc ref_refused_rc 1
	expect_in ref_refused_says out "say yes with --trust-python"
	# integer inputs drawn as the GPU draws them: rand(0, 4) is 0 .. 3
	cat >"$W/ints.cu" <<'EOF'
//! in      t : i64[1000] = rand(0, 4)
//! in      x : f32[1000] = rand(0, 1)
//! out     y : f32[1000]
//! launch  grid=(4) block=(256)
//! ref     numpy x * 0 + t.max() -> y
__global__ void k(const long long *t, const float *x, float *y) {}
EOF
	run "$KB" ref "$W/ints.cu"
	expect_in ref_integer_inputs_truncated out "y           [1000]: min 3, max 3"
	run "$KB" ref "$P/scan_rows.cu" --arg M=100000000 --arg N=100000
	expect_rc ref_too_big_rc 3
	expect_in ref_too_big_says out "GB are available"
fi

# ---- kbench new --from-kernelbench: a problem as KernelBench writes them ----
if [ -n "$TORCH" ]; then
	mkdir -p "$W/kb" && cd "$W/kb" || exit 1
	run "$KB" new --from-kernelbench "$P/kb_problem.py"
	expect_rc kb_new_rc 0
	expect_in kb_new_inputs out "inputs   x f32[4, 3, 40], conv_weight f32[8, 3, 5], conv_bias f32[8]"
	expect_in kb_new_outputs out "outputs  y f32[4, 8]"
	cp kb_problem.cu "$T_TMP/out"
	expect_in kb_new_spec_scale out "//! arg     scale = 2"
	expect_in kb_new_spec_ref out "//! ref     torch kb_problem.ref.py:reference -> y"
	expect_in kb_new_spec_tol out "//! tol     rtol=0.0001 atol=0.0001"
	run "$KB" new --from-kernelbench "$P/kb_problem.py"
	expect_rc kb_new_no_overwrite 2
	expect_in kb_new_no_overwrite_says err "kb_problem.cu exists: kbench does not overwrite it"
	run "$KB" compile kb_problem.cu
	expect_rc kb_new_compiles 0
	run "$KB" ref kb_problem.cu
	expect_rc kb_new_ref_runs 0
	expect_in kb_new_ref_says out "reference   python torch kb_problem.ref.py:reference"
	# the reference is the problem's forward on kbench's values: check one
	# output element by hand from the same inputs
	"$PY" - <<'PYEOF' >"$T_TMP/out" 2>&1
import importlib.util, torch
s = importlib.util.spec_from_file_location("r", "kb_problem.ref.py"); r = importlib.util.module_from_spec(s); s.loader.exec_module(r)
g = torch.Generator().manual_seed(1)
x, w, b = (torch.randn(4, 3, 40, generator=g, dtype=torch.float64), torch.randn(8, 3, 5, generator=g, dtype=torch.float64), torch.randn(8, generator=g, dtype=torch.float64))
y = r.reference(x=x, conv_weight=w, conv_bias=b, scale=2)
want = sum(max(0.0, float((x[1, :, t:t + 5] * w[3]).sum() + b[3])) for t in range(36)) * 2
print("match" if abs(float(y[1, 3]) - want) < 1e-9 else "differ %r %r" % (float(y[1, 3]), want))
PYEOF
	expect_in kb_new_reference_is_the_forward out "match"
	printf 'import torch\nclass Model(torch.nn.Module):\n    pass\n' >"$W/notkb.py"
	run "$KB" new --from-kernelbench "$W/notkb.py" -o other.cu
	expect_rc kb_new_not_a_problem 1
	expect_in kb_new_not_a_problem_says err "has no get_inputs"
	cd - >/dev/null || exit 1
else
	skip kb_new "$PY has no torch (Debian: apt-get install python3-torch)"
fi
finish
