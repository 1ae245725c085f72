/*
 * worker.c - the live loop's background half: one thread that compiles the
 * editor's text (in process: NVRTC and the disassembler never touch the
 * GPU) and, when a GPU is there, runs it through the runner (`kbench
 * serve`, which owns the GPU and its watchdog).  The UI thread hands it a
 * job and goes on; the result comes back through a pipe the loop polls.
 * A job submitted while one runs replaces the waiting one, so the newest
 * save wins and a stale result is dropped by its sequence number.
 */
#include "tui_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *worker_main(void *p);

int kb_tui__worker_start(kb_tui__worker *w, const char *arch, bool run, kb_err *err)
{
	memset(w, 0, sizeof *w);
	if (pipe(w->wake) < 0)
		return kb_err_errno(err, "pipe", NULL);
	fcntl(w->wake[0], F_SETFL, O_NONBLOCK);
	fcntl(w->wake[0], F_SETFD, FD_CLOEXEC);
	fcntl(w->wake[1], F_SETFD, FD_CLOEXEC);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->arch = arch ? kb_xstrdup(arch) : NULL;
	w->run = run;
	w->record = kb_app_recording();
	if (run) {
		/* The runner is `kbench serve`, the kbench next to this program. */
		char *self = realpath("/proc/self/exe", NULL);
		char *slash = self ? strrchr(self, '/') : NULL;
		char *kb = slash ? kb_xasprintf("%.*s/kbench", (int)(slash - self), self)
				 : kb_xstrdup("kbench");
		char *argv[] = {kb, "serve", NULL};
		w->runner = kb_runner_new(argv);
		kb_runner_set_quiet(w->runner, true);
		free(kb);
		free(self);
	}
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
		return kb_err_set(err, KB_ERROR, KB_DOM_OS, 0, "cannot start the worker thread");
	w->started = true;
	return KB_OK;
}

