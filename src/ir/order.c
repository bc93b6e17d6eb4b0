/* order.c: the one authority for the schedule's loop order and for where a cache sits in it. */
#include "ir/order.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const ir_node *sched_band_head(const ct_kernel *k, int x)
{
	const ir_node *n = k->indices[k->indices[x].root].loop;
	while (n && n->parent && n->parent->kind == ND_FOR && n->parent->nbody == 1)
		n = n->parent;
	return n;
}

static int find(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return -1;
}

void sched_band_order(const ct_kernel *k, const ir_node *head, bool with_schedule, int *order,
                      int *n)
{
	int m = 0;
	for (const ir_node *g = head; g && g->kind == ND_FOR; g = g->body[0]) {
		for (int i = 0; i < g->nidx; i++)
			order[m++] = g->idx[i];
		if (g->nbody != 1)
			break;
	}
	/* replay the schedule: splits insert after their parent, reorders
	 * (which name every index the band has at that point) replace */
	for (int s = 0; with_schedule && s < k->nsched; s++) {
		const ir_sched *sc = &k->sched[s];
		if (sc->kind == SC_REORDER) {
			if (sc->n == m && find(order, m, sc->idx[0]) >= 0)
				memcpy(order, sc->idx, sizeof *order * (size_t)m);
			continue;
		}
		for (int a = 0; a < sc->n; a++) {
			int at = find(order, m, sc->idx[a]);
			if (at < 0 || sc->out[a] < 0 || find(order, m, sc->out[a]) >= 0)
				continue;
			memmove(order + at + 2, order + at + 1, sizeof *order * (size_t)(m - at - 1));
			order[at + 1] = sc->out[a];
			m++;
		}
	}
	*n = m;
}

/* ------------------------------------------------------------ cache places */

typedef struct walk {
	const ct_kernel *k;
	int array;  /* the bottom array of the cache */
	int want[2]; /* indices that must be around the reference use, or -1 */
	int *stack; /* loop order around the current node */
	int uses;
	sched_place *pl;
} walk;

static bool node_uses(const ir_node *s, int a)
{
	switch (s->kind) {
	case ND_STMT: return s->lhs->id == a || ir_expr_reads(s->rhs, a);
	case ND_LET: return ir_expr_reads(s->rhs, a);
	case ND_IF: return ir_expr_reads(s->cond, a);
	case ND_FOR: return false;
	}
	return false;
}

static void walk_nodes(walk *w, ir_node *const *body, int n, int len)
{
	const ct_kernel *k = w->k;
	for (int i = 0; i < n; i++) {
		const ir_node *s = body[i];
		if (node_uses(s, w->array)) {
			w->uses++;
			if (len > w->pl->depth && (w->want[0] < 0 || find(w->stack, len, w->want[0]) >= 0) &&
			    (w->want[1] < 0 || find(w->stack, len, w->want[1]) >= 0)) {
				memcpy(w->pl->order, w->stack, sizeof *w->stack * (size_t)len);
				w->pl->depth = len;
			}
		}
		if (s->kind == ND_FOR) {
			int m = 0;
			if (s->nidx > 0 && sched_band_head(k, s->idx[0]) == s)
				sched_band_order(k, s, true, w->stack + len, &m);
			walk_nodes(w, s->body, s->nbody, len + m);
		} else if (s->kind == ND_IF) {
			walk_nodes(w, s->body, s->nbody, len);
			walk_nodes(w, s->els, s->nels, len);
		}
	}
}

static bool place_err(sched_place *pl, ir_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool place_err(sched_place *pl, ir_pos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pl->err, sizeof pl->err, fmt, ap);
	va_end(ap);
	pl->err_pos = pos;
	return false;
}

/* Level of index x in the place's order (0 when it is not there). */
static int level_in(const sched_place *pl, int x)
{
	int p = find(pl->order, pl->depth, x);
	return p < 0 ? 0 : pl->depth - p;
}

