/* kgen.h: the generator context through which every piece of generated C / OpenCL C is emitted. */
#ifndef CT_KGEN_H
#define CT_KGEN_H

/*
 * A kg_ctx lets independent sub-generators (a loop, a statement, a cache
 * copy, a register tile, a tail) write one program without knowing about each
 * other, after the kernel-generator context of clBLAS:
 *
 *  - functions are declared up front; a body may be produced lazily by a
 *    generator callback the first time the function is used, and the final
 *    text places every helper before its first caller;
 *  - variables are declared through the context with a sharing policy; two
 *    sub-generators asking for the same name either share one variable or
 *    get separate ones (a retroactive `{ }` block around the earlier user,
 *    or a renamed variable), never a redeclaration or a shadowed name;
 *  - a declaration can be hoisted out of the loops being generated;
 *  - code can be grouped in inline sections whose typed statements (fetch,
 *    arithmetic, store) are emitted in order or merged by type, respecting
 *    the dependences the caller states;
 *  - indentation (tabs), braces and blank lines are the context's job:
 *    generators emit statements and open/close blocks.
 *
 * Errors are sticky: the first failure (out of memory, misuse) is recorded,
 * later calls do nothing, and kg_take reports it. Generators therefore need
 * not check each call; functions that return a name return a placeholder
 * after an error. All memory comes from the ct_ctx allocator.
 *
 * Terms used below. A *section* is the code of one sub-generator between
 * kg_section_begin and kg_section_end (the function body itself is the root
 * section). Two sections are *nested* if one encloses the other, otherwise
 * *non-nested* (e.g. two consecutive sub-generators). A *scope* is a C block:
 * the function body or a block opened with kg_block_open.
 */

#include "core/core.h"

typedef struct kg_ctx kg_ctx;

/* Flags of kg_new. */
enum {
	KG_OPENCL = 1u << 0,     /* emit OpenCL C (kernel qualifiers) rather than C */
	KG_RENAME_ONLY = 1u << 1, /* resolve name clashes by renaming, never by adding { } */
	KG_CUDA = 1u << 2         /* with KG_OPENCL: CUDA C (kernels `extern "C" __global__`) */
};

/* Flags of kg_func_declare. */
enum {
	KG_FUNC_KERNEL = 1u << 0,   /* an entry point: `__kernel` in OpenCL, `extern "C" __global__` in
	                               CUDA, external in C */
	KG_FUNC_STATIC = 1u << 1,   /* `static` in C (ignored in OpenCL) */
	KG_FUNC_INLINE = 1u << 2,   /* `inline` */
	KG_FUNC_ON_DEMAND = 1u << 3 /* emitted only if kg_func_use names it */
};

/* Sharing policy of a variable: with whom a later declaration of the same
 * name and the same type shares it instead of declaring a new one. Both the
 * existing and the new declaration must allow the relation. A section always
 * shares with itself. */
typedef enum kg_share {
	KG_PRIVATE = 0,        /* never shared: the sub-generator's own */
	KG_SHARE_SIBLINGS = 1, /* shared among non-nested sections */
	KG_SHARE_NESTED = 2,   /* shared among nested sections */
	KG_SHARE_BOTH = 3
} kg_share;

/* Type of a statement, for reordering in merge sections. */
typedef enum kg_stype {
	KG_FETCH, /* loads (e.g. a = A[i]) */
	KG_ARITH, /* computation */
	KG_STORE, /* stores (e.g. C[i] = c) */
	KG_OTHER  /* anything else: never moved, and nothing moves across it */
} kg_stype;

/* Statement-ordering policy of a section. */
typedef enum kg_order {
	KG_DIRECT, /* statements in the order given */
	KG_MERGE,  /* fetches, then arithmetic, then stores, dependences kept */
	KG_INHERIT /* no ordering of its own: statements join the enclosing
	            * section's (so nested sub-generators can be merged together);
	            * only a naming scope */
} kg_order;

/* Produces the body of a lazily declared function: called with the context
 * positioned inside the function body; it emits statements and blocks and
 * must leave every section and block it opened closed. */
typedef void (*kg_gen_fn)(kg_ctx *kg, void *ud);

/* ------------------------------------------------------------ lifetime */

/* New context emitting into nothing yet; flags are KG_OPENCL, KG_CUDA, KG_RENAME_ONLY.
 * Keeps ctx (which must outlive it). NULL (error on ctx) if out of memory. */
kg_ctx *kg_new(ct_ctx *ctx, unsigned flags);
/* Forget everything generated or declared (also after an error or kg_take)
 * and clear the sticky error, keeping ctx and flags: the context is as new.
 * Not to be called from inside a body generator. */
void kg_reset(kg_ctx *kg);
/* Release the context and everything it holds. kg_free(NULL) is a no-op. */
void kg_free(kg_ctx *kg);

/* The sticky status: CT_OK, or the first error (also recorded on ctx). */
ct_status kg_status(const kg_ctx *kg);
/* Whether the output language is OpenCL C. */
bool kg_is_opencl(const kg_ctx *kg);
/* Current block depth: 0 outside functions, 1 in a function body, +1 per
 * open block. */
int kg_depth(const kg_ctx *kg);

/* ------------------------------------------------------------ functions */

/* Append one line at file scope before all functions (#include, #pragma,
 * typedef); callable at any time. */
