/* tensor.c: tensor views: logical indices over buffers, sub-views, halo caches, index casting. */
#include "core/core.h"
#include "ir/layout.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* A cache is a per-core staging buffer; anything larger is a planning bug,
 * and refusing it keeps a typo from asking the allocator for terabytes. */
#define TENSOR_MAX_CACHE_BYTES ((int64_t)16 << 30)

#define MAXR CT_TENSOR_MAX_RANK
_Static_assert(MAXR <= IR_MAX_RANK, "tensors use the kernel layout rule (ir/layout.h)");

struct ct_tensor {
	ct_ctx *ctx;
	void *data;           /* borrowed, or owned (ctx allocator) when cached */
	ct_tensor *parent;    /* NULL for a top-level tensor */
	ct_tensor *root;      /* the top-level tensor (itself when top-level) */
	ct_dtype dtype;
	int rank;
	bool cached;
	int64_t children;     /* live views whose parent is this one */
	int64_t origin;       /* physical offset of the logical origin */
	int64_t elements;     /* product of ext */
	int64_t ext[MAXR];
	int64_t stride[MAXR];    /* in elements, >= 0 */
	int64_t poff[MAXR];      /* logical index in the parent of the origin */
	/* [win_lo, win_hi): logical indices the buffer can address; [val_lo,
	 * val_hi): those that hold the top-level tensor's data (a cache's kept
	 * halo included, its clipped halo excluded). Both contain [0, ext). */
	int64_t win_lo[MAXR], win_hi[MAXR];
	int64_t val_lo[MAXR], val_hi[MAXR];
	int64_t halo_lo[MAXR], halo_hi[MAXR]; /* kept halo of a cached copy */
	int64_t clip_lo[MAXR], clip_hi[MAXR]; /* requested halo that was clipped */
};

/* ------------------------------------------------------------ validation */

/* Bytes of one element; 0 for a value outside the enum (a caller's cast). */
static size_t dtype_bytes(ct_dtype t)
{
	switch (t) {
	case CT_F32:
	case CT_I32: return 4;
	case CT_F64:
	case CT_I64: return 8;
	}
	return 0;
}

/* Rank 0 and below is a malformed request; above the maximum, a limit. */
static ct_status check_rank(ct_ctx *ctx, int rank)
{
	if (rank < 1)
		return ct_error(ctx, CT_ERR_INPUT, "tensor rank %d is below 1", rank);
	if (rank > MAXR)
		return ct_error(ctx, CT_ERR_LIMIT, "tensor rank %d exceeds %d", rank, MAXR);
	return CT_OK;
}

static ct_status check_extents(ct_ctx *ctx, int rank, const int64_t *ext)
{
	if (!ext)
		return ct_error(ctx, CT_ERR_USAGE, "tensor extents are NULL");
	for (int d = 0; d < rank; d++)
		if (ext[d] < 0)
			return ct_error(ctx, CT_ERR_INPUT, "tensor extent %d is negative (%lld)", d,
					(long long)ext[d]);
	return CT_OK;
}

/* The dimension order of a dense layout, outermost first. */
static ct_status layout_order(ct_ctx *ctx, ct_tensor_layout layout, int rank, int *order)
{
	switch (layout) {
	case CT_TENSOR_ROW_MAJOR:
		for (int d = 0; d < rank; d++)
			order[d] = d;
		return CT_OK;
	case CT_TENSOR_COL_MAJOR:
		for (int d = 0; d < rank; d++)
			order[d] = rank - 1 - d;
		return CT_OK;
	}
	return ct_error(ctx, CT_ERR_INPUT, "unknown tensor layout %d", (int)layout);
}

/* Dense strides visiting dimensions in order (order[rank-1] contiguous) by
 * the one layout rule (ir/layout.h: empty dimensions count as 1, so strides
 * stay distinct); *total = number of elements of the buffer. */
static ct_status dense_strides(ct_ctx *ctx, int rank, const int64_t *ext, const int *order,
			       int64_t *stride, int64_t *total)
{
	if (ir_layout_strides(rank, order, ext, stride, total, NULL) != IR_LAYOUT_OK)
		return ct_error(ctx, CT_ERR_LIMIT, "tensor size overflows 64 bits");
	return CT_OK;
}

