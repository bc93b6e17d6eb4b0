/* fuzz_plan.c: libFuzzer harness: any bytes that parse and check go through the schedule, the plan
 * pass, the loop-tree printers and the C and OpenCL emitters (nothing is compiled or run). */
#include "cachet.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 0;
	ct_kernel *k = ct_kernel_parse(ctx, (const char *)data, size, "fuzz.cachet");
	/* runtime params get a small value; huge boxes are skipped (the plan pass enumerates blocks) */
	for (int i = 0; k && i < ct_kernel_param_count(k); i++)
		if (ct_kernel_param_is_runtime(k, i))
			ct_kernel_set_param(k, ct_kernel_param_name(k, i), 5);
	if (k && ct_kernel_recheck(k) == CT_OK) {
		int64_t total = 0;
		for (int i = 0; i < ct_kernel_array_count(k); i++)
			total += ct_kernel_array_elements(k, i);
		if (total >= 0 && total <= (1 << 16)) {
			for (int s = 0; s < 2; s++) {
				ct_looptree *t = ct_kernel_lower(k, s);
				if (t) {
					free(ct_looptree_to_string(t, CT_FORMAT_TEXT));
					free(ct_looptree_to_string(t, CT_FORMAT_JSON));
					ct_looptree_free(t);
				}
			}
			free(ct_kernel_emit(k, "host", NULL));
			free(ct_kernel_emit(k, "opencl", NULL));
		}
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return 0;
}