static bool place_trigger(const ct_kernel *k, const ir_plan_item *it, sched_place *pl)
{
	const char *aname = k->arrays[it->root_array].name;
	pl->trigger_index = pl->index;
	pl->trigger_level = pl->level;
	if (!it->has_trigger)
		return true;
	const char *opt = it->trigger_is_index ? "trigger_index" : "trigger_level";
	if (it->where == CP_BUDGET)
		return place_err(pl, it->trigger_opt.pos,
		                 "%s needs level= or index= (a max_elements= cache has no fixed level)", opt);
	if (it->trigger_is_index) {
		pl->trigger_index = it->trigger_index;
		pl->trigger_level = level_in(pl, it->trigger_index);
		if (pl->trigger_level == 0)
			return place_err(pl, it->trigger_opt.pos,
			                 "trigger_index '%s' of cache '%s' is not a loop around any use of '%s'",
			                 k->indices[it->trigger_index].name, it->name, aname);
	} else {
		if (it->trigger_level < 1 || it->trigger_level > pl->depth)
			return place_err(pl, it->trigger_opt.pos,
			                 "trigger_level %lld of cache '%s' is out of range 1..%d (the loops around "
			                 "the uses of '%s')",
			                 (long long)it->trigger_level, it->name, pl->depth, aname);
		pl->trigger_level = (int)it->trigger_level;
		pl->trigger_index = pl->order[pl->depth - pl->trigger_level];
	}
	if (pl->trigger_level < pl->level)
		return place_err(pl, it->trigger_opt.pos, "trigger level %d of cache '%s' is below its level %d",
		                 pl->trigger_level, it->name, pl->level);
	return true;
}

/* The loop of the source cache of a cache of a cache (the uses it holds
 * are those inside that loop), or -1: none, a max_elements= source, or a
 * source that cannot be placed (its own error is reported for it). */
static int source_loop(const ct_kernel *k, const ir_plan_item *it)
{
	if (it->src_cache < 0 || k->plan[it->src_cache].where == CP_BUDGET)
		return -1;
	sched_place sp;
	sp.order = ct_alloc(k->ctx, sizeof *sp.order * ((size_t)k->nindices + 1));
	if (!sp.order)
		return -1;
	int x = sched_place_cache(k, it->src_cache, &sp) ? sp.index : -1;
	ct_free(k->ctx, sp.order);
	return x;
}

bool sched_place_cache(const ct_kernel *k, int item, sched_place *pl)
{
	const ir_plan_item *it = &k->plan[item];
	const char *aname = k->arrays[it->root_array].name;
	walk w = {k, it->root_array, {it->where == CP_INDEX ? it->index_id : -1, source_loop(k, it)}, NULL, 0, pl};
	pl->depth = pl->uses = 0;
	pl->index = pl->trigger_index = -1;
	pl->level = pl->trigger_level = 0;
	pl->err[0] = 0;
	pl->err_pos = it->pos;
	w.stack = ct_alloc(k->ctx, sizeof *w.stack * ((size_t)k->nindices + 1));
	if (!w.stack)
		return place_err(pl, it->pos, "out of memory placing cache '%s'", it->name);
	walk_nodes(&w, k->body, k->nbody, 0);
	ct_free(k->ctx, w.stack);
	pl->uses = w.uses;
	if (w.uses == 0)
		return place_err(pl, it->src_pos,
		                 "array '%s' is not used by any statement, so cache '%s' has nothing to hold",
		                 aname, it->name);
	if (it->where == CP_LEVEL) {
		if (it->value < 1 || it->value > pl->depth)
			return place_err(pl, it->where_opt.pos,
			                 "level %lld of cache '%s' is out of range 1..%d (the loops around the uses "
			                 "of '%s')",
			                 (long long)it->value, it->name, pl->depth, aname);
		pl->level = (int)it->value;
		pl->index = pl->order[pl->depth - pl->level];
	} else if (it->where == CP_INDEX) {
		pl->level = level_in(pl, it->index_id);
		if (pl->level == 0 && w.want[1] >= 0)
			return place_err(pl, it->where_opt.pos,
			                 "index '%s' of cache '%s' is not a loop around any use of '%s' inside its "
			                 "source '%s' (at '%s')",
			                 k->indices[it->index_id].name, it->name, aname, k->plan[it->src_cache].name,
			                 k->indices[w.want[1]].name);
		if (pl->level == 0)
			return place_err(pl, it->where_opt.pos,
			                 "index '%s' of cache '%s' is not a loop around any use of '%s'",
			                 k->indices[it->index_id].name, it->name, aname);
		pl->index = it->index_id;
	}
	return place_trigger(k, it, pl);
}
