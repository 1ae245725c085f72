/*
 * refstore.c - built-in reference results shared between the runners of
 * one machine through files ($XDG_CACHE_HOME/kbench/refs/<hash>.ref).
 * refcache.c keeps references in a runner's memory; a sweep over several
 * GPUs has a runner per GPU, each of which would otherwise compute the same
 * CPU reference again (seconds for large inputs).  Only small results are
 * stored (KB_REFSTORE_ENTRY), the folder is kept under KB_REFSTORE_TOTAL by
 * dropping the least recently used, and every file carries a hash of its
 * contents: a torn or corrupted file is ignored and removed, never trusted
 * (a wrong reference would make a correct kernel INCORRECT).
 *
 * Computing once: a runner about to compute a reference that would be kept
 * here first takes <file>.lock (flock); another runner that needs the same
 * reference meanwhile waits for that lock and then finds the file, instead
 * of computing it beside the first on the same CPUs (a sweep over GPUs
 * starts every worker on the same inputs).  A lock's holder only computes,
 * never waits for another lock, so no two runners wait on each other; the
 * wait is bounded (CLAIM_WAIT_MS) in case the holder is stuck.
 *
 * The file: "KBREF1\n", the payload's hash (KB_HASH_HEX bytes), then the
 * payload: int32 count, and per output uint32 name length, the name, int32
 * rank, int64 dims[rank], int64 n, double v[n].
 */
#include "reference.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#define KB_REFSTORE_ENTRY ((size_t)64 << 20)
#define KB_REFSTORE_TOTAL ((size_t)512 << 20)
#define CLAIM_WAIT_MS 120000.0
#define MAGIC "KBREF1\n"
#define MAGIC_LEN 7

/* The file of key for this build of kbench: the reference code may change
 * from one build to the next, so the name mixes in the program's identity
 * (version, size, modification time) as the compile cache does. */
static char self[KB_HASH_HEX];

static void hash_self(void)
{
	struct stat st;
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, KB_VERSION);
	if (stat(KB_SELF_EXE, &st) == 0) {
		kb_hash_update(h, &st.st_size, sizeof st.st_size);
		kb_hash_update(h, &st.st_mtim, sizeof st.st_mtim);
	}
	kb_hash_final(h, self);
}

static char *path_of(const char *key)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, hash_self);
	char name[KB_HASH_HEX];
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, self);
	kb_hash_str(h, key);
	kb_hash_final(h, name);
	char *dir = kb_cache_dir("refs");
	char *p = kb_xasprintf("%s/%s.ref", dir, name);
	free(dir);
	return p;
}

/* ---- reading --------------------------------------------------------------- */

typedef struct {
	const unsigned char *p, *end;
} reader;

static bool take(reader *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	memcpy(out, r->p, n);
	r->p += n;
	return true;
}

static bool read_out(reader *r, kb_ref_out *o)
{
	uint32_t len;
	int32_t rank;
	if (!take(r, &len, sizeof len) || len > 4096 || (size_t)(r->end - r->p) < len)
		return false;
	o->name = kb_xstrndup((const char *)r->p, len);
	r->p += len;
	if (!take(r, &rank, sizeof rank) || rank < 0 || rank > KB_MAX_RANK)
		return false;
	o->rank = rank;
	if (!take(r, o->dims, sizeof(int64_t) * (size_t)rank) || !take(r, &o->n, sizeof o->n) ||
	    o->n < 0 || (size_t)o->n > (size_t)(r->end - r->p) / sizeof(double))
		return false;
	o->v = kb_big_alloc((size_t)o->n * sizeof(double) + 1);
	return take(r, o->v, (size_t)o->n * sizeof(double));
}

static bool hash_matches(const unsigned char *payload, size_t n, const char *want)
{
	char hex[KB_HASH_HEX];
	kb_hasher *h = kb_hash_new();
	kb_hash_update(h, payload, n);
	kb_hash_final(h, hex);
	return !memcmp(hex, want, KB_HASH_HEX);
}

kb_ref_out *kb_profile__refstore_load(const char *key, int *n)
{
	char *path = path_of(key);
	kb_buf b = KB_BUF_INIT;
	kb_ref_out *outs = NULL;
	int32_t count = 0, got = 0;
	if (kb_file_read(path, &b, NULL) < 0)
		goto out;
	const unsigned char *s = (const unsigned char *)b.s;
	size_t head = MAGIC_LEN + KB_HASH_HEX;
	if (b.len < head || memcmp(s, MAGIC, MAGIC_LEN) ||
	    !hash_matches(s + head, b.len - head, (const char *)s + MAGIC_LEN))
		goto bad;
	reader r = {s + head, s + b.len};
	if (!take(&r, &count, sizeof count) || count <= 0 || count > 64)
		goto bad;
	outs = kb_xcalloc((size_t)count + 1, sizeof *outs);
	for (got = 0; got < count; got++)
		if (!read_out(&r, &outs[got])) {
			got++; /* the half-read one is freed too */
			goto bad;
		}
	if (r.p != r.end)
		goto bad;
	utime(path, NULL); /* recently used: the last to be dropped */
	*n = count;
	goto out;
bad:
	kb_log("refstore: %s is damaged; removed", path);
	unlink(path);
	for (int i = 0; outs && i < got; i++)
		kb_ref_out_free(&outs[i]);
	free(outs);
	outs = NULL;
out:
	kb_buf_free(&b);
	free(path);
	return outs;
}

