/*
 * pool.c - several warm workers (one per GPU, per host, or per launcher
 * slot) sharing one queue of jobs (docs/remote.md).  Each worker is a
 * kb_runner driven by a thread of its own; a thread takes the next job,
 * runs it to its result (the watchdog is kb_runner's), and takes another.
 * A worker that is lost during a job (it crashed, its connection dropped,
 * it could not be reached) has that job put back on the queue once, for
 * any worker; lost a second time, the job is reported with the second
 * loss.  A worker lost on two jobs in a row retires, unless it is the last
 * one.  Results come back in the jobs' order, each saying which worker ran
 * it ("worker") and how many tries it took ("attempts").  No scheduler of
 * ours beyond this queue: the GPUs and hosts are the ones named.
 *
 * A worker's thread lives as long as the pool, not one run: a runner's
 * process is started by the thread that first calls it and dies with that
 * thread (PR_SET_PDEATHSIG, client.c), so a thread per run would kill every
 * warm runner at the end of each run and lose the next run's first jobs.
 */
#include "runner_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	kb_runner *r;
	char *label;
	pthread_t thread;
	bool started;
	bool warm_pending;     /* kb_pool_warm: open its GPU before any job */
	bool warming;          /* its thread is in warm_up, the lock let go */
	int lost_in_a_row;
	bool retired;
} worker;

struct kb_pool {
	worker *w;
	int nw, capw;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* the run in progress */
	json_t *reqs, **results;
	int *attempts, *queue; /* queue: job indices, a FIFO of at most 2 per job */
	int head, tail, live;
	int settled;           /* jobs of this run with their final result */
	bool quit;             /* kb_pool_free: the threads end */
	bool closing;          /* kb_pool_free: no warm-up starts */
	kb_runner_progress_fn progress;
	void *progress_ctx;
	char **first_worker;   /* where a re-queued job was lost the first time */
	char **first_loss;     /* and how: "crash: the runner died (signal 11)" */
	double timeout_ms;
};

kb_pool *kb_pool_new(void)
{
	kb_pool *p = kb_xcalloc(1, sizeof *p);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	return p;
}

void kb_pool_add(kb_pool *p, kb_runner *r, const char *label)
{
	pthread_mutex_lock(&p->lock); /* the threads index p->w under it */
	worker *w = KB_PUSH(p->w, p->nw, p->capw);
	memset(w, 0, sizeof *w);
	w->r = r;
	w->label = kb_xstrdup(label);
	kb_runner_set_hello(r, true);
	pthread_mutex_unlock(&p->lock);
}

int kb_pool_size(const kb_pool *p)
{
	return p->nw;
}

static bool lost(json_t *res)
{
	static const char *const how[] = {"crash", "disconnected", "unreachable", "protocol_error"};
	const char *s = json_string_value(json_object_get(res, "status"));
	for (size_t i = 0; s && i < KB_ARRAY_LEN(how); i++)
		if (!strcmp(s, how[i]))
			return true;
	return false;
}

/* "7 of 20 done on 2 workers" to the progress callback (under the lock,
 * so one thread at a time). */
static void tell_progress(kb_pool *p)
{
	if (!p->progress)
		return;
	int n = (int)json_array_size(p->reqs);
	char *phase = kb_xasprintf("%d of %d done on %d worker%s", p->settled, n, p->live,
				   p->live == 1 ? "" : "s");
	json_t *frame = json_pack("{s:s, s:s}", "type", "progress", "phase", phase);
	p->progress(p->progress_ctx, frame);
	json_decref(frame);
	free(phase);
}

/* Files job j's result (or puts it back once when its worker was lost). */
static void settle(kb_pool *p, worker *w, int j, json_t *res)
{
	bool gone = lost(res);
	w->lost_in_a_row = gone ? w->lost_in_a_row + 1 : 0;
	if (gone && p->attempts[j] < 2) {
		p->first_worker[j] = kb_xstrdup(w->label);
		const char *msg = json_string_value(json_object_get(res, "message"));
		p->first_loss[j] = kb_xasprintf("%s: %s", json_string_value(json_object_get(res, "status")),
						msg ? msg : "(no message)");
		p->queue[p->tail++] = j;
		json_decref(res);
	} else {
		json_object_set_new(res, "worker", json_string(w->label));
		json_object_set_new(res, "attempts", json_integer(p->attempts[j]));
		if (p->first_worker[j]) {
			json_object_set_new(res, "requeued_from", json_string(p->first_worker[j]));
			json_object_set_new(res, "requeued_because", json_string(p->first_loss[j]));
		}
		p->results[j] = res;
		p->settled++;
		tell_progress(p);
	}
	if (w->lost_in_a_row >= 2 && p->live > 1) {
		w->retired = true;
		p->live--;
	}
}

typedef struct {
	kb_pool *p;
	int i;
} work_arg;

/* The runner started and its GPU opened (a cold runner's second or so),
 * the answer dropped: a job that comes later finds it warm.  A runner that
 * cannot open its GPU says so again on its first job. */
