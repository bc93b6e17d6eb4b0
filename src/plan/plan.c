/* plan.c: the plan pass: cache regions, buffers, copy loops and access rewriting. */
#include "ir/looptree.h"

ct_status plan_apply(ct_looptree *t)
{
	(void)t;
	return CT_OK;
}
