/*
 * server.c - `kbench serve`: the runner process.  It owns one CUDA context
 * (opened on the first request that needs the GPU, so `hello` and compile
 * errors work without one), reads framed requests from stdin, and answers
 * each with progress frames and one result.  A sticky CUDA error is
 * reported, then the process exits: the context cannot be trusted again and
 * the client starts a fresh runner.  Nothing here prints to a terminal.
 */
#define _GNU_SOURCE /* accept4 */
#include "runner_int.h"
#include "../reference/reference.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct {
	int out_fd;
	kb_device *dev;
	int dev_rc;           /* 1: not opened yet; else the open's result */
	kb_err dev_err;
	kb_nvml *nvml;
	kb_cupti *cupti;
	int cupti_rc;         /* 1: not opened yet */
	double ms_device_open, ms_nvml_open; /* where a cold runner's time goes */
	double t_start;
	bool sticky;          /* the context is dead: exit after replying */
	bool refused;         /* a client of another protocol: exit after replying */
	kb_runner__ticker ticker; /* progress of long phases */
} server;

static void on_progress(void *ctx, const char *phase, const char *kernel, const int64_t grid[3],
			const int64_t block[3])
{
	server *s = ctx;
	/* A phase with a kernel waits on the GPU (the kernel timeout applies);
	 * one without is host work (a compile, a CPU reference). */
	json_t *m = json_pack("{s:s, s:s, s:b}", "type", "progress", "phase", phase, "gpu",
			      kernel != NULL);
	if (kernel)
		json_object_set_new(m, "kernel", json_string(kernel));
	if (grid)
		json_object_set_new(m, "grid", json_pack("[III]", (json_int_t)grid[0],
							  (json_int_t)grid[1], (json_int_t)grid[2]));
	if (block)
		json_object_set_new(m, "block", json_pack("[III]", (json_int_t)block[0],
							   (json_int_t)block[1], (json_int_t)block[2]));
	kb_runner__ticker_phase(&s->ticker, phase, kernel != NULL);
	kb_runner__send(s->out_fd, m);
}

static void host_progress(server *s, const char *phase)
{
	kb_runner__ticker_phase(&s->ticker, phase, false);
	kb_runner__send(s->out_fd, json_pack("{s:s, s:s, s:b}", "type", "progress", "phase", phase,
					     "gpu", 0));
}

/* Opens the GPU once; later calls return the first outcome. */
static int need_device(server *s)
{
	if (s->dev_rc == 1) {
		host_progress(s, "opening the GPU");
		double t0 = kb_now_ms();
		/* NVML's start beside cuInit's, not after it */
		kb_nvml_preload *nvml = kb_profile_nvml_preload();
		s->dev_rc = kb_profile_device_open(&s->dev, 0, &s->dev_err);
		double t1 = kb_now_ms();
		const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
		kb_log("runner: device open %.1f ms (CUDA_VISIBLE_DEVICES=%s)", t1 - t0,
		       cvd ? cvd : "(unset)");
		kb_profile_nvml_preload_join(nvml);
		if (s->dev_rc == 0 &&
		    kb_profile_nvml_open(kb_profile_device_info(s->dev)->pci_bus, &s->nvml, NULL) < 0)
			s->nvml = NULL;
		s->ms_device_open = t1 - t0;
		s->ms_nvml_open = kb_now_ms() - t1;
	}
	return s->dev_rc;
}

static json_t *devices_result(server *s)
{
	if (need_device(s) < 0)
		return kb_runner__error_result("no_gpu", &s->dev_err);
	json_t *r = json_pack("{s:s, s:s}", "type", "result", "status", "ok");
	json_object_set_new(r, "device", kb_profile_device_json(kb_profile_device_info(s->dev)));
	if (s->nvml)
		json_object_set_new(r, "nvml", kb_profile_nvml_env(s->nvml));
	json_t *ceil = NULL;
	if (kb_profile_ceilings_load(kb_profile_device_info(s->dev)->uuid, &ceil) == 0)
		json_object_set_new(r, "ceilings", ceil);
	return r;
}

static json_t *calibrate_result(server *s)
{
	if (need_device(s) < 0)
		return kb_runner__error_result("no_gpu", &s->dev_err);
	host_progress(s, "calibrating");
	json_t *c = NULL;
	kb_err err = {0};
	int rc = kb_profile_calibrate(s->dev, &c, &err);
	if (rc < 0) {
		s->sticky = err.domain == KB_DOM_CUDA;
		return kb_runner__error_result("error", &err);
	}
	kb_profile_ceilings_save(kb_profile_device_info(s->dev)->uuid, c, NULL);
	json_t *r = json_pack("{s:s, s:s}", "type", "result", "status", "ok");
	json_object_set_new(r, "ceilings", c);
	return r;
}

