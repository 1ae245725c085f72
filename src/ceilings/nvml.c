/*
 * nvml.c - what the GPU was doing while kbench measured it, from NVML:
 * the environment fingerprint (driver, ECC, clocks, clock-event reasons,
 * power limit, persistence, whether clocks look locked) and a sampler
 * thread that reads SM clock, memory clock, power and event reasons every
 * ~10 ms between sample_start and sample_stop, plus the energy counter at
 * both ends.
 *
 * NVML is loaded with dlopen("libnvidia-ml.so.1") (style rule 11): the
 * binary never links it, and nvml.h is not needed (the few types and
 * prototypes used are declared below, as the NVML API documents them).
 * Owns nothing of CUDA; callers pass the PCI bus id cuDeviceGetPCIBusId gave.
 *
 * Invariants:
 *  - Every value NVML refuses is left out of the JSON, never written as 0
 *    (style rule 12).  Only nvmlInit_v2, nvmlShutdown and
 *    nvmlDeviceGetHandleByPciBusId_v2 are required; any other entry point
 *    missing from an old driver just leaves its fields out.
 *  - The sampler thread only appends to its own arrays; the caller reads
 *    them after pthread_join, so no lock is needed.
 *  - NVML power and energy readings change only about every 100 ms
 *    (verified on H100): per-launch energy is reported only for intervals
 *    of at least 0.5 s.
 */
#include "ceilings.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the NVML ABI used here (nvml.h, NVML API reference) ------------------ */

typedef int nvmlReturn_t;               /* NVML_SUCCESS = 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlEnableState_t;          /* 0 disabled, 1 enabled */
typedef int nvmlClockType_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND 6
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_VERSION_BUF 96             /* NVML_SYSTEM_*_VERSION_BUFFER_SIZE is 80 */

#define SAMPLE_PERIOD_NS 10000000L      /* 10 ms */
#define ENERGY_MIN_MS 500.0

typedef struct {
	nvmlReturn_t (*Init)(void);
	nvmlReturn_t (*Shutdown)(void);
	const char *(*ErrorString)(nvmlReturn_t);
	nvmlReturn_t (*GetHandleByPciBusId)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*DriverVersion)(char *, unsigned);
	nvmlReturn_t (*NvmlVersion)(char *, unsigned);
	nvmlReturn_t (*EccMode)(nvmlDevice_t, nvmlEnableState_t *, nvmlEnableState_t *);
	nvmlReturn_t (*ClockInfo)(nvmlDevice_t, nvmlClockType_t, unsigned *);
	nvmlReturn_t (*MaxClockInfo)(nvmlDevice_t, nvmlClockType_t, unsigned *);
	nvmlReturn_t (*AppClock)(nvmlDevice_t, nvmlClockType_t, unsigned *);
	nvmlReturn_t (*DefaultAppClock)(nvmlDevice_t, nvmlClockType_t, unsigned *);
	nvmlReturn_t (*EventReasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*PowerLimit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*EnforcedPowerLimit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*Persistence)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*PowerUsage)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*TotalEnergy)(nvmlDevice_t, unsigned long long *);
} nvml_api;

static nvml_api api;
static void *nvml_lib;
static int load_rc = 1; /* 1: not tried yet */
static char load_msg[512];

struct kb_nvml {
	nvmlDevice_t dev;
	char pci_bus[32];
	/* sampler */
	pthread_t thread;
	bool running;
	atomic_bool stop;
	double *sm, *mem, *power_w;
	int nsm, nmem, npower, capsm, capmem, cappower;
	int samples;
	unsigned long long reasons_or;
	bool have_reasons;
	bool have_e0;
	unsigned long long e0;
	double t0_ms, t1_ms;
};

/* ---- loading ---------------------------------------------------------------- */

static void *sym(const char *name)
{
	return dlsym(nvml_lib, name);
}

#define NVML_SYM(field, name) (*(void **)(&api.field) = sym(name))

