/* test_pool.c - the job queue over several workers (runner/pool.c) with
 * real `kbench serve` processes (no GPU here: each answers "no_gpu"), and
 * with workers that die on every run (KBENCH_TEST_DIE_ON_RUN): a job lost
 * with its worker is re-queued once, then reported; every result says
 * which worker ran it. */
#include "../../src/runner/runner.h"
#include "t.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static kb_runner *serve(bool dies)
{
	char *argv[] = {"build/kbench", "serve", NULL};
	kb_runner *r = kb_runner_new(argv);
	kb_runner_add_env(r, "CUDA_VISIBLE_DEVICES=");
	if (dies)
		kb_runner_add_env(r, "KBENCH_TEST_DIE_ON_RUN=1");
	kb_runner_set_quiet(r, true);
	return r;
}

static json_t *jobs(int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "type", "run", "path",
						   "kernels/vector_add.cu"));
	return a;
}

static const char *field(json_t *res, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(res, i), key));
}

/* Three real workers, twelve jobs: all answered, each by a named worker,
 * on the first try, and more than one worker did some. */
static void test_pool__real_workers_share_the_queue(void)
{
	if (access("build/kbench", X_OK) != 0)
		T_SKIP("build/kbench not built");
	kb_pool *p = kb_pool_new();
	static const char *const labels[] = {"gpu 0", "gpu 1", "gpu 2"};
	for (int i = 0; i < 3; i++) {
		/* each answer 300 ms late: the worker that starts first cannot take
		 * all twelve before the others have started (it did on a loaded
		 * machine, tests running beside it) */
		kb_runner *r = serve(false);
		kb_runner_add_env(r, "KBENCH_TEST_RUN_DELAY_MS=300");
		kb_pool_add(p, r, labels[i]);
	}
	json_t *q = jobs(12), *res = NULL;
	kb_err err = {0};
	T_EQ_INT(kb_pool_run(p, q, 10000, &res, &err), 0);
	T_EQ_INT((int)json_array_size(res), 12);
	bool seen[3] = {false, false, false};
	for (size_t i = 0; i < json_array_size(res); i++) {
		T_EQ_STR(field(res, i, "status"), "no_gpu");
		T_EQ_INT((int)json_integer_value(json_object_get(json_array_get(res, i), "attempts")), 1);
		const char *w = field(res, i, "worker");
		T_OK(w && !strncmp(w, "gpu ", 4));
		if (w)
			seen[w[4] - '0'] = true;
	}
	T_OK(seen[0] + seen[1] + seen[2] >= 2);
	json_decref(res);
	json_decref(q);
	kb_pool_free(p);
}

/* Two runs on one pool: the second finds the first's warm workers alive
 * (a runner dies with the thread that started it, so the pool's threads
 * must outlive a run), every job on its first try, no worker restarted. */
static void test_pool__second_run_keeps_warm_workers(void)
{
	if (access("build/kbench", X_OK) != 0)
		T_SKIP("build/kbench not built");
	kb_pool *p = kb_pool_new();
	kb_runner *a = serve(false), *b = serve(false);
	kb_pool_add(p, a, "gpu 0");
	kb_pool_add(p, b, "gpu 1");
	for (int run = 0; run < 2; run++) {
		json_t *q = jobs(6), *res = NULL;
		kb_err err = {0};
		T_EQ_INT(kb_pool_run(p, q, 10000, &res, &err), 0);
		for (size_t i = 0; i < json_array_size(res); i++) {
			T_EQ_STR(field(res, i, "status"), "no_gpu");
			T_EQ_INT((int)json_integer_value(json_object_get(json_array_get(res, i), "attempts")), 1);
		}
		json_decref(res);
		json_decref(q);
	}
	T_OK(kb_runner_starts(a) + kb_runner_starts(b) <= 2);
	kb_pool_free(p);
}

/* kb_pool_warm starts the named workers' runners in the background (here
 * all but the first); a run afterwards finds them started, none twice. */
static void test_pool__warm_starts_workers_ahead(void)
{
	if (access("build/kbench", X_OK) != 0)
		T_SKIP("build/kbench not built");
	kb_pool *p = kb_pool_new();
	kb_runner *a = serve(false), *b = serve(false), *c = serve(false);
	kb_pool_add(p, a, "gpu 0");
	kb_pool_add(p, b, "gpu 1");
	kb_pool_add(p, c, "gpu 2");
	kb_pool_warm(p, 1);
	for (int i = 0; i < 500 && kb_runner_starts(b) + kb_runner_starts(c) < 2; i++)
		usleep(10000);
	T_EQ_INT(kb_runner_starts(a), 0);
	T_EQ_INT(kb_runner_starts(b), 1);
	T_EQ_INT(kb_runner_starts(c), 1);
	json_t *q = jobs(6), *res = NULL;
	kb_err err = {0};
	T_EQ_INT(kb_pool_run(p, q, 10000, &res, &err), 0);
	T_EQ_INT((int)json_array_size(res), 6);
	T_OK(kb_runner_starts(b) <= 1 && kb_runner_starts(c) <= 1);
	json_decref(res);
	json_decref(q);
	kb_pool_free(p);
}