/* *n = product of the extents, checked. */
static ct_status count_elements(ct_ctx *ctx, int rank, const int64_t *ext, int64_t *n)
{
	int64_t p = 1;
	for (int d = 0; d < rank; d++)
		if (!ct_mul_ok(p, ext[d], &p))
			return ct_error(ctx, CT_ERR_LIMIT, "tensor element count overflows");
	*n = p;
	return CT_OK;
}

/* *last = physical offset of the last element of a non-empty tensor, with
 * every byte of it addressable by int64_t and ptrdiff_t arithmetic. */
static ct_status last_offset(ct_ctx *ctx, int rank, const int64_t *ext, const int64_t *stride,
			     int64_t origin, size_t esize, int64_t *last)
{
	int64_t off = origin, bytes;
	for (int d = 0; d < rank; d++) {
		int64_t step;
		if (!ct_mul_ok(ext[d] - 1, stride[d], &step) || !ct_add_ok(off, step, &off))
			return ct_error(ctx, CT_ERR_LIMIT, "tensor offset overflows 64 bits");
	}
	if (!ct_add_ok(off, 1, &bytes) || !ct_mul_ok(bytes, (int64_t)esize, &bytes) ||
	    (uint64_t)bytes > (uint64_t)PTRDIFF_MAX)
		return ct_error(ctx, CT_ERR_LIMIT, "tensor spans more bytes than can be addressed");
	*last = off;
	return CT_OK;
}

static bool in_window(const ct_tensor *t, const int64_t *idx)
{
	for (int d = 0; d < t->rank; d++)
		if (idx[d] < t->win_lo[d] || idx[d] >= t->win_hi[d])
			return false;
	return true;
}

/* Reject an index outside t's window with a message naming the dimension. */
static ct_status check_index(const ct_tensor *t, const int64_t *idx)
{
	if (!idx)
		return ct_error(t->ctx, CT_ERR_USAGE, "tensor index is NULL");
	if (in_window(t, idx))
		return CT_OK;
	for (int d = 0; d < t->rank; d++)
		if (idx[d] < t->win_lo[d] || idx[d] >= t->win_hi[d])
			return ct_error(t->ctx, CT_ERR_USAGE,
					"tensor index %lld of dimension %d is outside [%lld, %lld)",
					(long long)idx[d], d, (long long)t->win_lo[d],
					(long long)t->win_hi[d]);
	return CT_OK;
}

/* Physical offset of an index inside the window. The window maps into the
 * buffer, so no partial sum leaves [0, span]; the checks only guard that
 * invariant. */
static ct_status phys_offset(const ct_tensor *t, const int64_t *idx, int64_t *off)
{
	int64_t o = t->origin;
	for (int d = 0; d < t->rank; d++) {
		int64_t step;
		if (!ct_mul_ok(idx[d], t->stride[d], &step) || !ct_add_ok(o, step, &o))
			return ct_error(t->ctx, CT_ERR_LIMIT, "tensor offset overflows 64 bits");
	}
	*off = o;
	return CT_OK;
}

/* ------------------------------------------------------------ construction */

/* A top-level tensor over data with validated extents and strides. */
static ct_tensor *top_new(ct_ctx *ctx, void *data, ct_dtype type, int rank, const int64_t *ext,
			  const int64_t *stride, int64_t origin, int64_t elements)
{
	ct_tensor *t = ct_alloc(ctx, sizeof *t);
	if (!t)
		return NULL;
	t->ctx = ctx;
	t->data = data;
	t->root = t;
	t->dtype = type;
	t->rank = rank;
	t->origin = origin;
	t->elements = elements;
	for (int d = 0; d < rank; d++) {
		t->ext[d] = ext[d];
		t->stride[d] = stride[d];
		t->win_hi[d] = t->val_hi[d] = ext[d];
	}
	return t;
}

