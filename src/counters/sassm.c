/*
 * sassm.c - per-instruction counts from CUPTI's SASS metrics, as plain
 * data: records keyed by (function, pc offset) with one value per role
 * (executions, shared wavefronts, their ideal, CUPTI's own bank-conflict
 * count), the bank conflicts they imply, and the "sass_metrics" part of a
 * Result.  No CUPTI here (sassmetrics.c collects); no SASS text either
 * (the runner joins pc offsets to nvdisasm's listing).
 *
 * Invariants:
 *  - Records are sorted by (function, pc) and unique; values of one role
 *    add up (CUPTI gives one instance per SM or SMSP at finer granularity).
 *  - A role's value counts only when its bit is set in valid: a metric the
 *    chip lacks is n/a, never 0 (style rule 12).
 *  - Bank conflicts = wavefronts - ideal wavefronts (Nsight Compute's
 *    "L1 wavefronts shared excessive"), clamped at 0; CUPTI's own conflict
 *    count stands in only when either is missing.
 */
#include "counters.h"

#include <stdlib.h>
#include <string.h>

static const char *const role_key[KB_SASSM_NROLES] = {
	[KB_SASSM_EXEC] = "executions",
	[KB_SASSM_WAVEFRONTS] = "shared_wavefronts",
	[KB_SASSM_IDEAL] = "shared_wavefronts_ideal",
	[KB_SASSM_CONFLICTS] = "cupti_bank_conflicts",
};

static int cmp_key(const char *fa, uint64_t pa, const char *fb, uint64_t pb)
{
	int c = strcmp(fa, fb);
	return c ? c : (pa > pb) - (pa < pb);
}

