/*
 * arch.c - which GPU architecture to compile for when the user names none:
 * the present GPU's compute capability, asked of the driver through
 * dlopen("libcuda.so.1") so that kbench still starts where no driver is
 * installed; sm_90 otherwise.  (The runner's driver layer, when it exists,
 * owns every other driver call; this one probe is all compile needs.)
 */
#include "compile.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_get_fn)(int *, int);

/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR in cuda.h */
enum { ATTR_CC_MAJOR = 75, ATTR_CC_MINOR = 76 };

static int probe_gpu_sm(void)
{
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

char *kb_compile_default_arch(void)
{
	const char *env = getenv("KBENCH_ARCH");
	if (env && *env)
		return kb_xstrdup(env);
	int sm = probe_gpu_sm();
	return sm > 0 ? kb_xasprintf("sm_%d", sm) : kb_xstrdup("sm_90");
}
