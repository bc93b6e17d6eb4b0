/* interp_tree.c: the interpreter's compiler for the loop tree: statements, ifs and their facts, loops with their register updates, the program and its views. */
#include "interp/interp_internal.h"
#include "ir/slots.h"

#include <string.h>

/* ------------------------------------------------------------ ip_compile: nodes */

/* ref: the first reference id of the node's accesses; -1 for none. */
static void begin_code(cp *c, int ref)
{
	c->ncode = c->ntr = c->nchk = 0;
	c->ref = ref;
}

/* Copy the current code, trace and checks into n (arena). */
static void end_code(cp *c, ip_node *n, bool keep_trace)
{
	ip_emit(c, OP_END, 0, 0, 0, 0, 0);
	if (c->st)
		return;
	n->code = ct_arena_alloc(c->arena, sizeof *n->code * (size_t)c->ncode);
	if (n->code)
		memcpy(n->code, c->code, sizeof *n->code * (size_t)c->ncode);
	if (keep_trace && c->ntr) {
		n->tr = ct_arena_alloc(c->arena, sizeof *n->tr * (size_t)c->ntr);
		if (n->tr)
			memcpy(n->tr, c->tr, sizeof *n->tr * (size_t)c->ntr);
		n->ntr = c->ntr;
	}
	if (c->nchk) {
		n->chk = ct_arena_alloc(c->arena, sizeof *n->chk * (size_t)c->nchk);
		if (n->chk)
			memcpy(n->chk, c->chk, sizeof *n->chk * (size_t)c->nchk);
		n->nchk = c->nchk;
	}
	if (c->arena->failed)
		ip_cp_fail(c, CT_ERR_NOMEM);
}

/* Fuse `X[p] += Y * Z` (f32/f64, all three of the same type) into one
 * instruction: the statement of every matmul-like kernel. */
static void fuse_mac(cp *c)
{
	if (c->ncode != 4)
		return;
	ip_insn *m = &c->code[2], *s = &c->code[3];
	for (int rep = R_F; rep <= R_D; rep++) {
		ct_dtype t = rep == R_F ? CT_F32 : CT_F64;
		if (c->code[0].op == OP_LD + (int)t && c->code[1].op == OP_LD + (int)t &&
		    m->op == AR(rep, A_MUL) && m->a == c->code[0].dst && m->b == c->code[1].dst &&
		    s->op == OP_ST + 4 * (int)t + AS_ADD && s->c == m->dst) {
			s->op = rep == R_F ? OP_MAC_F32 : OP_MAC_F64;
			s->c = m->a;
			s->dst = m->b;
			*m = *s;
			c->ncode = 3;
			return;
		}
	}
}

static bool comp_stmt(cp *c, ip_node *n, const ir_node *s)
{
	const ct_kernel *k = c->k;
	if (!s || !s->rhs)
		return ip_cp_err(c, CT_ERR_INPUT, "malformed statement%s", "");
	if (s->kind == ND_LET) {
		begin_code(c, s->let_id >= 0 && s->let_id < k->nlets ? c->let_ref[s->let_id] : -1);
		int v = ip_cx(c, s->rhs, 0);
		int lr = ip_let_reg(c, s->let_id);
		if (c->st)
			return false;
		v = ip_conv(c, v, ip_rep_of(s->rhs->type), ip_rep_of(k->lets[s->let_id].type));
		ip_emit(c, OP_MOV, lr, v, 0, 0, 0);
		end_code(c, n, true);
		return !c->st;
	}
	if (!s->lhs || s->lhs->kind != EX_ACCESS || s->lhs->id < 0 || s->lhs->id >= c->t->narrays ||
	    s->op < AS_SET || s->op > AS_MUL)
		return ip_cp_err(c, CT_ERR_INPUT, "malformed statement%s", "");
	/* statements cloned into cache regions keep their stmt_id and share the
	 * original's references; cache copies (stmt_id 0) have none */
	begin_code(c, s->stmt_id >= 1 && s->stmt_id <= k->nstmts ? c->stmt_ref[s->stmt_id] : -1);
	ct_dtype t = c->t->arrays[s->lhs->id].type;
	int v = ip_cx_as(c, s->rhs, ip_rep_of(t), 0);
	int reg;
	int64_t disp;
	if (!ip_comp_access(c, s->lhs, &reg, &disp))
		return false;
	if (s->op != AS_SET)
		ip_add_trace(c, s->lhs->id, reg, disp, false);
	ip_add_trace(c, s->lhs->id, reg, disp, true);
	ip_emit(c, OP_ST + 4 * (int)t + (int)s->op, 0, s->lhs->id, reg, v, disp);
	fuse_mac(c);
	end_code(c, n, true);
	return !c->st;
}