static int resolve(void)
{
	NVML_SYM(Init, "nvmlInit_v2");
	NVML_SYM(Shutdown, "nvmlShutdown");
	NVML_SYM(ErrorString, "nvmlErrorString");
	NVML_SYM(GetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
	if (!api.Init || !api.Shutdown || !api.GetHandleByPciBusId) {
		snprintf(load_msg, sizeof load_msg,
			 "NVML unavailable: libnvidia-ml lacks nvmlInit_v2/nvmlShutdown/"
			 "nvmlDeviceGetHandleByPciBusId_v2 (driver too old?)");
		return KB_EUNSUP;
	}
	NVML_SYM(DriverVersion, "nvmlSystemGetDriverVersion");
	NVML_SYM(NvmlVersion, "nvmlSystemGetNVMLVersion");
	NVML_SYM(EccMode, "nvmlDeviceGetEccMode");
	NVML_SYM(ClockInfo, "nvmlDeviceGetClockInfo");
	NVML_SYM(MaxClockInfo, "nvmlDeviceGetMaxClockInfo");
	NVML_SYM(AppClock, "nvmlDeviceGetApplicationsClock");
	NVML_SYM(DefaultAppClock, "nvmlDeviceGetDefaultApplicationsClock");
	/* The newer name first; drivers before R535 only have the old one. */
	if (!NVML_SYM(EventReasons, "nvmlDeviceGetCurrentClocksEventReasons"))
		NVML_SYM(EventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
	NVML_SYM(PowerLimit, "nvmlDeviceGetPowerManagementLimit");
	NVML_SYM(EnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit");
	NVML_SYM(Persistence, "nvmlDeviceGetPersistenceMode");
	NVML_SYM(PowerUsage, "nvmlDeviceGetPowerUsage");
	NVML_SYM(TotalEnergy, "nvmlDeviceGetTotalEnergyConsumption");
	return KB_OK;
}

static int nvml_load(kb_err *err)
{
	if (load_rc == 1) {
		nvml_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!nvml_lib) {
			char first[256];
			snprintf(first, sizeof first, "%s", dlerror());
			nvml_lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
			if (!nvml_lib)
				snprintf(load_msg, sizeof load_msg,
					 "NVML unavailable: libnvidia-ml.so.1 cannot be loaded (%s); "
					 "clocks, power and energy are not reported", first);
		}
		load_rc = nvml_lib ? resolve() : KB_EUNSUP;
	}
	if (load_rc < 0)
		return kb_err_set(err, load_rc, KB_DOM_NONE, 0, "%s", load_msg);
	return KB_OK;
}

static const char *nvml_str(nvmlReturn_t r)
{
	const char *s = api.ErrorString ? api.ErrorString(r) : NULL;
	return s ? s : "unknown NVML error";
}

/* ---- open / close ------------------------------------------------------------- */

struct kb_nvml_preload {
	pthread_t thread;
	bool started;
};

static void *preload_main(void *arg)
{
	(void)arg;
	if (nvml_load(NULL) == KB_OK)
		api.Init(); /* never shut down: see ceilings.h */
	return NULL;
}

kb_nvml_preload *kb_profile_nvml_preload(void)
{
	kb_nvml_preload *p = kb_xcalloc(1, sizeof *p);
	p->started = pthread_create(&p->thread, NULL, preload_main, NULL) == 0;
	return p;
}

void kb_profile_nvml_preload_join(kb_nvml_preload *p)
{
	if (p && p->started)
		pthread_join(p->thread, NULL);
	free(p);
}

int kb_profile_nvml_open(const char *pci_bus, kb_nvml **out, kb_err *err)
{
	*out = NULL;
	if (!pci_bus || !*pci_bus)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "NVML: no PCI bus id given");
	int rc = nvml_load(err);
	if (rc < 0)
		return rc;
	nvmlReturn_t r = api.Init();
	if (r != NVML_SUCCESS)
		return kb_err_set(err, KB_EUNSUP, KB_DOM_NONE, r,
				  "NVML unavailable: nvmlInit_v2 failed: %s (%d)", nvml_str(r), r);
	kb_nvml *n = kb_xcalloc(1, sizeof *n);
	snprintf(n->pci_bus, sizeof n->pci_bus, "%s", pci_bus);
	r = api.GetHandleByPciBusId(n->pci_bus, &n->dev);
	if (r != NVML_SUCCESS) {
		rc = (r == NVML_ERROR_NOT_FOUND || r == NVML_ERROR_INVALID_ARGUMENT) ? KB_ENOTFOUND
										       : KB_EUNSUP;
		kb_err_set(err, rc, KB_DOM_NONE, r, "NVML: no GPU at PCI bus id %s: %s (%d)",
			   n->pci_bus, nvml_str(r), r);
		api.Shutdown();
		free(n);
		return rc;
	}
	atomic_init(&n->stop, false);
	*out = n;
	return KB_OK;
}

void kb_profile_nvml_close(kb_nvml *n)
{
	if (!n)
		return;
	if (n->running)
		json_decref(kb_profile_nvml_sample_stop(n, 0));
	free(n->sm);
	free(n->mem);
	free(n->power_w);
	api.Shutdown();
	free(n);
}

/* ---- the environment fingerprint ------------------------------------------------ */

static const struct {
	unsigned long long bit;
	const char *name;
} reason_names[] = {
	{0x1ull, "gpu_idle"},
	{0x2ull, "applications_clocks_setting"},
	{0x4ull, "sw_power_cap"},
	{0x8ull, "hw_slowdown"},
	{0x10ull, "sync_boost"},
	{0x20ull, "sw_thermal"},
	{0x40ull, "hw_thermal"},
	{0x80ull, "hw_power_brake"},
	{0x100ull, "display_clocks"},
};

/* The names of the bits set in mask; unknown bits as "0x..". A new array. */
json_t *kb_profile__nvml_reasons_json(unsigned long long mask)
{
	json_t *a = json_array();
	unsigned long long known = 0;
	for (size_t i = 0; i < KB_ARRAY_LEN(reason_names); i++) {
		known |= reason_names[i].bit;
		if (mask & reason_names[i].bit)
			json_array_append_new(a, json_string(reason_names[i].name));
	}
	if (mask & ~known)
		json_array_append_new(a, json_sprintf("0x%llx", mask & ~known));
	return a;
}

typedef nvmlReturn_t (*clock_fn)(nvmlDevice_t, nvmlClockType_t, unsigned *);

static void set_clock(json_t *j, const char *key, clock_fn fn, nvmlDevice_t dev,
		      nvmlClockType_t type)
{
	unsigned mhz = 0;
	if (fn && fn(dev, type, &mhz) == NVML_SUCCESS)
		json_object_set_new(j, key, json_integer(mhz));
}

static void set_watts(json_t *j, const char *key, nvmlReturn_t (*fn)(nvmlDevice_t, unsigned *),
		      nvmlDevice_t dev)
{
	unsigned mw = 0;
	if (fn && fn(dev, &mw) == NVML_SUCCESS)
		json_object_set_new(j, key, json_real(mw / 1000.0));
}

static void set_versions(json_t *j)
{
	char buf[NVML_VERSION_BUF];
	if (api.DriverVersion && api.DriverVersion(buf, sizeof buf) == NVML_SUCCESS)
		json_object_set_new(j, "driver_version", json_string(buf));
	if (api.NvmlVersion && api.NvmlVersion(buf, sizeof buf) == NVML_SUCCESS)
		json_object_set_new(j, "nvml_version", json_string(buf));
}

/*
 * clocks_locked.  NVML has no getter for `nvidia-smi -lgc` locks
 * (nvmlDeviceSetGpuLockedClocks has no Get twin), so this is evidence, not
 * a readout: true when the SM applications clock differs from its default
 * (`nvidia-smi -ac`), or when the current clock-event reasons include
 * applications_clocks_setting (the driver says a clock setting is what
 * limits the clock; reported for -ac and, on recent drivers, for -lgc
 * caps).  false means neither was seen: a -lgc lock at or above the clock
 * the GPU would run at anyway is invisible.  Absent when NVML answered
 * neither query.
 */
static void set_clocks_locked(json_t *j, kb_nvml *n, bool have_reasons, unsigned long long rs)
{
	unsigned app = 0, def = 0;
	bool have_app = api.AppClock && api.DefaultAppClock &&
			api.AppClock(n->dev, NVML_CLOCK_SM, &app) == NVML_SUCCESS &&
			api.DefaultAppClock(n->dev, NVML_CLOCK_SM, &def) == NVML_SUCCESS;
	if (have_app) {
		json_object_set_new(j, "app_sm_clock_mhz", json_integer(app));
		json_object_set_new(j, "default_app_sm_clock_mhz", json_integer(def));
	}
	if (!have_app && !have_reasons)
		return;
	bool by_app = have_app && app != def;
	bool by_reason = have_reasons && (rs & 0x2ull);
	json_object_set_new(j, "clocks_locked", json_boolean(by_app || by_reason));
	json_object_set_new(j, "clocks_locked_method",
			    json_string("applications clock != default applications clock (SM), "
					"or clock-event reason applications_clocks_setting; "
					"NVML cannot read a -lgc lock directly"));
}

json_t *kb_profile_nvml_env(kb_nvml *n)
{
	json_t *j = json_object();
	json_object_set_new(j, "pci_bus", json_string(n->pci_bus));
	set_versions(j);
	nvmlEnableState_t cur = 0, pend = 0;
	if (api.EccMode && api.EccMode(n->dev, &cur, &pend) == NVML_SUCCESS)
		json_object_set_new(j, "ecc_enabled", json_boolean(cur != 0));
	set_clock(j, "sm_clock_mhz", api.ClockInfo, n->dev, NVML_CLOCK_SM);
	set_clock(j, "sm_clock_max_mhz", api.MaxClockInfo, n->dev, NVML_CLOCK_SM);
	set_clock(j, "mem_clock_mhz", api.ClockInfo, n->dev, NVML_CLOCK_MEM);
	set_clock(j, "mem_clock_max_mhz", api.MaxClockInfo, n->dev, NVML_CLOCK_MEM);
	unsigned long long rs = 0;
	bool have_reasons = api.EventReasons && api.EventReasons(n->dev, &rs) == NVML_SUCCESS;
	if (have_reasons) {
		json_object_set_new(j, "clock_event_reasons", kb_profile__nvml_reasons_json(rs));
		json_object_set_new(j, "clock_event_reasons_mask", json_sprintf("0x%llx", rs));
	}
	set_clocks_locked(j, n, have_reasons, rs);
	set_watts(j, "power_limit_w", api.PowerLimit, n->dev);
	set_watts(j, "power_limit_enforced_w", api.EnforcedPowerLimit, n->dev);
	set_watts(j, "power_w", api.PowerUsage, n->dev);
	nvmlEnableState_t pm = 0;
	if (api.Persistence && api.Persistence(n->dev, &pm) == NVML_SUCCESS)
		json_object_set_new(j, "persistence_mode", json_boolean(pm != 0));
	return j;
}

/* ---- the sampler ---------------------------------------------------------------- */

static void push(double **v, int *n, int *cap, double x)
{
	*KB_PUSH(*v, *n, *cap) = x;
}

static void sample_once(kb_nvml *n)
{
	unsigned v = 0;
	unsigned long long rs = 0;
	if (api.ClockInfo && api.ClockInfo(n->dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
		push(&n->sm, &n->nsm, &n->capsm, v);
	if (api.ClockInfo && api.ClockInfo(n->dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
		push(&n->mem, &n->nmem, &n->capmem, v);
	if (api.PowerUsage && api.PowerUsage(n->dev, &v) == NVML_SUCCESS)
		push(&n->power_w, &n->npower, &n->cappower, v / 1000.0);
	if (api.EventReasons && api.EventReasons(n->dev, &rs) == NVML_SUCCESS) {
		n->reasons_or |= rs;
		n->have_reasons = true;
	}
	n->samples++;
}

static void *sampler_main(void *arg)
{
	kb_nvml *n = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&n->stop)) {
		sample_once(n);
		next.tv_nsec += SAMPLE_PERIOD_NS;
		if (next.tv_nsec >= 1000000000L)
			next.tv_sec++, next.tv_nsec -= 1000000000L;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0 &&
		       !atomic_load(&n->stop))
			;
	}
	return NULL;
}

int kb_profile_nvml_sample_start(kb_nvml *n)
{
	if (!n || n->running)
		return KB_EINVAL;
	n->nsm = n->nmem = n->npower = n->samples = 0;
	n->reasons_or = 0;
	n->have_reasons = false;
	n->have_e0 = api.TotalEnergy && api.TotalEnergy(n->dev, &n->e0) == NVML_SUCCESS;
	n->t0_ms = kb_now_ms();
	atomic_store(&n->stop, false);
	if (pthread_create(&n->thread, NULL, sampler_main, n) != 0)
		return KB_ERROR;
	n->running = true;
	return KB_OK;
}

static json_t *min_median_max(const double *v, int cnt)
{
	kb_stats st;
	kb_stats_compute(v, cnt, &st);
	json_t *j = json_object();
	json_object_set_new(j, "min", json_real(st.min));
	json_object_set_new(j, "median", json_real(st.median));
	json_object_set_new(j, "max", json_real(st.max));
	return j;
}

static void set_energy(json_t *j, kb_nvml *n, int launches, double ms)
{
	unsigned long long e1 = 0;
	if (!n->have_e0 || api.TotalEnergy(n->dev, &e1) != NVML_SUCCESS || e1 < n->e0) {
		json_object_set_new(j, "energy_note",
				    json_string("NVML's total-energy counter is not available"));
		return;
	}
	/* Below ENERGY_MIN_MS the delta may be 0 or one 100 ms step: leave it out. */
	if (ms < ENERGY_MIN_MS) {
		json_object_set_new(j, "energy_note",
				    json_string("interval too short for NVML's energy counter "
						"(updates ~every 100 ms)"));
		return;
	}
	double mj = (double)(e1 - n->e0);
	json_object_set_new(j, "energy_j", json_real(mj / 1000.0));
	if (launches > 0)
		json_object_set_new(j, "energy_per_launch_mj", json_real(mj / launches));
}

json_t *kb_profile_nvml_sample_stop(kb_nvml *n, int launches)
{
	if (!n || !n->running)
		return NULL;
	atomic_store(&n->stop, true);
	pthread_join(n->thread, NULL);
	n->running = false;
	n->t1_ms = kb_now_ms();
	double ms = n->t1_ms - n->t0_ms;
	json_t *j = json_object();
	json_object_set_new(j, "interval_ms", json_real(ms));
	json_object_set_new(j, "samples", json_integer(n->samples));
	if (n->nsm > 0)
		json_object_set_new(j, "sm_clock_mhz", min_median_max(n->sm, n->nsm));
	if (n->nmem > 0)
		json_object_set_new(j, "mem_clock_mhz", min_median_max(n->mem, n->nmem));
	if (n->npower > 0) {
		kb_stats st;
		kb_stats_compute(n->power_w, n->npower, &st);
		json_t *p = json_object();
		json_object_set_new(p, "mean", json_real(st.mean));
		json_object_set_new(p, "max", json_real(st.max));
		json_object_set_new(j, "power_w", p);
	}
	set_energy(j, n, launches, ms);
	if (n->have_reasons)
		json_object_set_new(j, "throttle_reasons_seen",
				    kb_profile__nvml_reasons_json(n->reasons_or));
	return j;
}
