/* gpu_main.cu: the generated CUDA kernel CT_KERNEL (its source given by nvcc -include) on a real GPU, for a .cachet file and -D values (tests/cuda/gpu_check.sh): --verify compares every array it writes with the reference interpreter (small sizes); --time R times R launches with events and, for an f32/f64 C[M,N] += A[M,K] * B[K,N], cuBLAS's gemm on the same buffers (libcublas loaded with dlopen; no TF32). Exit 0: ok, 1: a mismatch, 2: an error. */
#include <cachet.h>

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

/* the kernel's source comes first, by -include (it needs no header) */

template <typename T> static T next_arg(void *const *b, const long long *p, int &bi, int &pi)
{
	if constexpr (std::is_pointer_v<T>)
		return static_cast<T>(b[bi++]);
	else
		return static_cast<T>(p[pi++]);
}

template <typename... P> static void launch(void (*f)(P...), dim3 g, dim3 l, void *const *b, const long long *p)
{
	int bi = 0, pi = 0;
	std::tuple<P...> a{next_arg<P>(b, p, bi, pi)...};
	std::apply([&](P... x) { f<<<g, l>>>(x...); }, a);
}

#define CK(x)                                                                                                  \
	do {                                                                                                       \
		cudaError_t e_ = (x);                                                                                  \
		if (e_ != cudaSuccess) {                                                                               \
			std::fprintf(stderr, "gpu: %s: %s\n", #x, cudaGetErrorString(e_));                                 \
			return 2;                                                                                          \
		}                                                                                                      \
	} while (0)

/* cuBLAS's gemm, row-major C[M,N] += A[M,K] B[K,N] as column-major C^T += B^T A^T; ms per call, or -1. */
static double cublas_ms(ct_dtype t, int64_t M, int64_t N, int64_t K, void *A, void *B, void *C, int reps)
{
	void *h = dlopen("libcublas.so.13", RTLD_NOW);
	if (!h)
		h = dlopen("libcublas.so", RTLD_NOW);
	if (!h)
		return -1;
	typedef int (*create_fn)(void **);
	typedef int (*sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
	                        const float *, float *, int);
	typedef int (*dgemm_fn)(void *, int, int, int, int, int, const double *, const double *, int, const double *,
	                        int, const double *, double *, int);
	create_fn create = (create_fn)dlsym(h, "cublasCreate_v2");
	sgemm_fn sg = (sgemm_fn)dlsym(h, "cublasSgemm_v2");
	dgemm_fn dg = (dgemm_fn)dlsym(h, "cublasDgemm_v2");
	void *hd = nullptr;
	if (!create || !sg || !dg || create(&hd) != 0)
		return -1;
	float one = 1;
	double done = 1;
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	for (int r = -1; r < reps; r++) {
		if (r == 0)
			cudaEventRecord(a);
		if (t == CT_F32)
			sg(hd, 0, 0, (int)N, (int)M, (int)K, &one, (const float *)B, (int)N, (const float *)A, (int)K, &one,
			   (float *)C, (int)N);
		else
			dg(hd, 0, 0, (int)N, (int)M, (int)K, &done, (const double *)B, (int)N, (const double *)A, (int)K, &done,
			   (double *)C, (int)N);
	}
	cudaEventRecord(b);
	cudaEventSynchronize(b);
	float ms = 0;
	cudaEventElapsedTime(&ms, a, b);
	return ms / reps;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	bool verify = std::strcmp(argv[1], "--verify") == 0;
	int reps = verify ? 1 : std::atoi(argv[2]);
	int first = verify ? 2 : 3;
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse_file(ctx, argv[first]);
	if (!k)
		return 2;
	for (int i = first + 1; i + 1 < argc; i += 2) {
		std::string d = argv[i + 1];
		size_t eq = d.find('=');
		if (eq == std::string::npos || ct_kernel_set_param(k, d.substr(0, eq).c_str(), std::atoll(d.c_str() + eq + 1)))
			return 2;
	}
	if (ct_kernel_recheck(k))
		return 2;
	size_t len = 0;
	char *src = ct_kernel_emit(k, "cuda", &len);
	if (!src)
		return 2;
	unsigned g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
	const char *at = std::strstr(src, "launch: grid (");
	if (at) {
		if (std::sscanf(at, "launch: grid (%u, %u, %u) of blocks of (%u, %u, %u)", &g[0], &g[1], &g[2], &l[0], &l[1],
		                &l[2]) != 6)
			return 2;
	} else if ((at = std::strstr(src, "launch: ("))) {
		unsigned n[3];
		if (std::sscanf(at, "launch: (%u, %u, %u)", &n[0], &n[1], &n[2]) != 3)
			return 2;
		unsigned pick[3] = {128, 2, 1};
		for (int d = 0; d < 3; d++) {
			l[d] = n[d] > 1 ? pick[d] : 1;
			g[d] = (n[d] + l[d] - 1) / l[d];
		}
	}
	std::free(src);
	int na = ct_kernel_array_count(k);
	std::vector<std::vector<unsigned char>> host(na), want(na);
	std::vector<void *> dev, bw;
	for (int a = 0; a < na; a++) {
		if (ct_kernel_array_role(k, a) == CT_TEMP) {
			bw.push_back(nullptr);
			continue;
		}
		ct_dtype t = ct_kernel_array_dtype(k, a);
		int64_t n = ct_kernel_array_elements(k, a);
		size_t bytes = (size_t)(n > 0 ? n : 1) * ct_dtype_size(t);
		host[a].resize(bytes);
		ct_fill_random(host[a].data(), t, n, 7, (uint64_t)a);
		void *d = nullptr;
		CK(cudaMalloc(&d, bytes));
		CK(cudaMemcpy(d, host[a].data(), bytes, cudaMemcpyHostToDevice));
		dev.push_back(d);
		if (verify) {
			want[a] = host[a];
			bw.push_back(want[a].data());
		}
	}
	std::vector<long long> params;
	for (int p = 0; p < ct_kernel_param_count(k); p++)
		if (ct_kernel_param_is_runtime(k, p))
			params.push_back(ct_kernel_param_value(k, p, nullptr));
	dim3 G(g[0], g[1], g[2]), L(l[0], l[1], l[2]);
	if (verify) {
		launch(CT_KERNEL, G, L, dev.data(), params.data());
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		ct_looptree *ref = ct_kernel_lower(k, 0);
		if (!ref || ct_interp_run(ref, bw.data()))
			return 2;
		int bad = 0, di = 0;
		for (int a = 0; a < na; a++) {
			ct_role r = ct_kernel_array_role(k, a);
			if (r == CT_TEMP)
				continue;
			void *d = dev[di++];
			if (r == CT_INPUT || r == CT_CONST)
				continue;
			CK(cudaMemcpy(host[a].data(), d, host[a].size(), cudaMemcpyDeviceToHost));
			ct_dtype t = ct_kernel_array_dtype(k, a);
			double e = ct_max_rel_error(host[a].data(), want[a].data(), t, ct_kernel_array_elements(k, a));
			std::printf("  %s: max rel error %g (tolerance %g)%s\n", ct_kernel_array_name(k, a), e,
			            ct_dtype_tolerance(t), e <= ct_dtype_tolerance(t) ? "" : "  MISMATCH");
			bad |= !(e <= ct_dtype_tolerance(t));
		}
		return bad;
	}
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	launch(CT_KERNEL, G, L, dev.data(), params.data()); /* warm-up */
	CK(cudaGetLastError());
	cudaEventRecord(e0);
	for (int r = 0; r < reps; r++)
		launch(CT_KERNEL, G, L, dev.data(), params.data());
	cudaEventRecord(e1);
	CK(cudaEventSynchronize(e1));
	float ms = 0;
	cudaEventElapsedTime(&ms, e0, e1);
	ms /= (float)reps;
	double fl = ct_kernel_flops(k), bytes = 0;
	for (int a = 0; a < na; a++) {
		ct_role r = ct_kernel_array_role(k, a);
		if (r != CT_TEMP)
			bytes += (r == CT_INOUT ? 2.0 : 1.0) * (double)host[a].size();
	}
	std::printf("  %s: %.3f ms, %.1f GFLOP/s, %.1f GB/s of arrays moved once (grid %u x %u, block %u x %u)",
	            ct_kernel_name(k), ms, fl / ms / 1e6, bytes / ms / 1e6, g[0], g[1], l[0], l[1]);
	/* a gemm (arrays A, B, C of one float type): cuBLAS on the same buffers */
	if (na == 3 && ct_kernel_array_rank(k, 0) == 2 && ct_kernel_array_dtype(k, 0) == ct_kernel_array_dtype(k, 2) &&
	    ct_kernel_array_dtype(k, 0) != CT_I32 && ct_kernel_array_dtype(k, 0) != CT_I64) {
		int64_t M = ct_kernel_array_extent(k, 0, 0), K = ct_kernel_array_extent(k, 0, 1),
		        N = ct_kernel_array_extent(k, 1, 1);
		double cb = cublas_ms(ct_kernel_array_dtype(k, 0), M, N, K, dev[0], dev[1], dev[2], reps);
		if (cb > 0)
			std::printf(", cuBLAS %.3f ms (%.1f GFLOP/s): ratio %.2f", cb, fl / cb / 1e6, cb / ms);
		else
			std::printf(", cuBLAS not loaded");
	}
	std::printf("\n");
	return 0;
}
