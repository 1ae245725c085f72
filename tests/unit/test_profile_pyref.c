/* test_profile_pyref.c - Python references (src/reference/pyref.c and the
 * `ref numpy|torch` form of the spec): values from NumPy and PyTorch, the
 * warm server (a second call imports nothing), and every way one cannot
 * run: no interpreter, no NumPy, no torch, an exception (at the user's
 * file:line), a wrong count, shape or dtype, a server that dies, a hang.
 * Needs /usr/bin/python3 (or python3) with NumPy; torch cases skip without
 * it.  No GPU. */
#include "../../src/reference/reference.h"
#include "t.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/kb_pyref_XXXXXX";
static const char *python;
static bool have_torch;

static char *write_file(const char *name, const char *text)
{
	char *p = kb_xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

/* Runs the spec's reference (lines as the kernel file tmpdir/k.cu) on x
 * (f32[3, 4]: 0, 0.5, 1, ...); out gets the spec's outputs. */
static int run_ref(const char *lines, kb_ref_out *out, int nout, kb_err *err)
{
	char *path = write_file("k.cu", lines);
	kb_source src = {path, (char *)lines, strlen(lines), KB_SRC_CUDA};
	kb_spec spec;
	kb_diags diags = {0};
	int64_t dims[2] = {3, 4};
	kb_tensor x;
	kb_tensor_init(&x, "x", KB_DT_F32, 2, dims);
	for (int i = 0; i < 12; i++)
		kb_tensor_set(&x, i, i * 0.5);
	memset(err, 0, sizeof *err);
	memset(out, 0, (size_t)nout * sizeof *out);
	int rc = kb_compile_spec_parse(&src, &spec, &diags);
	if (rc) {
		kb_buf b = KB_BUF_INIT;
		kb_diag_render(&diags, &b, false);
		printf("spec parse failed:\n%s", b.s ? b.s : "");
		kb_buf_free(&b);
	} else {
		rc = kb_profile_reference(&spec, &src, &x, 1, out, 1, err);
	}
	kb_tensor_free(&x);
	kb_diags_free(&diags);
	kb_compile_spec_free(&spec);
	free(path);
	return rc;
}

#define HEAD "//! arg N = 4\n//! in x : f32[3, N]\n//! out y : f32[3, N]\n"

static void outs_free(kb_ref_out *o, int n)
{
	for (int i = 0; i < n; i++)
		kb_ref_out_free(&o[i]);
}

/* ===== values ===== */

static void test_pyref__numpy_expression(void)
{
	kb_ref_out o[1];
	kb_err err;
	T_EQ_INT(run_ref(HEAD "//! ref numpy np.cumsum(x, axis=1) * N -> y\n", o, 1, &err), 0);
	T_EQ_INT(o[0].n, 12);
	T_NEAR(o[0].v[3], (0 + 0.5 + 1 + 1.5) * 4, 1e-12); /* float64, the arg N seen */
	T_NEAR(o[0].v[4], 2 * 4, 1e-12);
	T_CONTAINS(o[0].ran, "python numpy np.cumsum(x, axis=1) * N, ");
	outs_free(o, 1);
}

static void test_pyref__file_function_by_names(void)
{
	free(write_file("ref2.py", "import numpy as np\n\ndef two(N, x, unused=1):\n"
			"    return {'z': x.sum(axis=1, keepdims=True), 'y': x * 2 + N}\n"));
	kb_ref_out o[2];
	kb_err err;
	T_EQ_INT(run_ref(HEAD "//! out z : f32[3, 1]\n//! ref numpy ref2.py:two -> y, z\n", o, 2, &err),
		 0);
	T_NEAR(o[0].v[5], 2.5 * 2 + 4, 1e-12);
	T_EQ_STR(o[1].name, "z");
	T_NEAR(o[1].v[1], 2 + 2.5 + 3 + 3.5, 1e-12);
	outs_free(o, 2);
}

static void test_pyref__torch_expression(void)
{
	if (!have_torch)
		T_SKIP("%s has no torch (Debian: apt-get install python3-torch)", python);
	kb_ref_out o[1];
	kb_err err;
	T_EQ_INT(run_ref(HEAD "//! ref torch torch.softmax(x, dim=1) -> y\n", o, 1, &err), 0);
	double s = 0;
	for (int i = 0; i < 4; i++)
		s += o[0].v[4 + i];
	T_NEAR(s, 1.0, 1e-12);
	T_NEAR(o[0].v[3] / o[0].v[2], exp(0.5), 1e-12);
	T_CONTAINS(o[0].ran, "python torch");
	outs_free(o, 1);
}

/* A second call imports nothing and keeps the process; a changed file is
 * imported again. */
static void test_pyref__warm_server(void)
{
	free(write_file("warm.py", "def f(x):\n    return x + 1\n"));
	kb_ref_out o[1];
	kb_err err;
	T_EQ_INT(run_ref(HEAD "//! ref numpy warm.py:f -> y\n", o, 1, &err), 0);
	int pid = kb_profile_pyref_pid();
	T_OK(pid > 0);
	outs_free(o, 1);
	T_EQ_INT(run_ref(HEAD "//! ref numpy warm.py:f -> y\n", o, 1, &err), 0);
	T_CONTAINS(o[0].ran, "warm server, nothing imported");
	T_EQ_INT(kb_profile_pyref_pid(), pid);
	outs_free(o, 1);
	free(write_file("warm.py", "def f(x):\n    return x + 2\n"));
	T_EQ_INT(run_ref(HEAD "//! ref numpy warm.py:f -> y\n", o, 1, &err), 0);
	T_CONTAINS(o[0].ran, "warm server; imported warm.py");
	T_NEAR(o[0].v[1], 2.5, 1e-12);
	outs_free(o, 1);
}

/* ===== errors ===== */

static void expect_err(const char *lines, int rc, const char *needle)
{
	kb_ref_out o[2];
	kb_err err;
	T_EQ_INT(run_ref(lines, o, 2, &err), rc);
	T_CONTAINS(err.msg, needle);
	T_EQ_INT(err.domain, KB_DOM_PYTHON);
	T_OK(o[0].v == NULL); /* nothing to compare with */
	outs_free(o, 2);
}

static void test_pyref__exception_at_user_line(void)
{
	char *p = write_file("boom.py", "import numpy as np\n\ndef f(x):\n    y = x * 2\n"
			     "    return y / np.array([1, 2])[5]\n");
	char *want = kb_xasprintf("%s:5: the reference raised IndexError", p);
	expect_err(HEAD "//! ref numpy boom.py:f -> y\n", KB_ESPEC, want);
	expect_err(HEAD "//! ref numpy boom.py:f -> y\n", KB_ESPEC, "line 5, in f\n");
	free(want);
	/* an expression: the kernel file's ref line */
	want = kb_xasprintf("%s/k.cu:4: the reference raised NameError: name 'q' is not defined",
			    tmpdir);
	expect_err(HEAD "//! ref numpy x + q -> y\n", KB_ESPEC, want);
	free(want);
	free(p);
	/* a file that does not import */
	free(write_file("bad.py", "def f(x):\n    return x +\n"));
	expect_err(HEAD "//! ref numpy bad.py:f -> y\n", KB_ESPEC, "SyntaxError");
	expect_err(HEAD "//! ref numpy nofile.py:f -> y\n", KB_ESPEC, "No such file");
	expect_err(HEAD "//! ref numpy boom.py:g -> y\n", KB_ESPEC, "has no function g");
	free(write_file("args.py", "def f(x, w):\n    return x\n"));
	expect_err(HEAD "//! ref numpy args.py:f -> y\n", KB_ESPEC, "no input or arg named w");
}

static void test_pyref__wrong_shape_count_dtype(void)
{
	expect_err(HEAD "//! ref numpy x[:, :3] -> y\n", KB_ESPEC,
		   "output 'y' has shape [3, 3]; the spec declares [3, 4]");
	expect_err(HEAD "//! ref numpy x + 1j -> y\n", KB_ESPEC, "output 'y' has dtype complex128");
	expect_err(HEAD "//! ref numpy 'text' -> y\n", KB_ESPEC, "output 'y' has dtype <U4");
	expect_err(HEAD "//! ref numpy (x, x) -> y\n", KB_ESPEC,
		   "returned 2 values; the ref line names 1");
	expect_err(HEAD "//! ref numpy None -> y\n", KB_ESPEC, "output 'y' is None");
	/* size-1 dims may differ, as for the built-ins */
	kb_ref_out o[1];
	kb_err err;
	T_EQ_INT(run_ref(HEAD "//! ref numpy x.reshape(1, 3, 4) -> y\n", o, 1, &err), 0);
	outs_free(o, 1);
}

static void test_pyref__hang_and_death(void)
{
	free(write_file("hang.py", "import time\ndef f(x):\n    time.sleep(60)\n"));
	double t0 = kb_now_ms();
	expect_err(HEAD "//! ref numpy timeout=1 hang.py:f -> y\n", KB_ETIMEOUT,
		   "no answer from the Python reference in 1 s: stopped");
	T_OK(kb_now_ms() - t0 < 5000);
	T_EQ_INT(kb_profile_pyref_pid(), 0);
	free(write_file("die.py", "import os\ndef f(x):\n    print('bye')\n    os._exit(3)\n"));
	expect_err(HEAD "//! ref numpy die.py:f -> y\n", KB_ESPEC, "exited with status 3 while "
		   "running the reference (nothing was checked); its output: bye");
	/* and the next call starts a fresh one */
	kb_ref_out o[1];
	kb_err err;
	T_EQ_INT(run_ref(HEAD "//! ref numpy x -> y\n", o, 1, &err), 0);
	T_CONTAINS(o[0].ran, "server started");
	outs_free(o, 1);
}

/* A folder left by a kbench process that died (its inputs in memory) is
 * removed when the next server starts. */
static void test_pyref__stale_folders_swept(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
			   : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	char *dir = kb_xasprintf("%s/kbench-pyref.%d.test00", base, (int)dead);
	char *file = kb_xasprintf("%s/in.0.bin", dir);
	T_EQ_INT(mkdir(dir, 0700), 0);
	FILE *f = fopen(file, "w");
	fputs("inputs", f);
	fclose(f);
	kb_profile_pyref_stop();
	kb_ref_out o[1];
	kb_err err;
	T_EQ_INT(run_ref(HEAD "//! ref numpy x -> y\n", o, 1, &err), 0);
	outs_free(o, 1);
	T_OK(access(dir, F_OK) != 0);
	free(file);
	free(dir);
}

/* The interpreter, NumPy and torch missing: each says what to do. */
static void test_pyref__missing_python_numpy_torch(void)
{
	kb_profile_pyref_stop();
	setenv("KBENCH_PYTHON", "/nonexistent/python3", 1);
	expect_err(HEAD "//! ref numpy x -> y\n", KB_EUNSUP,
		   "KBENCH_PYTHON=/nonexistent/python3 is not an executable Python");
	char *path = getenv("PATH") ? kb_xstrdup(getenv("PATH")) : NULL;
	unsetenv("KBENCH_PYTHON");
	setenv("PATH", "/nonexistent", 1);
	expect_err(HEAD "//! ref numpy x -> y\n", KB_EUNSUP, "python3 is not on PATH; install it");
	if (path)
		setenv("PATH", path, 1);
	free(path);
	/* -S: no site-packages, so neither NumPy nor torch */
	char *nosite = kb_xasprintf("%s/nosite.sh", tmpdir);
	char *text = kb_xasprintf("#!/bin/sh\nexec %s -S \"$@\"\n", python);
	free(write_file("nosite.sh", text));
	chmod(nosite, 0755);
	setenv("KBENCH_PYTHON", nosite, 1);
	expect_err(HEAD "//! ref numpy x -> y\n", KB_EUNSUP, "NumPy is not installed for");
	expect_err(HEAD "//! ref numpy x -> y\n", KB_EUNSUP, "apt-get install python3-numpy");
	kb_profile_pyref_stop();
	/* a torch that does not import, NumPy there */
	char *fake = kb_xasprintf("%s/notorch", tmpdir);
	char *mk = kb_xasprintf("mkdir -p %s && echo 'raise ImportError(\"No module named torch\")' "
				"> %s/torch.py", fake, fake);
	T_EQ_INT(system(mk), 0);
	setenv("PYTHONPATH", fake, 1);
	setenv("KBENCH_PYTHON", python, 1);
	expect_err(HEAD "//! ref torch x -> y\n", KB_EUNSUP,
		   "PyTorch is not installed for");
	expect_err(HEAD "//! ref torch x -> y\n", KB_EUNSUP, "or write the reference with `ref numpy`");
	kb_profile_pyref_stop();
	unsetenv("PYTHONPATH");
	free(fake);
	free(mk);
	free(text);
	free(nosite);
}

/* ===== the spec line ===== */

static void test_pyref__spec_forms(void)
{
	const char *text = HEAD "//! ref torch device=cuda timeout=30 ref.py:model_ref -> y\n";
	kb_source src = {"k.cu", (char *)text, strlen(text), KB_SRC_CUDA};
	kb_spec spec;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &spec, &d), 0);
	T_EQ_INT(spec.ref.py.lang, KB_PYREF_TORCH);
	T_OK(spec.ref.py.cuda);
	T_NEAR(spec.ref.py.timeout_s, 30, 0);
	T_EQ_STR(spec.ref.py.file, "ref.py");
	T_EQ_STR(spec.ref.py.fn, "model_ref");
	T_EQ_STR(spec.ref.outs[0], "y");
	kb_compile_spec_free(&spec);
	kb_diags_free(&d);
	const char *bad[][2] = {
		{"//! ref numpy dtype=f32 x -> y\n", "unknown option 'dtype'"},
		{"//! ref numpy x + 1\n", "expected '->' and the output tensor(s)"},
		{"//! ref torch -> y\n", "expected a Python call"},
		{"//! ref numpy device=tpu x -> y\n", "expected cpu or cuda"},
		{"//! ref numpy x -> q\n", "ref output 'q' is not a tensor"},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(bad); i++) {
		char *t = kb_xasprintf(HEAD "%s", bad[i][0]);
		kb_source s2 = {"k.cu", t, strlen(t), KB_SRC_CUDA};
		kb_diags d2 = {0};
		T_EQ_INT(kb_compile_spec_parse(&s2, &spec, &d2), KB_ESPEC);
		kb_buf b = KB_BUF_INIT;
		kb_diag_render(&d2, &b, false);
		T_CONTAINS(b.s, bad[i][1]);
		kb_buf_free(&b);
		kb_compile_spec_free(&spec);
		kb_diags_free(&d2);
		free(t);
	}
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0)
		python = "/usr/bin/python3";
	else if (system("python3 -c 'import numpy' >/dev/null 2>&1") == 0)
		python = "python3";
	T_RUN(test_pyref__spec_forms);
	if (python) {
		char *cmd = kb_xasprintf("%s -c 'import torch' >/dev/null 2>&1", python);
		have_torch = system(cmd) == 0;
		free(cmd);
		setenv("KBENCH_PYTHON", python, 1);
		T_RUN(test_pyref__numpy_expression);
		T_RUN(test_pyref__file_function_by_names);
		T_RUN(test_pyref__torch_expression);
		T_RUN(test_pyref__warm_server);
		T_RUN(test_pyref__exception_at_user_line);
		T_RUN(test_pyref__wrong_shape_count_dtype);
		T_RUN(test_pyref__hang_and_death);
		T_RUN(test_pyref__stale_folders_swept);
		T_RUN(test_pyref__missing_python_numpy_torch);
	} else {
		printf("  SKIP test_pyref__*: python3 with numpy is not installed "
		       "(make deps installs python3-numpy)\n");
		t_skipped += 9;
	}
	kb_profile_pyref_stop();
	char *rm = kb_xasprintf("rm -rf %s", tmpdir);
	if (system(rm) != 0)
		printf("could not remove %s\n", tmpdir);
	free(rm);
	return t_report();
}