/* The checks every top-level constructor shares, before its layout ones. */
static bool top_args_ok(ct_ctx *ctx, const void *data, ct_dtype type, int rank, const int64_t *ext)
{
	if (check_rank(ctx, rank) || check_extents(ctx, rank, ext))
		return false;
	if (!data) {
		ct_error(ctx, CT_ERR_USAGE, "tensor data is NULL");
		return false;
	}
	if (!dtype_bytes(type)) {
		ct_error(ctx, CT_ERR_INPUT, "unknown element type %d", (int)type);
		return false;
	}
	return true;
}

/* A dense top-level tensor in the given dimension order. */
static ct_tensor *dense_new(ct_ctx *ctx, void *data, ct_dtype type, int rank, const int64_t *ext,
			    const int *order)
{
	int64_t stride[MAXR], total = 0, n = 0, last = 0;
	if (dense_strides(ctx, rank, ext, order, stride, &total) ||
	    count_elements(ctx, rank, ext, &n))
		return NULL;
	if (n > 0 && last_offset(ctx, rank, ext, stride, 0, dtype_bytes(type), &last))
		return NULL;
	return top_new(ctx, data, type, rank, ext, stride, 0, n);
}

ct_tensor *ct_tensor_new(ct_ctx *ctx, void *data, ct_dtype type, int rank, const int64_t *extents,
			 ct_tensor_layout layout)
{
	int order[MAXR];
	if (!ctx || !top_args_ok(ctx, data, type, rank, extents) ||
	    layout_order(ctx, layout, rank, order))
		return NULL;
	return dense_new(ctx, data, type, rank, extents, order);
}

ct_tensor *ct_tensor_new_ordered(ct_ctx *ctx, void *data, ct_dtype type, int rank,
				 const int64_t *extents, const int *order)
{
	if (!ctx || !top_args_ok(ctx, data, type, rank, extents))
		return NULL;
	if (!order) {
		ct_error(ctx, CT_ERR_USAGE, "tensor dimension order is NULL");
		return NULL;
	}
	bool seen[MAXR] = {false};
	for (int k = 0; k < rank; k++) {
		if (order[k] < 0 || order[k] >= rank || seen[order[k]]) {
			ct_error(ctx, CT_ERR_INPUT,
				 "tensor dimension order is not a permutation of 0..%d", rank - 1);
			return NULL;
		}
		seen[order[k]] = true;
	}
	return dense_new(ctx, data, type, rank, extents, order);
}

ct_tensor *ct_tensor_new_strided(ct_ctx *ctx, void *data, int64_t data_elements, ct_dtype type,
				 int rank, const int64_t *extents, const int64_t *strides,
				 int64_t origin)
{
	if (!ctx || !top_args_ok(ctx, data, type, rank, extents))
		return NULL;
	if (!strides) {
		ct_error(ctx, CT_ERR_USAGE, "tensor strides are NULL");
		return NULL;
	}
	for (int d = 0; d < rank; d++) {
		if (strides[d] < 0) {
			ct_error(ctx, CT_ERR_INPUT, "tensor stride %d is negative (%lld)", d,
				 (long long)strides[d]);
			return NULL;
		}
	}
	if (origin < 0 || data_elements < 0) {
		ct_error(ctx, CT_ERR_INPUT, "tensor origin and buffer size must be >= 0");
		return NULL;
	}
	int64_t n = 0, last = 0;
	if (count_elements(ctx, rank, extents, &n))
		return NULL;
	if (n > 0) {
		if (last_offset(ctx, rank, extents, strides, origin, dtype_bytes(type), &last))
			return NULL;
		if (last >= data_elements) {
			ct_error(ctx, CT_ERR_INPUT,
				 "strided tensor reaches element %lld of a %lld-element buffer",
				 (long long)last, (long long)data_elements);
			return NULL;
		}
	}
	return top_new(ctx, data, type, rank, extents, strides, origin, n);
}