ct_status kg_preamble(kg_ctx *kg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Declare function `name` whose full prototype (return type, name, parameter
 * list; no qualifiers, no `;`) is proto; flags are KG_FUNC_*. If gen is not
 * NULL it produces the body (with ud) on the first kg_func_use, or at kg_take
 * unless KG_FUNC_ON_DEMAND; otherwise the body is written between
 * kg_func_begin and kg_func_end. The parameters become variables of the
 * function body, shared with every section (KG_SHARE_BOTH). Declaring the same
 * name again with identical arguments is a no-op (so helpers can be
 * declared by every generator that needs them); differently, an error.
 * Strings are copied. Callable at any time, also inside another body. */
ct_status kg_func_declare(kg_ctx *kg, const char *name, unsigned flags, const char *proto,
                          kg_gen_fn gen, void *ud);

/* Start writing the body of declared function `name` (declared without a
 * generator, not begun before). Allowed inside another body: that one is
 * suspended until the matching kg_func_end. */
ct_status kg_func_begin(kg_ctx *kg, const char *name);
/* End the body begun by the last kg_func_begin; every section and block
 * opened in it must be closed. */
ct_status kg_func_end(kg_ctx *kg);

/* Say that the current code calls function `name`: the function is placed
 * before the current one in the output and, if its body comes from a
 * generator and is not produced yet, the generator runs now. Returns the
 * function name to splice into the call (owned by kg; "kg_error" after an
 * error). Outside a body it only forces the generation. */
const char *kg_func_use(kg_ctx *kg, const char *name);

/* ------------------------------------------------------------ code */

/* Open a block whose header is the formatted text (e.g. "for (i = 0; i < n;
 * i++)"), emitted as "header {" at the current depth; the next lines are one
 * tab deeper. A block is a fence for statement reordering. Loop counters
 * should be declared with kg_var_declare (not in the header) so that the
 * context knows their names. */
ct_status kg_block_open(kg_ctx *kg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Open a plain `{` block (a scope without header). */
ct_status kg_block_bare(kg_ctx *kg);
/* Close the innermost block and open the next one of the same statement,
 * emitted as "} header {" (e.g. "else", "else if (r < 4)"). Declarations
 * hoisted out of it go before the first header of the chain. */
ct_status kg_block_next(kg_ctx *kg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close the innermost block, which the current section must have opened. */
ct_status kg_block_close(kg_ctx *kg);

/* Emit a statement (formatted; may span lines; no trailing newline needed)
 * of the given type. defs and uses (NULL = none) list, separated by spaces or
 * commas, the names the statement writes and reads; an array element counts
 * as its array name. In a merge section they decide what may move: a
 * statement stays after any earlier one that writes a name it reads or
 * writes, or reads a name it writes. In other sections they are ignored. */
ct_status kg_stmt(kg_ctx *kg, kg_stype type, const char *defs, const char *uses, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));
/* Emit a one-line comment, as a fence. */
ct_status kg_comment(kg_ctx *kg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ sections */

/* Begin a section for one sub-generator, inside the current one. order is
 * the statement policy; for KG_MERGE, flush > 0 emits the queued statements
 * every `flush` groups (a group ends when a statement's type comes before
 * the previous one's, e.g. a fetch after a store), 0 only at fences and at
 * the end. Sections other than KG_INHERIT are fences and are separated from
 * surrounding code by blank lines. */
ct_status kg_section_begin(kg_ctx *kg, kg_order order, int flush);
/* End the current section (its blocks must be closed) and emit what it
 * still queues. Its private variables end with it: if the name is needed
 * again, the section is enclosed in `{ }` (or the new one is renamed). */
ct_status kg_section_end(kg_ctx *kg);

/* ------------------------------------------------------------ variables */

/* Declare variable `name` of type ctype (e.g. "int", "float *", "__local
 * float[16][17]": an array suffix goes after the name), with an optional
 * initializer, in the current block, for the current section, with sharing
 * policy share. Returns the name to use in code (owned by kg, valid until
 * reset; "kg_error" after an error):
 *  - if a visible variable of that name and type may be shared (see
 *    kg_share), its name, and an initializer becomes an assignment (so
 *    with an initializer, const-qualified and array types are never shared);
 *  - otherwise a new variable named `name`, or `name_N` if `name` is taken
 *    and cannot be freed by enclosing an ended section's private variable
 *    in `{ }`.
 * A declaration without initializer in a merge section goes before the
 * statements still queued; one with an initializer is a fence. */
const char *kg_var_declare(kg_ctx *kg, const char *name, const char *ctype, kg_share share,
                           const char *init);
/* Like kg_var_declare, but the declaration is hoisted out of the `levels`
 * innermost open blocks (>= 1): it is emitted before the header of the
 * outermost of them (e.g. an accumulator before the loop that updates it).
 * A shared variable must live at least that far out. The initializer is
 * evaluated there, so it must not use anything declared inside. */
const char *kg_var_hoist(kg_ctx *kg, int levels, const char *name, const char *ctype,
                         kg_share share, const char *init);
/* Name in code of the innermost visible variable declared as `name`, or NULL. */
const char *kg_var_lookup(const kg_ctx *kg, const char *name);

/* ------------------------------------------------------------ result */

/* Finish: produce the bodies still pending, order the functions (helpers
 * before callers, then declaration order; forward declarations for
 * recursion) and return the whole text with *len (may be NULL) set to its
 * length. The caller frees it with ct_free(ctx, text). Returns NULL (*len =
 * 0) and re-records the first error on ctx if any call failed, a body or
 * block is still open, or a declared function has no body. Afterwards only
 * kg_reset or kg_free may be called. */
char *kg_take(kg_ctx *kg, size_t *len);

#endif
