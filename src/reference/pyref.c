/*
 * pyref.c - Python references (`//! ref numpy|torch CALL -> outs`,
 * docs/python-refs.md): a warm Python process per kbench process (the
 * runner, or a test driver), started at the first call and kept, so NumPy,
 * PyTorch and the user's file are imported once (pyref_server.py imports a
 * reference file again only when its content changed).
 *
 * Data: each input is written once, widened to f64 (integers kept in their
 * own type), into a file of a private folder in shared memory (/dev/shm,
 * else $TMPDIR) that the server maps without a copy (np.memmap; torch
 * tensors share it); each output comes back the same way, converted once
 * to f64 by the server into a file sized here.  A request whose files do
 * not fit the shared memory's free space goes to a folder on disk
 * ($TMPDIR, else /tmp): on a VM whose /dev/shm is a few GB, a 6 GB input
 * as f64 would fill it and the first write past its end is a SIGBUS.
 * Every file's blocks are reserved before it is written or mapped, so a
 * disk that is full too is an error that says so.  Requests and replies are
 * one JSON line each, on a pipe of their own (the server's stdout and
 * stderr go to a log file, so a print cannot break them).
 *
 * Failures are the user's or the machine's, never a crash and never a
 * passed check: no interpreter, no NumPy, no torch, no CUDA (KB_EUNSUP,
 * what to install); an exception (KB_ESPEC, its message at the user's
 * file:line and the user's frames of the traceback); a wrong output count,
 * shape or dtype (KB_ESPEC); no answer within the timeout (KB_ETIMEOUT:
 * the server is killed, the next call starts a fresh one).  All in
 * KB_DOM_PYTHON.  One call at a time (a mutex): the server answers in
 * order.  It does not decide whether the Python may run (the app does,
 * kb_app__python_trusted), hash references (check.c) or compare.
 */
#define _GNU_SOURCE /* pipe2 */
#include "reference.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define PYREF_TIMEOUT_S 300.0

typedef struct {
	pid_t pid;          /* 0: not running */
	int to, from;       /* its stdin; its replies */
	char dir[256];      /* the shared-memory folder, "" before the first start */
	char spill[256];    /* the disk folder for requests too big for dir, or "" */
	const char *data;   /* where this request's files are: dir or spill */
	int calls;          /* answered since it started */
} server;

/* The one server of this process, guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static server srv = {.to = -1, .from = -1};

/* ===== the interpreter and the process ===== */

/* path when executable, else the first PATH entry that has it; a new string or NULL. */
static char *which(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? kb_xstrdup(name) : NULL;
	return kb_which(name);
}

/* The interpreter: $KBENCH_PYTHON, else python3 on PATH (see reference.h). */
int kb_profile_pyref_interpreter(char **out, kb_err *err)
{
	const char *env = getenv("KBENCH_PYTHON");
	if (env && *env) {
		if ((*out = which(env)))
			return KB_OK;
		return kb_err_set(err, KB_EUNSUP, KB_DOM_PYTHON, 0, "KBENCH_PYTHON=%s is not an "
				  "executable Python: point it at one (e.g. /usr/bin/python3)", env);
	}
	if ((*out = which("python3")))
		return KB_OK;
	return kb_err_set(err, KB_EUNSUP, KB_DOM_PYTHON, 0, "no Python interpreter for the "
			  "reference: python3 is not on PATH; install it (Debian: apt-get install "
			  "python3 python3-numpy) or set KBENCH_PYTHON=/path/to/python3");
}

/* Removes the folders of servers whose kbench process is gone (killed,
 * or its server killed at a timeout): their inputs would stay in memory. */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int pid = 0;
		if (sscanf(e->d_name, "kbench-pyref.%d.", &pid) != 1 || pid <= 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char *dir = kb_xasprintf("%s/%s", base, e->d_name);
		DIR *in = opendir(dir);
		struct dirent *f;
		while (in && (f = readdir(in)))
			if (f->d_name[0] != '.') {
				char *path = kb_xasprintf("%s/%s", dir, f->d_name);
				unlink(path);
				free(path);
			}
		if (in)
			closedir(in);
		rmdir(dir);
		free(dir);
	}
	if (d)
		closedir(d);
}

/* $TMPDIR, else /tmp. */
static const char *tmp_base(void)
{
	const char *tmp = getenv("TMPDIR");
	return tmp && *tmp ? tmp : "/tmp";
}

/* Makes this process's folder under base into buf (stale ones of dead
 * processes swept first); false, and buf "", when it cannot. */
