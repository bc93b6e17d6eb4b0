/* emu_main.cpp: runs the CUDA kernel CT_KERNEL (the generated source, given by -include after emu.h) on the CPU for a .cachet file and -D values, and compares every array it writes with the reference interpreter (exit 0: equal within the type's tolerance; 1: a mismatch; 2: an error). */
#include "emu.h"

#include <cachet.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

thread_local ct_dim3 threadIdx, blockIdx;
ct_dim3 blockDim, gridDim;
std::barrier<> *ct_emu_barrier;

/* the kernel's source comes before this file, by -include (after emu.h) */

/* The kernel's arguments: pointers from the buffers, the rest from the runtime params, in order. */
template <typename T> static T next_arg(void *const *b, const long long *p, int &bi, int &pi)
{
	if constexpr (std::is_pointer_v<T>)
		return static_cast<T>(b[bi++]);
	else
		return static_cast<T>(p[pi++]);
}

template <typename... P> static void call(void (*f)(P...), void *const *b, const long long *p)
{
	int bi = 0, pi = 0;
	std::tuple<P...> args{next_arg<P>(b, p, bi, pi)...}; /* braces: evaluated left to right */
	std::apply(f, args);
}

static int fail(ct_ctx *ctx, const char *what)
{
	std::fprintf(stderr, "emu: %s: %s\n", what, ct_ctx_last_message(ctx));
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse_file(ctx, argv[1]);
	if (!k)
		return fail(ctx, "parse");
	for (int i = 2; i + 1 < argc; i += 2) {
		std::string d = argv[i + 1];
		size_t eq = d.find('=');
		if (eq == std::string::npos || ct_kernel_set_param(k, d.substr(0, eq).c_str(), std::atoll(d.c_str() + eq + 1)))
			return fail(ctx, "-D");
	}
	if (ct_kernel_recheck(k))
		return fail(ctx, "check");
	size_t len = 0;
	char *src = ct_kernel_emit(k, "cuda", &len);
	if (!src)
		return fail(ctx, "emit");
	unsigned g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
	const char *at = std::strstr(src, "launch: grid (");
	if (at) {
		if (std::sscanf(at, "launch: grid (%u, %u, %u) of blocks of (%u, %u, %u)", &g[0], &g[1], &g[2], &l[0], &l[1],
		                &l[2]) != 6)
			return 2;
	} else if ((at = std::strstr(src, "launch: ("))) {
		/* blocks of any size: an odd one, so that the guards are tested */
		unsigned n[3];
		if (std::sscanf(at, "launch: (%u, %u, %u)", &n[0], &n[1], &n[2]) != 3)
			return 2;
		unsigned pick[3] = {24, 5, 1};
		for (int d = 0; d < 3; d++) {
			l[d] = n[d] > 1 ? pick[d] : 1;
			g[d] = (n[d] + l[d] - 1) / l[d];
		}
	} else {
		std::fprintf(stderr, "emu: no launch comment\n");
		return 2;
	}
	std::free(src);

	int na = ct_kernel_array_count(k);
	std::vector<std::vector<unsigned char>> got(na), want(na);
	std::vector<void *> bg, bw;
	for (int a = 0; a < na; a++) {
		if (ct_kernel_array_role(k, a) == CT_TEMP) {
			bw.push_back(nullptr);
			continue;
		}
		ct_dtype t = ct_kernel_array_dtype(k, a);
		int64_t n = ct_kernel_array_elements(k, a);
		got[a].resize((size_t)(n > 0 ? n : 1) * ct_dtype_size(t));
		ct_fill_random(got[a].data(), t, n, 7, (uint64_t)a);
		want[a] = got[a];
		bg.push_back(got[a].data());
		bw.push_back(want[a].data());
	}
	std::vector<long long> params;
	for (int p = 0; p < ct_kernel_param_count(k); p++)
		if (ct_kernel_param_is_runtime(k, p))
			params.push_back(ct_kernel_param_value(k, p, nullptr));

	ct_looptree *ref = ct_kernel_lower(k, 0);
	if (!ref || ct_interp_run(ref, bw.data()))
		return fail(ctx, "reference");
	ct_looptree_free(ref);

	blockDim = {l[0], l[1], l[2]};
	gridDim = {g[0], g[1], g[2]};
	unsigned nt = l[0] * l[1] * l[2];
	std::barrier<> bar((std::ptrdiff_t)nt);
	ct_emu_barrier = &bar;
	std::vector<std::thread> threads;
	for (unsigned t = 0; t < nt; t++)
		threads.emplace_back([&, t] {
			threadIdx = {t % l[0], t / l[0] % l[1], t / l[0] / l[1]};
			for (unsigned z = 0; z < g[2]; z++)
				for (unsigned y = 0; y < g[1]; y++)
					for (unsigned x = 0; x < g[0]; x++) {
						blockIdx = {x, y, z};
						call(CT_KERNEL, bg.data(), params.data());
						bar.arrive_and_wait(); /* the block ends before the next starts */
					}
		});
	for (auto &th : threads)
		th.join();

	int bad = 0;
	for (int a = 0; a < na; a++) {
		ct_role r = ct_kernel_array_role(k, a);
		if (r == CT_TEMP || r == CT_INPUT || r == CT_CONST)
			continue;
		ct_dtype t = ct_kernel_array_dtype(k, a);
		double e = ct_max_rel_error(got[a].data(), want[a].data(), t, ct_kernel_array_elements(k, a));
		std::printf("%s: max rel error %g (tolerance %g)\n", ct_kernel_array_name(k, a), e, ct_dtype_tolerance(t));
		if (!(e <= ct_dtype_tolerance(t)))
			bad = 1;
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	return bad;
}
