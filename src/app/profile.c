/*
 * profile.c - what `kbench profile` prints: the sections Nsight Compute
 * users know (speed of light, memory, compute, occupancy, warp state,
 * roofline), built from counters with the same metric names, and the hot
 * source lines with their SASS.  A counter that was refused or not
 * collected shows as n/a, never 0.
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *get(json_t *o, const char *k)
{
	return json_object_get(o, k);
}

/* Whether the section being printed had all its counters asked for: then a
 * missing value is shown as n/a (refused or not collected); otherwise rows
 * of counters nobody asked for (a --section quick run) are left out. */
static bool section_complete;

/* "name ......... value unit" or n/a. */
static void row(kb_buf *out, const char *name, json_t *o, const char *key, const char *fmt,
		double scale)
{
	json_t *v = get(o, key);
	if (!json_is_number(v) && !section_complete)
		return;
	kb_buf_catf(out, "    %-34s ", name);
	if (json_is_number(v))
		kb_buf_catf(out, fmt, json_number_value(v) * scale);
	else
		kb_buf_cat(out, "n/a");
	kb_buf_catc(out, '\n');
}

static void sol(json_t *s, kb_buf *out)
{
	kb_buf_cat(out, "  Speed of light\n");
	row(out, "duration", s, "duration_us", "%.2f us", 1);
	row(out, "DRAM throughput", s, "dram_pct", "%.1f %%", 1);
	row(out, "L2 throughput", s, "l2_pct", "%.1f %%", 1);
	row(out, "L1/TEX throughput", s, "l1_pct", "%.1f %%", 1);
	row(out, "SM (compute) throughput", s, "sm_pct", "%.1f %%", 1);
	row(out, "memory throughput", s, "memory_pct", "%.1f %%", 1);
	row(out, "SM clock", s, "sm_clock_ghz", "%.3f GHz", 1);
	if (get(s, "bottleneck"))
		kb_buf_catf(out, "    bottleneck: %s (%s)\n", kb_app__str(s, "bottleneck"),
			    kb_app__str(s, "why"));
}

static void memory(json_t *s, kb_buf *out)
{
	kb_buf_cat(out, "  Memory\n");
	row(out, "DRAM bytes read", s, "dram_read_bytes", "%.0f", 1);
	row(out, "DRAM bytes written", s, "dram_write_bytes", "%.0f", 1);
	row(out, "DRAM bandwidth", s, "dram_GBps", "%.1f GB/s", 1);
	row(out, "L2 hit rate", s, "l2_hit_pct", "%.1f %%", 1);
	row(out, "L1 hit rate", s, "l1_hit_pct", "%.1f %%", 1);
	row(out, "global load sectors/request", s, "load_sectors_per_request", "%.2f (4 = coalesced f32)", 1);
	row(out, "global store sectors/request", s, "store_sectors_per_request", "%.2f", 1);
	row(out, "shared-memory bank conflicts", s, "shared_bank_conflicts", "%.0f", 1);
}

static void compute(json_t *s, kb_buf *out)
{
	kb_buf_cat(out, "  Compute\n");
	row(out, "instructions executed (warp)", s, "instructions", "%.0f", 1);
	row(out, "IPC (per active SM cycle)", s, "ipc", "%.2f", 1);
	row(out, "FP32 FLOPs (FMA = 2)", s, "fp32_flops", "%.4g", 1);
	row(out, "FP64 FLOPs", s, "fp64_flops", "%.4g", 1);
	row(out, "FP16 FLOPs", s, "fp16_flops", "%.4g", 1);
	row(out, "tensor pipe utilisation", s, "tensor_pipe_pct", "%.1f %%", 1);
}

static void occupancy(json_t *s, kb_buf *out)
{
	kb_buf_cat(out, "  Occupancy\n");
	row(out, "theoretical", s, "theoretical_pct", "%.1f %%", 1);
	row(out, "achieved", s, "achieved_pct", "%.1f %%", 1);
	row(out, "achieved warps per SM", s, "achieved_warps_per_sm", "%.1f", 1);
	row(out, "eligible warps per scheduler", s, "eligible_warps_per_scheduler", "%.2f", 1);
	if (json_is_string(get(s, "limiter")))
		kb_buf_catf(out, "    limiter: %s\n", kb_app__str(s, "limiter"));
}

