/*
 * client.c - the front end's side of the runner: spawns `kbench serve`,
 * sends a request, and waits for its result with a watchdog.  Every way a
 * worker can go wrong becomes a result, never a hang or a crash of the
 * front end: a GPU phase past its timeout (the worker is killed), a worker
 * that dies (crash, or its own exit after a sticky CUDA error), a corrupt
 * stream.  The next call starts a fresh worker by itself.
 *
 * Progress frames say whether the worker now waits on the GPU ("gpu":true);
 * only those phases get the kernel timeout.  Host phases (compiling, CPU
 * references) get KB_HOST_TIMEOUT_MS, so a slow compile is not a hang.
 *
 * A worker that says nothing at all for KB_SILENCE_MS is lost too: a live
 * one ticks every 250 ms through any phase longer than a second (ticker.c,
 * a thread of its own), so silence means a stalled connection or process
 * (a remote whose network or sshd froze answers ssh's keep-alives no more
 * and ssh ends in ~15 s; one whose runner froze behind a live sshd would
 * otherwise be waited for KB_HOST_TIMEOUT_MS).  A frame that is not a JSON
 * message with a "type" is a protocol error at once, as is a frame length
 * over KB_FRAME_MAX: the result says what came.
 *
 * One call (start when gone, hello, send, retry once, await) is call.c's,
 * above this file and remote.c.
 */
#define _GNU_SOURCE /* pipe2 */
#include "runner_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define KB_HOST_TIMEOUT_MS (10 * 60 * 1000.0)
#define KB_SILENCE_MS (60 * 1000.0)


void kb_runner_share(kb_runner *r)
{
	r->may_share = !r->host && kb_runner__shared_init(&r->sh, r->env) == 0;
}

void kb_runner_set_quiet(kb_runner *r, bool quiet)
{
	r->quiet = quiet;
}

kb_runner *kb_runner_new(char *const *argv)
{
	kb_runner *r = kb_xcalloc(1, sizeof *r);
	r->sh.lock_fd = -1;
	int n = 0;
	while (argv && argv[n])
		n++;
	r->argv = kb_xcalloc((size_t)(n ? n : 2) + 1, sizeof(char *));
	if (n)
		for (int i = 0; i < n; i++)
			r->argv[i] = kb_xstrdup(argv[i]);
	else {
		r->argv[0] = kb_xstrdup(KB_SELF_EXE);
		r->argv[1] = kb_xstrdup("serve");
	}
	r->pid = -1;
	r->to_fd = r->from_fd = -1;
	if (pipe2(r->cancel, O_NONBLOCK | O_CLOEXEC) < 0)
		r->cancel[0] = r->cancel[1] = -1; /* then a call cannot be cancelled */
	signal(SIGPIPE, SIG_IGN); /* a dead worker must not kill the front end */
	return r;
}

void kb_runner__reap(kb_runner *r, bool kill_it)
{
	r->lost_shared = r->shared;
	if (r->shared) {
		/* not our child: no wait status; a hung one is killed all the same */
		if (kill_it && r->pid > 0)
			kill(r->pid, SIGKILL);
		r->pid = -1;
		r->last_status = 0;
		r->shared = false;
	}
	if (r->pid > 0) {
		if (kill_it)
			kill(r->pid, SIGKILL);
		int st = 0;
		while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
			;
		r->last_status = st;
	}
	if (r->to_fd >= 0)
		close(r->to_fd);
	if (r->from_fd >= 0)
		close(r->from_fd);
	r->pid = -1;
	r->to_fd = r->from_fd = -1;
	kb_frame_reader_free(&r->rd);
}

/* The shared runner as this client's worker; false when it cannot be had. */
static bool start_shared(kb_runner *r)
{
	pid_t pid;
	int fd = r->may_share ? kb_runner__shared_connect(&r->sh, &pid) : -1;
	if (fd < 0) {
		r->may_share = false; /* busy or broken: private workers from now on */
		return false;
	}
	r->to_fd = fd;
	r->from_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	r->pid = pid;
	r->shared = true;
	r->starts++;
	return true;
}