/* Check that the block (off, ext) lies inside parent's extents. */
static ct_status check_block(const ct_tensor *parent, const int64_t *off, const int64_t *ext)
{
	ct_ctx *ctx = parent->ctx;
	if (!off)
		return ct_error(ctx, CT_ERR_USAGE, "sub-view offsets are NULL");
	if (check_extents(ctx, parent->rank, ext))
		return ctx->status;
	for (int d = 0; d < parent->rank; d++)
		if (off[d] < 0 || off[d] > parent->ext[d] || ext[d] > parent->ext[d] - off[d])
			return ct_error(ctx, CT_ERR_USAGE,
					"block [%lld, %lld+%lld) of dimension %d leaves the parent "
					"[0, %lld)",
					(long long)off[d], (long long)off[d], (long long)ext[d], d,
					(long long)parent->ext[d]);
	return CT_OK;
}

/* The fields a view inherits from its parent; the caller sets the buffer. */
static ct_tensor *view_new(ct_tensor *parent, const int64_t *off, const int64_t *ext)
{
	ct_tensor *t = ct_alloc(parent->ctx, sizeof *t);
	if (!t)
		return NULL;
	t->ctx = parent->ctx;
	t->parent = parent;
	t->root = parent->root;
	t->dtype = parent->dtype;
	t->rank = parent->rank;
	t->elements = 1;
	for (int d = 0; d < t->rank; d++) {
		t->ext[d] = ext[d];
		t->poff[d] = off[d];
		t->elements *= ext[d]; /* at most the parent's count */
	}
	return t;
}

ct_tensor *ct_tensor_sub(ct_tensor *parent, const int64_t *offsets, const int64_t *extents)
{
	if (!parent || check_block(parent, offsets, extents))
		return NULL;
	ct_tensor *t = view_new(parent, offsets, extents);
	if (!t)
		return NULL;
	t->data = parent->data;
	t->origin = parent->origin;
	for (int d = 0; d < t->rank; d++) {
		/* an empty block may start one past the parent's end, where a
		 * huge stride could overflow */
		int64_t step;
		if (!ct_mul_ok(offsets[d], parent->stride[d], &step) ||
		    !ct_add_ok(t->origin, step, &t->origin)) {
			ct_free(t->ctx, t);
			ct_error(parent->ctx, CT_ERR_LIMIT, "sub-view origin overflows 64 bits");
			return NULL;
		}
		t->stride[d] = parent->stride[d];
		t->win_lo[d] = parent->win_lo[d] - offsets[d];
		t->win_hi[d] = parent->win_hi[d] - offsets[d];
		t->val_lo[d] = parent->val_lo[d] - offsets[d];
		t->val_hi[d] = parent->val_hi[d] - offsets[d];
	}
	parent->children++;
	return t;
}

ct_tensor *ct_tensor_cache(ct_tensor *parent, const int64_t *offsets, const int64_t *extents,
			   const int64_t *halo_lo, const int64_t *halo_hi, ct_tensor_layout layout)
{
	if (!parent || check_block(parent, offsets, extents))
		return NULL;
	ct_ctx *ctx = parent->ctx;
	int order[MAXR];
	int64_t buf[MAXR], stride[MAXR], total = 0, bytes = 0;
	if (layout_order(ctx, layout, parent->rank, order))
		return NULL;
	for (int d = 0; d < parent->rank; d++) {
		int64_t lo = halo_lo ? halo_lo[d] : 0, hi = halo_hi ? halo_hi[d] : 0;
		if (lo < 0 || hi < 0) {
			ct_error(ctx, CT_ERR_INPUT, "halo of dimension %d is negative", d);
			return NULL;
		}
		if (!ct_add_ok(extents[d], lo, &buf[d]) || !ct_add_ok(buf[d], hi, &buf[d])) {
			ct_error(ctx, CT_ERR_LIMIT, "cache extent %d overflows 64 bits", d);
			return NULL;
		}
	}
	if (dense_strides(ctx, parent->rank, buf, order, stride, &total))
		return NULL;
	if (!ct_mul_ok(total, (int64_t)dtype_bytes(parent->dtype), &bytes) ||
	    bytes > TENSOR_MAX_CACHE_BYTES) {
		ct_error(ctx, CT_ERR_LIMIT, "cache buffer exceeds %lld bytes",
			 (long long)TENSOR_MAX_CACHE_BYTES);
		return NULL;
	}
	ct_tensor *t = view_new(parent, offsets, extents);
	if (!t)
		return NULL;
	t->data = ct_alloc(ctx, (size_t)bytes);
	if (!t->data) {
		ct_free(ctx, t);
		return NULL;
	}
	t->cached = true;
	for (int d = 0; d < t->rank; d++) {
		int64_t lo = halo_lo ? halo_lo[d] : 0, hi = halo_hi ? halo_hi[d] : 0;
		/* clip where the parent runs out of real data: the top-level
		 * tensor's edge, or the kept halo of a cached ancestor; all these
		 * values are bounded by extents already checked */
		int64_t room_lo = offsets[d] - parent->val_lo[d];
		int64_t room_hi = parent->val_hi[d] - (offsets[d] + extents[d]);
		t->halo_lo[d] = lo < room_lo ? lo : room_lo;
		t->halo_hi[d] = hi < room_hi ? hi : room_hi;
		t->clip_lo[d] = lo - t->halo_lo[d];
		t->clip_hi[d] = hi - t->halo_hi[d];
		t->stride[d] = stride[d];
		t->origin += lo * stride[d];
		t->win_lo[d] = -lo;
		t->win_hi[d] = extents[d] + hi;
		t->val_lo[d] = -t->halo_lo[d];
		t->val_hi[d] = extents[d] + t->halo_hi[d];
	}
	parent->children++;
	return t;
}

