/* test_profile_refstore.c - reference results shared between a machine's
 * runners through files (src/reference/refstore.c, refcache.c): a round trip
 * keeps every output bit for bit; a corrupted, truncated or foreign file is
 * refused and removed, never trusted; large results are not stored; the
 * memory cache falls back to the files; a second runner needing a result
 * the first is computing waits for it and reads it.  No GPU. */
#include "../../src/reference/reference.h"
#include "t.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[64];

/* A key as the runs make them: KB_HASH_HEX bytes (the memory cache copies
 * that many). */
static const char *key(const char *name)
{
	static char hex[4][KB_HASH_HEX];
	static int next;
	char *k = hex[next++ % 4];
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, name);
	kb_hash_final(h, k);
	return k;
}

static kb_ref_out *two_outputs(void)
{
	kb_ref_out *o = kb_xcalloc(3, sizeof *o);
	o[0].name = kb_xstrdup("y");
	o[0].rank = 2, o[0].dims[0] = 3, o[0].dims[1] = 5, o[0].n = 15;
	o[0].v = kb_big_alloc(15 * sizeof(double));
	for (int i = 0; i < 15; i++)
		o[0].v[i] = i * 0.1 - 0.7;
	o[1].name = kb_xstrdup("stats");
	o[1].rank = 1, o[1].dims[0] = 2, o[1].n = 2;
	o[1].v = kb_big_alloc(2 * sizeof(double));
	o[1].v[0] = -0.0, o[1].v[1] = 1e300;
	return o;
}

static void free_outs(kb_ref_out *o, int n)
{
	for (int i = 0; i < n; i++)
		kb_ref_out_free(&o[i]);
	free(o);
}

/* The one file in the store (the tests put one at a time), or NULL. */
static char *the_file(void)
{
	char *dir = kb_cache_dir("refs"), *found = NULL;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strstr(e->d_name, ".ref") && !strstr(e->d_name, ".tmp"))
			found = kb_xasprintf("%s/%s", dir, e->d_name);
	if (d)
		closedir(d);
	free(dir);
	return found;
}

static void test_refstore__round_trip(void)
{
	kb_ref_out *o = two_outputs();
	kb_profile__refstore_save(key("key-a"), o, 2);
	int n = 0;
	kb_ref_out *back = kb_profile__refstore_load(key("key-a"), &n);
	T_OK(back != NULL);
	if (back) {
		T_EQ_INT(n, 2);
		T_EQ_STR(back[0].name, "y");
		T_EQ_INT(back[0].rank, 2);
		T_OK(back[0].dims[1] == 5 && back[0].n == 15);
		T_OK(!memcmp(back[0].v, o[0].v, 15 * sizeof(double)));
		T_OK(!memcmp(back[1].v, o[1].v, 2 * sizeof(double)));
		free_outs(back, n);
	}
	T_OK(kb_profile__refstore_load(key("key-b"), &n) == NULL); /* another key: nothing */
	free_outs(o, 2);
	char *f = the_file();
	T_OK(f && remove(f) == 0);
	free(f);
}

/* Damage at every kind of place: a flipped value byte, a flipped header
 * byte, a truncated file.  Each is refused and its file removed. */
static void test_refstore__damaged_files_are_refused(void)
{
	long at[] = {-3, 2, -1000};
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		kb_ref_out *o = two_outputs();
		kb_profile__refstore_save(key("key-c"), o, 2);
		free_outs(o, 2);
		char *f = the_file();
		T_OK(f != NULL);
		if (!f)
			return;
		FILE *fp = fopen(f, "r+b");
		fseek(fp, 0, SEEK_END);
		long size = ftell(fp);
		if (at[k] == -1000) {
			fclose(fp);
			T_OK(truncate(f, size / 2) == 0);
		} else {
			long pos = at[k] < 0 ? size + at[k] : at[k];
			fseek(fp, pos, SEEK_SET);
			int c = fgetc(fp);
			fseek(fp, pos, SEEK_SET);
			fputc(c ^ 0x10, fp);
			fclose(fp);
		}
		int n = 0;
		T_OK(kb_profile__refstore_load(key("key-c"), &n) == NULL);
		T_OK(!kb_file_exists(f));
		free(f);
	}
}

static void test_refstore__large_results_stay_in_memory(void)
{
	kb_ref_out *o = kb_xcalloc(2, sizeof *o);
	o[0].name = kb_xstrdup("big");
	o[0].rank = 1, o[0].n = (int64_t)(65 << 20) / 8 + 1, o[0].dims[0] = o[0].n;
	o[0].v = kb_big_calloc((size_t)o[0].n * sizeof(double));
	kb_profile__refstore_save(key("key-big"), o, 1);
	char *f = the_file();
	T_OK(f == NULL);
	free(f);
	free_outs(o, 1);
}

/* A runner that never computed key-d finds it through its memory cache's
 * miss: another runner's file. */
