/*
 * cuptilib.c - the one place libcupti is found: activity.c (kernel
 * timestamps), cupti.c (counters) and pcsample.c (hot spots) each resolve
 * their own entry points from this handle.  Loaded with dlopen so kbench
 * runs where CUPTI is missing (style rule 11); never unloaded.
 */
#include "profile_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static const char *const lib_names[] = {
	"libcupti.so.13",
	"libcupti.so",
	"/usr/local/cuda/lib64/libcupti.so.13",
	"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
};

static void *lib;
static char lib_why[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_lib(void)
{
	char first[200] = "";
	for (size_t i = 0; i < KB_ARRAY_LEN(lib_names) && !lib; i++) {
		lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib && !first[0])
			snprintf(first, sizeof first, "%s", dlerror());
	}
	if (!lib)
		snprintf(lib_why, sizeof lib_why, "no CUPTI: libcupti.so.13 cannot be loaded (%s)",
			 first);
}

void *kb_profile__cupti_lib(char *why, size_t n)
{
	pthread_once(&once, open_lib);
	if (!lib && why)
		snprintf(why, n, "%s", lib_why);
	return lib;
}
