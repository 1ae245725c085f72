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
 */
#include "runner_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	kb_runner *r;
	char *label;
	pthread_t thread;
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
	int head, tail, busy, live;
	char **first_worker;   /* where a re-queued job was lost the first time */
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
	worker *w = KB_PUSH(p->w, p->nw, p->capw);
	memset(w, 0, sizeof *w);
	w->r = r;
	w->label = kb_xstrdup(label);
	kb_runner_set_hello(r, true);
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

/* Files job j's result (or puts it back once when its worker was lost). */
static void settle(kb_pool *p, worker *w, int j, json_t *res)
{
	bool gone = lost(res);
	w->lost_in_a_row = gone ? w->lost_in_a_row + 1 : 0;
	if (gone && p->attempts[j] < 2) {
		p->first_worker[j] = kb_xstrdup(w->label);
		p->queue[p->tail++] = j;
		json_decref(res);
	} else {
		json_object_set_new(res, "worker", json_string(w->label));
		json_object_set_new(res, "attempts", json_integer(p->attempts[j]));
		if (p->first_worker[j])
			json_object_set_new(res, "requeued_from", json_string(p->first_worker[j]));
		p->results[j] = res;
	}
	if (w->lost_in_a_row >= 2 && p->live > 1) {
		w->retired = true;
		p->live--;
	}
}

static void *work(void *arg)
{
	void **a = arg;
	kb_pool *p = a[0];
	worker *w = a[1];
	free(a);
	pthread_mutex_lock(&p->lock);
	while (!w->retired) {
		if (p->head == p->tail) {
			if (p->busy == 0)
				break; /* nothing queued, nothing that could come back */
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		int j = p->queue[p->head++];
		p->attempts[j]++;
		p->busy++;
		pthread_mutex_unlock(&p->lock);
		json_t *res = NULL;
		kb_err err = {0};
		if (kb_runner_call(w->r, json_array_get(p->reqs, (size_t)j), p->timeout_ms, NULL, NULL,
				   &res, &err) < 0)
			res = kb_runner__error_result("unreachable", &err);
		pthread_mutex_lock(&p->lock);
		p->busy--;
		settle(p, w, j, res);
		pthread_cond_broadcast(&p->cond);
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int kb_pool_run(kb_pool *p, json_t *reqs, double timeout_ms, json_t **results, kb_err *err)
{
	int n = (int)json_array_size(reqs);
	if (p->nw == 0)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "a pool without workers");
	p->reqs = reqs;
	p->results = kb_xcalloc((size_t)n + 1, sizeof *p->results);
	p->attempts = kb_xcalloc((size_t)n + 1, sizeof *p->attempts);
	p->first_worker = kb_xcalloc((size_t)n + 1, sizeof *p->first_worker);
	p->queue = kb_xcalloc(2 * (size_t)n + 1, sizeof *p->queue);
	p->head = p->busy = 0;
	p->tail = n;
	p->timeout_ms = timeout_ms;
	for (int j = 0; j < n; j++)
		p->queue[j] = j;
	p->live = 0;
	for (int i = 0; i < p->nw; i++)
		if (!p->w[i].retired)
			p->live++;
	for (int i = 0; i < p->nw; i++) {
		void **a = kb_xcalloc(2, sizeof *a);
		a[0] = p, a[1] = &p->w[i];
		pthread_create(&p->w[i].thread, NULL, work, a);
	}
	for (int i = 0; i < p->nw; i++)
		pthread_join(p->w[i].thread, NULL);
	json_t *out = json_array();
	for (int j = 0; j < n; j++) {
		json_array_append_new(out, p->results[j] ? p->results[j]
				      : json_pack("{s:s, s:s, s:s}", "type", "result", "status",
						  "error", "message", "no worker was left to run it"));
		free(p->first_worker[j]);
	}
	free(p->results);
	free(p->attempts);
	free(p->first_worker);
	free(p->queue);
	p->reqs = NULL;
	*results = out;
	return KB_OK;
}

void kb_pool_free(kb_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nw; i++) {
		kb_runner_close(p->w[i].r);
		free(p->w[i].label);
	}
	free(p->w);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}
