/*
 * worker.c - the live loop's background half: one thread that compiles the
 * editor's text (in process: NVRTC never touches the GPU) and, when a GPU
 * is there, runs it through the runner (`kbench serve`, which owns the GPU
 * and its watchdog); and a second thread that disassembles what the first
 * compiled (nvdisasm costs 0.5-0.7 s of start-up alone), so the SASS never
 * stands in front of the check and the timing.  The UI thread hands the
 * first a job and goes on; the results come back as pieces (the compile,
 * then the run and the SASS, whichever is ready first) through a queue and
 * a pipe the loop polls, and kb_tui__worker_merge puts them together.
 * A job submitted while one runs replaces the waiting one, so the newest
 * save wins; pieces of an older save than the one shown are dropped.
 */
#include "tui_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *worker_main(void *p);
static void *sass_main(void *p);

int kb_tui__worker_start(kb_tui__worker *w, const kb_tui__worker_opts *o, kb_err *err)
{
	bool run = o->run;
	memset(w, 0, sizeof *w);
	if (pipe(w->wake) < 0)
		return kb_err_errno(err, "pipe", NULL);
	fcntl(w->wake[0], F_SETFL, O_NONBLOCK);
	fcntl(w->wake[0], F_SETFD, FD_CLOEXEC);
	fcntl(w->wake[1], F_SETFD, FD_CLOEXEC);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->sass_cond, NULL);
	w->arch = o->arch ? kb_xstrdup(o->arch) : NULL;
	w->options = o->options;
	w->noptions = o->noptions;
	w->timeout_ms = o->timeout_ms;
	w->run = run;
	w->record = o->record;
	if (run) {
		/* The runner is `kbench serve`, the kbench next to this program. */
		char *dir = kb_self_dir();
		char *kb = dir ? kb_xasprintf("%s/kbench", dir) : kb_xstrdup("kbench");
		char *argv[] = {kb, "serve", NULL};
		/* --remote / $KBENCH_REMOTE: ssh in batch mode (no prompt may
		 * reach a screen curses owns; docs/remote.md) */
		const char *host = getenv("KBENCH_REMOTE");
		w->runner = host && *host ? kb_runner_new_remote(host, -1, true) : kb_runner_new(argv);
		kb_runner_set_quiet(w->runner, true);
		free(kb);
		free(dir);
	}
	int rc;
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		rc = kb_err_set(err, KB_ERROR, KB_DOM_OS, 0, "cannot start the worker thread");
		goto fail;
	}
	if (pthread_create(&w->sass_thread, NULL, sass_main, w) != 0) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		rc = kb_err_set(err, KB_ERROR, KB_DOM_OS, 0, "cannot start the disassembler thread");
		goto fail;
	}
	w->started = true;
	return KB_OK;
fail: /* nothing started: undo what was made (kb_tui__worker_stop will not) */
	kb_runner_free(w->runner);
	free(w->arch);
	close(w->wake[0]);
	close(w->wake[1]);
	pthread_cond_destroy(&w->sass_cond);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	memset(w, 0, sizeof *w);
	return rc;
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

/* ---- the queue of finished pieces -------------------------------------- */

/* Appends p and wakes the loop. */
static void post(kb_tui__worker *w, kb_tui__piece *p)
{
	pthread_mutex_lock(&w->lock);
	if (w->done_tail)
		w->done_tail->next = p;
	else
		w->done = p;
	w->done_tail = p;
	pthread_mutex_unlock(&w->lock);
	if (write(w->wake[1], "d", 1) < 0) {
		/* the loop is gone or the pipe is full: it drains the queue anyway */
	}
}

