/* fuzz_llm_reply.c - the LLM reply parser (llm_bridge/reply.c, patch.c):
 * the input is a model's answer; its fenced blocks are split out, each
 * diff block applied to a kernel file, the whole answer turned into a
 * candidate for that file, and its gist taken for tables. */
#include "../../src/llm_bridge/llm_bridge.h"
#include "fuzz.h"

static const char base[] =
	"// c = a + b\n"
	"//! arg     n = 1 << 20\n"
	"//! in      a : f32[n] = randn(seed=0)\n"
	"//! out     c : f32[n]\n"
	"//! launch  grid=(cdiv(n, 256)) block=(256)\n"
	"__global__ void add(const float *a, float *c, int n)\n"
	"{\n"
	"\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\tc[i] = a[i] + 1.0f;\n"
	"}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *answer = fuzz_text(data, size);
	kb_llm_block *blocks = NULL;
	int n = kb_llm_blocks(answer, &blocks);
	for (int i = 0; i < n; i++)
		if (blocks[i].kind == KB_LLM_BLOCK_DIFF) {
			kb_buf out = KB_BUF_INIT;
			kb_err err = {0};
			(void)kb_llm_patch(base, blocks[i].text, &out, &err);
			kb_buf_free(&out);
		}
	kb_llm_blocks_free(blocks, n);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	(void)kb_llm_patch(base, answer, &out, &err); /* the answer as a bare diff */
	kb_buf_free(&out);
	char *text = NULL;
	kb_buf why = KB_BUF_INIT;
	if (kb_llm_candidate(base, answer, &text, &why) == KB_LLM_OK)
		free(text);
	kb_buf_free(&why);
	char gist[80];
	kb_llm_gist(answer, gist, sizeof gist);
	free(answer);
	return 0;
}