ct_status ct_tensor_free(ct_tensor *t)
{
	if (!t)
		return CT_OK;
	if (t->children)
		return ct_error(t->ctx, CT_ERR_USAGE,
				"tensor still has %lld view(s); free them first",
				(long long)t->children);
	if (t->parent)
		t->parent->children--;
	if (t->cached)
		ct_free(t->ctx, t->data);
	ct_free(t->ctx, t);
	return CT_OK;
}

/* ------------------------------------------------------------ block copies */

/* One row of a block copy: n elements, strides in elements. Chosen once per
 * copy so that the inner loop has no type or boundary test. */
typedef void (*row_copy_fn)(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n);
typedef void (*row_zero_fn)(char *dst, int64_t ds, int64_t n);

static void row_copy_dense4(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n)
{
	(void)ds;
	(void)ss;
	memcpy(dst, src, (size_t)n * 4);
}

static void row_copy_dense8(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n)
{
	(void)ds;
	(void)ss;
	memcpy(dst, src, (size_t)n * 8);
}

static void row_copy4(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		memcpy(dst + i * ds * 4, src + i * ss * 4, 4);
}

static void row_copy8(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		memcpy(dst + i * ds * 8, src + i * ss * 8, 8);
}

/* Zero is all-bits-zero for every element type (0.0f, 0.0, 0). */
static void row_zero_dense4(char *dst, int64_t ds, int64_t n)
{
	(void)ds;
	memset(dst, 0, (size_t)n * 4);
}

static void row_zero_dense8(char *dst, int64_t ds, int64_t n)
{
	(void)ds;
	memset(dst, 0, (size_t)n * 8);
}

static void row_zero4(char *dst, int64_t ds, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		memset(dst + i * ds * 4, 0, 4);
}

static void row_zero8(char *dst, int64_t ds, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		memset(dst + i * ds * 8, 0, 8);
}

/* A block copy, set up once: along each walked dimension k the destination
 * range is pre[k] zeroed elements, len[k] copied ones, post[k] zeroed ones.
 * Splitting the ranges here, instead of testing each element against the
 * boundary, keeps the inner loops straight copies and fills (the HammerBlade
 * note measured per-element boundary branches at about a quarter of a 34x34
 * halo-tile kernel). Dimensions are walked in decreasing destination stride
 * so that the inner row is the contiguous one where there is one. */
typedef struct block_copy {
	int rank;
	char *dst;
	const char *src;
	size_t esize;
	int64_t pre[MAXR], len[MAXR], post[MAXR];
	int64_t ds[MAXR], ss[MAXR]; /* strides, in elements */
	row_copy_fn copy;
	row_zero_fn zero;
} block_copy;

/* Zero n slices of dimension k starting at dst offset off (the slices span
 * every inner dimension fully). */
