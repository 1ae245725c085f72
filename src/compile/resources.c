/*
 * resources.c - kernel resources from a compiler log: the ptxas "-v" report
 * that NVRTC, nvcc, ptxas and nvJitLink (-verbose) print.
 *
 * Owns kb_compile_parse_ptxas_log and kb_compile_resources_free.  It reads
 * text only; the cubin's own attributes are cubin.c's, occupancy is
 * occupancy.c's.  Formats (gpu-apis.md §5, §6, and tests/fixtures/ptxas/):
 *
 *   ptxas info    : Compiling entry function 'K' for 'sm_90'
 *   ptxas info    : Function properties for K
 *   ptxas         .     736 bytes stack frame, 736 bytes spill stores, ...
 *                       (nvcc/ptxas print this line with indentation only)
 *   ptxas info    : Used 32 registers, used 1 barriers, 736 bytes cumulative
 *                   stack size, 4096 bytes smem[, 360 bytes cmem[0]]
 *   info    : Function properties for 'K':                     (nvJitLink)
 *   info    : used 94 registers, used 0 barriers, 72 stack, 17408 bytes smem,
 *             540 bytes cmem[0], 0 bytes lmem
 *
 * Every statistics line is a comma list of "<number> <key>" parsed by key, so
 * segments may come and go.  Rules when both reports name a kernel:
 *   - smem, spills, frame and barriers come from the ptxas lines: nvJitLink's
 *     summary adds the 1 KiB reservation on sm_90 (not on sm_80, sm_100 or
 *     sm_120: measured with CUDA 13.0), and shows spills only as "stack";
 *   - registers come from the summary: nvJitLink compiles PTX as relocatable
 *     code and links afterwards, so the ptxas line gives the count before the
 *     callees were linked in (a kernel calling a __noinline__ function: ptxas
 *     24, summary 94, cubin EIATTR_REGCOUNT 94);
 *   - a kernel only in the summary gets its smem minus the reservation when
 *     the log names sm_90, and -1 spills.
 * Device functions (properties but no "Used" line) are not reported.
 */
#include "compile.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	bool has_ptxas, has_summary;
	int regs, barriers, smem, frame, stores, loads, cmem0;  /* ptxas lines */
	int s_regs, s_barriers, s_smem, s_stack, s_cmem0;        /* summary */
} stats;

typedef struct {
	kb_resources *v;
	stats *st;
	int n, cap, cap_st;
	int cur;      /* index of the function the next lines are about, -1 none */
	int sm;       /* from "for 'sm_NN'", 0 unknown */
} parser;

/* ===== Small text helpers ===== */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* The message part of a log line: after "ptxas info    :", "info    :",
 * "ptxas         ." or plain indentation. */
static const char *body_of(const char *p, const char *end)
{
	p = skip_ws(p, end);
	const char *q = p;
	if (end - q >= 5 && starts(q, "ptxas"))
		q += 5;
	q = skip_ws(q, end);
	if (end - q >= 4 && starts(q, "info"))
		q += 4;
	else if (end - q >= 7 && starts(q, "warning"))
		q += 7;
	q = skip_ws(q, end);
	if (q < end && (*q == ':' || *q == '.') && q > p)
		return skip_ws(q + 1, end);
	return p;
}

/* ===== The function list ===== */

static int find_or_add(parser *ps, const char *name, size_t len)
{
	for (int i = 0; i < ps->n; i++)
		if (strlen(ps->v[i].kernel) == len && !memcmp(ps->v[i].kernel, name, len))
			return i;
	kb_xgrow((void **)&ps->st, &ps->cap_st, ps->n + 1, sizeof(*ps->st));
	kb_resources *r = KB_PUSH(ps->v, ps->n, ps->cap);
	memset(r, 0, sizeof(*r));
	r->kernel = kb_xstrndup(name, len);
	stats *s = &ps->st[ps->n - 1];
	memset(s, 0, sizeof(*s));
	s->cmem0 = s->s_cmem0 = -1;
	return ps->n - 1;
}