/* A run that wants counters or hot spots in a runner that has not opened
 * CUPTI yet: its host-side work (~200-250 ms) starts now, beside the
 * context's creation, the checks and the timing, and is joined just before
 * the counters (kb_run_opts.open_cupti).  cuInit runs alone first: with
 * libcupti loading beside it, it took 169-195 ms instead of ~103 (H100,
 * 2026-11-22, the loader's lock), while the context's creation beside the
 * same work took no longer (docs/decisions.md, cold start). */
static kb_cupti_prep *start_prep(server *s, json_t *req, const char *const *metrics, int n,
				  bool driver)
{
	if (s->cupti_rc != 1 && s->cupti_rc != 0)
		return NULL; /* CUPTI refused for good */
	if (s->dev_rc < 0 || !driver)
		return NULL; /* no GPU: nothing would wait for it, and loading costs */
	kb_cupti_prep *p = NULL;
	if (n > 0 || json_is_true(json_object_get(req, "hot")) ||
	    json_is_true(json_object_get(req, "sass_metrics"))) {
		if (s->dev_rc == 1) {
			kb_err ignored;
			double t = kb_now_ms();
			kb_profile_device_count(&ignored);
			kb_log("runner: cuInit %.1f ms, alone", kb_now_ms() - t);
		}
		p = kb_profile_cupti_prep_start(metrics, n);
	}
	return p;
}

/* A "run" request: the GPU opened if need be (with the host tensors and
 * CUPTI's preparation beside it), then kb_runner__run. */
static json_t *run_result(server *s, json_t *req)
{
	/* a shared runner serves clients in any directory: paths are theirs */
	const char *cwd = json_string_value(json_object_get(req, "cwd"));
	if (cwd && chdir(cwd) < 0)
		return json_pack("{s:s, s:s, s:s}", "type", "result", "status", "error", "message",
				 "the runner cannot enter the client's directory");
	if (cwd) { /* and the directories its file() inputs may come from */
		const char *dirs = json_string_value(json_object_get(req, "file_dirs"));
		if (dirs)
			setenv("KBENCH_FILE_DIRS", dirs, 1);
		else
			unsetenv("KBENCH_FILE_DIRS");
	}
	int nmetrics;
	const char **metrics = kb_runner__wanted_metrics(req, &nmetrics);
	/* host memory touched while the GPU opens (none opens without a driver) */
	bool driver = kb_file_exists("/proc/driver/nvidia/version");
	kb_runner__warm *warm = s->dev_rc == 1 && driver ? kb_runner__warm_start(req) : NULL;
	kb_cupti_prep *prep = start_prep(s, req, metrics, nmetrics, driver);
	int dev_rc = need_device(s);
	kb_runner__warm_join(warm);
	json_t *r;
	if (dev_rc < 0) {
		kb_profile_cupti_prep_join(prep);
		r = kb_runner__error_result("no_gpu", &s->dev_err);
	} else {
		kb_runner__ctx rc = {.out_fd = s->out_fd, .dev = s->dev, .nvml = s->nvml,
				     .cupti = &s->cupti, .cupti_rc = &s->cupti_rc,
				     .progress = on_progress, .progress_ctx = s, .prep = prep,
				     .metrics = metrics, .nmetrics = nmetrics};
		double t0 = kb_now_ms();
		r = kb_runner__run(&rc, req);
		kb_profile_cupti_prep_join(rc.prep); /* when no CUPTI call came to join it */
		s->sticky = rc.sticky;
		json_object_set_new(r, "runner_ms",
				    json_pack("{s:f, s:f, s:f, s:f}", "device_open", s->ms_device_open,
					      "nvml_open", s->ms_nvml_open, "request", kb_now_ms() - t0,
					      "since_start", kb_now_ms() - s->t_start));
	}
	free(metrics);
	return r;
}

/* The answer to "hello": our protocol and version, and where we run.  A
 * client that names another protocol is refused, naming both, and the
 * runner then exits (docs/remote.md, the versioning rule). */
