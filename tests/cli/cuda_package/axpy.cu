// axpy.cu: a hand-written stand-in for a generated kernel with a runtime size L; FN is the
// function's name, BLOCK its threads per block (0: whatever the launch gives).
extern "C" __global__ void FN(const float *X, float *Y, long long L)
{
	const long long i = (long long)blockIdx.x * (BLOCK ? BLOCK : blockDim.x) + threadIdx.x;
	if (i < L)
		Y[i] = 2.5f * X[i] + Y[i];
}