/* ---- writing --------------------------------------------------------------- */

/* Drops the least recently used files until the folder holds at most
 * KB_REFSTORE_TOTAL bytes beside an entry of `incoming` bytes. */
static void make_room(const char *dir, size_t incoming)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct { char *path; time_t t; size_t size; } *f = NULL;
	int nf = 0, cap = 0;
	size_t total = incoming;
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		char *p = kb_xasprintf("%s/%s", dir, e->d_name);
		size_t len = strlen(e->d_name); /* a lock stays: another runner may hold it */
		if (e->d_name[0] == '.' || (len > 5 && !strcmp(e->d_name + len - 5, ".lock")) ||
		    stat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (nf == cap)
			f = kb_xrealloc(f, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *f);
		f[nf].path = p, f[nf].t = st.st_mtime, f[nf].size = (size_t)st.st_size;
		total += f[nf++].size;
	}
	closedir(d);
	while (total > KB_REFSTORE_TOTAL && nf > 0) {
		int old = 0;
		for (int i = 1; i < nf; i++)
			if (f[i].t < f[old].t)
				old = i;
		unlink(f[old].path);
		total -= f[old].size;
		free(f[old].path);
		f[old] = f[--nf];
	}
	for (int i = 0; i < nf; i++)
		free(f[i].path);
	free(f);
}

void kb_profile__refstore_save(const char *key, const kb_ref_out *outs, int n)
{
	size_t bytes = 0;
	for (int i = 0; i < n; i++)
		bytes += (size_t)outs[i].n * sizeof(double);
	if (n <= 0 || bytes > KB_REFSTORE_ENTRY)
		return;
	kb_buf payload = KB_BUF_INIT, file = KB_BUF_INIT;
	int32_t count = n;
	kb_buf_catn(&payload, &count, sizeof count);
	for (int i = 0; i < n; i++) {
		uint32_t len = (uint32_t)strlen(outs[i].name ? outs[i].name : "");
		int32_t rank = outs[i].rank;
		kb_buf_catn(&payload, &len, sizeof len);
		kb_buf_catn(&payload, outs[i].name ? outs[i].name : "", len);
		kb_buf_catn(&payload, &rank, sizeof rank);
		kb_buf_catn(&payload, outs[i].dims, sizeof(int64_t) * (size_t)rank);
		kb_buf_catn(&payload, &outs[i].n, sizeof outs[i].n);
		kb_buf_catn(&payload, outs[i].v, (size_t)outs[i].n * sizeof(double));
	}
	char hex[KB_HASH_HEX];
	kb_hasher *h = kb_hash_new();
	kb_hash_update(h, payload.s, payload.len);
	kb_hash_final(h, hex);
	kb_buf_catn(&file, MAGIC, MAGIC_LEN);
	kb_buf_catn(&file, hex, KB_HASH_HEX);
	kb_buf_catn(&file, payload.s, payload.len);
	char *dir = kb_cache_dir("refs"), *path = path_of(key);
	if (kb_mkdirs(dir, NULL) == 0) {
		make_room(dir, file.len);
		kb_file_write(path, file.s, file.len, NULL); /* a cache: failing to keep it is fine */
	}
	free(dir);
	free(path);
	kb_buf_free(&payload);
	kb_buf_free(&file);
}

/* ---- computing once -------------------------------------------------------- */

bool kb_profile__refstore_keeps(size_t bytes)
{
	return bytes > 0 && bytes <= KB_REFSTORE_ENTRY;
}

int kb_profile__refstore_claim(const char *key, bool *waited)
{
	char *dir = kb_cache_dir("refs"), *path = path_of(key);
	char *lock = kb_xasprintf("%s.lock", path);
	int fd = kb_mkdirs(dir, NULL) == 0 ? open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
	*waited = false;
	double until = kb_now_ms() + CLAIM_WAIT_MS;
	while (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || kb_now_ms() > until) {
			kb_log("refstore: no lock on %s (%s): computing beside its holder", lock,
			       strerror(errno));
			close(fd);
			fd = -1;
			break;
		}
		*waited = true;
		usleep(2000);
	}
	free(lock);
	free(path);
	free(dir);
	return fd;
}

void kb_profile__refstore_release(int *claim)
{
	if (*claim >= 0)
		close(*claim); /* the lock goes with it */
	*claim = -1;
}
