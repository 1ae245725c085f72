/*
 * refcache.c - reference results kept across runs in the runner process.
 * A CPU reference depends only on the inputs (shapes, dtypes, init, seeds)
 * and the `ref` line, never on the kernel under test, so a re-run with the
 * same seeds - a warm runner re-checking an edited kernel - reuses it
 * instead of recomputing it (tens to hundreds of ms for large tensors).
 * Entries are evicted least recently used beyond a budget: KB_REFCACHE_BYTES,
 * or an eighth of the machine's memory where that is less (one result
 * larger than the budget stays alone).  Small results also go to refstore.c's
 * files, where the other runners of this machine (one per GPU) find them.
 *
 * Until 2026-11-29 the eviction stopped at the first free slot, so nothing
 * was evicted until all 16 slots were full: the gallery's softmax job held
 * 16 references (49 GiB) in its runner, which the machine killed at the
 * sixteenth (softmax bf16 4096 x 131072, "the shared runner ended without
 * a result", twice in bench/gallery_h200.txt).
 */
#include "reference.h"

#include <stdlib.h>
#include <string.h>

#define KB_REFCACHE_BYTES ((size_t)4 << 30)
#define KB_REFCACHE_SLOTS 16

typedef struct {
	char key[KB_HASH_HEX];
	kb_ref_out *outs;
	int n;
	size_t bytes;
	uint64_t used;
} entry;

static entry cache[KB_REFCACHE_SLOTS];
static uint64_t tick;
static size_t total;
static size_t budget; /* 0: not set yet (kb_mem_budget) */

static void drop(entry *e)
{
	for (int i = 0; i < e->n; i++)
		kb_ref_out_free(&e->outs[i]);
	free(e->outs);
	total -= e->bytes;
	memset(e, 0, sizeof *e);
}

static kb_ref_out *remember(const char *key, kb_ref_out *outs, int n);

kb_ref_out *kb_profile__refcache_get(const char *key, int *n)
{
	for (int i = 0; i < KB_REFCACHE_SLOTS; i++)
		if (cache[i].outs && !strcmp(cache[i].key, key)) {
			cache[i].used = ++tick;
			*n = cache[i].n;
			return cache[i].outs;
		}
	/* another runner of this machine may have computed it (--gpus) */
	kb_ref_out *outs = kb_profile__refstore_load(key, n);
	return outs ? remember(key, outs, *n) : NULL;
}

/* The least recently used entry holding a result, or NULL when none does. */
static entry *oldest(void)
{
	entry *v = NULL;
	for (int i = 0; i < KB_REFCACHE_SLOTS; i++)
		if (cache[i].outs && (!v || cache[i].used < v->used))
			v = &cache[i];
	return v;
}

/* A free slot, else the least recently used one. */
static entry *slot(void)
{
	for (int i = 0; i < KB_REFCACHE_SLOTS; i++)
		if (!cache[i].outs)
			return &cache[i];
	return oldest();
}

size_t kb_profile__refcache_bytes(void)
{
	return total;
}

size_t kb_profile__refcache_budget(size_t bytes)
{
	size_t was = budget ? budget : kb_mem_budget(KB_REFCACHE_BYTES);
	budget = bytes;
	return was;
}

kb_ref_out *kb_profile__refcache_put(const char *key, kb_ref_out *outs, int n)
{
	kb_profile__refstore_save(key, outs, n);
	return remember(key, outs, n);
}

static kb_ref_out *remember(const char *key, kb_ref_out *outs, int n)
{
	size_t bytes = 0;
	for (int i = 0; i < n; i++)
		bytes += (size_t)outs[i].n * sizeof(double);
	if (!budget)
		budget = kb_mem_budget(KB_REFCACHE_BYTES); /* the runner's tensors live beside it */
	for (entry *v; total + bytes > budget && (v = oldest());)
		drop(v);
	entry *e = slot();
	if (e->outs)
		drop(e);
	memcpy(e->key, key, KB_HASH_HEX);
	e->outs = outs;
	e->n = n;
	e->bytes = bytes;
	e->used = ++tick;
	total += bytes;
	return outs;
}