static void stalls(json_t *s, kb_buf *out)
{
	kb_buf_cat(out, "  Warp state (stall reasons per issued instruction)\n");
	size_t i;
	json_t *r;
	json_array_foreach(get(s, "reasons"), i, r) {
		if (i >= 6)
			break;
		kb_buf_catf(out, "    %-34s %.2f  (%.1f %%)\n", kb_app__str(r, "reason"),
			    json_number_value(get(r, "per_issue")), json_number_value(get(r, "share_pct")));
	}
	if (!json_array_size(get(s, "reasons")))
		kb_buf_cat(out, "    n/a\n");
}

static void roof(json_t *s, kb_buf *out)
{
	bool tensor = get(s, "tensor_pipe_pct") != NULL;
	kb_buf_cat(out, "  Roofline (from measured DRAM bytes and FLOPs)\n");
	row(out, "DRAM bytes", s, "dram_bytes", "%.4g", 1);
	row(out, tensor ? "FP32 FLOPs (CUDA cores only)" : "FP32 FLOPs", s, "fp32_flops", "%.4g", 1);
	row(out, "achieved DRAM bandwidth", s, "dram_GBps", "%.1f GB/s", 1);
	row(out, "  of the bandwidth ceiling", s, "pct_of_bandwidth_ceiling", "%.1f %%", 1);
	row(out, "arithmetic intensity", s, "arithmetic_intensity", "%.3g FLOP/B", 1);
	row(out, tensor ? "achieved (CUDA cores only)" : "achieved", s, "TFLOPs", "%.3f TFLOP/s", 1);
	row(out, "  of the roof at this intensity", s, "pct_of_roof", "%.1f %%", 1);
	if (tensor)
		kb_buf_catf(out, "    the tensor pipe was busy %.1f %% of the time, and no counter here counts its FLOPs:\n"
				 "    the run's compute line rates //! flops against the tensor-core ceiling\n",
			    json_number_value(get(s, "tensor_pipe_pct")));
	if (get(s, "side"))
		kb_buf_catf(out, "    %s side of the ridge (%.3g FLOP/B); ceilings: %s\n",
			    kb_app__str(s, "side"), json_number_value(get(s, "ridge_flop_per_byte")),
			    kb_app__str(s, "ceilings"));
}

/* What a warp stall reason means, in a few words (Nsight Compute's names). */
static const char *stall_meaning(const char *reason)
{
	static const char *const m[][2] = {
		{"long_scoreboard", "waiting for global/local memory (L1TEX) data"},
		{"short_scoreboard", "waiting for shared memory or a special-function result"},
		{"drain", "at EXIT, waiting for its memory stores to finish"},
		{"barrier", "waiting at __syncthreads for the rest of the block"},
		{"membar", "waiting at a memory fence"},
		{"lg_throttle", "global/local memory instruction queue full"},
		{"mio_throttle", "shared-memory/special instruction queue full"},
		{"tex_throttle", "texture unit queue full"},
		{"math_pipe_throttle", "the math pipe it needs is busy"},
		{"wait", "a fixed-latency dependency"},
		{"not_selected", "ready, another warp was picked"},
		{"selected", "issuing"},
		{"no_instruction", "waiting for instructions (cache miss or after a branch)"},
		{"branch_resolving", "waiting for a branch target"},
		{"dispatch_stall", "the dispatcher held it back"},
		{"imc_miss", "waiting for the constant cache"},
		{"sleeping", "asleep (nanosleep or yield)"},
		{"misc", "other"},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(m); i++)
		if (!strcmp(m[i][0], reason))
			return m[i][1];
	return NULL;
}

/* "stalls: long_scoreboard 85% (what it means), drain 9%" for one hot line:
 * the reasons of 5% or more of its samples, at most three. */
static void hot_stalls(json_t *line, kb_buf *out)
{
	size_t i;
	json_t *st;
	int shown = 0;
	json_array_foreach(get(line, "stalls"), i, st) {
		double pct = json_number_value(get(st, "share_pct"));
		if (shown == 3 || pct < 5)
			break;
		const char *reason = kb_app__str(st, "reason");
		const char *meaning = shown ? NULL : stall_meaning(reason);
		kb_buf_catf(out, "%s%s %.0f%%%s%s%s", shown ? ", " : "                        stalls: ",
			    reason, pct, meaning ? " (" : "", meaning ? meaning : "", meaning ? ")" : "");
		shown++;
	}
	if (shown)
		kb_buf_cat(out, "\n");
}

/* How many times the conflict-free number of wavefronts an instruction
 * took: wavefronts / ideal (a 32-way conflict reads 32.0, an HGMMA that
 * needs 20 wavefronts by design 1.0); wavefronts per execution where the
 * GPU has no ideal count; 0 when neither is known. */