static bool make_private_dir(const char *base, char *buf, size_t n)
{
	sweep_stale(base);
	snprintf(buf, n, "%s/kbench-pyref.%d.XXXXXX", base, (int)getpid());
	if (mkdtemp(buf))
		return true;
	buf[0] = 0;
	return false;
}

/* A private folder in shared memory for this process's server. */
static int make_dir(kb_err *err)
{
	if (srv.dir[0] && access(srv.dir, W_OK) == 0)
		return KB_OK; /* (a server that stopped removed it) */
	const char *bases[] = {"/dev/shm", tmp_base()};
	for (size_t i = 0; i < KB_ARRAY_LEN(bases); i++)
		if (make_private_dir(bases[i], srv.dir, sizeof srv.dir))
			return KB_OK;
	return kb_err_set(err, KB_EIO, KB_DOM_PYTHON, errno, "no folder for the Python reference's "
			  "data in /dev/shm or %s: %s", bases[1], strerror(errno));
}

static void path_in_dir(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", srv.dir, name);
}

/* A file of this request's data (in.N.bin, out.N.bin). */
static void data_path(char *buf, size_t n, const char *name)
{
	int k = snprintf(buf, n, "%s/%s", srv.data ? srv.data : srv.dir, name);
	if (k < 0 || (size_t)k >= n)
		buf[0] = 0; /* a cut path would name another file: "" fails at open */
}

static double free_bytes(const char *dir)
{
	struct statvfs v;
	return statvfs(dir, &v) == 0 ? (double)v.f_bavail * (double)v.f_frsize : 0;
}

/* Chooses the folder for a request of `bytes`: the shared-memory one while
 * they fit its free space with room to spare (KBENCH_PYREF_SHM_MAX, bytes,
 * lowers the limit: tests), else a folder on disk, made at first need. */
static void choose_data_dir(double bytes)
{
	const char *env = getenv("KBENCH_PYREF_SHM_MAX");
	double room = free_bytes(srv.dir) * 0.9 - (64 << 20);
	if (env && *env)
		room = fmin(room, strtod(env, NULL));
	srv.data = srv.dir;
	if (bytes <= room)
		return;
	if ((!srv.spill[0] || access(srv.spill, W_OK) != 0) &&
	    !make_private_dir(tmp_base(), srv.spill, sizeof srv.spill))
		return;
	srv.data = srv.spill;
	kb_log("pyref: %.1f GB of data in %s (shared memory has %.1f GB free)", bytes / 1e9,
	       srv.spill, free_bytes(srv.dir) / 1e9);
}

/* Sizes fd to bytes with its blocks reserved; 0 or an errno. */
static int reserve(int fd, size_t bytes)
{
	if (ftruncate(fd, (off_t)bytes) < 0)
		return errno;
	if (!bytes)
		return 0;
	int e = posix_fallocate(fd, 0, (off_t)bytes);
	return e == EOPNOTSUPP || e == EINVAL ? 0 : e; /* a file system without it */
}

/* The last lines of the server's log, for a server that died. */
static void log_tail(char *buf, size_t n)
{
	char path[320];
	kb_buf b = KB_BUF_INIT;
	buf[0] = 0;
	path_in_dir(path, sizeof path, "server.log");
	if (kb_file_read(path, &b, NULL) == 0 && b.len) {
		size_t from = b.len > n - 1 ? b.len - (n - 1) : 0;
		snprintf(buf, n, "%s", b.s + from);
	}
	kb_buf_free(&b);
}

static void stop_locked(bool kill_it)
{
	if (srv.pid > 0) {
		if (srv.to >= 0)
			close(srv.to);
		if (kill_it)
			kill(srv.pid, SIGKILL);
		waitpid(srv.pid, NULL, 0);
	}
	if (srv.from >= 0)
		close(srv.from);
	srv.pid = 0;
	srv.to = srv.from = -1;
	srv.calls = 0;
}

/* The child: stdin from `in`, replies on fd 3, stdout and stderr to log. */
static void exec_child(int in, int reply, int log, char **argv)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the runner, even mid-op (the
					   * next server sweeps its folder) */
	if (dup2(in, 0) < 0 || dup2(reply, 3) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
		_exit(127);
	close_range(4, ~0U, 0); /* none of the runner's pipes: its client sees it exit */
	execv(argv[0], argv);
	_exit(127);
}

