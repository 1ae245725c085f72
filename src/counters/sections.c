/*
 * sections.c - the profile sections: which Nsight Compute metric names
 * make each table, and the figures derived from them (bottleneck, sectors
 * per request, FLOPs by precision, stall shares, the measured roofline
 * point).  Pure: values in, JSON out; CUPTI collection is cupti.c's.
 * Metric names and pass counts: gpu-apis.md §2 (GH100, CUDA 13.0).
 */
#include "counters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N(a) ((int)KB_ARRAY_LEN(a))

/* One pass: what can run on every save. */
static const char *const quick[] = {
	"gpu__time_duration.sum",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
	"smsp__issue_active.avg.pct_of_peak_sustained_active",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"sm__inst_executed.avg.per_cycle_active",
};

/* Nsight Compute's GPU Speed Of Light Throughput section. */
static const char *const sol[] = {
	"gpu__time_duration.sum",
	"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
	"lts__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__throughput.avg.pct_of_peak_sustained_active",
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
	"gpc__cycles_elapsed.max",
	"sm__cycles_active.avg",
	"gpc__cycles_elapsed.avg.per_second",
	"dram__cycles_elapsed.avg.per_second",
};

static const char *const memory[] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"dram__bytes.sum.per_second",
	"lts__t_sector_hit_rate.pct",
	"l1tex__t_sector_hit_rate.pct",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
};

/* The tensor pipe's busy share: the compute section shows it, the roofline
 * reads it to tell a tensor-core kernel from one on the CUDA cores. */
#define TENSOR_PIPE "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"

static const char *const compute[] = {
	"smsp__inst_executed.sum",
	"sm__inst_executed.avg.per_cycle_active",
	"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
	TENSOR_PIPE,
};

static const char *const occupancy[] = {
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"sm__warps_active.avg.per_cycle_active",
	"smsp__warps_eligible.avg.per_cycle_active",
};

#define STALL(r) "smsp__average_warps_issue_stalled_" r "_per_issue_active.ratio"
static const char *const stalls[] = {
	STALL("long_scoreboard"), STALL("short_scoreboard"), STALL("barrier"), STALL("mio_throttle"),
	STALL("math_pipe_throttle"), STALL("wait"), STALL("not_selected"), STALL("lg_throttle"),
	STALL("selected"), STALL("dispatch_stall"), STALL("drain"), STALL("imc_miss"),
	STALL("membar"), STALL("misc"), STALL("no_instruction"), STALL("sleeping"),
	STALL("tex_throttle"), STALL("branch_resolving"),
};

static const char *const roofline[] = {
	"dram__bytes.sum",
	TENSOR_PIPE,
	"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"gpu__time_duration.sum",
};

static const kb_section s_quick = {"quick", "Quick (one pass)", quick, N(quick)};
static const kb_section s_sol = {"sol", "Speed of light", sol, N(sol)};
static const kb_section s_memory = {"memory", "Memory", memory, N(memory)};
static const kb_section s_compute = {"compute", "Compute", compute, N(compute)};
static const kb_section s_occupancy = {"occupancy", "Occupancy", occupancy, N(occupancy)};
static const kb_section s_stalls = {"stalls", "Warp state (stall reasons)", stalls, N(stalls)};
static const kb_section s_roofline = {"roofline", "Roofline (measured)", roofline, N(roofline)};

static const kb_section *const all[] = {&s_sol, &s_memory, &s_compute, &s_occupancy, &s_stalls,
					 &s_roofline, NULL};

const kb_section *const *kb_profile_sections(void)
{
	return all;
}

