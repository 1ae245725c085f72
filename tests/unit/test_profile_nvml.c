/* test_profile_nvml.c - NVML (no-driver path, reason decoding), the ceilings
 * cache, the calibration micro-kernels (compile for sm_90 and sm_80 with no
 * spills), and, on a GPU only, a full calibration sampled by NVML. */
#include "../../src/ceilings/ceilings.h"
#include "t.h"

#include <stdlib.h>
#include <unistd.h>

static char cache_dir[] = "/tmp/kbench-nvml-test-XXXXXX";

/* ---- NVML ------------------------------------------------------------------- */

/* A bus id no GPU has: no NVML (this machine) -> EUNSUP; NVML -> ENOTFOUND. */
static void test_profile__nvml_open_absent(void)
{
	kb_nvml *n = (kb_nvml *)1;
	kb_err err = {0};
	int rc = kb_profile_nvml_open("0000:FF:1F.0", &n, &err);
	T_OK(rc == KB_EUNSUP || rc == KB_ENOTFOUND);
	T_OK(n == NULL);
	T_OK(err.msg[0] != '\0');
	T_CONTAINS(err.msg, "NVML");
	/* A second try answers the same (the load result is kept). */
	kb_err err2 = {0};
	T_EQ_INT(kb_profile_nvml_open("0000:FF:1F.0", &n, &err2), rc);
	T_EQ_INT(kb_profile_nvml_open("", &n, &err2), KB_EINVAL);
	T_EQ_INT(kb_profile_nvml_open(NULL, &n, &err2), KB_EINVAL);
	kb_profile_nvml_close(NULL);
	T_OK(kb_profile_nvml_sample_stop(NULL, 1) == NULL);
	T_EQ_INT(kb_profile_nvml_sample_start(NULL), KB_EINVAL);
}

