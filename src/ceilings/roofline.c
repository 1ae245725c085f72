/*
 * roofline.c - where a run sits against what the GPU can do: achieved
 * bandwidth and FLOP/s as a share of the measured ceilings (kbench
 * calibrate) and of the datasheet, the roofline side (arithmetic intensity
 * against the ridge point), and the physical floor below which a time is
 * IMPOSSIBLE (a kernel that skipped work, or a timer that saw nothing).
 */
#include "ceilings.h"

#include <stdio.h>
#include <string.h>

/* A floor check must not flag honest runs: timing noise and the measured
 * ceiling's own error are a few percent, so a run must beat the floor by
 * more than this margin to be called impossible. */
#define FLOOR_MARGIN 0.93

static double ceiling(json_t *c, const char *key)
{
	json_t *v = c ? json_object_get(c, key) : NULL;
	return json_is_number(v) ? json_number_value(v) : 0.0;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

kb_math kb_profile_math_of(const char *ptx)
{
	if (ptx && strstr(ptx, "wgmma.mma_async"))
		return KB_MATH_WGMMA;
	if (ptx && strstr(ptx, "mma.sync"))
		return KB_MATH_MMA;
	return KB_MATH_CUDA_CORES;
}

/* A tensor-core kernel's FLOP/s against the tensor-core peak (*peak gets
 * it: the measured wgmma ceiling, else the datasheet's bf16 figure, else
 * the measured mma.sync ceiling) and mma.sync's own ceiling. */
static void tensor_figures(json_t *j, const kb_device_info *info, json_t *ceilings, double rate,
			   kb_math math, double *peak)
{
	double wg = ceiling(ceilings, "bf16_wgmma_TFLOPs") * 1e12;
	double mma = ceiling(ceilings, "bf16_mma_TFLOPs") * 1e12;
	const char *basis = wg > 0 ? "measured wgmma ceiling" : info->bf16_peak_flops > 0
			    ? "datasheet bf16 (dense)" : "measured mma.sync ceiling";
	*peak = wg > 0 ? wg : info->bf16_peak_flops > 0 ? info->bf16_peak_flops : mma;
	json_object_set_new(j, "math", json_string(math == KB_MATH_WGMMA ? "tensor cores (wgmma)"
								      : "tensor cores (mma.sync)"));
	if (*peak <= 0)
		return;
	json_object_set_new(j, "tensor_peak_TFLOPs", json_real(*peak / 1e12));
	json_object_set_new(j, "tensor_peak_basis", json_string(basis));
	json_object_set_new(j, "pct_of_tensor_peak", json_real(100.0 * rate / *peak));
	if (math == KB_MATH_MMA && mma > 0)
		json_object_set_new(j, "pct_of_mma_ceiling", json_real(100.0 * rate / mma));
}

json_t *kb_profile_roofline(const kb_device_info *info, json_t *ceilings, double bytes,
			    double flops, double median_us, kb_math math)
{
	json_t *j = json_object();
	double secs = median_us * 1e-6;
	double copy_Bps = ceiling(ceilings, "copy_GBps") * 1e9;
	double read_Bps = ceiling(ceilings, "read_GBps") * 1e9;
	double fp32 = ceiling(ceilings, "fp32_TFLOPs") * 1e12;
	double tc = max2(ceiling(ceilings, "bf16_mma_TFLOPs"), ceiling(ceilings, "bf16_wgmma_TFLOPs")) * 1e12;
	json_object_set_new(j, "bytes", json_real(bytes));
	json_object_set_new(j, "calibrated", json_boolean(copy_Bps > 0));
	if (secs <= 0)
		return j;
	double bw = bytes / secs;
	json_object_set_new(j, "GBps", json_real(bw / 1e9));
	if (copy_Bps > 0)
		json_object_set_new(j, "pct_of_measured_copy", json_real(100.0 * bw / copy_Bps));
	if (info->dram_peak_Bps > 0)
		json_object_set_new(j, "pct_of_datasheet_dram", json_real(100.0 * bw / info->dram_peak_Bps));
	/* The floor uses the best bandwidth anyone measured or promised. */
	double best_bw = max2(max2(copy_Bps, read_Bps), info->dram_peak_Bps);
	double floor_s = best_bw > 0 ? bytes / best_bw : 0;
	double peak = max2(max2(fp32, tc), max2(info->fp32_peak_flops, info->bf16_peak_flops));
	if (flops >= 0) {
		json_object_set_new(j, "flops", json_real(flops));
		json_object_set_new(j, "TFLOPs", json_real(flops / secs / 1e12));
		double ref_peak = fp32 > 0 ? fp32 : info->fp32_peak_flops;
		if (ref_peak > 0)
			json_object_set_new(j, "pct_of_fp32_peak", json_real(100.0 * flops / secs / ref_peak));
		double tensor_peak = 0;
		if (math != KB_MATH_CUDA_CORES)
			tensor_figures(j, info, ceilings, flops / secs, math, &tensor_peak);
		if (tensor_peak > 0) /* the ridge of the roof this kernel runs under */
			ref_peak = tensor_peak;
		if (peak > 0 && flops / peak > floor_s)
			floor_s = flops / peak;
		double ai = bytes > 0 ? flops / bytes : 0;
		double ridge_bw = copy_Bps > 0 ? copy_Bps : info->dram_peak_Bps;
		double ridge = ridge_bw > 0 ? ref_peak / ridge_bw : 0;
		json_object_set_new(j, "arithmetic_intensity", json_real(ai));
		json_object_set_new(j, "ridge_flop_per_byte", json_real(ridge));
		json_object_set_new(j, "side", json_string(ai < ridge ? "memory" : "compute"));
	}
	json_object_set_new(j, "floor_us", json_real(floor_s * 1e6));
	bool impossible = floor_s > 0 && secs < floor_s * FLOOR_MARGIN;
	json_object_set_new(j, "impossible", json_boolean(impossible));
	if (impossible) {
		char why[256];
		snprintf(why, sizeof why,
			 "%.2f us is below the physical floor of %.2f us (%.3g bytes at %.0f GB/s%s): "
			 "the kernel cannot have done the work the spec describes",
			 median_us, floor_s * 1e6, bytes, best_bw / 1e9,
			 flops >= 0 ? ", or its FLOPs at the peak rate" : "");
		json_object_set_new(j, "impossible_why", json_string(why));
	}
	return j;
}