static int start_locked(kb_err *err)
{
	int rc, in[2] = {-1, -1}, rep[2] = {-1, -1}, log = -1;
	char *python = NULL, script[320], logpath[320];
	if ((rc = kb_profile_pyref_interpreter(&python, err)) < 0 || (rc = make_dir(err)) < 0)
		goto out;
	path_in_dir(script, sizeof script, "server.py");
	path_in_dir(logpath, sizeof logpath, "server.log");
	if ((rc = kb_file_write(script, kb_pyref_server_py,
				strlen(kb_pyref_server_py), err)) < 0)
		goto out;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 ||
	    (log = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		rc = kb_err_set(err, KB_EIO, KB_DOM_OS, errno, "Python reference: %s", strerror(errno));
		goto out;
	}
	char *argv[] = {python, "-B", "-u", script, "3", NULL};
	pid_t pid = fork();
	if (pid == 0)
		exec_child(in[0], rep[1], log, argv);
	if (pid < 0) {
		rc = kb_err_set(err, KB_EIO, KB_DOM_OS, errno, "fork: %s", strerror(errno));
		goto out;
	}
	srv.pid = pid, srv.to = in[1], srv.from = rep[0], srv.calls = 0;
	in[1] = rep[0] = -1;
	signal(SIGPIPE, SIG_IGN); /* a dead server is an error on write, not our death */
	kb_log("pyref: started %s (pid %d) in %s", python, (int)pid, srv.dir);
out:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	if (log >= 0)
		close(log);
	free(python);
	return rc;
}

/* ===== data in shared memory ===== */

static bool is_float(kb_dtype t)
{
	return t == KB_DT_F64 || t == KB_DT_F32 || t == KB_DT_F16 || t == KB_DT_BF16;
}

/* Bytes an element of t takes in its file: floats widened to f64. */
static size_t file_elem_size(kb_dtype t)
{
	return is_float(t) ? 8 : (size_t)kb_dtype_size(t);
}

/* Writes t into the folder's file `name` (floats as f64); 0 or KB_EIO. */
static int write_input(const kb_tensor *t, const char *path, kb_err *err)
{
	size_t es = file_elem_size(t->dtype);
	size_t bytes = (size_t)t->n * es;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (errno = reserve(fd, bytes)) != 0)
		goto fail;
	if (bytes) {
		void *m = mmap(NULL, bytes, PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			goto fail;
		if (!is_float(t->dtype) || t->dtype == KB_DT_F64) {
			memcpy(m, t->data, bytes);
		} else {
			double *d = m;
			for (int64_t i = 0; i < t->n; i++)
				d[i] = kb_tensor_get(t, i);
		}
		munmap(m, bytes);
	}
	close(fd);
	return KB_OK;
fail:
	if (fd >= 0)
		close(fd);
	return kb_err_set(err, KB_EIO, KB_DOM_OS, errno, "Python reference input %s (%.1f GB): %s",
			  path, bytes / 1e9, strerror(errno));
}

/* A zeroed file of n doubles for an output. */
static int make_output(const char *path, int64_t n, kb_err *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (errno = reserve(fd, (size_t)n * 8)) != 0) {
		if (fd >= 0)
			close(fd);
		return kb_err_set(err, KB_EIO, KB_DOM_OS, errno, "Python reference output %s "
				  "(%.1f GB): %s", path, n * 8 / 1e9, strerror(errno));
	}
	close(fd);
	return KB_OK;
}