static void warm_up(kb_runner *r)
{
	json_t *req = json_pack("{s:s}", "type", "devices"), *res = NULL;
	kb_err err = {0};
	if (kb_runner_call(r, req, 0, NULL, NULL, &res, &err) == 0)
		json_decref(res);
	json_decref(req);
}

/* A worker's thread: takes the next queued job of whatever run is in
 * progress, runs it, files its result; waits between runs. */
static void *work(void *arg)
{
	kb_pool *p = ((work_arg *)arg)->p;
	int i = ((work_arg *)arg)->i;
	free(arg);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		worker *w = &p->w[i];
		if (p->quit)
			break;
		if (w->warm_pending && !p->closing) {
			w->warm_pending = false;
			w->warming = true;
			kb_runner *r = w->r;
			pthread_mutex_unlock(&p->lock);
			warm_up(r);
			pthread_mutex_lock(&p->lock);
			w->warming = false;
			pthread_cond_broadcast(&p->cond); /* kb_pool_free may wait for it */
			continue;
		}
		if (w->retired || p->closing || p->head == p->tail) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		int j = p->queue[p->head++];
		p->attempts[j]++;
		json_t *req = json_array_get(p->reqs, (size_t)j);
		double timeout_ms = p->timeout_ms;
		kb_runner *r = w->r;
		pthread_mutex_unlock(&p->lock);
		json_t *res = NULL;
		kb_err err = {0};
		if (kb_runner_call(r, req, timeout_ms, NULL, NULL, &res, &err) < 0)
			res = kb_runner__error_result("unreachable", &err);
		pthread_mutex_lock(&p->lock);
		settle(p, &p->w[i], j, res);
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The threads of workers added since the last run (each lives until
 * kb_pool_free). */
static void start_threads(kb_pool *p)
{
	for (int i = 0; i < p->nw; i++) {
		if (p->w[i].started)
			continue;
		work_arg *a = kb_xcalloc(1, sizeof *a);
		a->p = p, a->i = i;
		pthread_create(&p->w[i].thread, NULL, work, a);
		p->w[i].started = true;
	}
}

void kb_pool_set_progress(kb_pool *p, kb_runner_progress_fn fn, void *ctx)
{
	pthread_mutex_lock(&p->lock);
	p->progress = fn;
	p->progress_ctx = ctx;
	pthread_mutex_unlock(&p->lock);
}

void kb_pool_warm(kb_pool *p, int from)
{
	pthread_mutex_lock(&p->lock);
	for (int i = from; i < p->nw; i++)
		p->w[i].warm_pending = true;
	start_threads(p);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

int kb_pool_run(kb_pool *p, json_t *reqs, double timeout_ms, json_t **results, kb_err *err)
{
	int n = (int)json_array_size(reqs);
	if (p->nw == 0)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "a pool without workers");
	pthread_mutex_lock(&p->lock);
	p->reqs = reqs;
	p->results = kb_xcalloc((size_t)n + 1, sizeof *p->results);
	p->attempts = kb_xcalloc((size_t)n + 1, sizeof *p->attempts);
	p->first_worker = kb_xcalloc((size_t)n + 1, sizeof *p->first_worker);
	p->first_loss = kb_xcalloc((size_t)n + 1, sizeof *p->first_loss);
	p->queue = kb_xcalloc(2 * (size_t)n + 1, sizeof *p->queue);
	p->head = p->settled = 0;
	p->tail = n;
	p->timeout_ms = timeout_ms;
	for (int j = 0; j < n; j++)
		p->queue[j] = j;
	p->live = 0;
	for (int i = 0; i < p->nw; i++)
		if (!p->w[i].retired)
			p->live++;
	start_threads(p);
	pthread_cond_broadcast(&p->cond);
	/* every job settles: the last live worker never retires, and a job is
	 * re-queued at most once */
	while (p->settled < n)
		pthread_cond_wait(&p->cond, &p->lock);
	json_t *out = json_array();
	for (int j = 0; j < n; j++) {
		json_array_append_new(out, p->results[j]);
		free(p->first_worker[j]);
		free(p->first_loss[j]);
	}
	free(p->results);
	free(p->attempts);
	free(p->first_worker);
	free(p->first_loss);
	free(p->queue);
	p->reqs = NULL;
	p->head = p->tail = 0;
	pthread_mutex_unlock(&p->lock);
	*results = out;
	return KB_OK;
}

void kb_pool_free(kb_pool *p)
{
	if (!p)
		return;
	/* the runners first, while their threads live: a runner told "bye"
	 * finishes by itself instead of dying with its thread.  But not under
	 * a thread still warming it up (kb_pool_warm's call, which no run
	 * waits for): closed there, the runner was freed in its hands. */
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	for (int i = 0; i < p->nw; i++)
		while (p->w[i].warming)
			pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nw; i++)
		kb_runner_close(p->w[i].r);
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nw; i++) {
		if (p->w[i].started)
			pthread_join(p->w[i].thread, NULL);
		free(p->w[i].label);
	}
	free(p->w);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}
