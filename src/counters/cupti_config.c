/*
 * cupti_config.c - the config images of hardware counter collections and
 * what is cached on disk for them (cupti.c's comment says how a collection
 * runs): a config image says what a metric list asks of a chip, and costs
 * a fresh Profiler Host object and ConfigAddMetrics to build; the counter
 * availability image costs ~125 ms of the driver's in every new process.
 * Both are kept on disk; config images also in this process, per (chip,
 * availability image, metric list).  Also here: the offline check by chip
 * name (kb_profile_cupti_host_check), and the prep thread that reads the
 * caches and builds what a collection will need while the GPU opens.
 *
 * It owns the process-wide cache of config images and the files under
 * kb_cache_dir("cupti"); names, host objects and libcupti are
 * cupti_host.c's, the device and the collection cupti.c's.
 *
 * Invariants:
 *  - A host object accumulates every ConfigAddMetrics call, so each config
 *    image is built by a fresh host object; that object stays with the
 *    cached image and evaluates the counter data collected with it.  An
 *    image read from disk is built again beside its passes, and its data
 *    evaluated by that build's host object
 *    (kb_profile__cupti_config_check_start).
 *  - Only images of names that passed the check are saved, and only for a
 *    device (with an availability image); a cache file that cannot be
 *    written is no error, one that does not parse is a miss.
 *  - The caches are not locked: the prep thread fills them before it is
 *    joined, and a config check's thread builds into its own config, joined
 *    before anything reads it; everything else runs on the caller's thread.
 */
#include "counters.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONFIG_CACHE_MAX 32

/* ===== caches on disk: counter availability, config images ====================== */

/* A file under kb_cache_dir("cupti") for what depends on this driver and
 * these GPUs (kb_compile_driver_key) and CUPTI; NULL when
 * KBENCH_NO_CUPTI_CACHE=1 (for measuring what the caches save). */
static char *cache_path(const char *name)
{
	if (getenv("KBENCH_NO_CUPTI_CACHE") && *getenv("KBENCH_NO_CUPTI_CACHE"))
		return NULL;
	char *key = kb_compile_driver_key();
	if (!key)
		return NULL;
	char *dir = kb_cache_dir("cupti");
	char *path = kb_xasprintf("%s/%.32s-%d-%s", dir, key, (int)CUPTI_API_VERSION, name);
	free(dir);
	free(key);
	return path;
}

/* A cache file is "<magic> <word> <size>\n" and then size bytes.  Returns
 * whether path holds one with this magic (word and a new *data filled). */
static bool blob_read(const char *path, const char *magic, char *word, size_t word_size,
		      uint8_t **data, size_t *size)
{
	kb_buf b = KB_BUF_INIT;
	bool ok = false;
	char fmt[96], w[64];
	size_t n = 0;
	snprintf(fmt, sizeof fmt, "%s %%63s %%zu", magic);
	if (path && kb_file_read(path, &b, NULL) == 0) {
		const char *nl = memchr(b.s, '\n', b.len);
		if (nl && sscanf(b.s, fmt, w, &n) == 2 && n > 0 &&
		    (size_t)(b.s + b.len - (nl + 1)) == n && strlen(w) < word_size) {
			snprintf(word, word_size, "%s", w);
			*data = kb_xmalloc(n);
			memcpy(*data, nl + 1, n);
			*size = n;
			ok = true;
		}
	}
	kb_buf_free(&b);
	return ok;
}

/* Writes a cache file; failing to is no error (it is a cache). */
static void blob_write(const char *path, const char *magic, const char *word,
		       const uint8_t *data, size_t size)
{
	char *dir = kb_cache_dir("cupti");
	if (path && kb_mkdirs(dir, NULL) == 0) {
		kb_buf b = KB_BUF_INIT;
		kb_buf_catf(&b, "%s %s %zu\n", magic, word, size);
		kb_buf_catn(&b, data, size);
		kb_file_write(path, b.s, b.len, NULL);
		kb_buf_free(&b);
	}
	free(dir);
}

/* cuptiProfilerGetCounterAvailability costs ~125 ms in every new process
 * (H200, driver 580; 537 ms on a machine's first), and its image depends
 * only on the GPU, the driver and CUPTI.  So it is kept, with the chip name,
 * keyed by the device ordinal (and cache_path's driver key).  A stale image
 * would make SetConfig fail: the collection then reads it live, rewrites
 * the file and tries once more. */
#define AVAIL_MAGIC "kbench-cupti-availability 1"

