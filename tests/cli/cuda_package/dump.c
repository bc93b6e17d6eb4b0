/* dump.c: write a package's embedded cubin, PTX and CUDA C source to files, to check them (tests/cli/cuda_package.sh). */
#include PKG_HEADER

#include <stdio.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define SYM(x) CAT(CAT(cachet_, KNAME), x)

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	FILE *f = fopen(argv[1], "wb"), *g = fopen(argv[2], "wb"), *h = fopen(argv[3], "wb");
	if (!f || !g || !h)
		return 1;
	int ok = fwrite(SYM(_cu_cubin), 1, SYM(_cu_cubin_size), f) == SYM(_cu_cubin_size);
	ok = fwrite(SYM(_cu_ptx), 1, strlen(SYM(_cu_ptx)), g) == strlen(SYM(_cu_ptx)) && ok;
	ok = fwrite(SYM(_cu_source), 1, strlen(SYM(_cu_source)), h) == strlen(SYM(_cu_source)) && ok;
	ok = (fclose(f) == 0) && ok;
	ok = (fclose(g) == 0) && ok;
	ok = (fclose(h) == 0) && ok;
	printf("cubin for sm_%da, PTX for compute_%d\n", SYM(_cu_cubin_arch), SYM(_cu_ptx_arch));
	return ok ? 0 : 1;
}