static int read_output(const char *path, kb_ref_out *o, kb_err *err)
{
	size_t bytes = (size_t)o->n * sizeof(double);
	o->v = kb_big_alloc(bytes ? bytes : 8);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	while (fd >= 0 && got < bytes) {
		ssize_t k = pread(fd, (char *)o->v + got, bytes - got, (off_t)got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (fd >= 0)
		close(fd);
	if (got == bytes)
		return KB_OK;
	return kb_err_set(err, KB_EIO, KB_DOM_OS, errno, "Python reference output %s: short read",
			  path);
}

/* ===== the request ===== */

/* The reference file's path: as written when absolute, else from the
 * kernel file's folder; a new string. */
char *kb_profile__pyref_file(const kb_source *src, const char *file)
{
	if (file[0] == '/')
		return kb_path_resolve(file);
	const char *slash = src->path ? strrchr(src->path, '/') : NULL;
	kb_buf b = KB_BUF_INIT;
	if (slash)
		kb_buf_catf(&b, "%.*s/", (int)(slash - src->path + 1), src->path);
	kb_buf_cat(&b, file);
	char *r = kb_path_resolve(b.s);
	kb_buf_free(&b);
	return r;
}

static json_t *shape_json(int rank, const int64_t *dims)
{
	json_t *a = json_array();
	for (int d = 0; d < rank; d++)
		json_array_append_new(a, json_integer((json_int_t)dims[d]));
	return a;
}

/* The bytes of c's files: inputs as written (floats as f64), outputs f64. */
static double request_bytes(const kb_profile__refcall *c)
{
	double b = 0;
	for (int i = 0; i < c->nins; i++)
		b += (double)c->ins[i].n * (double)file_elem_size(c->ins[i].dtype);
	for (int i = 0; i < c->ref->nouts; i++) {
		int64_t dims[KB_MAX_RANK], n = 1;
		int rank = kb_profile__ref_spec_dims(c, c->ref->outs[i], dims);
		for (int d = 0; d < rank; d++)
			n *= dims[d];
		b += (double)n * 8;
	}
	return b;
}

/* The request for c's reference; inputs and output files written. */
static int build_request(kb_profile__refcall *c, json_t **out, kb_err *err)
{
	const kb_spec_pyref *py = &c->ref->py;
	json_t *req = json_object(), *ins = json_array(), *outs = json_array(), *sc = json_object();
	char path[384], name[160];
	int rc = KB_OK;
	*out = req;
	json_object_set_new(req, "lang", json_string(py->lang == KB_PYREF_TORCH ? "torch" : "numpy"));
	json_object_set_new(req, "device", json_string(py->cuda ? "cuda" : "cpu"));
	/* absolute: a shared runner's server keeps the first client's folder */
	char *kf = kb_path_resolve(c->src->path ? c->src->path : "?");
	json_object_set_new(req, "kernel_file", json_string(kf));
	free(kf);
	json_object_set_new(req, "line", json_integer(c->ref->loc.line > 0 ? c->ref->loc.line : 1));
	if (py->file) {
		char *f = kb_profile__pyref_file(c->src, py->file);
		json_object_set_new(req, "file", json_string(f));
		free(f);
	}
	json_object_set_new(req, py->fn ? "fn" : "expr", json_string(py->fn ? py->fn : py->expr));
	for (int i = 0; c->spec && i < c->spec->nargs; i++) {
		const kb_value *v = &c->spec->args[i].value;
		json_object_set_new(sc, c->spec->args[i].name,
				    v->is_float ? json_real(v->f) : json_integer((json_int_t)v->i));
	}
	json_object_set_new(req, "scalars", sc);
	choose_data_dir(request_bytes(c));
	for (int i = 0; i < c->nins && rc == 0; i++) {
		const kb_tensor *t = &c->ins[i];
		snprintf(name, sizeof name, "in.%d.bin", i);
		data_path(path, sizeof path, name);
		rc = write_input(t, path, err);
		json_array_append_new(ins, json_pack("{s:s, s:s, s:s, s:o}", "name", t->name, "path",
						     path, "dtype", is_float(t->dtype) ? "f64"
						     : kb_dtype_name(t->dtype), "shape",
						     shape_json(t->rank, t->dims)));
	}
	json_object_set_new(req, "inputs", ins);
	for (int i = 0; i < c->ref->nouts && rc == 0; i++) {
		kb_ref_out *o = &c->out[i];
		int64_t dims[KB_MAX_RANK];
		int rank = kb_profile__ref_spec_dims(c, c->ref->outs[i], dims);
		if (rank < 0) {
			rc = kb_err_set(err, KB_ESPEC, KB_DOM_PYTHON, 0, "the shape of output '%s' does "
					"not evaluate", c->ref->outs[i]);
			break;
		}
		o->name = kb_xstrdup(c->ref->outs[i]);
		o->rank = rank;
		o->n = 1;
		for (int d = 0; d < rank; d++)
			o->n *= (o->dims[d] = dims[d]);
		snprintf(name, sizeof name, "out.%d.bin", i);
		data_path(path, sizeof path, name);
		rc = make_output(path, o->n, err);
		json_array_append_new(outs, json_pack("{s:s, s:s, s:o, s:I}", "name", o->name, "path",
						      path, "shape", shape_json(rank, dims), "n",
						      (json_int_t)o->n));
	}
	json_object_set_new(req, "outs", outs);
	return rc;
}

/* ===== the exchange ===== */

static double timeout_s(const kb_spec_pyref *py)
{
	const char *env = getenv("KBENCH_PYREF_TIMEOUT");
	double s = env ? strtod(env, NULL) : 0;
	return py->timeout_s > 0 ? py->timeout_s : s > 0 ? s : PYREF_TIMEOUT_S;
}

/* Why the server is gone: its exit status and the end of its log. */
static int died(kb_profile__refcall *c, const char *prefix)
{
	int st = 0;
	char tail[600];
	log_tail(tail, sizeof tail);
	if (srv.pid > 0)
		waitpid(srv.pid, &st, 0);
	srv.pid = 0;
	stop_locked(false);
	bool no_exec = WIFEXITED(st) && WEXITSTATUS(st) == 127;
	if (no_exec)
		return kb_err_set(c->err, KB_EUNSUP, KB_DOM_PYTHON, 0, "%sthe Python interpreter could "
				  "not start (set KBENCH_PYTHON to a working python3)%s%s", prefix,
				  tail[0] ? ": " : "", tail);
	char how[64];
	if (WIFSIGNALED(st))
		snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(st));
	else
		snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(st));
	return kb_err_set(c->err, KB_ESPEC, KB_DOM_PYTHON, 0, "%sthe Python reference process %s "
			  "while running the reference (nothing was checked)%s%s", prefix, how,
			  tail[0] ? "; its output: " : "", tail);
}