static char *avail_path(int ordinal)
{
	char name[32];
	snprintf(name, sizeof name, "%d.avail", ordinal);
	return cache_path(name);
}

/* The cached image of GPU `ordinal` and its chip name; false when none. */
bool kb_profile__cupti_avail_load(int ordinal, char *chip, size_t chip_size, uint8_t **image,
				  size_t *size)
{
	char *path = avail_path(ordinal);
	bool ok = blob_read(path, AVAIL_MAGIC, chip, chip_size, image, size);
	free(path);
	return ok;
}

void kb_profile__cupti_avail_save(int ordinal, const char *chip, const uint8_t *image,
				  size_t size)
{
	char *path = avail_path(ordinal);
	blob_write(path, AVAIL_MAGIC, chip, image, size);
	free(path);
}

/* ===== config images =============================================================== */

static kb_profile__cupti_config configs[CONFIG_CACHE_MAX];
static int nconfigs, next_evict;
static unsigned next_id = 1;

char *kb_profile__cupti_config_key(const char *chip, const uint8_t *avail, size_t avail_size,
				   const char *const *metrics, int n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the availability image */
	for (size_t i = 0; i < avail_size; i++)
		h = (h ^ avail[i]) * 1099511628211ull;
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "%s\x1f%016llx\x1f%zu", chip, (unsigned long long)h, avail_size);
	for (int i = 0; i < n; i++)
		kb_buf_catf(&b, "\x1e%s", metrics[i] ? metrics[i] : "");
	return kb_buf_detach(&b);
}

void kb_profile__cupti_config_clear(kb_profile__cupti_config *c)
{
	kb_profile__cupti_host_free(c->host);
	free(c->key);
	free(c->image);
	memset(c, 0, sizeof *c);
}

/* Builds the config image of a checked metric list with a fresh host object. */
int kb_profile__cupti_config_build(const char *chip, const uint8_t *avail,
				   const char *const *metrics, int n, kb_profile__cupti_config *c,
				   kb_err *err)
{
	int rc = kb_profile__cupti_host_new(chip, avail, &c->host, err);
	if (rc < 0)
		return rc;
	CUpti_Profiler_Host_ConfigAddMetrics_Params a =
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
	a.pHostObject = c->host;
	a.ppMetricNames = (const char **)metrics;
	a.numMetrics = (size_t)n;
	if ((rc = KB_CUPTI(err, cuptiProfilerHostConfigAddMetrics, &a)) < 0)
		goto out;
	CUpti_Profiler_Host_GetConfigImageSize_Params s =
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
	s.pHostObject = c->host;
	if ((rc = KB_CUPTI(err, cuptiProfilerHostGetConfigImageSize, &s)) < 0)
		goto out;
	c->size = s.configImageSize;
	c->image = kb_xcalloc(1, c->size ? c->size : 1);
	CUpti_Profiler_Host_GetConfigImage_Params g =
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
	g.pHostObject = c->host;
	g.configImageSize = c->size;
	g.pConfigImage = c->image;
	if ((rc = KB_CUPTI(err, cuptiProfilerHostGetConfigImage, &g)) < 0)
		goto out;
	CUpti_Profiler_Host_GetNumOfPasses_Params q =
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
	q.configImageSize = c->size;
	q.pConfigImage = c->image;
	if ((rc = KB_CUPTI(err, cuptiProfilerHostGetNumOfPasses, &q)) < 0)
		goto out;
	c->passes = (int)q.numOfPasses;
out:
	return rc;
}

/* Config images on disk.  ConfigAddMetrics costs 80-180 ms for the
 * default sections in every new process, on the prep thread that a fresh
 * runner's counters wait for (bench/profile_breakdown_h100.txt: 65-108 ms
 * of waiting on an H100).  An image depends on the chip, the availability
 * image and the metric list (the key), and on CUPTI: so it is kept by a
 * hash of the key and CUPTI's run-time version.  Only images of names that
 * passed the check are saved, and only for a device (with availability).
 *
 * One read from disk is never trusted alone: while its passes run, a
 * thread builds it again (kb_profile__cupti_config_check_start), and the collection then
 * evaluates with the host object that built it, as for any other image.
 * Were the two images to differ, the data is collected once more with the
 * new one (and the file rewritten), so the cache can make a collection
 * slower, never different. */
#define CONFIG_MAGIC "kbench-cupti-config-1"

