/* run_views.h: the tests' shorthand for ct_kernel_run_views with an engine and a thread count. */
#ifndef CT_TEST_RUN_VIEWS_H
#define CT_TEST_RUN_VIEWS_H

#include "cachet.h"

/* ct_kernel_run_views on engine e with threads threads (the rest: defaults). */
static inline ct_status run_views(ct_kernel *k, ct_tensor *const *v, ct_engine e, int threads)
{
	ct_run_options o;
	ct_run_options_init(&o);
	o.engine = e;
	o.threads = threads;
	return ct_kernel_run_views(k, v, &o);
}

#endif
