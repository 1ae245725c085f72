/* test_profile_roofline.c - a run against the GPU's ceilings
 * (kb_profile_roofline): bandwidth shares, the physical floor, and a
 * tensor-core kernel judged against the tensor-core peak (the measured
 * wgmma ceiling, else the datasheet, and mma.sync's own ceiling) with the
 * ridge of that roof; which math a kernel's PTX runs on.  No GPU. */
#include "../../src/ceilings/ceilings.h"
#include "t.h"

static kb_device_info h100(void)
{
	kb_device_info i;
	memset(&i, 0, sizeof i);
	snprintf(i.name, sizeof i.name, "NVIDIA H100 80GB HBM3");
	i.sm = 90;
	i.sm_count = 132;
	i.dram_peak_Bps = 3352e9;
	i.fp32_peak_flops = 66.9e12;
	i.bf16_peak_flops = 989.4e12;
	return i;
}

static double num(json_t *j, const char *k)
{
	return json_number_value(json_object_get(j, k));
}

static void test_profile_roofline__math_of(void)
{
	T_EQ_INT(kb_profile_math_of("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), KB_MATH_MMA);
	T_EQ_INT(kb_profile_math_of("wgmma.fence.sync.aligned;\nwgmma.mma_async.sync.aligned.m64n256k16"),
		 KB_MATH_WGMMA);
	T_EQ_INT(kb_profile_math_of("fma.rn.f32 %f1, %f2, %f3, %f4;"), KB_MATH_CUDA_CORES);
	T_EQ_INT(kb_profile_math_of(NULL), KB_MATH_CUDA_CORES);
}

/* An 8192^3 bf16 GEMM in 2.2 ms on mma.sync, with wgmma measured. */
static void test_profile_roofline__tensor_kernel(void)
{
	kb_device_info i = h100();
	json_t *ceil = json_pack("{s:f, s:f, s:f, s:f}", "copy_GBps", 3000.0, "fp32_TFLOPs", 60.0,
				 "bf16_mma_TFLOPs", 636.0, "bf16_wgmma_TFLOPs", 900.0);
	double s = 8192.0, flops = 2 * s * s * s, bytes = 3 * s * s * 2;
	json_t *r = kb_profile_roofline(&i, ceil, bytes, flops, 2200.0, KB_MATH_MMA);
	double tf = flops / 2200e-6 / 1e12; /* 499.8 */
	T_NEAR(num(r, "TFLOPs"), tf, 1e-6);
	T_EQ_STR(json_string_value(json_object_get(r, "math")), "tensor cores (mma.sync)");
	T_NEAR(num(r, "tensor_peak_TFLOPs"), 900.0, 1e-9);
	T_EQ_STR(json_string_value(json_object_get(r, "tensor_peak_basis")), "measured wgmma ceiling");
	T_NEAR(num(r, "pct_of_tensor_peak"), 100.0 * tf / 900.0, 1e-9);
	T_NEAR(num(r, "pct_of_mma_ceiling"), 100.0 * tf / 636.0, 1e-9);
	/* the ridge of the tensor roof: 900 TFLOP/s over 3000 GB/s */
	T_NEAR(num(r, "ridge_flop_per_byte"), 300.0, 1e-9);
	T_EQ_STR(json_string_value(json_object_get(r, "side")), "compute");
	T_OK(!json_is_true(json_object_get(r, "impossible")));
	json_decref(r);
	/* faster than the tensor peak allows: impossible */
	r = kb_profile_roofline(&i, ceil, bytes, flops, 900.0, KB_MATH_WGMMA);
	T_OK(json_is_true(json_object_get(r, "impossible")));
	T_OK(!json_object_get(r, "pct_of_mma_ceiling")); /* a wgmma kernel */
	json_decref(r);
	json_decref(ceil);
}

/* Without a wgmma ceiling the datasheet's bf16 figure is the peak; a
 * CUDA-core kernel gets no tensor figures and keeps the FP32 ridge. */
static void test_profile_roofline__bases(void)
{
	kb_device_info i = h100();
	json_t *ceil = json_pack("{s:f, s:f, s:f}", "copy_GBps", 3000.0, "fp32_TFLOPs", 60.0,
				 "bf16_mma_TFLOPs", 636.0);
	json_t *r = kb_profile_roofline(&i, ceil, 1e9, 1e12, 5000.0, KB_MATH_MMA);
	T_EQ_STR(json_string_value(json_object_get(r, "tensor_peak_basis")), "datasheet bf16 (dense)");
	T_NEAR(num(r, "tensor_peak_TFLOPs"), 989.4, 1e-9);
	json_decref(r);
	r = kb_profile_roofline(&i, ceil, 1e9, 1e12, 5000.0, KB_MATH_CUDA_CORES);
	T_OK(!json_object_get(r, "pct_of_tensor_peak") && !json_object_get(r, "math"));
	T_NEAR(num(r, "ridge_flop_per_byte"), 20.0, 1e-9); /* 60 TFLOP/s over 3000 GB/s */
	T_NEAR(num(r, "pct_of_fp32_peak"), 100.0 * 1e12 / 5000e-6 / 60e12, 1e-9);
	json_decref(r);
	json_decref(ceil);
}

int main(void)
{
	T_RUN(test_profile_roofline__math_of);
	T_RUN(test_profile_roofline__tensor_kernel);
	T_RUN(test_profile_roofline__bases);
	return t_report();
}