static json_t *hello_result(server *s, json_t *req)
{
	char host[256] = "?";
	gethostname(host, sizeof host - 1);
	int mine = kb_proto_version();
	json_t *r = json_pack("{s:s, s:i, s:s, s:s}", "type", "hello", "protocol", mine, "version",
			      KB_VERSION, "host", host);
	json_t *theirs = json_object_get(req, "protocol");
	if (json_is_integer(theirs) && json_integer_value(theirs) != mine) {
		const char *v = json_string_value(json_object_get(req, "version"));
		char *msg = kb_xasprintf("protocol mismatch: this runner (kbench %s on %s) speaks "
					 "runner protocol %d, the client (kbench %s) speaks %d; "
					 "install the same kbench on both sides (kbench remote setup)",
					 KB_VERSION, host, mine, v ? v : "?",
					 (int)json_integer_value(theirs));
		json_object_set_new(r, "status", json_string("refused"));
		json_object_set_new(r, "message", json_string(msg));
		free(msg);
		s->refused = true;
	}
	return r;
}

/* Test hooks (docs/remote.md): with $KBENCH_TEST_STALL naming a file that
 * exists, a run request writes "PID PPID" into it and waits while it is
 * there (up to 30 s), so a test can cut the connection mid-request;
 * $KBENCH_TEST_DIE_ON_RUN=1 exits at once on a run request (a worker that
 * dies, for the pool's re-queue); $KBENCH_TEST_RUN_DELAY_MS=N answers a run
 * request N ms late (a slow worker, so that a pool's fast one cannot take
 * every job before the others wake). */
static void test_hooks(void)
{
	const char *stall = getenv("KBENCH_TEST_STALL");
	if (stall && *stall && kb_file_exists(stall)) {
		char pids[64];
		int n = snprintf(pids, sizeof pids, "%d %d\n", (int)getpid(), (int)getppid());
		kb_file_write(stall, pids, (size_t)n, NULL);
		for (int i = 0; i < 3000 && kb_file_exists(stall); i++)
			usleep(10 * 1000);
	}
	const char *die = getenv("KBENCH_TEST_DIE_ON_RUN");
	if (die && !strcmp(die, "1")) {
		fprintf(stderr, "kbench serve: KBENCH_TEST_DIE_ON_RUN, exiting\n");
		_exit(1);
	}
	const char *delay = getenv("KBENCH_TEST_RUN_DELAY_MS");
	if (delay && atoi(delay) > 0)
		usleep((useconds_t)atoi(delay) * 1000);
}

static json_t *dispatch(server *s, json_t *req)
{
	const char *type = json_string_value(json_object_get(req, "type"));
	if (!type)
		return json_pack("{s:s, s:s, s:s}", "type", "result", "status", "error", "message",
				 "request without a type");
	if (!strcmp(type, "hello"))
		return hello_result(s, req);
	if (!strcmp(type, "devices"))
		return devices_result(s);
	if (!strcmp(type, "calibrate"))
		return calibrate_result(s);
	if (!strcmp(type, "run")) {
		test_hooks();
		return run_result(s, req);
	}
	return json_pack("{s:s, s:s, s:s}", "type", "result", "status", "error", "message",
			 "unknown request type");
}

/* Blocks until one whole frame is read; returns 1, 0 at EOF, or < 0. */
static int read_frame(int fd, kb_frame_reader *rd, char **frame)
{
	size_t len;
	for (;;) {
		int got = kb_frame_next(rd, frame, &len);
		if (got != 0)
			return got;
		char chunk[65536];
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : KB_EIO;
		kb_frame_feed(rd, chunk, (size_t)n);
	}
}

/* Answers the requests of one client until it closes, says "quit", or a
 * sticky error ends the context; before_sticky_reply (may be NULL) runs
 * just before the reply that reports a sticky error is sent. */