kb_tui__piece *kb_tui__worker_take(kb_tui__worker *w)
{
	char drain[64];
	while (read(w->wake[0], drain, sizeof drain) > 0)
		;
	pthread_mutex_lock(&w->lock);
	kb_tui__piece *p = w->done;
	if (p) {
		w->done = p->next;
		if (!w->done)
			w->done_tail = NULL;
		p->next = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return p;
}

static void piece_free(kb_tui__piece *p)
{
	kb_tui__result_free(p->result);
	json_decref(p->run);
	free(p->deltas);
	kb_app_headline_free(&p->head);
	kb_compile_sass_free(&p->sass);
	free(p);
}

bool kb_tui__worker_merge(kb_tui__result **res, kb_tui__piece *p)
{
	kb_tui__result *r = *res;
	bool changed = false;
	if (p->kind == KB_TUI__PIECE_COMPILE && (!r || p->seq >= r->seq)) {
		kb_tui__result_free(r);
		*res = p->result;
		p->result = NULL;
		changed = true;
	} else if (r && p->seq == r->seq && p->kind == KB_TUI__PIECE_RUN) {
		r->run = p->run;
		r->deltas = p->deltas;
		r->head = p->head;
		r->has_head = p->has_head;
		p->run = NULL;
		p->deltas = NULL;
		memset(&p->head, 0, sizeof p->head);
		r->running = false;
		if (p->error[0])
			snprintf(r->error, sizeof r->error, "%s", p->error);
		if (p->note[0])
			snprintf(r->note, sizeof r->note, "%s", p->note);
		changed = true;
	} else if (r && p->seq == r->seq && p->kind == KB_TUI__PIECE_SASS && r->compiled) {
		kb_compile_build_take_sass(&r->unit.build, &p->sass, p->ms);
		r->sass_pending = false;
		changed = true;
	}
	if (changed)
		(*res)->gen++;
	piece_free(p);
	return changed;
}

/* ---- the compile and run thread ---------------------------------------- */

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

/* Hands the disassembler the newest compile (replacing a waiting one). */
static void want_sass(kb_tui__worker *w, const kb_tui__result *r)
{
	const kb_build *b = &r->unit.build;
	pthread_mutex_lock(&w->lock);
	free(w->sass_key);
	free(w->sass_cubin);
	w->sass_key = kb_xstrdup(b->key);
	w->sass_cubin = kb_xmalloc(b->cubin_len);
	memcpy(w->sass_cubin, b->cubin, b->cubin_len);
	w->sass_len = b->cubin_len;
	w->sass_seq = r->seq;
	w->has_sass_job = true;
	pthread_cond_signal(&w->sass_cond);
	pthread_mutex_unlock(&w->lock);
}

/* The compile of a save, posted at once; returns whether it can be run. */
static bool compile_job(kb_tui__worker *w, const char *path, const char *text, unsigned seq)
{
	kb_tui__result *r = kb_xcalloc(1, sizeof *r);
	r->seq = seq;
	kb_compile_unit_opts o = {.arch = w->arch, .options = w->options, .noptions = w->noptions};
	kb_err err = {0};
	int rc = kb_compile_unit_run(path, text, &o, &r->unit, &err);
	r->compiled = true;
	if (rc < 0 && rc != KB_ESPEC && rc != KB_ECOMPILE)
		snprintf(r->error, sizeof r->error, "%s", err.msg);
	if (w->record && r->unit.src.path && kb_app_record_compile(&r->unit, NULL, &err) < 0)
		snprintf(r->note, sizeof r->note, "not recorded in the session: %s", err.msg);
	bool runnable = w->run && rc == 0 && r->unit.has_spec;
	r->running = runnable;
	if (r->unit.build.ok && r->unit.build.cubin) {
		r->sass_pending = true;
		kb_compile_sass_free(&r->unit.build.sass);
		r->unit.build.sass.unavailable_why = kb_xstrdup("disassembling ...");
		want_sass(w, r);
	}
	kb_tui__piece *p = kb_xcalloc(1, sizeof *p);
	*p = (kb_tui__piece){.kind = KB_TUI__PIECE_COMPILE, .seq = seq, .result = r};
	post(w, p);
	return runnable;
}

/* Records the run of text as a variant (not the file, which may hold a
 * newer save by now) and says how it compares with the previous and the
 * best ones (libgit2 reads: here, off the UI thread). */
static void record_run(const char *path, const char *text, kb_tui__piece *p)
{
	kb_err err = {0};
	kb_buf deltas = KB_BUF_INIT;
	kb_variant v = {0};
	if (kb_app_record_run_text(path, text, strlen(text), p->run, &v, &deltas, &err) < 0)
		snprintf(p->note, sizeof p->note, "not recorded in the session: %s", err.msg);
	else if (deltas.len)
		p->deltas = kb_buf_detach(&deltas);
	kb_buf_free(&deltas);
	/* the headline against the session's variants, read here too */
	kb_app_headline_of(v.name[0] ? path : NULL, v.name[0] ? v.name : NULL, p->run, &p->head, NULL);
	p->has_head = true;
	kb_session_variant_free(&v);
}

/* The run of a save in the runner, posted when it is done. */
static void run_job(kb_tui__worker *w, const char *path, const char *text, unsigned seq,
		    bool profile)
{
	static const char *quick[] = {"quick"};
	kb_tui__piece *p = kb_xcalloc(1, sizeof *p);
	*p = (kb_tui__piece){.kind = KB_TUI__PIECE_RUN, .seq = seq};
	kb_app_run_opts ro = {.path = path, .text = text, .timeout_ms = w->timeout_ms,
			      .options = w->options, .noptions = w->noptions,
			      .sections = profile ? quick : NULL, .nsections = profile, .hot = profile,
			      .sass_metrics = profile};
	kb_err err = {0};
	pthread_mutex_lock(&w->lock);
	w->run_since = kb_now_ms();
	pthread_mutex_unlock(&w->lock);
	int rc = kb_app_run(w->runner, &ro, progress, w, &p->run, &err);
	pthread_mutex_lock(&w->lock);
	w->run_since = 0;
	pthread_mutex_unlock(&w->lock);
	if (rc < 0)
		snprintf(p->error, sizeof p->error, "%s", err.msg);
	else if (kb_app_verdict(p->run) == KB_VERDICT_CANCELLED)
		snprintf(p->note, sizeof p->note, "run stopped: a newer save replaced it");
	else if (w->record)
		record_run(path, text, p);
	if (rc == 0 && !p->has_head) /* not recorded: the run alone */
		p->has_head = kb_app_headline_of(NULL, NULL, p->run, &p->head, NULL) == 0;
	post(w, p);
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
		if (compile_job(w, path, text, seq))
			run_job(w, path, text, seq, profile);
		free(text);
		free(path);
		pthread_mutex_lock(&w->lock);
		w->busy = false;
		w->phase[0] = '\0';
		pthread_mutex_unlock(&w->lock);
		if (write(w->wake[1], "i", 1) < 0) {
			/* see post() */
		}
	}
}

