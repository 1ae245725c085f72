/*
 * gpus.c - the local GPUs that `--gpus` names, and the CUDA_VISIBLE_DEVICES
 * each worker runs under.
 *
 * Numbers are CUDA's, as this process sees them: under a CUDA_VISIBLE_DEVICES
 * of the user's own (a batch system's "2,3", or GPU/MIG UUIDs), GPU 0 is its
 * first entry, and worker 0 gets that entry, never the machine's physical
 * GPU 0, which may be another job's.  Without one, GPU N is "N".
 *
 * `--gpus all` counts GPUs without starting the driver in this process when
 * it can: the user's list gives the count itself, and otherwise the count
 * is cached like the default arch (arch.c), keyed by the driver, the GPUs
 * and CUDA_VISIBLE_DEVICES (kb_compile_driver_key): loading libcuda and
 * cuInit took 10-250 ms on the H200s here (arch.c), and the workers' runners
 * pay it again anyway, so on the command's path it was a serial cost that
 * only the multi-GPU side of a sweep paid.  (A MIG layout changed under the
 * same driver and GPUs keeps the old count until the cache file goes; MIG
 * users name their instances in CUDA_VISIBLE_DEVICES anyway.)
 */
#include "app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_app__visible_entries(char ***entries)
{
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	*entries = NULL;
	if (!cvd)
		return -1;
	int n = 0, cap = 0;
	for (const char *p = cvd; *p;) {
		size_t len = strcspn(p, ",");
		const char *s = p, *e = p + len;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e > s)
			*KB_PUSH(*entries, n, cap) = kb_xstrndup(s, (size_t)(e - s));
		p += len + (p[len] == ',');
	}
	return n;
}

void kb_app__free_entries(char **entries, int n)
{
	for (int i = 0; i < n; i++)
		free(entries[i]);
	free(entries);
}

/* The driver's count, from the cache when this driver and these GPUs were
 * counted before; 0 when there is no driver or no GPU. */
static int counted_gpus(void)
{
	char *key = kb_compile_driver_key(); /* NULL: no /proc/driver/nvidia */
	char *dir = key ? kb_cache_dir("gpus") : NULL;
	char *path = key ? kb_xasprintf("%s/%.32s", dir, key) : NULL;
	kb_buf cached = KB_BUF_INIT;
	int n = -1;
	if (path && kb_file_read(path, &cached, NULL) == 0 && cached.len > 0)
		n = atoi(cached.s);
	if (n < 0) {
		kb_err err = {0};
		n = kb_profile_device_count(&err);
		if (n < 0)
			n = 0;
		char text[16];
		int len = snprintf(text, sizeof text, "%d\n", n);
		if (n > 0 && path && kb_mkdirs(dir, NULL) == 0)
			kb_file_write(path, text, (size_t)len, NULL);
		kb_log("gpus: %d counted by the driver", n);
	} else {
		kb_log("gpus: %d (cached count)", n);
	}
	kb_buf_free(&cached);
	free(path);
	free(dir);
	free(key);
	return n;
}

int kb_app__gpu_count(void)
{
	char **entries;
	int n = kb_app__visible_entries(&entries);
	kb_app__free_entries(entries, n);
	if (n >= 0) {
		kb_log("gpus: %d named by CUDA_VISIBLE_DEVICES", n);
		return n;
	}
	return counted_gpus();
}

char *kb_app__gpu_visible(int index)
{
	char **entries;
	int n = kb_app__visible_entries(&entries);
	char *v = n < 0 ? kb_xasprintf("%d", index)
			: index >= 0 && index < n ? kb_xstrdup(entries[index]) : NULL;
	kb_app__free_entries(entries, n);
	return v;
}

/* The next number of a --gpus list at *p (moved past it and its comma);
 * -1 when what is there is not a GPU number. */
static long next_number(const char **p)
{
	size_t len = strcspn(*p, ",");
	char *end;
	long g = strtol(*p, &end, 10);
	bool ok = len && end == *p + len && g >= 0 && g <= 1023;
	*p += len + ((*p)[len] == ',');
	return ok ? g : -1;
}

int kb_app__gpu_list(const char *gpus, bool local, int *v, int max)
{
	int n = 0;
	if (!gpus || !strcmp(gpus, "all")) {
		int count = local && gpus ? kb_app__gpu_count() : 0;
		for (int i = 0; i < count && n < max; i++)
			v[n++] = i;
		if (n == 0)
			v[n++] = -1;
		return n;
	}
	for (const char *p = gpus; *p && n < max;)
		v[n++] = (int)next_number(&p); /* checked by kb_app__check_gpus */
	return n;
}

int kb_app__check_gpus(const char *gpus, bool local, kb_err *err)
{
	if (!gpus || !strcmp(gpus, "all"))
		return KB_OK;
	char **entries;
	int n = local ? kb_app__visible_entries(&entries) : -1;
	if (local)
		kb_app__free_entries(entries, n);
	for (const char *p = gpus; *p;) {
		long g = next_number(&p);
		if (g < 0)
			return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
					  "bad --gpus '%s': give all, or GPU numbers such as 0,1", gpus);
		if (n == 0)
			return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
					  "--gpus %ld: CUDA_VISIBLE_DEVICES is set and names no GPU", g);
		if (n > 0 && g >= n)
			return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
					  "--gpus %ld: CUDA_VISIBLE_DEVICES='%s' names %d GPU%s "
					  "(numbers are positions in it, 0 to %d)",
					  g, getenv("CUDA_VISIBLE_DEVICES"), n, n == 1 ? "" : "s", n - 1);
	}
	return KB_OK;
}