static void block_zero(const block_copy *b, int k, int64_t off, int64_t n)
{
	if (k == b->rank - 1) {
		b->zero(b->dst + off * (int64_t)b->esize, b->ds[k], n);
		return;
	}
	int64_t full = b->pre[k + 1] + b->len[k + 1] + b->post[k + 1];
	for (int64_t i = 0; i < n; i++)
		block_zero(b, k + 1, off + i * b->ds[k], full);
}

/* Walk dimension k: doff is the destination offset of the first (pre)
 * element, soff the source offset of the first copied one. Source offsets
 * are only formed for copied elements, which always lie inside the source
 * buffer; clipped halo never produces an out-of-buffer pointer. */
static void block_walk(const block_copy *b, int k, int64_t doff, int64_t soff)
{
	int64_t ds = b->ds[k], ss = b->ss[k];
	if (b->pre[k])
		block_zero(b, k, doff, b->pre[k]);
	doff += b->pre[k] * ds;
	if (k == b->rank - 1) {
		int64_t es = (int64_t)b->esize;
		b->copy(b->dst + doff * es, ds, b->src + soff * es, ss, b->len[k]);
	} else {
		for (int64_t i = 0; i < b->len[k]; i++)
			block_walk(b, k + 1, doff + i * ds, soff + i * ss);
	}
	if (b->post[k])
		block_zero(b, k, doff + b->len[k] * ds, b->post[k]);
}

/* Set up b for rank dimensions in logical order, then permute them into
 * walking order and pick the row functions. */
static void block_setup(block_copy *b, int rank, size_t esize, const int64_t *pre,
			const int64_t *len, const int64_t *post, const int64_t *ds,
			const int64_t *ss)
{
	int perm[MAXR];
	for (int d = 0; d < rank; d++)
		perm[d] = d;
	/* insertion sort, stable: ties keep the logical order */
	for (int i = 1; i < rank; i++)
		for (int j = i; j > 0 && ds[perm[j - 1]] < ds[perm[j]]; j--) {
			int x = perm[j];
			perm[j] = perm[j - 1];
			perm[j - 1] = x;
		}
	b->rank = rank;
	b->esize = esize;
	for (int k = 0; k < rank; k++) {
		int d = perm[k];
		b->pre[k] = pre[d];
		b->len[k] = len[d];
		b->post[k] = post[d];
		b->ds[k] = ds[d];
		b->ss[k] = ss[d];
	}
	int64_t dsi = b->ds[rank - 1], ssi = b->ss[rank - 1];
	bool dense_dst = dsi == 1, dense = dense_dst && ssi == 1;
	if (esize == 4) {
		b->copy = dense ? row_copy_dense4 : row_copy4;
		b->zero = dense_dst ? row_zero_dense4 : row_zero4;
	} else {
		b->copy = dense ? row_copy_dense8 : row_copy8;
		b->zero = dense_dst ? row_zero_dense8 : row_zero8;
	}
}

static ct_status check_cached(const ct_tensor *t, const char *what)
{
	if (!t->cached)
		return ct_error(t->ctx, CT_ERR_USAGE, "%s needs a cached tensor view", what);
	return CT_OK;
}

ct_status ct_tensor_copy_in(ct_tensor *cache)
{
	if (!cache)
		return CT_ERR_USAGE;
	if (check_cached(cache, "ct_tensor_copy_in"))
		return CT_ERR_USAGE;
	const ct_tensor *p = cache->parent;
	int rank = cache->rank;
	int64_t len[MAXR] = {0}, first[MAXR] = {0}, soff = 0;
	bool empty = false;
	for (int d = 0; d < rank; d++) {
		len[d] = cache->halo_lo[d] + cache->ext[d] + cache->halo_hi[d];
		first[d] = cache->poff[d] - cache->halo_lo[d];
		if (len[d] == 0)
			empty = true;
	}
	block_copy b;
	block_setup(&b, rank, dtype_bytes(cache->dtype), cache->clip_lo, len, cache->clip_hi,
		    cache->stride, p->stride);
	b.dst = cache->data;
	b.src = p->data;
	if (empty) {
		/* nothing to copy; the whole buffer is clipped halo */
		block_zero(&b, 0, 0, b.pre[0] + b.len[0] + b.post[0]);
		return CT_OK;
	}
	/* first[] is inside the parent's data window, hence its buffer */
	if (phys_offset(p, first, &soff))
		return cache->ctx->status;
	block_walk(&b, 0, 0, soff);
	return CT_OK;
}

