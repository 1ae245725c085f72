/*
 * arch.c - which GPU architecture to compile for when the user names none:
 * the present GPU's compute capability, asked of the driver through
 * dlopen("libcuda.so.1") so that kbench still starts where no driver is
 * installed; sm_90 otherwise.  cuInit costs about 250 ms (H200, driver 580),
 * more than a whole cache-hit compile, so the answer is cached under the XDG
 * cache dir, keyed by what would change it: the kernel driver's version
 * string, the GPUs' PCI addresses and models (/proc/driver/nvidia) and
 * CUDA_VISIBLE_DEVICES.  Without /proc/driver/nvidia there is no driver and
 * nothing to ask.  (The runner's driver layer, when it exists,
 * owns every other driver call; this one probe is all compile needs.)
 */
#include "compile_int.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_get_fn)(int *, int);

/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR in cuda.h */
enum { ATTR_CC_MAJOR = 75, ATTR_CC_MINOR = 76 };

void kb_compile__no_driver_cache(void)
{
	setenv("CUDA_CACHE_DISABLE", "1", 1);
}

static int probe_gpu_sm(void)
{
	kb_compile__no_driver_cache();
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 0;
	int sm = 0, count = 0, dev = 0, major = 0, minor = 0;
	cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
	cu_count_fn cnt = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
	cu_get_fn get = (cu_get_fn)dlsym(lib, "cuDeviceGet");
	cu_attr_fn attr = (cu_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
	if (init && cnt && get && attr && init(0) == 0 && cnt(&count) == 0 && count > 0 &&
	    get(&dev, 0) == 0 && attr(&major, ATTR_CC_MAJOR, dev) == 0 &&
	    attr(&minor, ATTR_CC_MINOR, dev) == 0)
		sm = major * 10 + minor;
	dlclose(lib);
	return sm;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* See compile.h. */
char *kb_compile_driver_key(void)
{
	kb_buf text = KB_BUF_INIT;
	if (kb_file_read("/proc/driver/nvidia/version", &text, NULL) < 0) {
		kb_buf_free(&text);
		return NULL;
	}
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, text.s);
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	kb_hash_str(h, cvd ? cvd : "(unset)");
	char **names = NULL;
	int n = 0, cap = 0;
	DIR *d = opendir("/proc/driver/nvidia/gpus");
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.')
			*KB_PUSH(names, n, cap) = kb_xstrdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, (size_t)n, sizeof *names, cmp_str);
	for (int i = 0; i < n; i++) {
		char *info = kb_xasprintf("/proc/driver/nvidia/gpus/%s/information", names[i]);
		kb_buf_reset(&text);
		kb_hash_str(h, names[i]);
		if (kb_file_read(info, &text, NULL) == 0)
			kb_hash_str(h, text.s);
		free(info);
		free(names[i]);
	}
	free(names);
	kb_buf_free(&text);
	char hex[KB_HASH_HEX];
	kb_hash_final(h, hex);
	return kb_xstrdup(hex);
}

char *kb_compile_default_arch(void)
{
	const char *env = getenv("KBENCH_ARCH");
	if (env && *env)
		return kb_xstrdup(env);
	char *key = kb_compile_driver_key();
	if (!key)
		return kb_xstrdup("sm_90");
	char *dir = kb_cache_dir("arch");
	char *path = kb_xasprintf("%s/%.32s", dir, key);
	kb_buf cached = KB_BUF_INIT;
	char *arch = NULL;
	if (kb_file_read(path, &cached, NULL) == 0 && !strncmp(cached.s, "sm_", 3)) {
		arch = kb_xstrdup(cached.s);
	} else {
		int sm = probe_gpu_sm();
		arch = sm > 0 ? kb_xasprintf("sm_%d", sm) : kb_xstrdup("sm_90");
		if (sm > 0 && kb_mkdirs(dir, NULL) == 0)
			kb_file_write(path, arch, strlen(arch), NULL);
	}
	kb_buf_free(&cached);
	free(path);
	free(dir);
	free(key);
	return arch;
}