/* The seed a pool's runs share: the same while it is used within
 * KBENCH_SHARED_IDLE seconds, another once it has gone unused longer. */
static void test_pool__shared_seed(void)
{
	char dir[] = "/tmp/kbench-seed-XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	setenv("XDG_RUNTIME_DIR", dir, 1);
	setenv("KBENCH_SHARED_IDLE", "1", 1);
	uint64_t a = kb_runner_pool_seed(), b = kb_runner_pool_seed();
	T_OK(a != 0 && a == b);
	char *file = kb_xasprintf("%s/kbench/pool-seed", dir);
	struct utimbuf old = {.actime = time(NULL) - 5, .modtime = time(NULL) - 5};
	T_OK(utime(file, &old) == 0);
	T_OK(kb_runner_pool_seed() != a);
	char *rm = kb_xasprintf("rm -rf %s", dir);
	T_OK(system(rm) == 0);
	free(rm);
	free(file);
	unsetenv("KBENCH_SHARED_IDLE");
}

/* A good worker and one that dies on every run: every job is answered by
 * the good one in the end, those that met the dying one after one
 * re-queue ("requeued_from" names it); the dying one retires. */
static void test_pool__dying_worker_requeues_once(void)
{
	if (access("build/kbench", X_OK) != 0)
		T_SKIP("build/kbench not built");
	kb_pool *p = kb_pool_new();
	kb_runner *dies = serve(true), *good = serve(false);
	/* slow enough that the dying one takes a job before the good one has
	 * done them all, however the threads are scheduled (300 ms: on a loaded
	 * machine a worker's start may take longer than eight answers of 50) */
	kb_runner_add_env(good, "KBENCH_TEST_RUN_DELAY_MS=300");
	kb_pool_add(p, dies, "dies");
	kb_pool_add(p, good, "good");
	json_t *q = jobs(8), *res = NULL;
	kb_err err = {0};
	T_EQ_INT(kb_pool_run(p, q, 10000, &res, &err), 0);
	int requeued = 0;
	for (size_t i = 0; i < json_array_size(res); i++) {
		json_t *r = json_array_get(res, i);
		int attempts = (int)json_integer_value(json_object_get(r, "attempts"));
		T_OK(attempts == 1 || attempts == 2);
		if (attempts == 2) {
			requeued++;
			T_EQ_STR(field(res, i, "requeued_from"), "dies");
			T_OK(!strncmp(field(res, i, "requeued_because"), "crash: ", 7));
		}
		if (!strcmp(field(res, i, "status"), "no_gpu"))
			T_EQ_STR(field(res, i, "worker"), "good");
	}
	T_OK(requeued >= 1);
	json_decref(res);
	json_decref(q);
	kb_pool_free(p);
}

/* Only dying workers: each job is tried twice and then reported as lost,
 * never dropped and never retried forever. */
static void test_pool__lost_twice_is_reported(void)
{
	if (access("build/kbench", X_OK) != 0)
		T_SKIP("build/kbench not built");
	kb_pool *p = kb_pool_new();
	kb_pool_add(p, serve(true), "a");
	kb_pool_add(p, serve(true), "b");
	json_t *q = jobs(3), *res = NULL;
	kb_err err = {0};
	T_EQ_INT(kb_pool_run(p, q, 10000, &res, &err), 0);
	T_EQ_INT((int)json_array_size(res), 3);
	for (size_t i = 0; i < json_array_size(res); i++) {
		T_EQ_STR(field(res, i, "status"), "crash");
		T_EQ_INT((int)json_integer_value(json_object_get(json_array_get(res, i), "attempts")), 2);
	}
	json_decref(res);
	json_decref(q);
	kb_pool_free(p);
}

int main(void)
{
	T_RUN(test_pool__real_workers_share_the_queue);
	T_RUN(test_pool__second_run_keeps_warm_workers);
	T_RUN(test_pool__warm_starts_workers_ahead);
	T_RUN(test_pool__shared_seed);
	T_RUN(test_pool__dying_worker_requeues_once);
	T_RUN(test_pool__lost_twice_is_reported);
	return t_report();
}