/* "Compiling entry function 'K' for 'sm_90'" */
static void on_entry(parser *ps, const char *p, const char *end)
{
	p += strlen("Compiling entry function '");
	const char *q = memchr(p, '\'', (size_t)(end - p));
	if (!q || q == p)
		return;
	ps->cur = find_or_add(ps, p, (size_t)(q - p));
	const char *a = strstr(q, "'sm_");
	if (a && a < end) {
		int sm = atoi(a + 4);
		if (sm > 0)
			ps->sm = sm;
	}
}

/* "Function properties for K" (ptxas) or "Function properties for 'K':" */
static void on_properties(parser *ps, const char *p, const char *end)
{
	p += strlen("Function properties for ");
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (end - p >= 3 && *p == '\'' && end[-1] == ':' && end[-2] == '\'') {
		p++;
		end -= 2;
	}
	if (end <= p) {
		ps->cur = -1;
		return;
	}
	ps->cur = find_or_add(ps, p, (size_t)(end - p));
}

/* ===== Statistics lines ===== */

/* Calls fn(number, key) for each "<number> <key>" segment of a comma list;
 * words before the number ("used") are skipped. */
static void each_segment(const char *p, const char *end, stats *s, bool summary,
			 void (*fn)(stats *, bool, long, const char *, size_t))
{
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *seg_end = comma ? comma : end;
		const char *d = p;
		while (d < seg_end && !isdigit((unsigned char)*d))
			d++;
		if (d < seg_end) {
			char *after;
			long v = strtol(d, &after, 10);
			const char *k = skip_ws(after, seg_end);
			size_t klen = (size_t)(seg_end - k);
			while (klen && isspace((unsigned char)k[klen - 1]))
				klen--;
			fn(s, summary, v, k, klen);
		}
		p = comma ? comma + 1 : end;
	}
}

static bool key_is(const char *k, size_t klen, const char *want)
{
	return klen == strlen(want) && !memcmp(k, want, klen);
}

static void take(stats *s, bool summary, long lv, const char *k, size_t klen)
{
	int v = lv > 1 << 30 ? 1 << 30 : (int)lv;
	if (key_is(k, klen, "registers"))
		*(summary ? &s->s_regs : &s->regs) = v;
	else if (key_is(k, klen, "barriers"))
		*(summary ? &s->s_barriers : &s->barriers) = v;
	else if (key_is(k, klen, "bytes smem"))
		*(summary ? &s->s_smem : &s->smem) = v;
	else if (key_is(k, klen, "bytes cmem[0]"))
		*(summary ? &s->s_cmem0 : &s->cmem0) = v;
	else if (key_is(k, klen, "stack") && summary)
		s->s_stack = v;
	else if (key_is(k, klen, "bytes stack frame"))
		s->frame = v;
	else if (key_is(k, klen, "bytes spill stores"))
		s->stores = v;
	else if (key_is(k, klen, "bytes spill loads"))
		s->loads = v;
	/* "bytes cumulative stack size", "bytes lmem", "bytes gmem": not kept */
}

static void on_line(parser *ps, const char *line, const char *end)
{
	const char *p = body_of(line, end);
	if (starts(p, "Compiling entry function '")) {
		on_entry(ps, p, end);
	} else if (starts(p, "Function properties for ")) {
		on_properties(ps, p, end);
	} else if (ps->cur >= 0 && (starts(p, "Used ") || starts(p, "used "))) {
		stats *s = &ps->st[ps->cur];
		bool summary = *p == 'u';
		*(summary ? &s->has_summary : &s->has_ptxas) = true;
		each_segment(p, end, s, summary, take);
	} else if (ps->cur >= 0 && strstr(p, "bytes stack frame") &&
		   strstr(p, "bytes stack frame") < end) {
		each_segment(p, end, &ps->st[ps->cur], false, take);
	}
}