ct_status ct_tensor_copy_out(ct_tensor *cache)
{
	if (!cache)
		return CT_ERR_USAGE;
	if (check_cached(cache, "ct_tensor_copy_out"))
		return CT_ERR_USAGE;
	if (cache->elements == 0)
		return CT_OK;
	ct_tensor *p = cache->parent;
	int64_t none[MAXR] = {0}, zero[MAXR] = {0}, doff = 0;
	if (phys_offset(p, cache->poff, &doff))
		return cache->ctx->status;
	block_copy b;
	block_setup(&b, cache->rank, dtype_bytes(cache->dtype), none, cache->ext, none, p->stride,
		    cache->stride);
	b.dst = p->data;
	b.src = cache->data;
	int64_t soff = 0;
	if (phys_offset(cache, zero, &soff))
		return cache->ctx->status;
	block_walk(&b, 0, doff, soff);
	return CT_OK;
}

/* ------------------------------------------------------------ indexing */

ct_status ct_tensor_cast(const ct_tensor *t, const ct_tensor *ancestor, const int64_t *idx,
			 int64_t *out)
{
	if (!t)
		return CT_ERR_USAGE;
	if (!out)
		return ct_error(t->ctx, CT_ERR_USAGE, "cast output is NULL");
	if (check_index(t, idx))
		return t->ctx->status;
	const ct_tensor *target = ancestor ? ancestor : t->root;
	int64_t cur[MAXR];
	memcpy(cur, idx, (size_t)t->rank * sizeof *cur);
	for (const ct_tensor *v = t; v != target; v = v->parent) {
		if (!v->parent)
			return ct_error(t->ctx, CT_ERR_USAGE,
					"cast target is not an ancestor of the tensor");
		for (int d = 0; d < t->rank; d++)
			if (!ct_add_ok(cur[d], v->poff[d], &cur[d]))
				return ct_error(t->ctx, CT_ERR_LIMIT, "cast index overflows");
	}
	memcpy(out, cur, (size_t)t->rank * sizeof *cur);
	return CT_OK;
}

ct_status ct_tensor_offset(const ct_tensor *t, const int64_t *idx, int64_t *offset)
{
	if (!t)
		return CT_ERR_USAGE;
	if (!offset)
		return ct_error(t->ctx, CT_ERR_USAGE, "offset output is NULL");
	if (check_index(t, idx))
		return t->ctx->status;
	return phys_offset(t, idx, offset);
}

ct_status ct_tensor_get(const ct_tensor *t, const int64_t *idx, double *value)
{
	int64_t off = 0;
	if (!t)
		return CT_ERR_USAGE;
	if (!value)
		return ct_error(t->ctx, CT_ERR_USAGE, "value output is NULL");
	if (ct_tensor_offset(t, idx, &off))
		return t->ctx->status;
	const char *p = (const char *)t->data + off * (int64_t)dtype_bytes(t->dtype);
	switch (t->dtype) {
	case CT_F32: {
		float v;
		memcpy(&v, p, sizeof v);
		*value = (double)v;
		break;
	}
	case CT_F64:
		memcpy(value, p, sizeof *value);
		break;
	case CT_I32: {
		int32_t v;
		memcpy(&v, p, sizeof v);
		*value = v;
		break;
	}
	case CT_I64: {
		int64_t v;
		memcpy(&v, p, sizeof v);
		*value = (double)v;
		break;
	}
	}
	return CT_OK;
}