static ip_node **comp_list(cp *c, lt_node *const *v, int n);

/* A condition made of affine comparisons joined by && only. */
static bool cond_is_conj(const ir_expr *e, int depth)
{
	if (!e || depth > IR_MAX_EXPR_DEPTH)
		return false;
	if (e->kind == EX_AND && e->nargs == 2)
		return cond_is_conj(e->args[0], depth + 1) && cond_is_conj(e->args[1], depth + 1);
	return e->kind == EX_CMP && e->nargs == 2 && e->has_diff && e->cmp >= CMP_LT &&
	       e->cmp <= CMP_NE && ip_expr_is_index_only(e->args[0]) && ip_expr_is_index_only(e->args[1]);
}

static int count_conj(const ir_expr *e)
{
	return e->kind == EX_AND ? count_conj(e->args[0]) + count_conj(e->args[1]) : 1;
}

/* Compile the comparisons of a conjunction into out[*n...]. */
static void comp_conj(cp *c, const ir_expr *e, ip_conj *out, int *n)
{
	if (c->st)
		return;
	if (e->kind == EX_AND) {
		comp_conj(c, e->args[0], out, n);
		comp_conj(c, e->args[1], out, n);
		return;
	}
	int64_t cst;
	int r;
	if (!ip_aff_operand(c, e->diff, &r, &cst))
		return;
	out[*n].reg = r;
	out[*n].disp = cst;
	out[*n].cmp = (int32_t)e->cmp;
	(*n)++;
}

/* Push the fact scale * x + off >= 0 (over the symbols of the path); a
 * fact that overflows or names a malformed term is simply not used. */
static void push_fact(cp *c, aff x, int64_t scale, int64_t off)
{
	int ns = IP_NSYM(c->t->nindices);
	if (!ip_grow(c, (void **)&c->facts, &c->cap_facts, c->nfacts + 1, sizeof *c->facts))
		return;
	cp_fact *f = &c->facts[c->nfacts];
	f->coef = ct_arena_alloc(c->arena, sizeof *f->coef * (size_t)(ns + 1));
	f->cst = off;
	if (!f->coef) {
		ip_cp_fail(c, CT_ERR_NOMEM);
		return;
	}
	if (ip_lin_coefs(c, x, scale, f->coef, &f->cst) == LC_OK)
		c->nfacts++;
}

/* Push the facts "g >= 0" that comparison e (negated when neg) gives:
 * diff < 0 is -diff - 1 >= 0, and so on. */
static void push_cmp_facts(cp *c, const ir_expr *e, bool neg)
{
	ir_cmp cmp = e->cmp;
	if (neg) {
		static const ir_cmp inv[] = {
		    [CMP_LT] = CMP_GE, [CMP_LE] = CMP_GT, [CMP_GT] = CMP_LE,
		    [CMP_GE] = CMP_LT, [CMP_EQ] = CMP_NE, [CMP_NE] = CMP_EQ};
		cmp = inv[cmp];
	}
	switch (cmp) {
	case CMP_LT:
		push_fact(c, e->diff, -1, -1);
		break;
	case CMP_LE:
		push_fact(c, e->diff, -1, 0);
		break;
	case CMP_GT:
		push_fact(c, e->diff, 1, -1);
		break;
	case CMP_GE:
		push_fact(c, e->diff, 1, 0);
		break;
	case CMP_EQ:
		push_fact(c, e->diff, 1, 0);
		push_fact(c, e->diff, -1, 0);
		break;
	case CMP_NE:
		break;
	}
}

static void push_facts(cp *c, const ir_expr *e, bool neg)
{
	if (e->kind == EX_AND) {
		if (neg)
			return; /* !(a && b) says nothing about a or b alone */
		push_facts(c, e->args[0], false);
		push_facts(c, e->args[1], false);
		return;
	}
	push_cmp_facts(c, e, neg);
}

/* floor(a / b) for b >= 1. */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return a % b != 0 && a < 0 ? q - 1 : q;
}

