/* remote_bench.c - per-request overhead of a remote runner (run by
 * bench/remote_overhead.sh through a loopback sshd): N run requests of
 * KERNEL through one warm local runner, then through one warm
 * `ssh HOST kbench serve`, after one warm-up each; prints the median and
 * min milliseconds per request of each and the median difference. */
#include "../../src/runner/runner.h"

#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median ms of n calls (after a warm-up); *min_ms the fastest. */
static double time_calls(kb_runner *r, json_t *q, int n, double *min_ms, const char **status)
{
	double *ms = calloc((size_t)n, sizeof *ms);
	json_t *res = NULL;
	kb_err err = {0};
	kb_runner_call(r, q, 60000, NULL, NULL, &res, &err);
	json_decref(res);
	for (int i = 0; i < n; i++) {
		double t0 = kb_now_ms();
		kb_runner_call(r, q, 60000, NULL, NULL, &res, &err);
		ms[i] = kb_now_ms() - t0;
		static char st[64];
		snprintf(st, sizeof st, "%s", json_string_value(json_object_get(res, "status")));
		*status = st;
		json_decref(res);
	}
	qsort(ms, (size_t)n, sizeof *ms, cmp);
	double med = ms[n / 2];
	*min_ms = ms[0];
	free(ms);
	return med;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return fprintf(stderr, "usage: remote_bench HOST N KERNEL\n"), 2;
	int n = atoi(argv[2]);
	json_t *q = json_pack("{s:s, s:s, s:i}", "type", "run", "path", argv[3], "trials", 1);
	const char *st_local = "?", *st_remote = "?";
	double min_l, min_r;
	char *self[] = {"build/kbench", "serve", NULL};
	kb_runner *local = kb_runner_new(self);
	double med_l = time_calls(local, q, n, &min_l, &st_local);
	printf("local   %d requests: median %.2f ms, min %.2f ms (status %s)\n", n, med_l, min_l,
	       st_local);
	kb_runner_free(local);
	kb_runner *remote = kb_runner_new_remote(argv[1], -1, true);
	double med_r = time_calls(remote, q, n, &min_r, &st_remote);
	printf("remote  %d requests: median %.2f ms, min %.2f ms (status %s)\n", n, med_r, min_r,
	       st_remote);
	kb_runner_free(remote);
	printf("overhead per request (median): %.2f ms (target <= 30 ms)\n", med_r - med_l);
	json_decref(q);
	return 0;
}