int kb_runner__start(kb_runner *r, kb_err *err)
{
	if (start_shared(r))
		return KB_OK;
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return kb_err_errno(err, "pipe", NULL);
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]), close(in[1]);
		return kb_err_errno(err, "pipe", NULL);
	}
	char *self = kb_self_exe();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphaned workers hold the GPU */
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (r->quiet) {
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0)
				dup2(null, 2);
		}
		for (int i = 0; r->env && r->env[i]; i++)
			putenv(r->env[i]);
		const char *exe = strcmp(r->argv[0], KB_SELF_EXE) ? r->argv[0] : self;
		execvp(exe, r->argv);
		_exit(127);
	}
	free(self);
	close(in[0]);
	close(out[1]);
	if (pid < 0) {
		close(in[1]), close(out[0]);
		return kb_err_errno(err, "fork", NULL);
	}
	r->pid = pid;
	r->to_fd = in[1];
	r->from_fd = out[0];
	r->starts++;
	return KB_OK;
}

/* True when the worker has already exited (e.g. after a sticky error). */
bool kb_runner__worker_gone(kb_runner *r)
{
	if (r->pid <= 0)
		return true;
	if (r->shared) {
		/* gone when it hung up (it leaves after a sticky error) or died */
		struct pollfd p = {.fd = r->from_fd, .events = POLLIN | POLLRDHUP};
		if ((poll(&p, 1, 0) > 0 && p.revents) || (kill(r->pid, 0) < 0 && errno == ESRCH)) {
			kb_runner__reap(r, false);
			return true;
		}
		return false;
	}
	int st;
	if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
		r->pid = -1;
		r->last_status = st;
		kb_runner__reap(r, false);
		return true;
	}
	return false;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return KB_EIO;
		p += w;
		n -= (size_t)w;
	}
	return KB_OK;
}

int kb_runner__send_request(kb_runner *r, json_t *req, kb_err *err)
{
	char *s = json_dumps(req, JSON_COMPACT);
	size_t n;
	char *frame = kb_frame_encode(s, strlen(s), &n);
	int rc = send_all(r->to_fd, frame, n);
	free(frame);
	free(s);
	if (rc < 0)
		return kb_err_set(err, KB_EIO, KB_DOM_OS, errno, "cannot write to the runner: %s",
				  strerror(errno));
	return KB_OK;
}

/* The last line of the file at path (at most cap - 1 bytes of it), or "". */
static void last_line(const char *path, char *out, size_t cap)
{
	char tail[1024];
	size_t n = 0;
	out[0] = 0;
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return;
	if (fseek(f, -(long)(sizeof tail - 1), SEEK_END) != 0)
		rewind(f);
	n = fread(tail, 1, sizeof tail - 1, f);
	fclose(f);
	while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
		n--;
	tail[n] = 0;
	const char *start = strrchr(tail, '\n');
	snprintf(out, cap, "%.*s", (int)cap - 1, start ? start + 1 : tail);
}

/* A result for a worker that was lost: how, and what it was doing. */
static json_t *lost_result(kb_runner *r, const char *status, json_t *last, double timeout_ms)
{
	json_t *res = json_pack("{s:s, s:s}", "type", "result", "status", status);
	char msg[1024], said[384];
	if (!strcmp(status, "cancelled"))
		snprintf(msg, sizeof msg, "cancelled by the caller (a newer request replaced it); "
			 "the runner was stopped and starts again with the next request");
	else if (r->lost_why[0])
		snprintf(msg, sizeof msg, "%s; the runner was stopped and starts again with the next "
			 "request", r->lost_why);
	else if (!strcmp(status, "timeout"))
		snprintf(msg, sizeof msg, "no answer within %.1f s: the kernel did not finish "
			 "(an infinite loop or a deadlock?); the runner was killed and restarted",
			 timeout_ms / 1e3);
	else if (r->lost_shared) {
		/* its log's last line: what it said last, or its memory after the
		 * client before (a runner killed for memory says nothing itself) */
		last_line(r->sh.log, said, sizeof said);
		snprintf(msg, sizeof msg, "the shared runner ended without a result (its log, %s, "
			 "ends: \"%s\"); a fresh one starts with the next request",
			 r->sh.log ? r->sh.log : "?", said);
	}
	else if (WIFSIGNALED(r->last_status))
		snprintf(msg, sizeof msg, "the runner died with signal %d (%s); it will be restarted",
			 WTERMSIG(r->last_status), strsignal(WTERMSIG(r->last_status)));
	else
		snprintf(msg, sizeof msg, "the runner exited with status %d without a result; "
			 "it will be restarted", WEXITSTATUS(r->last_status));
	json_object_set_new(res, "message", json_string(msg));
	if (last)
		json_object_set(res, "during", last);
	return res;
}