/* Copy an update list into the arena (NULL when empty). */
static ip_upd *keep_upd(cp *c, const ip_upd *u, int n)
{
	if (c->st || n == 0)
		return NULL;
	ip_upd *r = ct_arena_alloc(c->arena, sizeof *r * (size_t)n);
	if (r)
		memcpy(r, u, sizeof *r * (size_t)n);
	else
		ip_cp_fail(c, CT_ERR_NOMEM);
	return r;
}

/* The terms of affine loop x as (register, displacement) pairs of n. */
static bool comp_affine_bounds(cp *c, ip_node *n, const lt_node *x)
{
	for (int side = 0; side < 2; side++) {
		int m = side ? x->ndhi : x->ndlo;
		const aff *v = side ? x->dhi : x->dlo;
		ip_conj *q = ct_arena_alloc(c->arena, sizeof *q * (size_t)m);
		if (!q) {
			ip_cp_fail(c, CT_ERR_NOMEM);
			return false;
		}
		for (int j = 0; j < m; j++) {
			int r;
			int64_t d;
			if (!ip_aff_operand(c, v[j], &r, &d))
				return ip_cp_err(c, CT_ERR_LIMIT,
				                 "a bound of loop '%s' overflows 64 bits",
				                 c->t->indices[x->index].name);
			q[j].reg = r;
			q[j].disp = d;
			q[j].cmp = 0;
		}
		if (side) {
			n->dhi = q;
			n->ndhi = m;
		} else {
			n->dlo = q;
			n->ndlo = m;
		}
	}
	return true;
}

/* The range [*lo, *hi) the variable of affine loop n takes over all its
 * entries: at least the largest least value of its lower terms, below the
 * smallest greatest value of its upper terms. */
static bool affine_range(cp *c, const ip_node *n, int64_t *lo, int64_t *hi)
{
	for (int j = 0; j < n->ndlo; j++) {
		int64_t l, h;
		if (!ip_disp_range(c, n->dlo[j].reg, n->dlo[j].disp, &l, &h))
			return false;
		*lo = l > *lo ? l : *lo;
	}
	for (int j = 0; j < n->ndhi; j++) {
		int64_t l, h;
		if (!ip_disp_range(c, n->dhi[j].reg, n->dhi[j].disp, &l, &h))
			return false;
		*hi = h < *hi ? h : *hi;
	}
	return *lo != LT_NO_LO && *hi != LT_NO_HI;
}

/* Inside affine loop x: v >= L for each lower term, H - 1 >= v for each
 * upper one (the facts that prove the body's accesses in bounds). */
static void push_affine_facts(cp *c, const lt_node *x)
{
	bool ok = true;
	aff v = aff_sym1(c->arena, AFF_LOOP, x->index, 1, &ok);
	for (int j = 0; j < x->ndlo && ok; j++)
		push_fact(c, aff_sub(c->arena, v, x->dlo[j], &ok), 1, 0);
	for (int j = 0; j < x->ndhi && ok; j++)
		push_fact(c, aff_sub(c->arena, x->dhi[j], v, &ok), 1, -1);
}

