/*
 * stats.c - summary statistics of timing samples and the repetition policy
 * that decides when enough samples were taken.  Pure functions over arrays
 * of doubles: no clocks, no GPU, no allocation visible to the caller.
 *
 * Conventions:
 *  - Percentiles (median, p10, p90) interpolate linearly between the two
 *    nearest order statistics (numpy's default "linear" method), so the
 *    median of an even count is the mean of the middle two.
 *  - stdev is the sample standard deviation (n - 1 in the denominator); it
 *    is 0 for a single sample.  cv = stdev / mean, 0 when the mean is 0.
 *  - n <= 0 (or v NULL) gives all zeros.
 */
#include "gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The p-quantile (0..1) of n sorted samples, linear interpolation. */
static double quantile(const double *s, int n, double p)
{
	double pos = p * (n - 1);
	int lo = (int)floor(pos);
	if (lo >= n - 1)
		return s[n - 1];
	double frac = pos - lo;
	return s[lo] + (s[lo + 1] - s[lo]) * frac;
}

/* Median of n samples (copied and sorted; v is not modified). */
static double median_of(const double *v, int n)
{
	double *s = kb_xmalloc((size_t)n * sizeof(*s));
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	double m = quantile(s, n, 0.5);
	free(s);
	return m;
}

/* Fills st with the summary of n samples; v is not modified. */
void kb_stats_compute(const double *v, int n, kb_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!v || n <= 0)
		return;
	double *s = kb_xmalloc((size_t)n * sizeof(*s));
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += s[i];
	double mean = sum / n, ss = 0;
	for (int i = 0; i < n; i++)
		ss += (s[i] - mean) * (s[i] - mean);
	st->n = n;
	st->min = s[0];
	st->max = s[n - 1];
	st->median = quantile(s, n, 0.5);
	st->p10 = quantile(s, n, 0.1);
	st->p90 = quantile(s, n, 0.9);
	st->mean = mean;
	st->stdev = n > 1 ? sqrt(ss / (n - 1)) : 0;
	st->cv = mean != 0 ? st->stdev / fabs(mean) : 0;
	free(s);
}

/* Says whether to stop after the n-th sample: at max_reps (when > 0), when
 * spent_ms reaches max_ms (when > 0), or once n >= min_reps and the median of
 * the last half (the last n/2 samples, at least one) differs from the median
 * of all samples by less than rel_tol of it (an exact tie counts as settled). */
bool kb_stats_should_stop(const kb_rep_policy *p, const double *v, int n, double spent_ms)
{
	if (n <= 0 || !v)
		return false;
	if (p->max_reps > 0 && n >= p->max_reps)
		return true;
	if (p->max_ms > 0 && spent_ms >= p->max_ms)
		return true;
	if (n < p->min_reps)
		return false;
	int half = n / 2 > 0 ? n / 2 : 1;
	double all = median_of(v, n), last = median_of(v + (n - half), half);
	double moved = fabs(last - all);
	return moved == 0 || moved < p->rel_tol * fabs(all);
}