static double conflict_ways(json_t *e)
{
	double wf = (double)json_integer_value(get(e, "shared_wavefronts"));
	double ideal = (double)json_integer_value(get(e, "shared_wavefronts_ideal"));
	double ex = (double)json_integer_value(get(e, "executions"));
	return ideal > 0 ? wf / ideal : ex > 0 ? wf / ex : 0.0;
}

/* See app.h. */
void kb_app_sassm_counts(json_t *in, kb_buf *out)
{
	json_t *ex = get(in, "executions"), *wf = get(in, "shared_wavefronts"),
	       *bc = get(in, "bank_conflicts");
	if (ex)
		kb_buf_catf(out, "  exec %lld", (long long)json_integer_value(ex));
	if (!json_integer_value(wf) && !json_integer_value(bc))
		return;
	if (wf)
		kb_buf_catf(out, "  smem wavefronts %lld", (long long)json_integer_value(wf));
	if (bc)
		kb_buf_catf(out, "  bank conflicts %lld", (long long)json_integer_value(bc));
	if (wf && conflict_ways(in) > 0)
		kb_buf_catf(out, " (%.1f-way)", conflict_ways(in));
}

/* A hot line's busiest instructions (up to 4, most samples first), each
 * with its share of all samples and the reason its warps stalled most. */
static void hot_insns(json_t *insns, kb_buf *out)
{
	size_t n = json_array_size(insns);
	bool *shown = kb_xcalloc(n + 1, sizeof *shown);
	for (int k = 0; k < 4 && k < (int)n; k++) {
		size_t best = n;
		for (size_t i = 0; i < n; i++)
			if (!shown[i] && (best == n || json_number_value(get(json_array_get(insns, i), "share_pct")) >
						       json_number_value(get(json_array_get(insns, best), "share_pct"))))
				best = i;
		shown[best] = true;
		json_t *in = json_array_get(insns, best);
		const char *stall = kb_app__str(in, "stall");
		kb_buf_catf(out, "                  %5.1f%%  %s", json_number_value(get(in, "share_pct")),
			    kb_app__str(in, "sass"));
		if (stall && *stall)
			kb_buf_catf(out, "   [%s %.0f%%]", stall, json_number_value(get(in, "stall_pct")));
		kb_app_sassm_counts(in, out);
		kb_buf_cat(out, "\n");
	}
	free(shown);
}

static void hot(json_t *r, kb_buf *out)
{
	json_t *lines = get(r, "hot_lines");
	kb_buf_catf(out, "  Hot spots (PC sampling: %lld samples over %lld launches)\n",
		    (long long)json_integer_value(get(r, "hot_samples")),
		    (long long)json_integer_value(get(r, "hot_launches")));
	size_t i, k;
	json_t *l, *s;
	json_array_foreach(lines, i, l) {
		if (i >= 8)
			break;
		const char *file = kb_app__str(l, "file"); /* another file's line */
		if (file[0])
			kb_buf_catf(out, "    %5.1f %%  %s:%lld\n", json_number_value(get(l, "share_pct")), file,
				    (long long)json_integer_value(get(l, "line")));
		else
			kb_buf_catf(out, "    %5.1f %%  line %-4lld %s\n", json_number_value(get(l, "share_pct")),
				    (long long)json_integer_value(get(l, "line")), kb_app__str(l, "text"));
		hot_stalls(l, out);
		if (json_array_size(get(l, "insns")))
			hot_insns(get(l, "insns"), out);
		else /* a Result of an older kbench */
			json_array_foreach(get(l, "sass"), k, s) {
				if (k >= 4)
					break;
				kb_buf_catf(out, "                        %s\n", kb_app__sval(s));
			}
	}
	const char *why = kb_app__str(r, "hot_why");
	if (!json_array_size(lines))
		kb_buf_catf(out, "    (no samples mapped to source lines: SASS line info needs nvdisasm%s%s)\n",
			    why[0] ? ": " : "", why);
}

static json_t *entry_at(json_t *arr, const char *function, uint64_t pc)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) {
		const char *fn = kb_app__str(e, "function");
		if (fn && !strcmp(fn, function) && (uint64_t)json_integer_value(get(e, "pc")) == pc)
			return e;
	}
	return NULL;
}

json_t *kb_app_sassm_insn(json_t *r, const char *function, uint64_t pc)
{
	if (!function)
		return NULL;
	json_t *e = entry_at(get(get(r, "sass_metrics"), "shared"), function, pc);
	return e ? e : entry_at(get(r, "hot"), function, pc);
}

/* "n/a" or the integer at key. */
static const char *int_or_na(json_t *o, const char *key, char *buf, size_t n)
{
	json_t *v = get(o, key);
	if (!json_is_integer(v))
		return "n/a";
	snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	return buf;
}