static bool comp_loop(cp *c, ip_node *n, const lt_node *x)
{
	if (x->step < 1 || x->index < 0 || x->index >= c->t->nindices)
		return ip_cp_err(c, CT_ERR_INPUT, "malformed loop%s", "");
	const char *name = c->t->indices[x->index].name;
	bool ok = true;
	n->lo = bx_eval(x->lo, c->pv, &ok);
	n->hi = bx_eval(x->hi, c->pv, &ok);
	n->step = x->step;
	n->parallel = x->parallel;
	if (x->parallel && x->par_item >= 0 && x->par_item < c->t->k->nplan &&
	    c->t->k->plan[x->par_item].kind == PL_PARALLELIZE)
		n->par_max = c->t->k->plan[x->par_item].max_threads;
	if (!ok)
		return ip_cp_err(c, CT_ERR_LIMIT, "bounds of loop '%s' overflow 64 bits", name);
	if (lt_affine_loop(x) && !comp_affine_bounds(c, n, x))
		return false;
	cp_open o;
	memset(&o, 0, sizeof o);
	o.index = x->index;
	o.lo = o.last = n->lo;
	o.empty = n->hi <= n->lo;
	/* the static range of an affine loop from its terms' ranges */
	int64_t slo = n->lo, shi = n->hi;
	if (lt_affine_loop(x) && !affine_range(c, n, &slo, &shi))
		return ip_cp_err(c, CT_ERR_LIMIT, "bounds of loop '%s' overflow 64 bits", name);
	o.lo = o.last = slo;
	o.empty = shi <= slo;
	/* v += step after the last iteration must not overflow: the rule
	 * check proves on every loop whose bounds it knows (plan/edges.c) */
	if (!o.empty && !ct_loop_last(slo, shi, n->step, &o.last))
		return ip_cp_err(c, CT_ERR_LIMIT, "loop '%s' overflows 64 bits", name);
	/* the trip counter: floor(v / step), one more per iteration */
	n->trip0 = o.tlo = floor_div(slo, n->step);
	o.tlast = floor_div(o.last, n->step);
	o.prev_lvl = c->lvl[x->index];
	o.prev_fact_base = c->fact_base;
	if (!ip_grow(c, (void **)&c->path, &c->cap_path, c->depth + 1, sizeof *c->path))
		return false;
	/* a loop that shadows one over the same index makes the facts about
	 * the outer one meaningless inside it */
	if (o.prev_lvl >= 0)
		c->fact_base = c->nfacts;
	c->lvl[x->index] = c->depth;
	c->path[c->depth++] = o;
	int nf = c->nfacts;
	if (lt_affine_loop(x))
		push_affine_facts(c, x);
	n->kids = comp_list(c, x->kids, x->nkids);
	c->nfacts = nf;
	n->nkids = c->st ? 0 : x->nkids;
	cp_open *top = &c->path[--c->depth];
	c->lvl[x->index] = top->prev_lvl;
	c->fact_base = top->prev_fact_base;
	n->upd = keep_upd(c, top->upd, top->nupd);
	n->nupd = n->upd ? top->nupd : 0;
	n->tupd = keep_upd(c, top->tupd, top->ntupd);
	n->ntupd = n->tupd ? top->ntupd : 0;
	n->qupd = keep_upd(c, top->qupd, top->nqupd);
	n->nqupd = n->qupd ? top->nqupd : 0;
	ct_free(c->ctx, top->upd);
	ct_free(c->ctx, top->tupd);
	ct_free(c->ctx, top->qupd);
	top->upd = top->tupd = top->qupd = NULL;
	/* the fast paths of exec_loop know no trip counters (nor row starts) */
	n->fast = n->nkids == 1 && n->kids[0]->kind == LT_STMT && n->kids[0]->nchk == 0 && n->ntupd == 0 &&
	          n->nqupd == 0;
	return !c->st;
}

/* An `if` of the plan: guard[0] >= 0 && ... (no else). */
static void comp_guard_if(cp *c, ip_node *n, const lt_node *x)
{
	if (x->nguard < 0 || (x->nguard > 0 && !x->guard)) {
		ip_cp_err(c, CT_ERR_INPUT, "malformed if%s", "");
		return;
	}
	n->is_conj = true;
	if (x->nguard > 0) {
		n->conj = ct_arena_alloc(c->arena, sizeof *n->conj * (size_t)x->nguard);
		if (!n->conj) {
			ip_cp_fail(c, CT_ERR_NOMEM);
			return;
		}
	}
	for (int i = 0; i < x->nguard && !c->st; i++) {
		int64_t cst;
		int r;
		if (!ip_aff_operand(c, x->guard[i], &r, &cst))
			return;
		n->conj[n->nconj].reg = r;
		n->conj[n->nconj].disp = cst;
		n->conj[n->nconj].cmp = CMP_GE;
		n->nconj++;
	}
	int nf = c->nfacts;
	for (int i = 0; i < x->nguard && !c->st; i++)
		push_fact(c, x->guard[i], 1, 0);
	n->kids = comp_list(c, x->kids, x->nkids);
	n->nkids = x->nkids;
	c->nfacts = nf;
	n->els = comp_list(c, x->els, x->nels);
	n->nels = x->nels;
}