static char *config_path(const char *key)
{
	uint32_t version = 0;
	kb_profile__cupti.cuptiGetVersion(&version);
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, key);
	char hex[KB_HASH_HEX], name[64];
	kb_hash_final(h, hex);
	snprintf(name, sizeof name, "%.32s-%u.config", hex, (unsigned)version);
	return cache_path(name);
}

static bool config_load(kb_profile__cupti_config *c)
{
	char *path = config_path(c->key), passes[16];
	bool ok = blob_read(path, CONFIG_MAGIC, passes, sizeof passes, &c->image, &c->size);
	free(path);
	c->passes = ok ? atoi(passes) : 0;
	if (ok && c->passes <= 0) {
		free(c->image);
		c->image = NULL;
		ok = false;
	}
	c->from_disk = ok;
	return ok;
}

void kb_profile__cupti_config_save(const kb_profile__cupti_config *c)
{
	char *path = config_path(c->key), passes[16];
	snprintf(passes, sizeof passes, "%d", c->passes);
	blob_write(path, CONFIG_MAGIC, passes, c->image, c->size);
	free(path);
}

/* Deletes c's file, so that the next kb_profile__cupti_config_get builds the image. */
static void config_unlink(const kb_profile__cupti_config *c)
{
	char *path = config_path(c->key);
	if (path)
		unlink(path);
	free(path);
}

/* The cached config of (chip, availability, metrics): one built in this
 * process, else (with from_disk) one on disk, else one built after checking
 * the names with `names` (a host object of the chip). Borrowed. */
int kb_profile__cupti_config_get(CUpti_Profiler_Host_Object *names, const char *chip,
				 const uint8_t *avail, size_t avail_size,
				 const char *const *metrics, int n, bool from_disk,
				 kb_profile__cupti_config **out, kb_err *err)
{
	*out = NULL;
	if (n <= 0 || !metrics)
		return kb_err_set(err, KB_EINVAL, KB_DOM_CUPTI, 0, "no metrics asked for");
	char *key = kb_profile__cupti_config_key(chip, avail, avail_size, metrics, n);
	for (int i = 0; i < nconfigs; i++)
		if (!strcmp(configs[i].key, key)) {
			free(key);
			*out = &configs[i];
			return KB_OK;
		}
	kb_profile__cupti_config c = {.key = key, .id = next_id++};
	if (!(from_disk && avail && config_load(&c))) {
		int rc = kb_profile__cupti_check_names(names, chip, metrics, n, err);
		if (rc == KB_OK)
			rc = kb_profile__cupti_config_build(chip, avail, metrics, n, &c, err);
		if (rc < 0) {
			kb_profile__cupti_config_clear(&c);
			return rc;
		}
		if (avail)
			kb_profile__cupti_config_save(&c);
	}
	int slot = nconfigs < CONFIG_CACHE_MAX ? nconfigs++ : next_evict++ % CONFIG_CACHE_MAX;
	kb_profile__cupti_config_clear(&configs[slot]);
	configs[slot] = c;
	*out = &configs[slot];
	return KB_OK;
}

static void *config_check_main(void *arg)
{
	kb_profile__cupti_config_check *k = arg;
	double t = kb_now_ms();
	k->rc = kb_profile__cupti_config_build(k->chip, k->avail, k->metrics, k->n, &k->built,
					       &k->err);
	k->ms = kb_now_ms() - t;
	return NULL;
}

/* Starts building cfg (read from disk) again on a thread of its own: a
 * host object of its own, nothing shared with the caller but read-only
 * inputs that outlive kb_profile__cupti_config_check_finish. */
void kb_profile__cupti_config_check_start(kb_profile__cupti_config_check *k,
					  const kb_profile__cupti_config *cfg, const char *chip,
					  const uint8_t *avail, const char *const *metrics, int n)
{
	memset(k, 0, sizeof *k);
	if (!cfg->from_disk)
		return;
	k->chip = chip, k->avail = avail, k->metrics = metrics, k->n = n;
	k->started = pthread_create(&k->thread, NULL, config_check_main, k) == 0;
	if (!k->started) /* no thread: build it here, before the passes */
		config_check_main(k);
}

/* Waits for the build; cfg then has its own host object.  Returns 0 when
 * the image from disk was the one CUPTI builds now, 1 when it was not (cfg
 * now holds the new image, saved: collect again), or a KB_E* when the build
 * failed (the file is deleted). */
