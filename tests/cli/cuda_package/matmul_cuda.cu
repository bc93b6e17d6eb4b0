// matmul_cuda.cu: a hand-written stand-in for the generated kernel of tests/plans/cuda/package_matmul.cachet
// (blocks of 8 x 8 threads, i in x and j in y, A and B staged in shared memory), for the package's tests.
// The wrapper embeds this text as a C string: "quotes", a \backslash, tabs	and ??= ??/ ??) stay as written.
extern "C" __global__ void cachet_matmul_cuda(const float *A, const float *B, float *C)
{
	const long long i = (long long)blockIdx.x * 8 + threadIdx.x;
	const long long j = (long long)blockIdx.y * 8 + threadIdx.y;
	__shared__ float AA[8][8], BB[8][8];
	float acc = 0.0f;
	for (long long k0 = 0; k0 < 21; k0 += 8) {
		AA[threadIdx.x][threadIdx.y] = (i < 37 && k0 + threadIdx.y < 21) ? A[i * 21 + k0 + threadIdx.y] : 0.0f;
		BB[threadIdx.x][threadIdx.y] = (k0 + threadIdx.x < 21 && j < 32) ? B[(k0 + threadIdx.x) * 32 + j] : 0.0f;
		__syncthreads();
		for (int kk = 0; kk < 8; kk++)
			acc += AA[threadIdx.x][kk] * BB[kk][threadIdx.y];
		__syncthreads();
	}
	if (i < 37 && j < 32)
		C[i * 32 + j] += acc;
}