static ip_node *comp_node(cp *c, const lt_node *x)
{
	ip_node *n = ct_arena_alloc(c->arena, sizeof *n);
	if (!n) {
		ip_cp_fail(c, CT_ERR_NOMEM);
		return NULL;
	}
	n->kind = x->kind;
	switch (x->kind) {
	case LT_LOOP:
		comp_loop(c, n, x);
		break;
	case LT_STMT:
	case LT_LET:
		comp_stmt(c, n, x->stmt);
		break;
	case LT_IF: {
		if (!x->stmt) {
			comp_guard_if(c, n, x);
			break;
		}
		if (!x->stmt->cond) {
			ip_cp_err(c, CT_ERR_INPUT, "malformed if%s", "");
			break;
		}
		const ir_expr *cond = x->stmt->cond;
		bool conj = cond_is_conj(cond, 0);
		if (conj) {
			n->is_conj = true;
			n->conj =
			    ct_arena_alloc(c->arena, sizeof *n->conj * (size_t)count_conj(cond));
			if (!n->conj) {
				ip_cp_fail(c, CT_ERR_NOMEM);
				break;
			}
			comp_conj(c, cond, n->conj, &n->nconj);
		} else {
			begin_code(c, -1);
			int r = ip_cx(c, cond, 0);
			n->cond = ip_truth(c, r, ip_rep_of(cond->type));
			n->cond_reads = c->ntr > 0;
			if (n->cond_reads && c->trace) {
				ip_cp_err(
				    c, CT_ERR_UNSUPPORTED,
				    "the trace cannot follow an if that reads arrays (kernel '%s')",
				    c->k->name);
				break;
			}
			end_code(c, n, false);
		}
		int nf = c->nfacts;
		if (conj)
			push_facts(c, cond, false);
		n->kids = comp_list(c, x->kids, x->nkids);
		n->nkids = x->nkids;
		c->nfacts = nf;
		if (conj)
			push_facts(c, cond, true);
		n->els = comp_list(c, x->els, x->nels);
		n->nels = x->nels;
		c->nfacts = nf;
		break;
	}
	case LT_CACHE:
		/* a cache region: its copies and body run in order, in the
		 * run as in the trace */
		c->has_cache = true;
		n->kids = comp_list(c, x->kids, x->nkids);
		n->nkids = x->nkids;
		break;
	}
	return c->st ? NULL : n;
}

static ip_node **comp_list(cp *c, lt_node *const *v, int n)
{
	if (n <= 0 || c->st)
		return NULL;
	ip_node **r = ct_arena_alloc(c->arena, sizeof *r * (size_t)n);
	if (!r) {
		ip_cp_fail(c, CT_ERR_NOMEM);
		return NULL;
	}
	for (int i = 0; i < n && !c->st; i++)
		r[i] = comp_node(c, v[i]);
	return c->st ? NULL : r;
}

/* ------------------------------------------------------------ references */

static int count_reads(const ir_expr *e)
{
	if (!e)
		return 0;
	int n = e->kind == EX_ACCESS ? 1 : 0;
	for (int i = 0; i < e->nargs; i++)
		n += count_reads(e->args[i]);
	return n;
}

static void list_reads(const ir_expr *e, interp_ref *out, int *n, const ir_node *s)
{
	if (!e)
		return;
	if (e->kind == EX_ACCESS) {
		interp_ref *r = &out[*n];
		r->array = e->id;
		r->node = s;
		r->stmt = s->kind == ND_STMT ? s->stmt_id : 0;
		r->pos = 0;
		r->is_write = false;
		(*n)++;
	}
	for (int i = 0; i < e->nargs; i++)
		list_reads(e->args[i], out, n, s);
}

/* Number the references of the IR in textual order; fills stmt_ref and
 * let_ref (base id of each statement and let) and, when out is non-NULL,
 * the table. Returns the count. */