/* ===== Merging the two reports ===== */

static void merge(const parser *ps, int i, kb_resources *r)
{
	const stats *s = &ps->st[i];
	r->max_threads = 1024; /* the log does not say; the limit of every arch */
	if (s->has_ptxas) {
		r->regs = s->has_summary && s->s_regs > s->regs ? s->s_regs : s->regs;
		r->smem_static = s->smem;
		r->local_bytes = s->frame;
		r->spill_stores = s->stores;
		r->spill_loads = s->loads;
		r->barriers = s->barriers;
		r->cmem0 = s->has_summary && s->s_cmem0 >= 0 ? s->s_cmem0 : s->cmem0;
		if (s->has_summary && s->s_stack > r->local_bytes)
			r->local_bytes = s->s_stack; /* callees linked in later */
		return;
	}
	int reserved = ps->sm == 90 && s->s_smem >= 1024 ? 1024 : 0;
	r->regs = s->s_regs;
	r->smem_static = s->s_smem - reserved;
	r->local_bytes = s->s_stack;
	r->spill_stores = r->spill_loads = -1;
	r->barriers = s->s_barriers;
	r->cmem0 = s->s_cmem0;
}

/* One entry per kernel with statistics, in order of appearance; the count. */
int kb_compile_parse_ptxas_log(const char *log, kb_resources **out)
{
	parser ps = {.cur = -1};
	if (out)
		*out = NULL;
	if (!log || !out)
		return 0;
	for (const char *p = log; *p;) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		on_line(&ps, p, end);
		p = nl ? nl + 1 : end;
	}
	int n = 0;
	for (int i = 0; i < ps.n; i++) {
		if (!ps.st[i].has_ptxas && !ps.st[i].has_summary) {
			free(ps.v[i].kernel); /* a device function */
			continue;
		}
		kb_resources r = ps.v[i];
		merge(&ps, i, &r);
		ps.v[n++] = r;
	}
	free(ps.st);
	if (n == 0) {
		free(ps.v);
		return 0;
	}
	*out = ps.v;
	return n;
}

/* Frees the names and the array; NULL is fine. */
void kb_compile_resources_free(kb_resources *v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i].kernel);
	free(v);
}

/* The text of kernel sym's body in a PTX module: from ".entry sym" to the
 * next .entry (or the end); *end gets its end.  NULL when it is not there. */
static const char *ptx_entry(const char *ptx, const char *sym, const char **end)
{
	size_t n = strlen(sym);
	for (const char *p = ptx; (p = strstr(p, ".entry ")); p += 7) {
		const char *q = p + 7;
		if (strncmp(q, sym, n) || (q[n] != '(' && q[n] != ' ' && q[n] != '\n'))
			continue;
		const char *next = strstr(q, ".entry ");
		*end = next ? next : q + strlen(q);
		return q;
	}
	return NULL;
}

void kb_compile_ptx_setmaxnreg(const char *ptx, const char *sym, kb_resources *r)
{
	r->maxnreg_dec = r->maxnreg_inc = 0;
	const char *end, *p = ptx && sym ? ptx_entry(ptx, sym, &end) : NULL;
	for (; p && (p = strstr(p, "setmaxnreg.")) && p < end; p++) {
		bool inc = !strncmp(p + 11, "inc", 3);
		if (!inc && strncmp(p + 11, "dec", 3))
			continue;
		const char *u = strstr(p, ".u32");
		const char *semi = strchr(p, ';');
		if (!u || !semi || u > semi)
			continue;
		int v = (int)strtol(u + 4, NULL, 10);
		if (inc && v > r->maxnreg_inc)
			r->maxnreg_inc = v;
		if (!inc && (!r->maxnreg_dec || v < r->maxnreg_dec))
			r->maxnreg_dec = v;
	}
}
