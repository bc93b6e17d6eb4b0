/* canon.c: the canonical byte serialization of a kernel (IR, sizes, schedule, plan, target) for cache keys. */
#include "ir/canon.h"

#include <string.h>

/* Fixed-width little-endian-independent fields: every value is written as
 * a tag byte and 8 bytes, so two different kernels never serialize alike
 * and no pointer, address or name (except the kernel's) enters the key. */
static void put_u64(ct_buf *b, char tag, uint64_t v)
{
	char s[9];
	s[0] = tag;
	for (int i = 0; i < 8; i++)
		s[1 + i] = (char)((v >> (8 * i)) & 0xff);
	/* ct_buf is NUL-terminated text: escape NUL bytes so lengths stay exact */
	for (int i = 0; i < 9; i++) {
		if (s[i] == 0 || s[i] == 1) {
			ct_buf_putc(b, 1);
			ct_buf_putc(b, (char)(s[i] + 2));
		} else {
			ct_buf_putc(b, s[i]);
		}
	}
}

static void put_i64(ct_buf *b, char tag, int64_t v) { put_u64(b, tag, (uint64_t)v); }

static void put_aff(ct_buf *b, aff x)
{
	put_i64(b, 'a', x.n);
	put_i64(b, 'c', x.c);
	for (int i = 0; i < x.n; i++) {
		put_i64(b, 'k', x.t[i].kind);
		put_i64(b, 'i', x.t[i].id);
		put_i64(b, 'f', x.t[i].coef);
	}
}

static void put_expr(ct_buf *b, const ct_kernel *k, const ir_expr *e)
{
	uint64_t bits;
	memcpy(&bits, &e->num, sizeof bits);
	put_i64(b, 'E', e->kind);
	put_i64(b, 't', e->type);
	put_i64(b, 'u', e->untyped);
	put_u64(b, 'n', bits);
	put_i64(b, 'N', e->inum);
	put_i64(b, 'F', e->is_float);
	put_i64(b, 'd', e->id);
	put_i64(b, 'g', e->fn);
	put_i64(b, 'm', e->cmp);
	if (e->kind == EX_ACCESS && e->sub)
		for (int d = 0; d < k->arrays[e->id].rank; d++)
			put_aff(b, e->sub[d]);
	put_i64(b, 'r', e->nargs);
	for (int i = 0; i < e->nargs; i++)
		put_expr(b, k, e->args[i]);
}

static void put_nodes(ct_buf *b, const ct_kernel *k, ir_node *const *v, int n);

static void put_node(ct_buf *b, const ct_kernel *k, const ir_node *x)
{
	put_i64(b, 'K', x->kind);
	put_i64(b, 'x', x->nidx);
	for (int i = 0; i < x->nidx; i++)
		put_i64(b, 'y', x->idx[i]);
	put_i64(b, 'o', x->op);
	put_i64(b, 'l', x->let_id);
	if (x->lhs)
		put_expr(b, k, x->lhs);
	if (x->rhs)
		put_expr(b, k, x->rhs);
	if (x->cond)
		put_expr(b, k, x->cond);
	put_nodes(b, k, x->body, x->nbody);
	put_nodes(b, k, x->els, x->nels);
}

static void put_nodes(ct_buf *b, const ct_kernel *k, ir_node *const *v, int n)
{
	put_i64(b, '[', n);
	for (int i = 0; i < n; i++)
		put_node(b, k, v[i]);
	put_i64(b, ']', n);
}

static void put_plan_item(ct_buf *b, const ir_plan_item *p)
{
	put_i64(b, 'P', p->kind);
	put_i64(b, 's', p->src_array);
	put_i64(b, 'S', p->src_cache);
	put_i64(b, 'w', p->where);
	put_i64(b, 'v', p->value);
	put_i64(b, 'x', p->index_id);
	put_i64(b, 'L', p->has_layout);
	for (int d = 0; d < IR_MAX_RANK; d++)
		put_i64(b, 'O', p->has_layout ? p->order[d] : 0);
	put_i64(b, 'T', p->thrifty);
	if (p->strict) /* only when given: the keys of every other plan stay as they were */
		put_i64(b, 'R', 1);
	put_i64(b, 'h', p->has_trigger);
	put_i64(b, 'H', p->trigger_is_index);
	put_i64(b, 'V', p->trigger_level);
	put_i64(b, 'X', p->trigger_index);
	put_i64(b, 'D', p->double_buffer);
	put_i64(b, 'C', p->location);
	put_i64(b, 'G', p->strategy);
	put_i64(b, 'n', p->n);
	for (int i = 0; i < p->n; i++)
		put_i64(b, 'y', p->idx[i]);
	put_i64(b, 'Y', p->policy);
	put_i64(b, 'M', p->max_threads);
	put_i64(b, 'Z', p->spmd);
	/* loop verb options that change the emitted code: two plans differing
	 * only there must not share a compiled kernel */
	put_i64(b, 'N', p->nontemporal);
	put_i64(b, 'U', p->unroll_by);
	for (int d = 0; p->kind == PL_DISTRIBUTE && d < IR_MAX_GRID; d++)
		put_i64(b, 'g', p->grid[d]);
	for (int i = 0; p->kind == PL_DISTRIBUTE && i < p->nrepl; i++)
		put_i64(b, 'r', p->repl[i]);
}