/* Two runners needing one reference: the second waits for the first's
 * claim and then reads its file instead of computing it too. */
static void test_refstore__second_runner_waits_and_shares(void)
{
	const char *k = key("claimed");
	int go[2];
	T_OK(pipe(go) == 0);
	pid_t child = fork();
	if (child == 0) { /* the first runner: claims, computes (300 ms), keeps, gives back */
		bool waited;
		int fd = kb_profile__refstore_claim(k, &waited);
		if (write(go[1], "c", 1) != 1)
			_exit(2);
		usleep(300000);
		kb_ref_out *o = two_outputs();
		kb_profile__refstore_save(k, o, 2);
		kb_profile__refstore_release(&fd);
		_exit(fd == -1 && !waited ? 0 : 1);
	}
	char c;
	/* the clock starts before the child's claim is seen: a wait that ends
	 * with its release is over 300 ms however late this process runs */
	double t0 = kb_now_ms();
	T_EQ_INT(read(go[0], &c, 1), 1); /* it holds the claim now */
	bool waited = false;
	int fd = kb_profile__refstore_claim(k, &waited);
	double waited_ms = kb_now_ms() - t0;
	T_OK(fd >= 0);
	T_OK(waited);
	T_OK(waited_ms > 200);
	int n = 0;
	kb_ref_out *got = kb_profile__refstore_load(k, &n);
	T_OK(got != NULL);
	T_EQ_INT(n, 2);
	if (got)
		T_NEAR(got[1].v[1], 1e300, 0);
	kb_profile__refstore_release(&fd);
	T_EQ_INT(fd, -1);
	int st = -1;
	T_EQ_INT(waitpid(child, &st, 0), child);
	T_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* a free claim is had at once; results too large to keep are not worth one */
	fd = kb_profile__refstore_claim(k, &waited);
	T_OK(fd >= 0 && !waited);
	kb_profile__refstore_release(&fd);
	T_OK(kb_profile__refstore_keeps(1 << 20));
	T_OK(!kb_profile__refstore_keeps((size_t)1 << 40));
	if (got)
		free_outs(got, n);
	close(go[0]);
	close(go[1]);
}

static void test_refstore__cache_falls_back_to_files(void)
{
	kb_ref_out *o = two_outputs();
	kb_profile__refstore_save(key("key-d"), o, 2);
	free_outs(o, 2);
	int n = 0;
	kb_ref_out *got = kb_profile__refcache_get(key("key-d"), &n);
	T_OK(got != NULL && n == 2);
	if (got)
		T_EQ_STR(got[1].name, "stats");
	T_OK(kb_profile__refcache_get(key("key-d"), &n) == got); /* now from memory */
	char *f = the_file();
	T_OK(f && remove(f) == 0);
	free(f);
}

/* The memory cache keeps to its budget by evicting the least recently used
 * results, with free slots left too (it once evicted nothing until all 16
 * slots were full: 49 GiB in the gallery's runner); one result over the
 * budget stays alone; the most recent one is always kept. */
static void test_refstore__cache_keeps_to_its_budget(void)
{
	size_t one = (15 + 2) * sizeof(double); /* two_outputs' values */
	size_t was = kb_profile__refcache_budget(3 * one);
	/* the default: 4 GiB, or an eighth of this machine's memory where less */
	size_t eighth = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE) / 8;
	T_EQ_INT((int)(was >> 20), (int)((eighth < ((size_t)4 << 30) ? eighth : (size_t)4 << 30) >> 20));
	char name[32];
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof name, "budget-%d", i);
		kb_profile__refcache_put(key(name), two_outputs(), 2);
		T_OK(kb_profile__refcache_bytes() <= 3 * one);
	}
	T_EQ_INT((int)kb_profile__refcache_bytes(), (int)(3 * one));
	int n = 0;
	T_OK(kb_profile__refcache_get(key("budget-5"), &n) != NULL);
	kb_profile__refcache_budget(one / 2); /* smaller than any one result */
	kb_profile__refcache_put(key("budget-6"), two_outputs(), 2);
	T_EQ_INT((int)kb_profile__refcache_bytes(), (int)one);
	T_OK(kb_profile__refcache_get(key("budget-6"), &n) != NULL);
	kb_profile__refcache_budget(was);
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/kbench-refstore-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	setenv("XDG_CACHE_HOME", tmpdir, 1);
	T_RUN(test_refstore__round_trip);
	T_RUN(test_refstore__damaged_files_are_refused);
	T_RUN(test_refstore__large_results_stay_in_memory);
	T_RUN(test_refstore__cache_falls_back_to_files);
	T_RUN(test_refstore__second_runner_waits_and_shares);
	T_RUN(test_refstore__cache_keeps_to_its_budget); /* last: it leaves files in the store */
	char *rm = kb_xasprintf("rm -rf %s", tmpdir);
	if (system(rm) != 0)
		printf("could not remove %s\n", tmpdir);
	free(rm);
	return t_report();
}
