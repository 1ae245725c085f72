/* test_profile_sections.c - the figures derived from counters
 * (kb_profile_sections_derive), here the roofline point: placed against
 * the FP32 roof for a kernel on the CUDA cores, and not for one on the
 * tensor pipe, whose FLOPs no FP32 counter counts.  No GPU. */
#include "../../src/counters/counters.h"
#include "t.h"

static kb_device_info h200(void)
{
	kb_device_info i;
	memset(&i, 0, sizeof i);
	snprintf(i.name, sizeof i.name, "NVIDIA H200");
	i.sm = 90;
	i.sm_count = 132;
	i.dram_peak_Bps = 4814e9;
	i.fp32_peak_flops = 66.9e12;
	i.bf16_peak_flops = 989.4e12;
	return i;
}

/* Counters of a 1.5 ms kernel: 262 MB of DRAM, 2.5e9 FFMA thread
 * instructions, the tensor pipe busy `tensor` percent. */
static json_t *roof_of(double tensor)
{
	kb_device_info i = h200();
	json_t *c = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "dram__bytes.sum", 2.62e8,
			      "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0.0,
			      "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0.0,
			      "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.5e9,
			      "gpu__time_duration.sum", 1.5e6,
			      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", tensor);
	json_t *d = kb_profile_sections_derive(c, &i, NULL, NULL);
	json_t *r = json_incref(json_object_get(d, "roofline"));
	json_decref(d);
	json_decref(c);
	return r;
}

static void test_profile_sections__roofline_cuda_cores(void)
{
	json_t *r = roof_of(0.0);
	T_OK(json_object_get(r, "tensor_pipe_pct") == NULL);
	T_OK(json_is_string(json_object_get(r, "side")));
	T_OK(json_number_value(json_object_get(r, "pct_of_roof")) > 0);
	T_NEAR(json_number_value(json_object_get(r, "fp32_flops")), 5e9, 1);
	json_decref(r);
}

static void test_profile_sections__roofline_tensor_pipe(void)
{
	json_t *r = roof_of(56.3);
	T_NEAR(json_number_value(json_object_get(r, "tensor_pipe_pct")), 56.3, 1e-9);
	T_OK(json_object_get(r, "side") == NULL);
	T_OK(json_object_get(r, "pct_of_roof") == NULL);
	T_OK(json_number_value(json_object_get(r, "TFLOPs")) > 0); /* still shown, labelled */
	json_decref(r);
}

int main(void)
{
	T_RUN(test_profile_sections__roofline_cuda_cores);
	T_RUN(test_profile_sections__roofline_tensor_pipe);
	return t_report();
}