const kb_section *kb_profile_section(const char *name)
{
	if (!strcmp(name, "quick"))
		return &s_quick;
	for (int i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const char **kb_profile_section_metrics(const kb_section *const *secs, int nsecs, int *n)
{
	int cap = 0;
	const char **v = NULL;
	*n = 0;
	for (int s = 0; s < nsecs; s++)
		for (int m = 0; m < secs[s]->nmetrics; m++) {
			bool dup = false;
			for (int k = 0; k < *n && !dup; k++)
				dup = !strcmp(v[k], secs[s]->metrics[m]);
			if (!dup)
				*KB_PUSH(v, *n, cap) = secs[s]->metrics[m];
		}
	return v;
}

/* ---- derived figures ---------------------------------------------------------- */

/* A counter's value, or NAN when it was not collected. */
static double ctr(json_t *c, const char *name)
{
	json_t *v = json_object_get(c, name);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void put(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

static json_t *derive_sol(json_t *c)
{
	json_t *o = json_object();
	double sm = ctr(c, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	double mem = ctr(c, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
	put(o, "duration_us", ctr(c, "gpu__time_duration.sum") / 1e3);
	put(o, "sm_pct", sm);
	put(o, "memory_pct", mem);
	put(o, "dram_pct", ctr(c, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"));
	put(o, "l2_pct", ctr(c, "lts__throughput.avg.pct_of_peak_sustained_elapsed"));
	put(o, "l1_pct", ctr(c, "l1tex__throughput.avg.pct_of_peak_sustained_active"));
	put(o, "sm_clock_ghz", ctr(c, "gpc__cycles_elapsed.avg.per_second") / 1e9);
	if (isfinite(sm) && isfinite(mem)) {
		/* Nsight Compute's rule of thumb: above 60% of peak is "high". */
		const char *b = fmax(sm, mem) < 60 ? "latency"
				: sm >= mem ? "compute" : "memory";
		json_object_set_new(o, "bottleneck", json_string(b));
		if (!strcmp(b, "latency"))
			json_object_set_new(o, "why", json_sprintf("neither compute (%.0f%%) nor memory "
				"(%.0f%%) is above 60%% of peak: latency or too little parallelism binds",
				sm, mem));
		else
			json_object_set_new(o, "why", json_sprintf("%s throughput is the higher share of "
				"peak (SM %.0f%%, memory %.0f%%)", b, sm, mem));
	}
	return o;
}

static json_t *derive_memory(json_t *c)
{
	json_t *o = json_object();
	put(o, "dram_read_bytes", ctr(c, "dram__bytes_read.sum"));
	put(o, "dram_write_bytes", ctr(c, "dram__bytes_write.sum"));
	put(o, "dram_GBps", ctr(c, "dram__bytes.sum.per_second") / 1e9);
	put(o, "l2_hit_pct", ctr(c, "lts__t_sector_hit_rate.pct"));
	put(o, "l1_hit_pct", ctr(c, "l1tex__t_sector_hit_rate.pct"));
	put(o, "load_sectors_per_request", ctr(c, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") /
					   ctr(c, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
	put(o, "store_sectors_per_request", ctr(c, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") /
					    ctr(c, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));
	put(o, "shared_bank_conflicts",
	    ctr(c, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") +
	    ctr(c, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
	return o;
}

/* FLOPs of one precision: add + mul + 2 x fma (thread-level, predicated on). */
static double flops(json_t *c, const char *p)
{
	char a[96], m[96], f[96];
	snprintf(a, sizeof a, "smsp__sass_thread_inst_executed_op_%sadd_pred_on.sum", p);
	snprintf(m, sizeof m, "smsp__sass_thread_inst_executed_op_%smul_pred_on.sum", p);
	snprintf(f, sizeof f, "smsp__sass_thread_inst_executed_op_%sfma_pred_on.sum", p);
	return ctr(c, a) + ctr(c, m) + 2 * ctr(c, f);
}

static json_t *derive_compute(json_t *c)
{
	json_t *o = json_object();
	put(o, "instructions", ctr(c, "smsp__inst_executed.sum"));
	put(o, "ipc", ctr(c, "sm__inst_executed.avg.per_cycle_active"));
	put(o, "fp32_flops", flops(c, "f"));
	put(o, "fp64_flops", flops(c, "d"));
	/* HFMA2 and friends count as one thread instruction for two lanes. */
	put(o, "fp16_flops", 2 * flops(c, "h"));
	put(o, "tensor_pipe_pct", ctr(c, TENSOR_PIPE));
	return o;
}

static json_t *derive_occupancy(json_t *c, json_t *theory)
{
	json_t *o = json_object();
	put(o, "achieved_pct", ctr(c, "sm__warps_active.avg.pct_of_peak_sustained_active"));
	put(o, "achieved_warps_per_sm", ctr(c, "sm__warps_active.avg.per_cycle_active"));
	put(o, "eligible_warps_per_scheduler", ctr(c, "smsp__warps_eligible.avg.per_cycle_active"));
	if (theory) {
		json_object_set_new(o, "theoretical_pct", json_incref(json_object_get(theory, "occupancy_pct")));
		json_object_set_new(o, "limiter", json_incref(json_object_get(theory, "limiter")));
	}
	return o;
}

static int cmp_share(const void *a, const void *b)
{
	double x = json_number_value(json_object_get(*(json_t *const *)a, "per_issue"));
	double y = json_number_value(json_object_get(*(json_t *const *)b, "per_issue"));
	return x < y ? 1 : x > y ? -1 : 0;
}

static json_t *derive_stalls(json_t *c)
{
	json_t *rows[KB_ARRAY_LEN(stalls)];
	int n = 0;
	double total = 0;
	const size_t pre = strlen("smsp__average_warps_issue_stalled_");
	for (size_t i = 0; i < KB_ARRAY_LEN(stalls); i++) {
		double v = ctr(c, stalls[i]);
		if (!isfinite(v))
			continue;
		total += v;
		const char *name = stalls[i] + pre;
		size_t len = strlen(name) - strlen("_per_issue_active.ratio");
		rows[n++] = json_pack("{s:s%, s:f}", "reason", name, len, "per_issue", v);
	}
	qsort(rows, (size_t)n, sizeof rows[0], cmp_share);
	json_t *top = json_array();
	for (int i = 0; i < n; i++) {
		double v = json_number_value(json_object_get(rows[i], "per_issue"));
		json_object_set_new(rows[i], "share_pct", json_real(total > 0 ? 100 * v / total : 0));
		json_array_append_new(top, rows[i]);
	}
	return json_pack("{s:o}", "reasons", top);
}

static json_t *derive_roofline(json_t *c, const kb_device_info *info, json_t *ceilings)
{
	json_t *o = json_object();
	double bytes = ctr(c, "dram__bytes.sum"), f = flops(c, "f");
	double secs = ctr(c, "gpu__time_duration.sum") * 1e-9;
	if (!isfinite(bytes))
		bytes = ctr(c, "dram__bytes_read.sum") + ctr(c, "dram__bytes_write.sum");
	put(o, "dram_bytes", bytes);
	put(o, "fp32_flops", f);
	/* The FLOP counters are the CUDA cores' (FADD, FMUL, FFMA): a kernel on
	 * the tensor pipe does its products where they do not count, so its
	 * point is not placed against the FP32 roof (a 350 TFLOP/s attention
	 * read "3.2 TFLOP/s, 4.9% of the roof"); the run's compute line rates
	 * the spec's //! flops against the tensor-core ceiling instead. */
	double tensor = ctr(c, TENSOR_PIPE);
	if (tensor >= 1)
		put(o, "tensor_pipe_pct", tensor);
	if (!(bytes > 0 && secs > 0))
		return o;
	double bw = ceilings ? json_number_value(json_object_get(ceilings, "copy_GBps")) * 1e9 : 0;
	double peak = ceilings ? json_number_value(json_object_get(ceilings, "fp32_TFLOPs")) * 1e12 : 0;
	bw = bw > 0 ? bw : info->dram_peak_Bps;
	peak = peak > 0 ? peak : info->fp32_peak_flops;
	put(o, "dram_GBps", bytes / secs / 1e9);
	put(o, "pct_of_bandwidth_ceiling", 100 * bytes / secs / bw);
	if (isfinite(f) && f > 0) {
		double ai = f / bytes, ridge = peak / bw;
		put(o, "arithmetic_intensity", ai);
		put(o, "TFLOPs", f / secs / 1e12);
		put(o, "ridge_flop_per_byte", ridge);
		if (!(tensor >= 1)) {
			json_object_set_new(o, "side", json_string(ai < ridge ? "memory" : "compute"));
			put(o, "pct_of_roof", 100 * (f / secs) / fmin(peak, ai * bw));
		}
	}
	json_object_set_new(o, "ceilings", json_string(ceilings ? "measured (kbench calibrate)"
							      : "datasheet (run kbench calibrate)"));
	return o;
}

json_t *kb_profile_sections_derive(json_t *c, const kb_device_info *info, json_t *ceilings,
				   json_t *occ)
{
	json_t *o = json_object();
	json_object_set_new(o, "sol", derive_sol(c));
	json_object_set_new(o, "memory", derive_memory(c));
	json_object_set_new(o, "compute", derive_compute(c));
	json_object_set_new(o, "occupancy", derive_occupancy(c, occ));
	json_object_set_new(o, "stalls", derive_stalls(c));
	json_object_set_new(o, "roofline", derive_roofline(c, info, ceilings));
	return o;
}