typedef enum { WAIT_FRAME, WAIT_TIMEOUT, WAIT_EOF, WAIT_CORRUPT, WAIT_CANCELLED, WAIT_SILENT } wait_outcome;

/* How long a worker may say nothing: KB_SILENCE_MS, or $KBENCH_TEST_SILENCE
 * seconds (a test hook, docs/faults.md). */
static double silence_ms(void)
{
	const char *t = getenv("KBENCH_TEST_SILENCE");
	return t && atof(t) > 0 ? atof(t) * 1e3 : KB_SILENCE_MS;
}

/* Up to 48 bytes of p as text (others as \xNN), for a protocol error. */
static void excerpt(const char *p, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && i < 48 && o + 5 < cap; i++) {
		unsigned char c = (unsigned char)p[i];
		o += (size_t)snprintf(out + o, cap - o, c >= 0x20 && c < 0x7f && c != '\\' ? "%c" : "\\x%02x", c);
	}
	out[o] = '\0';
}

/* Empties the cancel pipe; true when it held a request. */
bool kb_runner__drain_cancel(kb_runner *r)
{
	char buf[16];
	bool any = false;
	while (r->cancel[0] >= 0 && read(r->cancel[0], buf, sizeof buf) > 0)
		any = true;
	return any;
}

void kb_runner_cancel(kb_runner *r)
{
	if (r->cancel[1] >= 0 && write(r->cancel[1], "c", 1) < 0) {
		/* full pipe: a cancel is already pending */
	}
}

/* Waits for the next frame until deadline_ms (monotonic), or until the
 * worker has been silent for silence_ms(). */
static wait_outcome next_frame(kb_runner *r, double deadline_ms, char **frame)
{
	size_t len;
	double heard = kb_now_ms(), quiet = silence_ms();
	for (;;) {
		int got = kb_frame_next(&r->rd, frame, &len);
		if (got < 0) {
			char seen[200];
			excerpt(r->rd.buf, r->rd.len, seen, sizeof seen);
			snprintf(r->lost_why, sizeof r->lost_why, "the runner's output is not the "
				 "kbench protocol (a frame length over %u MiB; it began \"%.192s\")",
				 KB_FRAME_MAX >> 20, seen);
			return WAIT_CORRUPT;
		}
		if (got > 0)
			return WAIT_FRAME;
		double now = kb_now_ms(), left = deadline_ms - now;
		if (left <= 0)
			return WAIT_TIMEOUT;
		if (now - heard >= quiet) {
			snprintf(r->lost_why, sizeof r->lost_why, "no answer from the runner for %.0f s, "
				 "not even a progress tick: the connection or the runner stalled",
				 quiet / 1e3);
			return WAIT_SILENT;
		}
		if (left > heard + quiet - now)
			left = heard + quiet - now;
		struct pollfd pf[2] = {{r->from_fd, POLLIN, 0}, {r->cancel[0], POLLIN, 0}};
		int n = poll(pf, r->cancel[0] >= 0 ? 2 : 1, left > 1e9 ? -1 : (int)left + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && r->cancel[0] >= 0 && pf[1].revents && kb_runner__drain_cancel(r))
			return WAIT_CANCELLED;
		if (n == 0 || !pf[0].revents)
			continue; /* re-check the deadline */
		char chunk[65536];
		ssize_t rd = read(r->from_fd, chunk, sizeof chunk);
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd <= 0)
			return WAIT_EOF;
		heard = kb_now_ms();
		kb_frame_feed(&r->rd, chunk, (size_t)rd);
	}
}

