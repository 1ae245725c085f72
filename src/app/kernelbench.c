/*
 * kernelbench.c - `kbench new --from-kernelbench PROBLEM.py [-o FILE.cu]`:
 * a KernelBench problem (a torch Model with get_inputs() and
 * get_init_inputs()) as a kbench kernel file with a Python reference.
 * The work is Python's (the problem must be imported to know its shapes):
 * kernelbench_open.py, embedded, run with the reference interpreter
 * (kb_profile_pyref_interpreter), writes FILE.cu and FILE.ref.py and says
 * what it wrote in one JSON line.  This file picks the names, refuses to
 * overwrite, runs it and says what to do next.
 */
#include "app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char kb_kernelbench_open_py[];

/* FILE.cu from PROBLEM.py's name in the current folder when out is NULL;
 * FILE.ref.py beside it.  New strings. */
static void out_names(const char *problem, const char *out, char **cu, char **ref)
{
	const char *base = strrchr(problem, '/') ? strrchr(problem, '/') + 1 : problem;
	size_t n = strlen(base);
	if (n > 3 && !strcmp(base + n - 3, ".py"))
		n -= 3;
	*cu = out ? kb_xstrdup(out) : kb_xasprintf("%.*s.cu", (int)n, base);
	size_t m = strlen(*cu);
	if (m > 3 && !strcmp(*cu + m - 3, ".cu"))
		m -= 3;
	*ref = kb_xasprintf("%.*s.ref.py", (int)m, *cu);
}

static void describe(json_t *j, kb_buf *msg)
{
	json_t *v;
	size_t i;
	kb_buf_catf(msg, "wrote %s (kernel %s, a skeleton to fill in) and %s (the problem and its "
		    "reference)\n", kb_app__str(j, "cu"), kb_app__str(j, "kernel"), kb_app__str(j, "ref"));
	json_array_foreach(json_object_get(j, "inputs"), i, v)
		kb_buf_catf(msg, "%s%s %s%s", i ? ", " : "  inputs   ", json_string_value(json_array_get(v, 0)),
			    json_string_value(json_array_get(v, 1)), json_string_value(json_array_get(v, 2)));
	kb_buf_catf(msg, " (%lld of them the Model's parameters)\n",
		    (long long)json_integer_value(json_object_get(j, "params")));
	json_array_foreach(json_object_get(j, "outputs"), i, v)
		kb_buf_catf(msg, "%s%s %s%s", i ? ", " : "  outputs  ", json_string_value(json_array_get(v, 0)),
			    json_string_value(json_array_get(v, 1)), json_string_value(json_array_get(v, 2)));
	json_t *fl = json_object_get(j, "flops");
	kb_buf_catf(msg, "\n  tol      rtol=atol=%g (KernelBench's)\n  flops    %s\n",
		    json_number_value(json_object_get(j, "tol")),
		    json_is_integer(fl) ? "counted by PyTorch" : "not derived (this PyTorch has no "
		    "flop counter for these ops): add a `//! flops` line for the compute roofline");
	kb_buf_catf(msg, "next: kbench ref %s (the reference here, on the CPU), kbench run %s "
		    "(on a GPU)\n", kb_app__str(j, "cu"), kb_app__str(j, "cu"));
}

/* See app.h. */
int kb_app_new_kernelbench(const char *problem, const char *out, kb_buf *msg, kb_err *err)
{
	char *cu = NULL, *ref = NULL, *python = NULL, script[] = "/tmp/kbench-kb-open.XXXXXX";
	kb_buf sout = KB_BUF_INIT, serr = KB_BUF_INIT;
	int rc = KB_OK, fd = -1;
	json_t *j = NULL;
	out_names(problem, out, &cu, &ref);
	if (!kb_file_exists(problem)) {
		rc = kb_err_set(err, KB_ENOTFOUND, KB_DOM_OS, 0, "%s: no such file", problem);
		goto out;
	}
	if (kb_file_exists(cu) || kb_file_exists(ref)) {
		rc = kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "%s exists: kbench does not overwrite "
				"it; remove it or name another file with -o FILE.cu",
				kb_file_exists(cu) ? cu : ref);
		goto out;
	}
	if ((rc = kb_profile_pyref_interpreter(&python, err)) < 0)
		goto out;
	if ((fd = mkstemp(script)) < 0 ||
	    write(fd, kb_kernelbench_open_py, strlen(kb_kernelbench_open_py)) < 0) {
		rc = kb_err_set(err, KB_EIO, KB_DOM_OS, 0, "cannot write %s", script);
		goto out;
	}
	char *argv[] = {python, "-B", script, (char *)problem, cu, ref, NULL};
	int st = kb_spawn_capture(argv, &sout, &serr, err);
	if (st < 0) {
		rc = st;
		goto out;
	}
	if (st != 0 || !(j = json_loads(sout.s ? sout.s : "", JSON_DISABLE_EOF_CHECK, NULL))) {
		const char *e = serr.s ? serr.s : "";
		rc = kb_err_set(err, strstr(e, "is not installed") ? KB_EUNSUP : KB_EINVAL, KB_DOM_PYTHON,
				0, "%s does not open as a KernelBench problem:\n%s", problem,
				serr.len > 900 ? e + serr.len - 900 : e);
		goto out;
	}
	describe(j, msg);
out:
	if (fd >= 0) {
		close(fd);
		unlink(script);
	}
	json_decref(j);
	kb_buf_free(&sout);
	kb_buf_free(&serr);
	free(python);
	free(cu);
	free(ref);
	return rc;
}