/* Sends line and reads one reply line within limit_s; *reply a new object. */
static int exchange(kb_profile__refcall *c, const char *line, double limit_s, const char *prefix,
		    json_t **reply)
{
	size_t n = strlen(line);
	for (size_t done = 0; done < n;) {
		ssize_t k = write(srv.to, line + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return died(c, prefix);
		done += (size_t)k;
	}
	kb_buf in = KB_BUF_INIT;
	double deadline = kb_now_ms() + limit_s * 1e3;
	int rc = KB_OK;
	while (!memchr(in.s ? in.s : "", '\n', in.len)) {
		double left = deadline - kb_now_ms();
		struct pollfd p = {srv.from, POLLIN, 0};
		int r = left > 0 ? poll(&p, 1, left > 1e9 ? 1000000000 : (int)left + 1) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			stop_locked(true);
			rc = kb_err_set(c->err, KB_ETIMEOUT, KB_DOM_PYTHON, 0, "%sno answer from the "
					"Python reference in %g s: stopped (a reference that hangs, or one "
					"too slow for these sizes; give it longer with timeout=SECONDS on "
					"the ref line or $KBENCH_PYREF_TIMEOUT)", prefix, limit_s);
			goto out;
		}
		char buf[65536];
		ssize_t k = read(srv.from, buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = died(c, prefix);
			goto out;
		}
		kb_buf_catn(&in, buf, (size_t)k);
	}
	json_error_t je;
	if (!(*reply = json_loads(in.s, JSON_DISABLE_EOF_CHECK, &je)))
		rc = kb_err_set(c->err, KB_ERROR, KB_DOM_PYTHON, 0, "%sunreadable answer from the "
				"Python reference server: %s", prefix, je.text);
out:
	kb_buf_free(&in);
	return rc;
}

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* A failed reply as an error: the machine's (KB_EUNSUP) or the user's. */
static int reply_error(kb_profile__refcall *c, json_t *rep, const char *prefix)
{
	const char *kind = jstr(rep, "kind"), *msg = jstr(rep, "message");
	if (!strcmp(kind, "no_numpy"))
		return kb_err_set(c->err, KB_EUNSUP, KB_DOM_PYTHON, 0, "%s%s: install it (Debian: "
				  "apt-get install python3-numpy; or pip install numpy), or set "
				  "KBENCH_PYTHON to a Python that has it", prefix, msg);
	if (!strcmp(kind, "no_torch"))
		return kb_err_set(c->err, KB_EUNSUP, KB_DOM_PYTHON, 0, "%s%s: install it (Debian: "
				  "apt-get install python3-torch; or pip install torch), set "
				  "KBENCH_PYTHON to a Python that has it, or write the reference with "
				  "`ref numpy`", prefix, msg);
	if (!strcmp(kind, "no_cuda"))
		return kb_err_set(c->err, KB_EUNSUP, KB_DOM_PYTHON, 0, "%s%s: run it on the CPU "
				  "(device=cpu, the default)", prefix, msg);
	if (!strcmp(kind, "internal"))
		return kb_err_set(c->err, KB_ERROR, KB_DOM_PYTHON, 0, "%s%s", prefix, msg);
	const char *where = jstr(rep, "where"), *tb = jstr(rep, "traceback");
	if (!strcmp(kind, "exception"))
		return kb_err_set(c->err, KB_ESPEC, KB_DOM_PYTHON, 0, "%s%s%sthe reference raised %s%s%s",
				  where, where[0] ? ": " : "", where[0] ? "" : prefix, msg,
				  tb[0] ? "\nTraceback (the reference's frames):\n" : "", tb);
	return kb_err_set(c->err, KB_ESPEC, KB_DOM_PYTHON, 0, "%s%s", prefix, msg);
}