void kb_tui__worker_submit(kb_tui__worker *w, const char *path, const char *text, unsigned seq,
			   bool profile)
{
	pthread_mutex_lock(&w->lock);
	free(w->next_text);
	free(w->next_path);
	w->next_text = kb_xstrdup(text);
	w->next_path = kb_xstrdup(path);
	w->next_seq = seq;
	w->next_profile = profile;
	w->has_next = true;
	/* A run that has already taken a while is stale now: stop it.  A short
	 * one is left to finish, since stopping kills the warm runner and the
	 * next run pays its cold start (955 ms vs 139 ms warm on the H200,
	 * bench/serve_latency.txt). */
	if (w->run_since > 0 && kb_now_ms() - w->run_since > KB_TUI__CANCEL_AFTER_MS)
		kb_runner_cancel(w->runner);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Takes the finished result, if any (the caller owns it). */
kb_tui__result *kb_tui__worker_take(kb_tui__worker *w)
{
	char drain[64];
	while (read(w->wake[0], drain, sizeof drain) > 0)
		;
	pthread_mutex_lock(&w->lock);
	kb_tui__result *r = w->done;
	w->done = NULL;
	pthread_mutex_unlock(&w->lock);
	return r;
}

static void progress(void *ctx, json_t *p)
{
	kb_tui__worker *w = ctx;
	const char *phase = json_string_value(json_object_get(p, "phase"));
	char how[64];
	kb_app_progress_text(p, how, sizeof how);
	pthread_mutex_lock(&w->lock);
	snprintf(w->phase, sizeof w->phase, "%s%s", phase ? phase : "", how);
	pthread_mutex_unlock(&w->lock);
	if (write(w->wake[1], "p", 1) < 0) {
		/* the loop is gone or the pipe is full: it will see the phase anyway */
	}
}

/* Records the run as a variant and says how it compares with the previous
 * and the best ones (libgit2 reads: here, off the UI thread). */
static void record_run(const char *path, kb_tui__result *r)
{
	kb_err err = {0};
	kb_buf deltas = KB_BUF_INIT;
	if (kb_app_record_run(path, r->run, NULL, &deltas, &err) < 0)
		snprintf(r->note, sizeof r->note, "not recorded in the session: %s", err.msg);
	else if (deltas.len)
		r->deltas = kb_buf_detach(&deltas);
	kb_buf_free(&deltas);
}

static kb_tui__result *do_job(kb_tui__worker *w, const char *path, const char *text, unsigned seq,
			      bool profile)
{
	kb_tui__result *r = kb_xcalloc(1, sizeof *r);
	r->seq = seq;
	kb_compile_unit_opts o = {.arch = w->arch, .options = w->options,
				  .noptions = w->noptions, .want_sass = true};
	kb_err err = {0};
	int rc = kb_compile_unit_run(path, text, &o, &r->unit, &err);
	r->compiled = true;
	if (rc < 0 && rc != KB_ESPEC && rc != KB_ECOMPILE)
		snprintf(r->error, sizeof r->error, "%s", err.msg);
	if (w->record && r->unit.src.path && kb_app_record_compile(&r->unit, NULL, &err) < 0)
		snprintf(r->note, sizeof r->note, "not recorded in the session: %s", err.msg);
	if (w->run && rc == 0 && r->unit.has_spec) {
		static const char *quick[] = {"quick"};
		kb_app_run_opts ro = {.path = path, .text = text, .timeout_ms = w->timeout_ms,
				      .options = w->options, .noptions = w->noptions,
				      .sections = profile ? quick : NULL, .nsections = profile,
				      .hot = profile};
		pthread_mutex_lock(&w->lock);
		w->run_since = kb_now_ms();
		pthread_mutex_unlock(&w->lock);
		rc = kb_app_run(w->runner, &ro, progress, w, &r->run, &err);
		pthread_mutex_lock(&w->lock);
		w->run_since = 0;
		pthread_mutex_unlock(&w->lock);
		if (rc < 0)
			snprintf(r->error, sizeof r->error, "%s", err.msg);
		else if (!strcmp(kb_app_run_verdict(r->run), "CANCELLED"))
			snprintf(r->note, sizeof r->note, "run stopped: a newer save replaced it");
		else if (w->record)
			record_run(path, r);
	}
	return r;
}

static void *worker_main(void *p)
{
	kb_tui__worker *w = p;
	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->has_next && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		char *text = w->next_text, *path = w->next_path;
		unsigned seq = w->next_seq;
		bool profile = w->next_profile;
		w->next_text = w->next_path = NULL;
		w->has_next = false;
		w->busy = true;
		snprintf(w->phase, sizeof w->phase, "compiling");
		pthread_mutex_unlock(&w->lock);
		kb_tui__result *r = do_job(w, path, text, seq, profile);
		free(text);
		free(path);
		pthread_mutex_lock(&w->lock);
		if (w->done)
			kb_tui__result_free(w->done); /* never shown: a newer one is here */
		w->done = r;
		w->busy = false;
		w->phase[0] = '\0';
		pthread_mutex_unlock(&w->lock);
		if (write(w->wake[1], "d", 1) < 0) {
			/* see progress() */
		}
	}
}

void kb_tui__result_free(kb_tui__result *r)
{
	if (!r)
		return;
	if (r->compiled)
		kb_compile_unit_free(&r->unit);
	json_decref(r->run);
	free(r->deltas);
	free(r);
}

void kb_tui__worker_stop(kb_tui__worker *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	/* A run in flight finishes or times out in the runner's watchdog;
	 * kb_runner_free below kills a runner stuck in a kernel. */
	pthread_join(w->thread, NULL);
	kb_tui__result_free(w->done);
	kb_runner_free(w->runner);
	free(w->next_text);
	free(w->next_path);
	free(w->arch);
	close(w->wake[0]);
	close(w->wake[1]);
}