/* The shared-memory instructions of one instrumented launch, most bank
 * conflicts first: executions, wavefronts, conflicts, ways (conflict_ways),
 * source line and SASS. */
static void sassm(json_t *r, kb_buf *out)
{
	json_t *sm = get(r, "sass_metrics"), *names = get(sm, "metrics");
	char a[32], b[32], c[32];
	kb_buf_catf(out, "\n  Shared memory per instruction (SASS metrics, %lld instrumented launch)\n",
		    (long long)json_integer_value(get(sm, "launches")));
	kb_buf_catf(out, "    bank conflicts %s in %s wavefronts of %lld shared-memory instructions "
		    "(%s executed)\n", int_or_na(sm, "bank_conflicts", a, sizeof a),
		    int_or_na(sm, "shared_wavefronts", b, sizeof b),
		    (long long)json_integer_value(get(sm, "shared_instructions")),
		    int_or_na(sm, "executions", c, sizeof c));
	const char *key;
	json_t *why;
	json_object_foreach(get(sm, "unsupported"), key, why)
		kb_buf_catf(out, "    %s: n/a (%s)\n", key, kb_app__sval(why));
	if (!json_is_string(get(names, "shared_wavefronts_ideal")) &&
	    json_is_string(get(names, "cupti_bank_conflicts")))
		kb_buf_cat(out, "    (conflicts: CUPTI's own count, no ideal wavefronts on this GPU)\n");
	json_t *arr = get(sm, "shared");
	if (!json_array_size(arr))
		return;
	kb_buf_cat(out, "      pc    executions  wavefronts   conflicts   ways  line  SASS\n");
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) {
		if (i >= 12)
			break;
		char ln[16] = "   -";
		if (get(e, "line") && !get(e, "file"))
			snprintf(ln, sizeof ln, "%4lld", (long long)json_integer_value(get(e, "line")));
		kb_buf_catf(out, "    %04llx %12s %11s %11s %6.1f  %s  %s\n",
			    (unsigned long long)json_integer_value(get(e, "pc")),
			    int_or_na(e, "executions", a, sizeof a),
			    int_or_na(e, "shared_wavefronts", b, sizeof b),
			    int_or_na(e, "bank_conflicts", c, sizeof c), conflict_ways(e), ln,
			    json_is_string(get(e, "sass")) ? kb_app__str(e, "sass") : "?");
	}
	if (json_array_size(arr) > 12)
		kb_buf_catf(out, "    ... %zu more in --json\n", json_array_size(arr) - 12);
}

void kb_app_profile_render(json_t *r, kb_buf *out)
{
	json_t *err = get(r, "counters_error"), *secs = get(r, "sections");
	if (err)
		kb_buf_catf(out, "\n  counters: unavailable - %s\n", kb_app__str(err, "message"));
	if (secs) {
		const char *cache = kb_app__str(r, "cache_control");
		kb_buf_catf(out, "\n  counters: %lld replay passes, %.0f ms, L2 flushed before %s\n",
			    (long long)json_integer_value(get(r, "counters_passes")),
			    json_number_value(get(r, "counters_ms")),
			    cache && !strcmp(cache, "none") ? "the first pass only (--cache-control none)"
							    : "every pass");
		struct { const char *name; void (*fn)(json_t *, kb_buf *); } parts[] = {
			{"sol", sol}, {"memory", memory}, {"compute", compute}, {"occupancy", occupancy},
			{"stalls", stalls}, {"roofline", roof},
		};
		json_t *ctr = get(r, "counters");
		for (size_t i = 0; i < KB_ARRAY_LEN(parts); i++) {
			const kb_section *sec = kb_profile_section(parts[i].name);
			int asked = 0;
			for (int m = 0; sec && m < sec->nmetrics; m++)
				asked += get(ctr, sec->metrics[m]) != NULL;
			section_complete = sec && asked == sec->nmetrics;
			if (asked)
				parts[i].fn(get(secs, parts[i].name), out);
		}
	}
	json_t *herr = get(r, "hot_error");
	if (herr)
		kb_buf_catf(out, "  hot spots: unavailable - %s\n", kb_app__str(herr, "message"));
	if (get(r, "hot"))
		hot(r, out);
	json_t *serr = get(r, "sass_metrics_error");
	if (serr)
		kb_buf_catf(out, "  SASS metrics: unavailable - %s\n",
			    kb_app__str(serr, "message"));
	if (get(r, "sass_metrics"))
		sassm(r, out);
}