int kb_profile__cupti_config_check_finish(kb_profile__cupti_config_check *k,
					  kb_profile__cupti_config *cfg, kb_err *err)
{
	if (!cfg->from_disk)
		return KB_OK;
	if (k->started)
		pthread_join(k->thread, NULL);
	if (k->rc < 0) {
		config_unlink(cfg);
		kb_profile__cupti_config_clear(&k->built);
		*err = k->err;
		return k->rc;
	}
	bool same = k->built.size == cfg->size && k->built.passes == cfg->passes &&
		    !memcmp(k->built.image, cfg->image, cfg->size);
	cfg->host = k->built.host, k->built.host = NULL;
	cfg->from_disk = false;
	if (same) {
		kb_profile__cupti_config_clear(&k->built);
		return KB_OK;
	}
	kb_log("cupti: the config image on disk differs from CUPTI's (%zu vs %zu bytes, %d vs %d "
	       "passes): collecting again", cfg->size, k->built.size, cfg->passes, k->built.passes);
	free(cfg->image);
	cfg->image = k->built.image, k->built.image = NULL;
	cfg->size = k->built.size;
	cfg->passes = k->built.passes;
	cfg->id = next_id++;
	kb_profile__cupti_config_save(cfg);
	kb_profile__cupti_config_clear(&k->built);
	return 1;
}

/* Offline check by chip name; see counters.h. */
int kb_profile_cupti_host_check(const char *chip, const char *const *metrics, int n,
				int *passes, kb_err *err)
{
	CUpti_Profiler_Host_Object *host;
	kb_profile__cupti_config *c;
	int rc = kb_profile__cupti_load(err);
	if (rc == KB_OK)
		rc = kb_profile__cupti_offline_host(chip, &host, err);
	if (rc == KB_OK)
		rc = kb_profile__cupti_config_get(host, chip, NULL, 0, metrics, n, false, &c, err);
	if (passes)
		*passes = rc == KB_OK ? c->passes : 0;
	return rc;
}

/* ===== preparing a collection while the GPU opens ================================== */

struct kb_cupti_prep {
	pthread_t thread;
	bool started;
	char **metrics;
	int n;
	double ms;
};

static void *prep_main(void *arg)
{
	kb_cupti_prep *p = arg;
	double t = kb_now_ms();
	char chip[64];
	uint8_t *avail = NULL;
	size_t avail_size = 0;
	CUpti_Profiler_Host_Object *names;
	kb_profile__cupti_config *cfg;
	kb_err ignored = {0};
	double t_load = 0, t_host = 0, t_config = 0;
	if (kb_profile__cupti_load(&ignored) == KB_OK && (t_load = kb_now_ms()) && p->n > 0 &&
	    kb_profile__cupti_avail_load(0, chip, sizeof chip, &avail, &avail_size) &&
	    kb_profile__cupti_offline_host(chip, &names, &ignored) == KB_OK) {
		t_host = kb_now_ms();
		kb_profile__cupti_config_get(names, chip, avail, avail_size,
					     (const char *const *)p->metrics, p->n, true, &cfg,
					     &ignored);
		t_config = kb_now_ms();
	}
	free(avail);
	p->ms = kb_now_ms() - t;
	kb_log("cupti prep: load %.1f  host %.1f  config %.1f ms", t_load ? t_load - t : 0,
	       t_host ? t_host - t_load : 0, t_config ? t_config - t_host : 0);
	return NULL;
}

kb_cupti_prep *kb_profile_cupti_prep_start(const char *const *metrics, int n)
{
	kb_cupti_prep *p = kb_xcalloc(1, sizeof *p);
	p->metrics = kb_xcalloc((size_t)n + 1, sizeof *p->metrics);
	for (int i = 0; i < n; i++)
		p->metrics[p->n++] = kb_xstrdup(metrics[i] ? metrics[i] : "");
	p->started = pthread_create(&p->thread, NULL, prep_main, p) == 0;
	return p;
}

double kb_profile_cupti_prep_join(kb_cupti_prep *p)
{
	if (!p)
		return 0;
	if (p->started)
		pthread_join(p->thread, NULL);
	double ms = p->ms;
	for (int i = 0; i < p->n; i++)
		free(p->metrics[i]);
	free(p->metrics);
	free(p);
	return ms;
}

/* See counters.h. */
void kb_profile__cupti_drop_configs(void)
{
	for (int i = 0; i < nconfigs; i++)
		kb_profile__cupti_config_clear(&configs[i]);
	nconfigs = next_evict = 0;
}