char *canon_kernel(const ct_kernel *k, const char *target, size_t *len)
{
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b, "cachet-canon-1 %s %s\n", target ? target : "host", k->name);
	put_i64(&b, 'p', k->nparams);
	for (int i = 0; i < k->nparams; i++) {
		const ir_param *p = &k->params[i];
		put_i64(&b, 'R', p->runtime);
		/* a runtime param's value is an argument of the code, not part of it */
		put_i64(&b, 'V', p->runtime ? 0 : p->value);
	}
	put_i64(&b, 'A', k->narrays);
	for (int i = 0; i < k->narrays; i++) {
		const ir_array *a = &k->arrays[i];
		put_i64(&b, 't', a->type);
		put_i64(&b, 'r', a->role);
		put_i64(&b, 'k', a->rank);
		put_i64(&b, 's', a->strided);
		if (a->unit_minor) /* only when set: every other key stays as it was */
			put_i64(&b, 'u', 1);
		for (int d = 0; d < a->rank; d++) {
			put_aff(&b, a->ext[d]);
			put_i64(&b, 'o', a->order[d]);
		}
	}
	put_i64(&b, 'I', k->nindices);
	for (int i = 0; i < k->nindices; i++) {
		const ir_index *x = &k->indices[i];
		put_i64(&b, 'k', x->kind);
		put_aff(&b, x->lo);
		put_aff(&b, x->hi);
		put_i64(&b, 's', x->step);
		put_i64(&b, 'w', x->window);
		put_i64(&b, 'p', x->parent);
		put_i64(&b, 'c', x->child);
		put_i64(&b, 'r', x->root);
		/* balanced blocks change the loops, not only their sizes (the tag
		 * only when set: keys of kernels without it stay as they were) */
		if (x->balanced)
			put_i64(&b, 'B', 1);
		/* every term of affine bounds (rectangular keys stay as they were) */
		if (ir_index_affine(x)) {
			put_i64(&b, 'A', x->nlo);
			for (int j = 0; j < x->nlo; j++)
				put_aff(&b, x->los[j]);
			put_i64(&b, 'Z', x->nhi);
			for (int j = 0; j < x->nhi; j++)
				put_aff(&b, x->his[j]);
		}
	}
	put_i64(&b, 'l', k->nlets);
	for (int i = 0; i < k->nlets; i++)
		put_i64(&b, 't', k->lets[i].type);
	put_nodes(&b, k, k->body, k->nbody);
	put_i64(&b, 'S', k->nsched);
	for (int i = 0; i < k->nsched; i++) {
		const ir_sched *s = &k->sched[i];
		put_i64(&b, 'k', s->kind);
		put_i64(&b, 'n', s->n);
		for (int j = 0; j < s->n; j++) {
			put_i64(&b, 'x', s->idx[j]);
			put_i64(&b, 'z', s->size ? s->size[j] : 0);
			put_i64(&b, 'o', s->out ? s->out[j] : 0);
		}
		if (s->balanced)
			put_i64(&b, 'B', 1);
	}
	put_i64(&b, 'T', k->has_plan ? (int64_t)k->target : -1);
	if (k->has_plan && k->strict) /* only when given: every other key stays as it was */
		put_i64(&b, 'R', 1);
	put_i64(&b, 'Q', k->nplan);
	for (int i = 0; i < k->nplan; i++)
		put_plan_item(&b, &k->plan[i]);
	if (b.failed) {
		ct_buf_free(&b);
		return NULL;
	}
	if (len)
		*len = b.len;
	return ct_buf_take(&b);
}