/* ---- the disassembler thread ------------------------------------------- */

static void *sass_main(void *arg)
{
	kb_tui__worker *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->has_sass_job && !w->stop)
			pthread_cond_wait(&w->sass_cond, &w->lock);
		if (w->stop) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		char *key = w->sass_key;
		void *cubin = w->sass_cubin;
		size_t len = w->sass_len;
		unsigned seq = w->sass_seq;
		w->sass_key = NULL;
		w->sass_cubin = NULL;
		w->has_sass_job = false;
		w->sass_busy = true;
		pthread_mutex_unlock(&w->lock);
		kb_tui__piece *p = kb_xcalloc(1, sizeof *p);
		*p = (kb_tui__piece){.kind = KB_TUI__PIECE_SASS, .seq = seq};
		double t0 = kb_now_ms();
		kb_compile_build_sass(key, cubin, len, &p->sass);
		p->ms = kb_now_ms() - t0;
		free(key);
		free(cubin);
		pthread_mutex_lock(&w->lock);
		w->sass_busy = false;
		pthread_mutex_unlock(&w->lock);
		post(w, p);
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
	kb_app_headline_free(&r->head);
	free(r);
}

void kb_tui__worker_stop(kb_tui__worker *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_cond_signal(&w->sass_cond);
	pthread_mutex_unlock(&w->lock);
	/* A run in flight finishes or times out in the runner's watchdog;
	 * kb_runner_free below kills a runner stuck in a kernel. */
	pthread_join(w->thread, NULL);
	pthread_join(w->sass_thread, NULL);
	for (kb_tui__piece *p = w->done, *next; p; p = next) {
		next = p->next;
		piece_free(p);
	}
	kb_runner_free(w->runner);
	free(w->next_text);
	free(w->next_path);
	free(w->sass_key);
	free(w->sass_cubin);
	free(w->arch);
	close(w->wake[0]);
	close(w->wake[1]);
}
