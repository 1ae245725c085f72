/*
 * cuptilib.c - the one place libcupti is found: activity.c (kernel
 * timestamps), cupti.c (counters) and pcsample.c (hot spots) each resolve
 * their own entry points from this handle.  Loaded with dlopen so kbench
 * runs where CUPTI is missing (style rule 11); never unloaded.
 */
#include "counters.h"

#include <cupti_result.h>
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
static __typeof__(&cuptiGetResultString) result_string_fn; /* for error messages */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_lib(void)
{
	char first[200] = "";
	for (size_t i = 0; i < KB_ARRAY_LEN(lib_names) && !lib; i++) {
		lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib && !first[0])
			snprintf(first, sizeof first, "%s", dlerror());
	}
	if (lib)
		*(void **)&result_string_fn = dlsym(lib, "cuptiGetResultString");
	else
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

/* ===== errors: one mapping of CUptiResult for every CUPTI user ===== */

static const char perm_fix[] =
	"The driver gives GPU performance counters to admin users only (Nsight Compute calls "
	"this ERR_NVGPUCTRPERM). Fix, one of: (1) run kbench as root, or with CAP_SYS_ADMIN, "
	"or with CAP_PERFMON (driver R565 or newer); (2) allow all users: put `options nvidia "
	"NVreg_RestrictProfilingToAdminUsers=0` in a file in /etc/modprobe.d/ (rebuild the "
	"initramfs if the nvidia module loads from it), then reload the nvidia module or "
	"reboot; (3) in a container: lift the restriction on the host, or start the container "
	"with --cap-add=SYS_ADMIN. `grep RmProfilingAdminOnly /proc/driver/nvidia/params` "
	"shows 1 while restricted. Timing, SASS and theoretical occupancy still work; counter "
	"metrics, hot spots and CUPTI timestamps are left out.";

/* CUPTI's own words for r, when the library has them. */
static const char *result_string(CUptiResult r)
{
	const char *s = NULL;
	if (kb_profile__cupti_lib(NULL, 0) && result_string_fn)
		result_string_fn(r, &s);
	return s ? s : "CUPTI error";
}

int kb_profile__cupti_fail(kb_err *err, int result, const char *call, const char *needs,
			   const char *file, int line)
{
	CUptiResult r = (CUptiResult)result;
	const char *s = result_string(r);
	switch ((int)r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		return kb_err_set_at(err, file, line, KB_EPERM, KB_DOM_CUPTI, result,
				     "no permission for %s (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES in "
				     "%s). %s", needs, call, perm_fix);
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return kb_err_set_at(err, file, line, KB_EPERM, KB_DOM_CUPTI, result,
				     "no permission for %s on this virtual GPU "
				     "(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES in %s): "
				     "the hypervisor must allow profiling for this VM. %s",
				     needs, call, perm_fix);
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		return kb_err_set_at(err, file, line, KB_EUNSUP, KB_DOM_CUPTI, result,
				     "another profiler is attached (Nsight Compute or Nsight "
				     "Systems?): CUPTI serves one at a time (%s: %s)", call, s);
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_NOT_COMPATIBLE:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
	case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
		return kb_err_set_at(err, file, line, KB_EUNSUP, KB_DOM_CUPTI, result,
				     "%s not supported here (%s: %s)", needs, call, s);
	case CUPTI_ERROR_INVALID_METRIC_NAME:
	case CUPTI_ERROR_INVALID_CHIP_NAME:
		return kb_err_set_at(err, file, line, KB_EINVAL, KB_DOM_CUPTI, result, "%s: %s",
				     call, s);
	default:
		return kb_err_set_at(err, file, line, KB_ERROR, KB_DOM_CUPTI, result, "%s: %s",
				     call, s);
	}
}

int kb_profile__cupti_check(kb_err *err, CUptiResult r, const char *call, const char *file,
			    int line)
{
	return r == CUPTI_SUCCESS ? KB_OK : KB_CUPTI_COUNTERS_FAIL(err, r, call, file, line);
}