static int ref_walk(const ct_kernel *k, ir_node *const *body, int nbody, int n, int *stmt_ref,
                    int *let_ref, interp_ref *out)
{
	for (int i = 0; i < nbody; i++) {
		const ir_node *s = body[i];
		switch (s->kind) {
		case ND_FOR:
			n = ref_walk(k, s->body, s->nbody, n, stmt_ref, let_ref, out);
			break;
		case ND_IF:
			n = ref_walk(k, s->body, s->nbody, n, stmt_ref, let_ref, out);
			n = ref_walk(k, s->els, s->nels, n, stmt_ref, let_ref, out);
			break;
		case ND_STMT:
		case ND_LET: {
			int base = n;
			if (s->kind == ND_STMT && s->stmt_id >= 1 && s->stmt_id <= k->nstmts &&
			    stmt_ref)
				stmt_ref[s->stmt_id] = base;
			if (s->kind == ND_LET && s->let_id >= 0 && s->let_id < k->nlets && let_ref)
				let_ref[s->let_id] = base;
			if (out) {
				int m = n;
				list_reads(s->rhs, out, &m, s);
				if (s->kind == ND_STMT && s->lhs) {
					for (int w = s->op == AS_SET ? 1 : 0; w < 2; w++) {
						interp_ref *r = &out[m++];
						r->array = s->lhs->id;
						r->node = s;
						r->stmt = s->stmt_id;
						r->is_write = w == 1;
					}
				}
				for (int j = n; j < m; j++)
					out[j].pos = j - n;
			}
			n += count_reads(s->rhs);
			if (s->kind == ND_STMT)
				n += s->op == AS_SET ? 1 : 2;
			break;
		}
		}
	}
	return n;
}

ct_status interp_refs(const ct_looptree *t, interp_ref **refs, int *n)
{
	const ct_kernel *k = t->k;
	*refs = NULL;
	*n = 0;
	int cnt = ref_walk(k, k->body, k->nbody, 0, NULL, NULL, NULL);
	interp_ref *r = ct_alloc(k->ctx, sizeof *r * (size_t)(cnt + 1));
	if (!r)
		return CT_ERR_NOMEM;
	ref_walk(k, k->body, k->nbody, 0, NULL, NULL, r);
	*refs = r;
	*n = cnt;
	return CT_OK;
}

/* ------------------------------------------------------------ ip_compile: program */

void ip_prog_free(ct_ctx *ctx, ip_prog *p)
{
	if (!p)
		return;
	ct_free(ctx, p->regs);
	ct_arena_free(&p->arena);
	ct_free(ctx, p);
}

static void cp_release(cp *c)
{
	ct_ctx *ctx = c->ctx;
	for (int l = 0; l < c->depth; l++) {
		ct_free(ctx, c->path[l].upd);
		ct_free(ctx, c->path[l].tupd);
		ct_free(ctx, c->path[l].qupd);
	}
	ct_free(ctx, c->path);
	ct_free(ctx, c->lvl);
	ct_free(ctx, c->pv);
	ct_free(ctx, c->stride);
	ct_free(ctx, c->origin);
	ct_free(ctx, c->let_reg);
	ct_free(ctx, c->range);
	ct_free(ctx, c->coef);
	ct_free(ctx, c->ext);
	ct_free(ctx, c->facts);
	ct_free(ctx, c->code);
	ct_free(ctx, c->tr);
	ct_free(ctx, c->chk);
	ct_free(ctx, c->stmt_ref);
	ct_free(ctx, c->let_ref);
	ct_free(ctx, c->regs);
}

ip_prog *ip_compile_views(ct_looptree *t, bool trace, const int64_t *view,
                              const int64_t *view_nelem);

/* Compile t for a run (trace = false) or for the trace. NULL with the error
 * on the kernel's ctx. */
ip_prog *ip_compile(ct_looptree *t, bool trace)
{
	return ip_compile_views(t, trace, NULL, NULL);
}

/* The layout of strided array a from the view values: its strides replace
 * the declared layout's, its base becomes the origin of every access, and
 * its buffer size bounds the run-time checks. */
static void apply_view(cp *c, int a)
{
	int slot = view_slot(c->k, a);
	if (!c->view || slot < 0)
		return;
	const int64_t *v = c->view + c->k->nparams + slot;
	c->origin[a] = v[0];
	for (int d = 0; d < c->t->arrays[a].rank; d++)
		c->stride[a * IR_MAX_RANK + d] = v[1 + d];
	c->nelem[a] = c->view_nelem[a];
}

