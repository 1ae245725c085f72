/*
 * ceilings.h - what this GPU can do and what it was doing: its bandwidth
 * and FLOP/s ceilings measured with kbench's own micro-kernels
 * (calibrate.c, calibrate_wgmma.c) and cached per GPU, a run placed
 * against them (roofline.c), and clocks, power and throttle reasons from
 * NVML, loaded with dlopen (nvml.c).  Built on src/gpu/.
 */
#ifndef KB_CEILINGS_H
#define KB_CEILINGS_H

#include "../gpu/gpu.h"

/* ===== nvml.c ===== */

/* NVML state (nvml.c). */
typedef struct kb_nvml kb_nvml;

/* NVML, loaded with dlopen("libnvidia-ml.so.1"): what the GPU was doing. */
/* Opens the GPU at PCI bus id pci_bus (as cuDeviceGetPCIBusId gives it).
 * Returns 0, or KB_EUNSUP (no NVML) / KB_ENOTFOUND with err filled. */
int kb_profile_nvml_open(const char *pci_bus, kb_nvml **out, kb_err *err);
/* Loads NVML and initialises it on a thread, so that a later
 * kb_profile_nvml_open finds the costly part done (~10 ms, run beside the
 * GPU's opening).  The preload's own NVML reference lasts as long as the
 * process.  Join with kb_profile_nvml_preload_join before the open. */
typedef struct kb_nvml_preload kb_nvml_preload;
kb_nvml_preload *kb_profile_nvml_preload(void);
void kb_profile_nvml_preload_join(kb_nvml_preload *p);
void kb_profile_nvml_close(kb_nvml *n);
/* The environment fingerprint NVML knows: driver version, ECC mode, current
 * and max SM/memory clocks, clock-event (throttle) reasons decoded, power
 * limit, persistence mode, whether clocks are locked. Fields NVML refuses
 * are absent (never 0). A new reference. */
json_t *kb_profile_nvml_env(kb_nvml *n);
/* Starts a thread sampling SM/memory clock and power every ~10 ms, and
 * reads the energy counter. Returns 0 or a KB_E*. */
int kb_profile_nvml_sample_start(kb_nvml *n);
/* Stops it; JSON with min/median/max SM and memory clock, mean power,
 * energy over the interval and per launch (only when the interval was long
 * enough for the ~100 ms energy counter to move; else absent with a reason),
 * and throttle reasons seen. A new reference; NULL when no sampler runs. */
json_t *kb_profile_nvml_sample_stop(kb_nvml *n, int launches);

/* ===== roofline.c ===== */

/* What a kernel's FLOPs run on: CUDA cores, or tensor cores through
 * mma.sync or wgmma (kb_profile_math_of tells from its PTX). */
typedef enum { KB_MATH_CUDA_CORES, KB_MATH_MMA, KB_MATH_WGMMA } kb_math;
kb_math kb_profile_math_of(const char *ptx);

/* Achieved bandwidth and FLOP/s of a run against the GPU's ceilings:
 * measured (ceilings JSON from calibrate, may be NULL) and datasheet (info);
 * a tensor-core kernel's FLOP/s also against the tensor-core peak (the
 * measured wgmma ceiling, else the datasheet's bf16 figure) and, for
 * mma.sync, the measured mma.sync ceiling; its ridge is the tensor peak's.
 * Flags IMPOSSIBLE a time under the physical floor (bytes / best measured
 * bandwidth, FLOPs / best measured rate).  flops < 0: unknown. A new ref. */
json_t *kb_profile_roofline(const kb_device_info *info, json_t *ceilings, double bytes,
			    double flops, double median_us, kb_math math);

/* ===== calibrate.c ===== */

/* Measures this GPU's ceilings with kbench's own micro-kernels: copy
 * bandwidth (read+write bytes), read-only bandwidth, FP32 FMA rate, bf16
 * tensor-core rate, plus a device-to-device cuMemcpy for comparison.
 * JSON with each figure, its method, and the datasheet figure beside it. */
int kb_profile_calibrate(kb_device *d, json_t **out, kb_err *err);
/* Cached ceilings of the GPU with this UUID (under the XDG cache dir), or
 * KB_ENOTFOUND; KB_EINVAL for a UUID that is not a plain file name or a
 * corrupt file. */
int kb_profile_ceilings_load(const char *uuid, json_t **out);
int kb_profile_ceilings_save(const char *uuid, json_t *ceilings, kb_err *err);

/* nvml.c: the names of the clock-event reason bits set in mask ("gpu_idle",
 * "sw_power_cap" ...; unknown bits as one "0x.." string). A new array. */
json_t *kb_profile__nvml_reasons_json(unsigned long long mask);

/* calibrate.c: the micro-kernels' CUDA source (static storage). */
const char *kb_profile__calibrate_source(void);
/* Compiles it for arch ("sm_90") through the compile cache. Returns 0, or a
 * KB_E* with err filled; b is always initialised (free it either way). */
int kb_profile__calibrate_build(const char *arch, kb_build *b, kb_err *err);
/* The same for any of its sources (name as diagnostics show it). */
int kb_profile__calibrate_compile(const char *name, const char *text, const char *arch, kb_build *b,
				  kb_err *err);
/* The sm_90a wgmma probe (calibrate_wgmma.c's source) built for sm_90a, as
 * above. */
int kb_profile__calibrate_wgmma_build(kb_build *b, kb_err *err);
/* calibrate_wgmma.c: the sm_90a wgmma probe's source (made once). */
const char *kb_profile__calibrate_wgmma_source(void);

#endif
