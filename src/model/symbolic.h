/* symbolic.h: the model's miss counts as piecewise quasi-polynomials in a kernel's runtime params (predict --symbolic). */
#ifndef CT_MODEL_SYMBOLIC_H
#define CT_MODEL_SYMBOLIC_H

#include "ir/looptree.h"
#include "model/sim.h"

/* Most runtime params a formula names, and most terms of one polynomial. */
#define SYM_MAXV 8
#define SYM_MAXT 48

/* A polynomial in the runtime params with rational coefficients: sum of num/den * prod
 * var^e. On the formula's domain (each param a multiple of its modulus) every count it
 * gives is an integer. */
typedef struct sym_term {
	int64_t num, den;          /* den > 0, gcd(num, den) = 1 */
	uint8_t e[SYM_MAXV];
} sym_term;

typedef struct sym_poly {
	int n;
	sym_term t[SYM_MAXT];
} sym_poly;

/* Where the accesses of one reuse class find their line (docs/MODEL.md, "Symbolic
 * formulas"). */
typedef enum sym_kind {
	SYM_COLD,      /* first touch of the line in the run: always a miss */
	SYM_STMT,      /* an earlier access of the same statement instance */
	SYM_SIBLING,   /* an earlier child of the same iteration of loop `loop` (-1: of the run) */
	SYM_CARRIED    /* the previous iteration of loop `loop` */
} sym_kind;

/* One reuse class of one storage: `count` accesses whose stack distance lies in
 * [dlo, dhi] lines (both exact when they are one polynomial). */
typedef struct sym_reuse {
	int array;
	sym_kind kind;
	int loop;                  /* SYM_CARRIED, SYM_SIBLING: the loop (r->loop_name) */
	int64_t g;                 /* 0: every iteration; else iterations t with t % g != 0 (cls 1)
	                            * or t % g == 0 (cls 2) of the loop, where arrays change lines */
	int cls;
	int pos;                   /* SYM_CARRIED, SYM_SIBLING: 0, or the reused line lies in the
	                            * first (1), a middle (2) or the last (3) block of loop posloop
	                            * (the first loop inside `loop` its line depends on; a sibling:
	                            * the first of the later child's); 0 also for the classes of
	                            * single positions of a buffer's line (merged by distance) */
	int posloop;
	int ref;                   /* the source reference of the accesses (r->refs), -1 unknown */
	bool at;                   /* one of the classes of single positions of a buffer's line
	                            * (merged by distance; the text groups them) */
	bool spatial;              /* SYM_CARRIED: the array's line changes with the loop every g
	                            * iterations (reuse of the other elements of a line) */
	sym_poly count, dlo, dhi;
} sym_reuse;

/* The reuse classes of one line size, or why there are none. */
typedef struct sym_lines {
	int64_t line;
	const char *why;           /* NULL: analysed; else static text or r->whybuf */
	int n;
	sym_reuse *r;              /* [n], malloc'd */
} sym_lines;

/* One source reference: an access of a statement as written (the read and the write of an
 * op= element are one, "update"). */
typedef struct sym_ref {
	int array;
	int line, col;
	const char *access;        /* "read", "write", "update" */
} sym_ref;

#define SYM_MAXREFS 256

typedef struct sym_result {
	const char *why;           /* NULL: the kernel is in the class the formulas cover */
	char whybuf[256];
	int nvars;
	int var_param[SYM_MAXV];   /* the kernel param of each variable */
	const char *var_name[SYM_MAXV];
	int64_t modulus[SYM_MAXV]; /* the domain: var = modulus * n, n >= 1 */
	int nloops;
	const char *loop_name[64]; /* the loops of the tree in preorder (outer before inner) */
	int loop_parent[64];       /* the loop enclosing each (-1: none) */
	sym_poly trip[64];
	int narrays;               /* storages of the tree */
	const char **array_name;   /* [narrays] (the tree's) */
	int64_t *elem;             /* [narrays] bytes */
	int *nacc;                 /* [narrays] accesses in the statements' text */
	sym_poly *count;           /* [narrays] elements of each storage */
	sym_poly accesses;         /* all storages */
	int nrefs;                 /* 0 when the references could not be told apart */
	sym_ref refs[SYM_MAXREFS];
	const char *file;          /* the kernel's source (may be NULL) */
	sim_spec spec;
	int nlines;
	sym_lines lines[SIM_MAX_LEVELS];
} sym_result;

/* Analyse tree t (its kernel's runtime params need no values) for the levels of spec. A
 * tree outside the class the formulas cover is not an error: r->why says why (or a line
 * size's lines[].why). The kernel's param values are left as they were. An error status
 * only for out of memory (message on t's ctx). Free r with sym_result_free. */
ct_status sym_analyse(ct_looptree *t, const sim_spec *spec, sym_result *r);
void sym_result_free(sym_result *r);

/* Why level l cannot have a formula (NULL: it has one): the kernel's or its line size's
 * reason. */
const char *sym_level_why(const sym_result *r, int l);

/* Level l is set-associative: its formula holds only where no line is evicted (every set
 * holds all the lines that map to it: the misses are the cold ones); elsewhere its conflict
 * misses depend on addresses modulo the sets, which the formulas do not follow. */
bool sym_level_setassoc(const sym_result *r, int l);

/* True when vals (one value per variable) lie in the formula's domain. */
bool sym_in_domain(const sym_result *r, const int64_t *vals);

/* Misses of level l (storage array, or all with array < 0; array >= narrays: reference
 * array - narrays) at vals: *lo == *hi where every
 * reuse class lies on one side of the capacity, else the bounds. *sig (may be NULL) is a
 * hash of which classes miss (changes at a chamber boundary). False when the level has no
 * formula, vals are outside the domain, or a set-associative level evicts there. */
bool sym_level_misses(const sym_result *r, int l, int array, const int64_t *vals, int64_t *lo,
                      int64_t *hi, uint64_t *sig);

/* The formulas of r as text or as one JSON object (json), malloc'd (NULL when out of
 * memory). */
char *sym_render(const sym_result *r, const ct_kernel *k, bool json);

/* p's value at vals, anywhere (off the domain's lattice a count is not one: the tile search
 * ranks with it). */
double sym_poly_value(const sym_poly *p, const int64_t *vals);

/* sympoly: value at vals (exact; false on overflow or a non-integer value). */
bool sym_poly_eval(const sym_poly *p, const int64_t *vals, int64_t *out);

#endif
