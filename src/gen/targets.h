/* targets.h: the generator column of the targets' table: which emitter prints a target's source. */
#ifndef CT_GEN_TARGETS_H
#define CT_GEN_TARGETS_H

#include "gen/ocl.h"
#include "ir/targets.h"

/* An emitter: the source of planned loop tree t for one target, its
 * length in *len and, for a GPU target when L is not NULL, its launch.
 * Returns a malloc'd string, NULL with the error on the kernel's ctx. */
typedef char *(*gen_emit_fn)(ct_looptree *t, size_t *len, ocl_launch *L);

/* The generator's part of a target's row (the facts are ir_target_info). */
typedef struct gen_target {
	ir_target id;
	gen_emit_fn emit; /* gen_c (host C), gen_opencl, gen_cuda */
	/* whether emit reads this machine's vector width (register tiles)
	 * from the probe unless CT_OPT_VECTOR_BYTES is set: gen_validate pins
	 * 16 bytes rather than probe, as the width never decides whether the
	 * code can be generated */
	bool probes_machine;
} gen_target;

/* The generator row of target t (the host's for a value no row has). */
const gen_target *gen_target_row(ir_target t);

#endif