static void serve_stream(server *s, int in_fd, int out_fd, void (*before_sticky_reply)(void *),
			 void *ctx)
{
	kb_frame_reader rd = {0};
	s->out_fd = out_fd;
	s->refused = false;
	kb_runner__ticker_start(&s->ticker, out_fd);
	for (char *frame; read_frame(in_fd, &rd, &frame) == 1;) {
		json_error_t jerr;
		json_t *req = json_loads(frame, 0, &jerr);
		free(frame);
		if (!req) {
			kb_runner__send(out_fd, json_pack("{s:s, s:s, s:s}", "type", "result", "status",
							  "error", "message", jerr.text));
			continue;
		}
		const char *type = json_string_value(json_object_get(req, "type"));
		bool quit = type && !strcmp(type, "quit");
		kb_log("runner: request %s", type ? type : "?");
		if (!quit) {
			json_t *reply = dispatch(s, req);
			kb_runner__ticker_phase(&s->ticker, NULL, false); /* no tick after this */
			if (s->sticky && before_sticky_reply)
				before_sticky_reply(ctx);
			kb_runner__send(out_fd, reply);
			if (!s->sticky) /* its Disable, after the answer (kb_profile_cupti_keep_enabled) */
				kb_profile_cupti_release(s->cupti);
		}
		kb_log("runner: answered %s", type ? type : "?");
		json_decref(req);
		if (quit) {
			/* A client that quits need not wait for the teardown below:
			 * finish it even if the client is gone by then. */
			prctl(PR_SET_PDEATHSIG, 0);
			kb_runner__send(out_fd, json_pack("{s:s}", "type", "bye"));
			break;
		}
		if (s->sticky || s->refused)
			break;
	}
	kb_runner__ticker_stop(&s->ticker);
	kb_frame_reader_free(&rd);
}

static void server_close(server *s)
{
	if (!s->sticky) {
		kb_profile_cupti_close(s->cupti);
		kb_profile_nvml_close(s->nvml);
		kb_profile_device_close(s->dev);
	}
	kb_log("runner: closed, exiting");
}

int kb_runner_serve(int in_fd, int out_fd)
{
	server s = {.out_fd = out_fd, .dev_rc = 1, .cupti_rc = 1, .t_start = kb_now_ms()};
	serve_stream(&s, in_fd, out_fd, NULL, NULL);
	server_close(&s);
	return s.sticky ? 3 : 0;
}

/* ---- the shared runner: the same server behind a Unix socket --------------------- */

typedef struct {
	int listen_fd;
	const char *path;
} listener;

/* Takes the socket's name away so no new client reaches a runner that is
 * about to exit (a client finding no socket starts a fresh runner). */
static void stop_listening(void *ctx)
{
	listener *l = ctx;
	if (l->listen_fd >= 0) {
		unlink(l->path);
		close(l->listen_fd);
		l->listen_fd = -1;
	}
}

/* One line in the shared runner's log (its stderr) after each client: its
 * resident memory and the reference cache's share, so that a runner the
 * machine kills for memory leaves its growth behind (a client that loses
 * it quotes the log's last line). */
static void log_memory(int clients)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f && fscanf(f, "%ld %ld", &pages, &resident) == 2)
		fprintf(stderr, "kbench serve: after client %d, resident %.2f GiB (reference cache "
			"%.2f GiB)\n", clients,
			(double)resident * (double)sysconf(_SC_PAGESIZE) / (1 << 30),
			(double)kb_profile__refcache_bytes() / (1 << 30));
	if (f)
		fclose(f);
}

int kb_runner_serve_socket(const char *path, const char *lock_path, int idle_s)
{
	listener l = {.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), .path = path};
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (l.listen_fd < 0 || strlen(path) >= sizeof a.sun_path)
		return 2;
	memcpy(a.sun_path, path, strlen(path) + 1);
	unlink(path); /* a stale name from a runner that died; the spawner holds the lock */
	if (bind(l.listen_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(l.listen_fd, 4) < 0) {
		close(l.listen_fd);
		return 2;
	}
	server s = {.dev_rc = 1, .cupti_rc = 1, .t_start = kb_now_ms()};
	fprintf(stderr, "kbench serve: pid %d listening\n", (int)getpid());
	int clients = 0;
	while (!s.sticky) {
		struct pollfd p = {.fd = l.listen_fd, .events = POLLIN};
		int n = poll(&p, 1, idle_s * 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			/* Idle: leave only while no client holds the lock (one may be
			 * about to connect). */
			int lock = open(lock_path, O_RDWR | O_CLOEXEC);
			if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0) {
				stop_listening(&l);
				close(lock);
				break;
			}
			if (lock >= 0)
				close(lock);
			continue;
		}
		int c = accept4(l.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		/* "ready" tells the client this runner will serve it: one accepted
		 * is never dropped by an idle exit */
		kb_runner__send(c, json_pack("{s:s, s:i, s:I}", "type", "ready", "protocol",
					     KB_PROTOCOL_VERSION, "pid", (json_int_t)getpid()));
		serve_stream(&s, c, c, stop_listening, &l);
		close(c);
		log_memory(++clients);
	}
	stop_listening(&l);
	server_close(&s);
	return s.sticky ? 3 : 0;
}
