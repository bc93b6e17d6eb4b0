/* seam.c: package a kernel through cudapkg_write with a hand-written CUDA C source and launch, without the CUDA generator (tests/cli/cuda_package.sh).
 * usage: seam KERNEL.cachet KERNEL.cu DIR FN EXPLICIT_LOCAL DIM:LOCAL... */
#include "cachet.h"
#include "engine/cudapkg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	*len = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[*len] = 0;
	return strdup(buf);
}

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: seam KERNEL.cachet KERNEL.cu DIR FN EXPLICIT_LOCAL DIM:LOCAL...\n");
		return 2;
	}
	size_t tlen = 0, culen = 0;
	char *text = slurp(argv[1], &tlen), *cu = slurp(argv[2], &culen);
	if (!text || !cu) {
		fprintf(stderr, "seam: cannot read %s or %s\n", argv[1], argv[2]);
		return 2;
	}
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, text, tlen, argv[1]);
	if (!k) {
		fprintf(stderr, "seam: %s\n", ct_ctx_last_message(ctx));
		return 1;
	}
	ocl_launch L;
	memset(&L, 0, sizeof L);
	snprintf(L.fn, sizeof L.fn, "%s", argv[4]);
	L.explicit_local = atoi(argv[5]) != 0;
	for (int a = 6; a < argc && L.ndims < 3; a++) {
		char *colon = strchr(argv[a], ':');
		if (!colon)
			return 2;
		snprintf(L.dim_name[L.ndims], sizeof L.dim_name[0], "%.*s", (int)(colon - argv[a]), argv[a]);
		L.local[L.ndims++] = (size_t)atol(colon + 1);
	}
	mkdir(argv[3], 0755); /* as ct_kernel_build does */
	ct_status st = cudapkg_write(k, argv[3], cu, culen, &L);
	if (st)
		fprintf(stderr, "seam: %s\n", ct_ctx_last_message(ctx));
	else
		printf("wrote %s/lib%s.so\n", argv[3], ct_kernel_name(k));
	ct_kernel_free(k);
	ct_ctx_free(ctx);
	free(text);
	free(cu);
	return st ? 1 : 0;
}