/* ip_compile(), with the strided arrays laid out by view (NULL: densely). */
ip_prog *ip_compile_views(ct_looptree *t, bool trace, const int64_t *view,
                              const int64_t *view_nelem)
{
	ct_kernel *k = t->k;
	ct_ctx *ctx = k->ctx;
	if (ir_params_need_values(k) != CT_OK)
		return NULL;
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *p = &k->params[i];
		if (p->runtime && p->value < 0) {
			ct_error(ctx, CT_ERR_USAGE,
			         "runtime param '%s' must not be negative (it is %lld)", p->name,
			         (long long)p->value);
			return NULL;
		}
	}
	ip_prog *p = ct_alloc(ctx, sizeof *p);
	if (!p)
		return NULL;
	ct_arena_init(&p->arena, ctx);
	cp c;
	memset(&c, 0, sizeof c);
	c.k = k;
	c.t = t;
	c.ctx = ctx;
	c.arena = &p->arena;
	c.trace = trace;
	int na = t->narrays, ni = t->nindices;
	if (na < k->narrays || ni < k->nindices || t->nderived < 0 || !t->arrays || !t->ext ||
	    !t->indices) {
		ct_error(ctx, CT_ERR_INPUT, "malformed loop tree of kernel '%s'", k->name);
		ip_prog_free(ctx, p);
		return NULL;
	}
	c.npv = k->nparams + t->nderived;
	c.pv = ct_alloc(ctx, sizeof *c.pv * (size_t)(c.npv + 1));
	c.stride = ct_alloc(ctx, sizeof *c.stride * (size_t)(na + 1) * IR_MAX_RANK);
	c.origin = ct_alloc(ctx, sizeof *c.origin * (size_t)(na + 1));
	c.view = view;
	c.view_nelem = view_nelem;
	p->nelem = ct_arena_alloc(&p->arena, sizeof *p->nelem * (size_t)(na + 1));
	c.let_reg = ct_alloc(ctx, sizeof *c.let_reg * (size_t)(k->nlets + 1));
	c.coef = ct_alloc(ctx, sizeof *c.coef * (size_t)(IP_NSYM(ni) + 1));
	c.lvl = ct_alloc(ctx, sizeof *c.lvl * (size_t)(ni + 1));
	c.ext = ct_alloc(ctx, sizeof *c.ext * (size_t)(na + 1) * IR_MAX_RANK);
	c.stmt_ref = ct_alloc(ctx, sizeof *c.stmt_ref * (size_t)(k->nstmts + 2));
	c.let_ref = ct_alloc(ctx, sizeof *c.let_ref * (size_t)(k->nlets + 1));
	c.nelem = p->nelem;
	if (!c.pv || !c.stride || !c.origin || !p->nelem || !c.let_reg || !c.coef || !c.lvl || !c.ext ||
	    !c.stmt_ref || !c.let_ref)
		c.st = CT_ERR_NOMEM;
	if (!c.st && !lt_param_values(t, c.pv))
		c.st = ct_error(ctx, CT_ERR_LIMIT,
		                "a derived value of kernel '%s' overflows 64 bits", k->name);
	if (!c.st) {
		for (int a = 0; a < na && !c.st; a++) {
			c.st =
			    lt_array_layout(t, c.pv, a, &c.stride[a * IR_MAX_RANK], &p->nelem[a]);
			c.origin[a] = 0;
			if (!c.st && a < k->narrays)
				apply_view(&c, a);
			for (int d = 0; d < t->arrays[a].rank && !c.st; d++) {
				bool ok = true;
				c.ext[a * IR_MAX_RANK + d] =
				    bx_eval(t->ext[a * IR_MAX_RANK + d], c.pv, &ok);
			}
		}
		for (int i = 0; i < ni; i++)
			c.lvl[i] = -1;
		for (int i = 0; i < k->nlets; i++)
			c.let_reg[i] = -1;
		ref_walk(k, k->body, k->nbody, 0, c.stmt_ref, c.let_ref, NULL);
	}
	/* value register 0 is scratch; affine register 0 is the constant 0 */
	if (!c.st)
		ip_new_reg(&c);
	if (!c.st && ip_grow(&c, (void **)&c.range, &c.cap_offs, 1, sizeof *c.range))
		c.noffs = 1;
	if (!c.st) {
		p->roots = comp_list(&c, t->roots, t->nroots);
		p->nroots = c.st ? 0 : t->nroots;
	}
	if (!c.st && p->arena.failed)
		c.st = CT_ERR_NOMEM;
	if (c.st) {
		if (ct_ctx_last_status(ctx) == CT_OK)
			ct_error(ctx, c.st, "cannot ip_compile the loop tree for the interpreter");
		cp_release(&c);
		ip_prog_free(ctx, p);
		return NULL;
	}
	p->regs = c.regs;
	p->nregs = c.nregs;
	p->noffs = c.noffs;
	p->has_cache = c.has_cache;
	c.regs = NULL;
	cp_release(&c);
	return p;
}
