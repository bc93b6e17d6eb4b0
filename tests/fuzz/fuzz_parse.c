/* fuzz_parse.c: libFuzzer harness: any bytes through the parser, the checks, overrides and
 * re-checks. */
#include "cachet.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ct_ctx *ctx = ct_ctx_new();
	if (!ctx)
		return 0;
	ct_kernel *k = ct_kernel_parse(ctx, (const char *)data, size, "fuzz.cachet");
	for (int d = 0; d < ct_ctx_diag_count(ctx); d++)
		(void)ct_ctx_diag_render(ctx, d);
	if (k) {
		(void)ct_kernel_flops(k);
		/* give runtime params a value and shrink/grow the others: the
		 * re-check must cope with any sizes */
		int64_t v = size % 7 == 0 ? 1 : (int64_t)(size % 40) - 3;
		for (int i = 0; i < ct_kernel_param_count(k); i++)
			ct_kernel_set_param(k, ct_kernel_param_name(k, i), v);
		(void)ct_kernel_recheck(k);
		(void)ct_kernel_flops(k);
		for (int i = 0; i < ct_kernel_array_count(k); i++)
			(void)ct_kernel_array_elements(k, i);
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	return 0;
}