/* Reads frames until the result; the watchdog lives here. */
json_t *kb_runner__await_result(kb_runner *r, double timeout_ms, kb_runner_progress_fn fn, void *ctx)
{
	json_t *last = NULL, *result = NULL;
	double deadline = kb_now_ms() + KB_HOST_TIMEOUT_MS;
	r->lost_why[0] = '\0';
	while (!result) {
		char *frame = NULL;
		wait_outcome w = next_frame(r, deadline, &frame);
		json_t *msg = w == WAIT_FRAME ? json_loads(frame, 0, NULL) : NULL;
		const char *type = json_string_value(json_object_get(msg, "type"));
		if (w == WAIT_FRAME && !type) {
			char seen[200];
			excerpt(frame, strlen(frame), seen, sizeof seen);
			snprintf(r->lost_why, sizeof r->lost_why, "the runner sent a frame that is not "
				 "a kbench message (not a JSON object with a \"type\"): \"%.192s\"", seen);
			w = WAIT_CORRUPT;
		}
		free(frame);
		if (w != WAIT_FRAME) {
			json_decref(msg);
			kb_runner__reap(r, w != WAIT_EOF);
			/* a stall is a lost worker, as a crash is: remote.c calls it disconnected */
			result = lost_result(r, w == WAIT_TIMEOUT ? "timeout"
						: w == WAIT_CANCELLED ? "cancelled"
						: w == WAIT_EOF || w == WAIT_SILENT ? "crash" : "protocol_error",
					     last, timeout_ms);
			break;
		}
		if (!strcmp(type, "progress")) {
			/* A new phase restarts the watchdog; a tick (the ticker's
			 * "still in this phase") is no sign of progress. */
			if (!json_is_true(json_object_get(msg, "tick"))) {
				bool gpu = json_is_true(json_object_get(msg, "gpu"));
				deadline = kb_now_ms() + (gpu ? timeout_ms : KB_HOST_TIMEOUT_MS);
				json_decref(last);
				last = json_incref(msg);
			}
			if (fn)
				fn(ctx, msg);
		} else {
			result = json_incref(msg);
		}
		json_decref(msg);
	}
	json_decref(last);
	return result;
}

void kb_runner_set_hello(kb_runner *r, bool on)
{
	r->hello = on;
}

void kb_runner_add_env(kb_runner *r, const char *kv)
{
	int n = 0;
	while (r->env && r->env[n])
		n++;
	r->env = kb_xrealloc(r->env, (size_t)(n + 2) * sizeof *r->env);
	r->env[n] = kb_xstrdup(kv);
	r->env[n + 1] = NULL;
}

int kb_runner_starts(const kb_runner *r)
{
	return r->starts;
}

/* Waits up to ms for the worker to exit: its end of the result pipe closes
 * when it does (woken at once, not by polling), then it is reaped. */
static void wait_for_exit(kb_runner *r, int ms)
{
	double deadline = kb_now_ms() + ms;
	char sink[4096];
	while (r->from_fd >= 0 && !kb_runner__worker_gone(r)) {
		int left = (int)(deadline - kb_now_ms());
		if (left <= 0)
			return;
		struct pollfd p = {.fd = r->from_fd, .events = POLLIN};
		int n = poll(&p, 1, left);
		if (n < 0 && errno != EINTR)
			return;
		if (n > 0 && read(r->from_fd, sink, sizeof sink) == 0) {
			/* EOF: the worker is exiting; its pid is reaped just after */
			for (int i = 0; i < 2000 && !kb_runner__worker_gone(r); i++)
				usleep(1000);
			return;
		}
	}
}

static void release(kb_runner *r);

/* Asks a private worker to quit; true when one was asked (the shared
 * runner is never told to: it stays, warm, for the next client). */
static bool ask_quit(kb_runner *r)
{
	if (r->shared)
		r->pid = -1;
	if (r->pid <= 0 || r->to_fd < 0)
		return false;
	json_t *q = json_pack("{s:s}", "type", "quit");
	kb_err err;
	int rc = kb_runner__send_request(r, q, &err);
	json_decref(q);
	return rc == 0;
}

void kb_runner_free(kb_runner *r)
{
	if (!r)
		return;
	if (ask_quit(r)) {
		close(r->to_fd);
		r->to_fd = -1;
		/* A worker stuck in a kernel never reads "quit": give it 2 s. */
		wait_for_exit(r, 2000);
	}
	release(r);
}

void kb_runner_close(kb_runner *r)
{
	if (!r)
		return;
	char *bye = NULL;
	/* "bye" says it will finish even when we are gone (no PDEATHSIG) */
	if (ask_quit(r) && next_frame(r, kb_now_ms() + 500, &bye) == WAIT_FRAME)
		r->pid = -1; /* not ours to reap any more: it exits by itself */
	free(bye);
	release(r);
}

/* Kills a worker still held, closes the pipes, frees r. */
static void release(kb_runner *r)
{
	kb_runner__reap(r, true);
	if (r->cancel[0] >= 0) {
		close(r->cancel[0]);
		close(r->cancel[1]);
	}
	kb_runner__shared_free(&r->sh);
	for (int i = 0; r->argv[i]; i++)
		free(r->argv[i]);
	free(r->argv);
	for (int i = 0; r->env && r->env[i]; i++)
		free(r->env[i]);
	free(r->env);
	free(r->host);
	free(r->arch);
	json_decref(r->peer);
	free(r);
}