static char *reasons(unsigned long long mask)
{
	json_t *a = kb_profile__nvml_reasons_json(mask);
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

static void test_profile__nvml_reasons(void)
{
	char *s = reasons(0);
	T_EQ_STR(s, "[]");
	free(s);
	s = reasons(0x1 | 0x4 | 0x80);
	T_EQ_STR(s, "[\"gpu_idle\",\"sw_power_cap\",\"hw_power_brake\"]");
	free(s);
	s = reasons(0x1FF);
	T_EQ_STR(s, "[\"gpu_idle\",\"applications_clocks_setting\",\"sw_power_cap\","
		    "\"hw_slowdown\",\"sync_boost\",\"sw_thermal\",\"hw_thermal\","
		    "\"hw_power_brake\",\"display_clocks\"]");
	free(s);
	s = reasons(0x8 | 0x1000);
	T_EQ_STR(s, "[\"hw_slowdown\",\"0x1000\"]");
	free(s);
}

/* ---- the ceilings cache --------------------------------------------------------- */

static void test_profile__ceilings_roundtrip(void)
{
	const char *uuid = "GPU-12345678-9abc-def0-1234-56789abcdef0";
	json_t *got = (json_t *)1;
	kb_err err = {0};
	T_EQ_INT(kb_profile_ceilings_load(uuid, &got), KB_ENOTFOUND);
	T_OK(got == NULL);
	json_t *c = json_pack("{s:s, s:s, s:f, s:f, s:{s:f}}", "gpu", "NVIDIA H100 80GB HBM3",
			      "uuid", uuid, "copy_GBps", 3012.5, "fp32_TFLOPs", 60.25,
			      "datasheet", "dram_GBps", 3352.32);
	T_EQ_INT(kb_profile_ceilings_save(uuid, c, &err), 0);
	char *path = kb_xasprintf("%s/kbench/ceilings/%s.json", cache_dir, uuid);
	T_OK(kb_file_exists(path));
	T_EQ_INT(kb_profile_ceilings_load(uuid, &got), 0);
	T_OK(got && json_equal(got, c));
	json_decref(got);
	/* Saving again replaces the file. */
	json_object_set_new(c, "copy_GBps", json_real(2999.0));
	T_EQ_INT(kb_profile_ceilings_save(uuid, c, &err), 0);
	T_EQ_INT(kb_profile_ceilings_load(uuid, &got), 0);
	T_NEAR(json_real_value(json_object_get(got, "copy_GBps")), 2999.0, 1e-9);
	json_decref(got);
	/* A corrupt file is not a cache hit. */
	T_EQ_INT(kb_file_write(path, "{oops", 5, &err), 0);
	T_EQ_INT(kb_profile_ceilings_load(uuid, &got), KB_EINVAL);
	T_OK(got == NULL);
	/* A UUID is a file name, never a path. */
	T_EQ_INT(kb_profile_ceilings_save("../evil", c, &err), KB_EINVAL);
	T_EQ_INT(kb_profile_ceilings_load("../evil", &got), KB_EINVAL);
	T_EQ_INT(kb_profile_ceilings_load("", &got), KB_EINVAL);
	json_decref(c);
	free(path);
}

/* ---- the micro-kernels ------------------------------------------------------------ */

static const char *const cal_kernels[] = {
	"kb_cal_copy", "kb_cal_copy1", "kb_cal_read", "kb_cal_read1", "kb_cal_fma", "kb_cal_mma",
};

static const kb_resources *find_res(const kb_resources *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (v[i].kernel && !strcmp(v[i].kernel, name))
			return &v[i];
	return NULL;
}

static void check_build(const char *arch)
{
	kb_build b;
	kb_err err = {0};
	int rc = kb_profile__calibrate_build(arch, &b, &err);
	if (rc != 0)
		T_FAIL_AT("%s: rc %d: %s\n%s", arch, rc, err.msg, b.log ? b.log : "");
	T_OK(b.ok && b.cubin && b.cubin_len > 0);
	T_OK(b.ptx && strstr(b.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
	T_OK(b.ptx && strstr(b.ptx, "fma.rn.f32"));
	T_OK(b.ptx && strstr(b.ptx, ".v4."));
	kb_resources *log = NULL, *elf = NULL;
	int nlog = kb_compile_parse_ptxas_log(b.log, &log);
	int nelf = kb_compile_cubin_resources(b.cubin, b.cubin_len, &elf, &err);
	T_OK(nelf >= (int)KB_ARRAY_LEN(cal_kernels));
	for (size_t k = 0; k < KB_ARRAY_LEN(cal_kernels); k++) {
		const kb_resources *r = find_res(log, nlog, cal_kernels[k]);
		const kb_resources *e = find_res(elf, nelf, cal_kernels[k]);
		T_OK(e != NULL);
		if (getenv("T_VERBOSE") && r)
			printf("    %s %s: %d regs, %d B stack, spills %d/%d\n", arch, r->kernel,
			       r->regs, r->local_bytes, r->spill_stores, r->spill_loads);
		if (r) {
			T_EQ_INT(r->spill_stores, 0);
			T_EQ_INT(r->spill_loads, 0);
			T_EQ_INT(r->local_bytes, 0);
		}
		/* The log has no ptxas report when the driver's JIT cache served the
		 * cubin (seen on a GPU box); the cubin's frame size still shows that
		 * nothing spilled: a spill needs a stack frame. */
		if (e)
			T_EQ_INT(e->local_bytes, 0);
	}
	kb_compile_resources_free(log, nlog > 0 ? nlog : 0);
	kb_compile_resources_free(elf, nelf > 0 ? nelf : 0);
	kb_compile_build_free(&b);
}

static void test_profile__calibrate_kernels_compile(void)
{
	T_OK(strstr(kb_profile__calibrate_source(), "kb_cal_mma") != NULL);
	check_build("sm_90");
	check_build("sm_80");
}

/* The wgmma probe compiles for sm_90a: wgmma in the PTX and in the SASS's
 * cubin, 128 accumulators a thread in registers, nothing spilled. */
static void test_profile__calibrate_wgmma_compiles(void)
{
	kb_build b;
	kb_err err = {0};
	int rc = kb_profile__calibrate_wgmma_build(&b, &err);
	if (rc != 0)
		T_FAIL_AT("sm_90a: rc %d: %s\n%s", rc, err.msg, b.log ? b.log : "");
	T_OK(b.ok && b.cubin && b.cubin_len > 0);
	T_OK(b.ptx && strstr(b.ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
	T_OK(b.ptx && strstr(b.ptx, "wgmma.wait_group.sync.aligned 1"));
	/* ptxas serializes wgmmas whose accumulators other code reads in flight */
	T_OK(b.log && !strstr(b.log, "C7514"));
	kb_resources *elf = NULL;
	int nelf = kb_compile_cubin_resources(b.cubin, b.cubin_len, &elf, &err);
	const kb_resources *e = find_res(elf, nelf, "kb_cal_wgmma");
	T_OK(e != NULL);
	if (e) {
		T_EQ_INT(e->local_bytes, 0);
		T_OK(e->regs >= 128 && e->regs <= 255);
	}
	kb_compile_resources_free(elf, nelf > 0 ? nelf : 0);
	kb_compile_build_free(&b);
}

/* ---- on a GPU ------------------------------------------------------------------------ */

static double num(const json_t *j, const char *key)
{
	const json_t *v = json_object_get(j, key);
	return json_is_number(v) ? json_number_value(v) : -1.0;
}

static void check_ceilings(const json_t *c)
{
	double copy = num(c, "copy_GBps"), memcpy_bw = num(c, "memcpy_dtod_GBps");
	T_OK(copy > 100.0);
	T_OK(memcpy_bw > 0.0);
	if (memcpy_bw > 0.0 && fabs(copy / memcpy_bw - 1.0) > 0.05)
		T_FAIL_AT("copy %.1f GB/s is not within 5%% of cuMemcpyDtoD %.1f GB/s", copy,
			  memcpy_bw);
	T_OK(num(c, "read_GBps") > 100.0);
	T_OK(num(c, "fp32_TFLOPs") > 1.0);
	T_OK(num(c, "bf16_mma_TFLOPs") > num(c, "fp32_TFLOPs"));
	/* sm_90: the wgmma ceiling, above mma.sync's (how close to the
	 * datasheet is a measurement: bench/calibrate.txt) */
	const char *arch = json_string_value(json_object_get(c, "arch"));
	if (arch && !strcmp(arch, "sm_90"))
		T_OK(num(c, "bf16_wgmma_TFLOPs") > num(c, "bf16_mma_TFLOPs"));
	T_OK(json_is_string(json_object_get(c, "uuid")));
	T_OK(json_is_string(json_object_get(c, "date")));
	T_OK(json_is_object(json_object_get(c, "datasheet")));
	T_OK(json_is_object(json_object_get(c, "method")));
}

static void check_env(kb_nvml *n)
{
	json_t *env = kb_profile_nvml_env(n);
	char *s = json_dumps(env, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("    nvml env: %s\n", s);
	T_OK(json_is_string(json_object_get(env, "driver_version")));
	T_OK(num(env, "sm_clock_max_mhz") > 0);
	T_OK(json_is_boolean(json_object_get(env, "clocks_locked")));
	free(s);
	json_decref(env);
}

/* A window of >= 0.5 s reports energy (idle power is > 0 on any GPU). */
static void check_energy(kb_nvml *n)
{
	T_EQ_INT(kb_profile_nvml_sample_start(n), 0);
	T_EQ_INT(kb_profile_nvml_sample_start(n), KB_EINVAL);
	usleep(600 * 1000);
	json_t *s = kb_profile_nvml_sample_stop(n, 4);
	T_OK(s != NULL);
	T_OK(num(s, "energy_j") > 0);
	T_NEAR(num(s, "energy_per_launch_mj"), num(s, "energy_j") * 1000.0 / 4, 1e-6);
	T_OK(json_object_get(s, "energy_note") == NULL);
	T_OK(num(s, "samples") >= 30);
	json_decref(s);
	T_OK(kb_profile_nvml_sample_stop(n, 1) == NULL);
}

static void test_profile__calibrate_gpu(void)
{
	kb_err err = {0};
	if (kb_profile_device_count(&err) <= 0)
		T_SKIP("no GPU");
	kb_device *d = NULL;
	if (kb_profile_device_open(&d, 0, &err) < 0) {
		T_FAIL_AT("device open: %s", err.msg);
		return;
	}
	kb_nvml *n = NULL;
	int nrc = kb_profile_nvml_open(kb_profile_device_info(d)->pci_bus, &n, &err);
	if (nrc < 0) {
		printf("    (no NVML: %s)\n", err.msg);
	} else {
		check_env(n);
		T_EQ_INT(kb_profile_nvml_sample_start(n), 0);
	}
	json_t *c = NULL;
	int rc = kb_profile_calibrate(d, &c, &err);
	json_t *s = n ? kb_profile_nvml_sample_stop(n, 1) : NULL;
	if (rc < 0)
		T_FAIL_AT("calibrate: %s", err.msg);
	if (c) {
		char *txt = json_dumps(c, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("    ceilings: %s\n", txt);
		free(txt);
		check_ceilings(c);
		const char *uuid = json_string_value(json_object_get(c, "uuid"));
		T_EQ_INT(kb_profile_ceilings_save(uuid, c, &err), 0);
	}
	if (s) {
		char *txt = json_dumps(s, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("    nvml samples: %s\n", txt);
		free(txt);
		T_OK(num(s, "samples") > 10);
		T_OK(json_is_object(json_object_get(s, "sm_clock_mhz")));
	}
	json_decref(s);
	json_decref(c);
	if (n)
		check_energy(n);
	kb_profile_nvml_close(n);
	kb_profile_device_close(d);
}

int main(void)
{
	if (!mkdtemp(cache_dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("XDG_CACHE_HOME", cache_dir, 1);
	T_RUN(test_profile__nvml_open_absent);
	T_RUN(test_profile__nvml_reasons);
	T_RUN(test_profile__ceilings_roundtrip);
	T_RUN(test_profile__calibrate_kernels_compile);
	T_RUN(test_profile__calibrate_wgmma_compiles);
	T_RUN(test_profile__calibrate_gpu);
	char *rm = kb_xasprintf("rm -rf %s", cache_dir);
	if (system(rm) != 0)
		printf("  (could not remove %s)\n", cache_dir);
	free(rm);
	return t_report();
}
