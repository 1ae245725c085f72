/*
 * device.c - what `kbench devices` and `kbench calibrate` print: the GPU,
 * what NVML says of its state, and the ceilings measured on it.
 */
#include "app.h"

#include <stdlib.h>
#include <string.h>

static double num(json_t *j, const char *k)
{
	return json_number_value(json_object_get(j, k));
}

static const char *str(json_t *j, const char *k)
{
	const char *s = json_string_value(json_object_get(j, k));
	return s ? s : "n/a";
}

static void render_ceilings(json_t *c, json_t *dev, kb_buf *out)
{
	json_t *ds = json_object_get(c, "datasheet");
	kb_buf_catf(out, "ceilings (measured %s)\n", str(c, "date"));
	kb_buf_catf(out, "  copy        %8.1f GB/s (read+write)   cuMemcpy D2D %8.1f GB/s (%.1f%%)\n",
		    num(c, "copy_GBps"), num(c, "memcpy_dtod_GBps"), num(c, "copy_vs_memcpy_pct"));
	kb_buf_catf(out, "  read        %8.1f GB/s                 datasheet DRAM %7.1f GB/s\n",
		    num(c, "read_GBps"), ds ? num(ds, "dram_GBps") : num(dev, "dram_peak_GBps"));
	kb_buf_catf(out, "  FP32 FMA    %8.2f TFLOP/s              datasheet %7.2f TFLOP/s\n",
		    num(c, "fp32_TFLOPs"), ds ? num(ds, "fp32_TFLOPs") : num(dev, "fp32_peak_TFLOPs"));
	kb_buf_catf(out, "  bf16 mma    %8.2f TFLOP/s              datasheet %7.2f TFLOP/s (dense)\n",
		    num(c, "bf16_mma_TFLOPs"), ds ? num(ds, "bf16_TFLOPs") : num(dev, "bf16_peak_TFLOPs"));
	if (json_object_get(c, "bf16_wgmma_TFLOPs")) /* sm_90: the datasheet's own figure */
		kb_buf_catf(out, "  bf16 wgmma  %8.2f TFLOP/s              %.1f%% of the datasheet's\n",
			    num(c, "bf16_wgmma_TFLOPs"),
			    num(json_object_get(ds, "pct_measured_of_datasheet"), "bf16_wgmma"));
}

/* NVML's fingerprint as key=value pairs, wrapped; nested values as JSON. */
static void render_flat(json_t *nv, kb_buf *out)
{
	const char *key;
	json_t *v;
	int col = 0;
	kb_buf_cat(out, "  state:");
	json_object_foreach(nv, key, v) {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		int n = (int)(strlen(key) + (s ? strlen(s) : 0) + 2);
		if (col + n > 90) {
			kb_buf_cat(out, "\n        ");
			col = 0;
		}
		kb_buf_catf(out, " %s=%s", key, s ? s : "?");
		col += n;
		free(s);
	}
	kb_buf_catc(out, '\n');
}

void kb_app_device_render(json_t *r, kb_buf *out)
{
	json_t *dev = json_object_get(r, "device"), *nv = json_object_get(r, "nvml");
	if (dev) {
		kb_buf_catf(out, "%s  %s  %s  %d SMs  %.0f GiB  L2 %.0f MiB  driver CUDA %s\n",
			    str(dev, "name"), str(dev, "arch"), str(dev, "uuid"), (int)num(dev, "sm_count"),
			    num(dev, "memory_bytes") / (1 << 30), num(dev, "l2_bytes") / (1 << 20),
			    str(dev, "driver_cuda_version"));
	}
	if (nv)
		render_flat(nv, out);
	json_t *c = json_object_get(r, "ceilings");
	if (c)
		render_ceilings(c, dev, out);
	else if (dev)
		kb_buf_cat(out, "no measured ceilings yet: run `kbench calibrate`\n");
}