/* "python torch ref.py:fn, 812.0 ms (server started: imported torch, ref.py)" */
static void describe(kb_profile__refcall *c, json_t *rep, bool started, double ms)
{
	const kb_spec_pyref *py = &c->ref->py;
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "python %s%s %s, %.1f ms (", py->lang == KB_PYREF_TORCH ? "torch" : "numpy",
		    py->cuda ? " on cuda" : "", py->text, ms);
	json_t *imp = json_object_get(rep, "imported"), *v;
	size_t i;
	kb_buf_cat(&b, started ? "server started" : "warm server");
	json_array_foreach(imp, i, v)
		kb_buf_catf(&b, "%s%s", i ? ", " : "; imported ", json_string_value(v));
	if (!json_array_size(imp))
		kb_buf_cat(&b, ", nothing imported");
	kb_buf_cat(&b, ")");
	c->out[0].ran = b.s;
	c->out[0].ms = ms;
}

/* Computes c's Python reference into c->out (see reference.h). */
int kb_profile__pyref_run(kb_profile__refcall *c)
{
	const kb_spec_pyref *py = &c->ref->py;
	char prefix[512];
	const kb_loc *l = &c->ref->loc;
	snprintf(prefix, sizeof prefix, "%s:%d:%d: ref %s %s: ", l->file ? l->file : "?", l->line,
		 l->col, py->lang == KB_PYREF_TORCH ? "torch" : "numpy", py->text ? py->text : "");
	json_t *req = NULL, *rep = NULL;
	pthread_mutex_lock(&lock);
	bool started = srv.pid <= 0;
	int rc = started ? start_locked(c->err) : KB_OK;
	if (rc == 0)
		rc = build_request(c, &req, c->err);
	char *line = NULL;
	if (rc == 0) {
		char *j = json_dumps(req, JSON_COMPACT);
		line = kb_xmalloc(strlen(j) + 2);
		sprintf(line, "%s\n", j);
		free(j);
		rc = exchange(c, line, timeout_s(py), prefix, &rep);
	}
	if (rc == 0 && !json_is_true(json_object_get(rep, "ok")))
		rc = reply_error(c, rep, prefix);
	for (int i = 0; rc == 0 && i < c->ref->nouts; i++) {
		char path[384], name[32];
		snprintf(name, sizeof name, "out.%d.bin", i);
		data_path(path, sizeof path, name);
		rc = read_output(path, &c->out[i], c->err);
	}
	if (rc == 0) {
		srv.calls++;
		describe(c, rep, started, json_number_value(json_object_get(rep, "ms")));
	}
	for (int i = 0; srv.dir[0] && i < c->nins + c->ref->nouts; i++) {
		char path[384], name[32];
		snprintf(name, sizeof name, i < c->nins ? "in.%d.bin" : "out.%d.bin",
			 i < c->nins ? i : i - c->nins);
		data_path(path, sizeof path, name);
		unlink(path);
	}
	pthread_mutex_unlock(&lock);
	free(line);
	json_decref(req);
	json_decref(rep);
	return rc;
}

/* Stops this process's Python reference server and removes its folder. */
void kb_profile_pyref_stop(void)
{
	pthread_mutex_lock(&lock);
	stop_locked(false);
	if (srv.dir[0]) {
		char path[320];
		path_in_dir(path, sizeof path, "server.py");
		unlink(path);
		path_in_dir(path, sizeof path, "server.log");
		unlink(path);
		rmdir(srv.dir);
		srv.dir[0] = 0;
	}
	if (srv.spill[0]) {
		rmdir(srv.spill); /* its files went after each request */
		srv.spill[0] = 0;
	}
	pthread_mutex_unlock(&lock);
}

/* The process id of the warm server, 0 when none runs (tests). */
int kb_profile_pyref_pid(void)
{
	pthread_mutex_lock(&lock);
	int pid = srv.pid;
	pthread_mutex_unlock(&lock);
	return pid;
}