/* The index of (function, pc) in s->recs, or where it would go (*found false). */
static int search(const kb_sassm *s, const char *function, uint64_t pc, bool *found)
{
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = cmp_key(s->recs[mid].function, s->recs[mid].pc_offset, function, pc);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

void kb_profile_sassm_add(kb_sassm *s, const char *function, uint64_t pc, int role, uint64_t value)
{
	if (role < 0 || role >= KB_SASSM_NROLES)
		return;
	const char *fn = function ? function : "?";
	bool found;
	int at = search(s, fn, pc, &found);
	if (!found) {
		KB_PUSH(s->recs, s->n, s->cap);
		memmove(&s->recs[at + 1], &s->recs[at], (size_t)(s->n - 1 - at) * sizeof *s->recs);
		s->recs[at] = (kb_sassm_record){.function = kb_xstrdup(fn), .pc_offset = pc};
	}
	s->recs[at].v[role] += value;
	s->recs[at].valid |= 1u << role;
}

const kb_sassm_record *kb_profile_sassm_find(const kb_sassm *s, const char *function, uint64_t pc)
{
	bool found;
	if (!s || !function)
		return NULL;
	int at = search(s, function, pc, &found);
	return found ? &s->recs[at] : NULL;
}

static bool has(const kb_sassm_record *r, int role)
{
	return (r->valid >> role) & 1u;
}

bool kb_profile_sassm_conflicts(const kb_sassm_record *r, uint64_t *out)
{
	if (has(r, KB_SASSM_WAVEFRONTS) && has(r, KB_SASSM_IDEAL)) {
		uint64_t wf = r->v[KB_SASSM_WAVEFRONTS], ideal = r->v[KB_SASSM_IDEAL];
		*out = wf > ideal ? wf - ideal : 0;
		return true;
	}
	if (has(r, KB_SASSM_CONFLICTS)) {
		*out = r->v[KB_SASSM_CONFLICTS];
		return true;
	}
	return false;
}

void kb_profile_sassm_free(kb_sassm *s)
{
	for (int i = 0; s && i < s->n; i++)
		free(s->recs[i].function);
	if (s) {
		free(s->recs);
		s->recs = NULL;
		s->n = s->cap = 0;
	}
}

/* ---- JSON ------------------------------------------------------------------------- */

/* Whether a record touched shared memory (by whichever counts exist). */
static bool is_shared(const kb_sassm_record *r)
{
	uint64_t c;
	if (has(r, KB_SASSM_WAVEFRONTS))
		return r->v[KB_SASSM_WAVEFRONTS] > 0;
	return kb_profile_sassm_conflicts(r, &c) && c > 0;
}

/* A record's counts into o: executions, shared_wavefronts,
 * shared_wavefronts_ideal, bank_conflicts (each only when known). */
static void counts_into(const kb_sassm_record *r, json_t *o)
{
	for (int k = KB_SASSM_EXEC; k <= KB_SASSM_IDEAL; k++)
		if (has(r, k))
			json_object_set_new(o, role_key[k], json_integer((json_int_t)r->v[k]));
	uint64_t c;
	if (kb_profile_sassm_conflicts(r, &c))
		json_object_set_new(o, "bank_conflicts", json_integer((json_int_t)c));
}

static uint64_t conflicts_or0(const kb_sassm_record *r)
{
	uint64_t c = 0;
	return kb_profile_sassm_conflicts(r, &c) ? c : 0;
}

/* Most conflicts first, then most wavefronts, then by place. */
static int by_conflicts(const void *a, const void *b)
{
	const kb_sassm_record *x = *(const kb_sassm_record *const *)a;
	const kb_sassm_record *y = *(const kb_sassm_record *const *)b;
	uint64_t cx = conflicts_or0(x), cy = conflicts_or0(y);
	if (cx != cy)
		return cx < cy ? 1 : -1;
	uint64_t wx = x->v[KB_SASSM_WAVEFRONTS], wy = y->v[KB_SASSM_WAVEFRONTS];
	if (wx != wy)
		return wx < wy ? 1 : -1;
	return cmp_key(x->function, x->pc_offset, y->function, y->pc_offset);
}

/* Sums over all records: totals of each role that every record has, the
 * conflicts, and the counts of executed and shared instructions. */
static void totals_into(const kb_sassm *s, json_t *j)
{
	uint64_t sum[KB_SASSM_NROLES] = {0}, conf = 0;
	bool all[KB_SASSM_NROLES], any_conf = false;
	int executed = 0, shared = 0;
	for (int k = 0; k < KB_SASSM_NROLES; k++)
		all[k] = s->name[k][0] != '\0';
	for (int i = 0; i < s->n; i++) {
		const kb_sassm_record *r = &s->recs[i];
		for (int k = 0; k < KB_SASSM_NROLES; k++)
			sum[k] += has(r, k) ? r->v[k] : 0;
		uint64_t c;
		if (kb_profile_sassm_conflicts(r, &c))
			conf += c, any_conf = true;
		executed += has(r, KB_SASSM_EXEC) && r->v[KB_SASSM_EXEC] > 0;
		shared += is_shared(r);
	}
	for (int k = KB_SASSM_EXEC; k <= KB_SASSM_IDEAL; k++)
		if (all[k])
			json_object_set_new(j, role_key[k], json_integer((json_int_t)sum[k]));
	if (any_conf)
		json_object_set_new(j, "bank_conflicts", json_integer((json_int_t)conf));
	json_object_set_new(j, "instructions", json_integer(executed));
	json_object_set_new(j, "shared_instructions", json_integer(shared));
}

json_t *kb_profile_sassm_json(const kb_sassm *s, int max)
{
	json_t *j = json_object(), *names = json_object(), *why = json_object();
	for (int k = 0; k < KB_SASSM_NROLES; k++) {
		json_object_set_new(names, role_key[k], s->name[k][0] ? json_string(s->name[k]) : json_null());
		if (!s->name[k][0] && s->why[k][0])
			json_object_set_new(why, role_key[k], json_string(s->why[k]));
	}
	json_object_set_new(j, "metrics", names);
	if (json_object_size(why))
		json_object_set_new(j, "unsupported", why);
	else
		json_decref(why);
	json_object_set_new(j, "launches", json_integer(s->launches));
	json_object_set_new(j, "ms", json_real(s->ms));
	totals_into(s, j);
	const kb_sassm_record **sel = kb_xcalloc((size_t)s->n + 1, sizeof *sel);
	int n = 0;
	for (int i = 0; i < s->n; i++)
		if (is_shared(&s->recs[i]))
			sel[n++] = &s->recs[i];
	qsort(sel, (size_t)n, sizeof *sel, by_conflicts);
	json_t *arr = json_array();
	for (int i = 0; i < n && i < max; i++) {
		json_t *o = json_pack("{s:s, s:I}", "function", sel[i]->function, "pc",
				      (json_int_t)sel[i]->pc_offset);
		counts_into(sel[i], o);
		json_array_append_new(arr, o);
	}
	free(sel);
	json_object_set_new(j, "shared", arr);
	return j;
}

void kb_profile_sassm_annotate(const kb_sassm *s, json_t *hot)
{
	size_t i;
	json_t *h;
	json_array_foreach(hot, i, h) {
		const kb_sassm_record *r = kb_profile_sassm_find(
			s, json_string_value(json_object_get(h, "function")),
			(uint64_t)json_integer_value(json_object_get(h, "pc")));
		if (r)
			counts_into(r, h);
	}
}
