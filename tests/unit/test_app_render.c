/*
 * test_app_render.c - `kbench run`'s text for a recorded Result (the fuzz
 * corpus's softmax_v1.json): the resources line says how many clusters of
 * a cluster kernel run at once, and that the GPCs hold fewer than the SMs
 * alone would, only where they do.  No GPU.
 */
#include "t.h"

#include "../../src/app/app.h"

#include <string.h>

/* The corpus Result with its launch given the cluster figures (or none). */
static char *rendered(int at_once, int hold, int launched)
{
	json_t *j = json_load_file("tests/fuzz/corpus/result/softmax_v1.json", 0, NULL);
	json_t *r = json_object_get(j, "result"), *launch = json_object_get(r, "launch");
	if (!launch)
		return NULL;
	if (at_once) {
		json_object_set_new(launch, "cluster_blocks", json_integer(8));
		json_object_set_new(launch, "driver_clusters_at_once", json_integer(at_once));
		json_object_set_new(launch, "clusters_sms_hold", json_integer(hold));
		json_object_set_new(launch, "clusters_launched", json_integer(launched));
	}
	json_object_set(r, "compile", json_object_get(j, "compile"));
	kb_buf out = KB_BUF_INIT;
	kb_app_run_render(r, &out);
	json_decref(j);
	return out.s;
}

static void test_app_render__clusters(void)
{
	char *s = rendered(15, 16, 16);
	T_OK(s != NULL);
	if (!s)
		return;
	T_CONTAINS(s, "= driver's figure; clusters of 8: 15 at once (the SMs alone would hold 16: a cluster "
		      "stays in one GPC), 16 launched;");
	free(s);
	s = rendered(16, 16, 16); /* all fit: no word of the GPCs, nor of the launched */
	T_CONTAINS(s, "clusters of 8: 16 at once;");
	T_OK(!strstr(s, "GPC") && !strstr(s, "launched"));
	free(s);
	s = rendered(0, 0, 0); /* no cluster: no clusters */
	T_CONTAINS(s, "  resources   ");
	T_OK(!strstr(s, "clusters of"));
	free(s);
}

int main(void)
{
	T_RUN(test_app_render__clusters);
	return t_report();
}
