/* project.h: the bounds of a band's loops in its scheduled order, projected from the band's polyhedron (issue #31). */
#ifndef CT_PROJECT_H
#define CT_PROJECT_H

#include "ir/ir.h"

/*
 * A band's iteration space is one convex polyhedron over its original
 * indices (each root's bounds: max of lower terms .. min of upper terms,
 * affine in params, indices outside the band and the band's roots written
 * outside it). When the schedule's order puts a root before one its bounds
 * use, every root of the band takes the bounds of the polyhedron projected
 * onto it and the roots whose loops come before it (isl, innermost root
 * first; constraints with a coefficient other than 1 or -1 on the root are
 * left out, existential variables eliminated as rationals): the loop of
 * each root runs over a superset of the integer projection (an outer value
 * may see an empty inner range) and every written bound holds at the loop
 * of its innermost root, so the nest runs exactly the written instances.
 * A term that the bounds of the loops outside it, the other terms and the
 * params' values imply is left out (isl's integer emptiness); a band whose
 * written bounds have no instance at all runs every loop over 0 .. 0.
 * Orders that keep every bound's loops outside it (every rectangular band)
 * never call isl. The loop tree (looptree.c), the dependence test (deps.c)
 * and the checks (src/lang/check.c) all ask proj_band_bounds, so they
 * cannot disagree.
 */

/* The bounds of one root in the band's order: max(los) .. min(his) - 1,
 * each term affine in params, indices outside the band and roots of the
 * band whose loops come before it. */
typedef struct proj_bounds {
	int nlo, nhi;
	const aff *los, *his;
} proj_bounds;

typedef struct proj_band {
	/* some affine root's bounds use a root of the band that the order puts
	 * inside it; when false every root keeps its own bounds */
	bool projected;
	proj_bounds *b;        /* [k->nindices]: set for the band's roots when projected */
	/* on CT_ERR_INPUT: the root whose bounds cannot be written, and why */
	int bad;
	char err[320];
} proj_band;

/* The bounds of the roots of the band whose scheduled loop order is
 * order[0..n) (sched_band_order), memory from arena a. CT_OK;
 * CT_ERR_INPUT with p->bad and p->err when some root's projected bounds
 * cannot be written as a max / min of affine terms (a coefficient other
 * than 1 on it: the range would need a division; too many terms; an
 * overflow); CT_ERR_NOMEM. */
ct_status proj_band_bounds(const ct_kernel *k, const int *order, int n, ct_arena *a,
                           proj_band *p);

/* Root r's bounds in the band p was computed for: the projected ones, or
 * its own (a rectangular root's single lo and hi terms). */
proj_bounds proj_root(const ct_kernel *k, const proj_band *p, int r);

/* Whether root r's bounds in the band use an index: its loop is affine in
 * the loop tree (a rectangular root may become one when projected, and an
 * affine root may become rectangular). */
bool proj_root_affine(const ct_kernel *k, const proj_band *p, int r);

/* The first loop of the order whose root's bounds (as proj_root gives
 * them) use a root one of whose chain's loops comes at or after it (that
 * root's whole value is not known there): *x the loop, *y the later
 * loop, *r the root used. False when there is none. */
bool proj_chain_violation(const ct_kernel *k, const proj_band *p, const int *order, int n,
                          int *x, int *y, int *r);

#endif