ct_status ct_tensor_set(ct_tensor *t, const int64_t *idx, double value)
{
	int64_t off = 0;
	if (!t)
		return CT_ERR_USAGE;
	if (ct_tensor_offset(t, idx, &off))
		return t->ctx->status;
	char *p = (char *)t->data + off * (int64_t)dtype_bytes(t->dtype);
	/* range checks first: converting an out-of-range double is undefined */
	switch (t->dtype) {
	case CT_F32: {
		if (isfinite(value) && fabs(value) > (double)FLT_MAX)
			break;
		float v = (float)value;
		memcpy(p, &v, sizeof v);
		return CT_OK;
	}
	case CT_F64:
		memcpy(p, &value, sizeof value);
		return CT_OK;
	case CT_I32: {
		if (!(value > -2147483649.0 && value < 2147483648.0))
			break;
		int32_t v = (int32_t)value;
		memcpy(p, &v, sizeof v);
		return CT_OK;
	}
	case CT_I64: {
		if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0))
			break;
		int64_t v = (int64_t)value;
		memcpy(p, &v, sizeof v);
		return CT_OK;
	}
	}
	return ct_error(t->ctx, CT_ERR_INPUT, "value %g does not fit a %s element", value,
			t->dtype == CT_F32 ? "f32" : t->dtype == CT_I32 ? "i32" : "i64");
}

/* ------------------------------------------------------------ accessors */

/* Validate dimension d of t for an accessor (records CT_ERR_USAGE). */
static bool dim_ok(const ct_tensor *t, int d)
{
	if (d >= 0 && d < t->rank)
		return true;
	ct_error(t->ctx, CT_ERR_USAGE, "dimension %d is outside 0..%d", d, t->rank - 1);
	return false;
}

ct_ctx *ct_tensor_get_ctx(const ct_tensor *t) { return t ? t->ctx : NULL; }
void *ct_tensor_data(const ct_tensor *t) { return t ? t->data : NULL; }
ct_dtype ct_tensor_dtype(const ct_tensor *t) { return t ? t->dtype : CT_F32; }
int ct_tensor_rank(const ct_tensor *t) { return t ? t->rank : 0; }
int64_t ct_tensor_origin(const ct_tensor *t) { return t ? t->origin : -1; }
int64_t ct_tensor_elements(const ct_tensor *t) { return t ? t->elements : -1; }
ct_tensor *ct_tensor_parent(const ct_tensor *t) { return t ? t->parent : NULL; }
ct_tensor *ct_tensor_root(const ct_tensor *t) { return t ? t->root : NULL; }
int ct_tensor_is_cached(const ct_tensor *t) { return t && t->cached; }
int64_t ct_tensor_child_count(const ct_tensor *t) { return t ? t->children : -1; }

int64_t ct_tensor_extent(const ct_tensor *t, int d)
{
	return t && dim_ok(t, d) ? t->ext[d] : -1;
}

int64_t ct_tensor_stride(const ct_tensor *t, int d)
{
	return t && dim_ok(t, d) ? t->stride[d] : -1;
}

int64_t ct_tensor_parent_offset(const ct_tensor *t, int d)
{
	return t && dim_ok(t, d) ? t->poff[d] : -1;
}

/* Shared body of the per-dimension pair accessors. */
static ct_status dim_pair(const ct_tensor *t, int d, int64_t *lo, int64_t *hi, const int64_t *a,
			  const int64_t *b)
{
	if (!t)
		return CT_ERR_USAGE;
	if (!lo || !hi)
		return ct_error(t->ctx, CT_ERR_USAGE, "output pointer is NULL");
	if (!dim_ok(t, d))
		return CT_ERR_USAGE;
	*lo = a[d];
	*hi = b[d];
	return CT_OK;
}

ct_status ct_tensor_halo(const ct_tensor *t, int d, int64_t *lo, int64_t *hi)
{
	return dim_pair(t, d, lo, hi, t ? t->halo_lo : NULL, t ? t->halo_hi : NULL);
}

ct_status ct_tensor_clipped(const ct_tensor *t, int d, int64_t *lo, int64_t *hi)
{
	return dim_pair(t, d, lo, hi, t ? t->clip_lo : NULL, t ? t->clip_hi : NULL);
}

ct_status ct_tensor_window(const ct_tensor *t, int d, int64_t *lo, int64_t *hi)
{
	return dim_pair(t, d, lo, hi, t ? t->win_lo : NULL, t ? t->win_hi : NULL);
}
