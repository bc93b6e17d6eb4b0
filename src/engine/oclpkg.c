/* oclpkg.c: `cachet build` for plan(target=opencl): a package embedding the OpenCL C source (and this device's program binary) with a C host wrapper. */
#include "gen/gen.h"
#include "gen/ocl.h"
#include "jit/jit.h"
#include "engine/engine.h"
#include "engine/pkgtext.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The package of kernel NAME, in DIR:
 *   NAME.cl        the OpenCL C source (to read; the wrapper embeds it);
 *   NAME.h         the wrapper's API: a handle that builds (or loads) the
 *                  program on a context, enqueue on cl_mem buffers, run on
 *                  host arrays;
 *   NAME.c         the wrapper, with the source, the build options and,
 *                  when this machine has an OpenCL device, the program
 *                  binary for it (taken after one launch with the sizes the
 *                  wrapper uses, so it holds the compiled work-group
 *                  function) and that device's description: the wrapper
 *                  loads the binary only on a device with the same
 *                  description, and builds from source otherwise (or when
 *                  the device refuses it);
 *   libNAME.a, libNAME.so   the wrapper compiled (link with -lOpenCL).
 * The NDRange is computed in the wrapper from the index bounds, so runtime
 * sizes work as in `cachet run`.
 */

/* The wrapper's arguments: arrays (temps excluded) as `cl_mem NAME` or as
 * host pointers, then the runtime params as int64_t. */
static void c_args(ct_buf *b, const ct_kernel *k, bool host)
{
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		if (host)
			ct_buf_printf(b, ", %s%s *%s", ir_array_readonly(ar) ? "const " : "",
			              ir_dtype_c(ar->type), ar->name);
		else
			ct_buf_printf(b, ", cl_mem %s", ar->name);
	}
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime)
			ct_buf_printf(b, ", int64_t %s", k->params[p].name);
}

/* The elements of array a as a C expression. */
static void c_elements(ct_buf *b, const ct_kernel *k, int a)
{
	const ir_array *ar = &k->arrays[a];
	ct_buf_puts(b, "(size_t)1");
	for (int d = 0; d < ar->rank; d++) {
		ct_buf_puts(b, " * (size_t)");
		pkg_aff(b, k, ar->ext[d]);
	}
}

static char *make_header(const ct_kernel *k, bool has_binary, const char *desc)
{
	const char *n = k->name;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b,
	              "/* %s.h: kernel '%s' (plan target=opencl) built by cachet %s: its OpenCL C source%s,\n"
	              " * and a host wrapper. Link with -l%s -lOpenCL. */\n"
	              "#ifndef CACHET_%s_H\n#define CACHET_%s_H\n\n"
	              "#ifndef CL_TARGET_OPENCL_VERSION\n#define CL_TARGET_OPENCL_VERSION 120\n#endif\n"
	              "#include <CL/cl.h>\n#include <stddef.h>\n#include <stdint.h>\n\n"
	              "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
	              n, n, CACHET_VERSION, has_binary ? " and its program binary for one device" : "", n, n, n);
	if (has_binary)
		ct_buf_printf(&b, "/* The binary is for: %s.\n * Other devices build the source. */\n\n", desc);
	ct_buf_printf(&b,
	              "/* The kernel's OpenCL C source (NUL-terminated). */\n"
	              "extern const char cachet_%s_cl_source[];\n\n"
	              "/* The program built (or loaded) on one device, with its kernel. */\n"
	              "typedef struct cachet_%s_cl cachet_%s_cl;\n\n"
	              "/* Build or load the program. cx, dev and q: your context, device and\n"
	              " * queue (all three, kept until _free), or all NULL: the first device of\n"
	              " * the first platform that has one, with a context and an in-order queue\n"
	              " * of the handle's own. NULL on failure, with the reason (and the build\n"
	              " * log) in err (cap bytes; err may be NULL). */\n"
	              "cachet_%s_cl *cachet_%s_cl_new(cl_context cx, cl_device_id dev, cl_command_queue q, char *err,\n"
	              "                          size_t cap);\n"
	              "/* 1 when the program came from the embedded binary, 0 when built from source. */\n"
	              "int cachet_%s_cl_from_binary(const cachet_%s_cl *h);\n"
	              "cl_context cachet_%s_cl_context(const cachet_%s_cl *h);\n"
	              "cl_command_queue cachet_%s_cl_queue(const cachet_%s_cl *h);\n\n"
	              "/* Set the arguments and enqueue the kernel on the handle's queue with its\n"
	              " * NDRange (not blocking). The arrays are buffers of the handle's context:\n",
	              n, n, n, n, n, n, n, n, n, n, n);
	pkg_array_docs(&b, k);
	ct_buf_printf(&b, " * Returns CL_SUCCESS or the OpenCL error. */\ncl_int cachet_%s_cl_enqueue(cachet_%s_cl *h", n, n);
	c_args(&b, k, false);
	ct_buf_printf(&b, ");\n/* The same on host arrays: buffers made, every array copied in, the kernel\n"
	                  " * run, the output and inout arrays read back (blocking). */\n"
	                  "cl_int cachet_%s_cl_run(cachet_%s_cl *h", n, n);
	c_args(&b, k, true);
	ct_buf_printf(&b, ");\n/* Release the program, the kernel and (yours or its own) context and queue;\n"
	                  " * NULL is a no-op. */\nvoid cachet_%s_cl_free(cachet_%s_cl *h);\n\n"
	                  "#ifdef __cplusplus\n}\n#endif\n#endif\n",
	              n, n);
	return ct_buf_take(&b);
}

static char *make_source(const ct_kernel *k, const char *cl, size_t cl_len, const ocl_launch *L,
                         const unsigned char *bin, size_t bn, const char *desc, const char *opts)
{
	const char *n = k->name;
	ct_buf b;
	ct_buf_init(&b);
	ct_buf_printf(&b,
	              "/* %s.c: host wrapper of the OpenCL kernel '%s', generated by cachet %s. */\n"
	              "#define CL_TARGET_OPENCL_VERSION 120\n#define CL_USE_DEPRECATED_OPENCL_1_2_APIS\n"
	              "#include \"%s.h\"\n\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
	              "const char cachet_%s_cl_source[] =\n",
	              n, n, CACHET_VERSION, n, n);
	pkg_c_string(&b, cl, cl_len);
	ct_buf_puts(&b, ";\n\n/* the build options: on PoCL, and on other platforms */\nstatic const char ct_pocl_options[] = ");
	const char *pocl = ocl_build_options(OCL_POCL_PLATFORM, L->barriers);
	pkg_c_string(&b, pocl, strlen(pocl));
	ct_buf_puts(&b, ";\nstatic const char ct_options[] = ");
	pkg_c_string(&b, opts, strlen(opts));
	ct_buf_puts(&b, ";\n/* \"platform | version | device | driver | version\" of the binary's device */\n"
	                "static const char ct_binary_device[] = ");
	pkg_c_string(&b, desc, strlen(desc));
	ct_buf_printf(&b, ";\nstatic const size_t ct_binary_size = %zu;\nstatic const unsigned char ct_binary[] = {", bn);
	for (size_t i = 0; i < bn; i++)
		ct_buf_printf(&b, "%s%u,", i % 24 ? "" : "\n\t", bin[i]);
	if (!bn)
		ct_buf_puts(&b, "0");
	ct_buf_printf(&b,
	              "\n};\n\n"
	              "struct cachet_%s_cl {\n"
	              "\tcl_context cx;\n\tcl_device_id dev;\n\tcl_command_queue q;\n"
	              "\tcl_program prog;\n\tcl_kernel kern;\n\tint from_binary;\n};\n\n",
	              n);
	ct_buf_puts(&b,
	            "static void ct_say(char *err, size_t cap, const char *what, cl_int e)\n{\n"
	            "\tif (err && cap)\n\t\tsnprintf(err, cap, \"%s failed (OpenCL error %d)\", what, (int)e);\n}\n\n"
	            "static void ct_info(cl_device_id dev, cl_device_info what, char *buf, size_t cap)\n{\n"
	            "\tbuf[0] = 0;\n\tif (clGetDeviceInfo(dev, what, cap - 1, buf, NULL) != CL_SUCCESS)\n\t\tbuf[0] = 0;\n"
	            "\tbuf[cap - 1] = 0;\n}\n\n"
	            "/* dev described as cachet's binary cache names a device */\n"
	            "static void ct_describe(cl_device_id dev, char *out, size_t cap)\n{\n"
	            "\tcl_platform_id plat = NULL;\n\tchar pname[256] = \"\", pver[128] = \"\", dname[256], drv[128], ver[128];\n"
	            "\tif (clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL) == CL_SUCCESS) {\n"
	            "\t\tclGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);\n"
	            "\t\tclGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof pver - 1, pver, NULL);\n"
	            "\t\tpname[sizeof pname - 1] = pver[sizeof pver - 1] = 0;\n\t}\n"
	            "\tct_info(dev, CL_DEVICE_NAME, dname, sizeof dname);\n"
	            "\tct_info(dev, CL_DRIVER_VERSION, drv, sizeof drv);\n"
	            "\tct_info(dev, CL_DEVICE_VERSION, ver, sizeof ver);\n"
	            "\tsnprintf(out, cap, \"%s | %s | %s | driver %s | %s\", pname, pver, dname, drv, ver);\n}\n\n");
	ct_buf_printf(&b,
	              "cachet_%s_cl *cachet_%s_cl_new(cl_context cx, cl_device_id dev, cl_command_queue q, char *err, size_t cap)\n"
	              "{\n"
	              "\tif (err && cap)\n\t\terr[0] = 0;\n"
	              "\tif ((cx || dev || q) && !(cx && dev && q)) {\n"
	              "\t\tif (err && cap)\n\t\t\tsnprintf(err, cap, \"give the context, the device and the queue, or none\");\n"
	              "\t\treturn NULL;\n\t}\n"
	              "\tcachet_%s_cl *h = calloc(1, sizeof *h);\n\tif (!h)\n\t\treturn NULL;\n"
	              "\tcl_int e = CL_SUCCESS;\n"
	              "\tif (cx) {\n\t\th->cx = cx;\n\t\th->dev = dev;\n\t\th->q = q;\n"
	              "\t\tclRetainContext(cx);\n\t\tclRetainCommandQueue(q);\n"
	              "\t} else {\n"
	              "\t\tcl_platform_id plats[16];\n\t\tcl_uint np = 0;\n"
	              "\t\tif (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)\n\t\t\tnp = 0;\n"
	              "\t\tfor (cl_uint p = 0; p < np && p < 16 && !h->dev; p++)\n"
	              "\t\t\tif (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &h->dev, NULL) != CL_SUCCESS)\n"
	              "\t\t\t\th->dev = NULL;\n"
	              "\t\tif (!h->dev) {\n\t\t\tif (err && cap)\n\t\t\t\tsnprintf(err, cap, \"no OpenCL device\");\n"
	              "\t\t\tfree(h);\n\t\t\treturn NULL;\n\t\t}\n"
	              "\t\th->cx = clCreateContext(NULL, 1, &h->dev, NULL, NULL, &e);\n"
	              "\t\th->q = h->cx ? clCreateCommandQueue(h->cx, h->dev, 0, &e) : NULL;\n"
	              "\t\tif (!h->q) {\n\t\t\tct_say(err, cap, \"creating the context and queue\", e);\n"
	              "\t\t\tcachet_%s_cl_free(h);\n\t\t\treturn NULL;\n\t\t}\n\t}\n"
	              "\tchar desc[1024];\n\tct_describe(h->dev, desc, sizeof desc);\n"
	              "\tconst char *ct_opts = strncmp(desc, \"" OCL_POCL_PLATFORM " \", sizeof \"" OCL_POCL_PLATFORM " \" - 1) == 0 ? ct_pocl_options : ct_options;\n"
	              "\tif (ct_binary_size && strcmp(desc, ct_binary_device) == 0) {\n"
	              "\t\tconst unsigned char *bp = ct_binary;\n\t\tsize_t bn = ct_binary_size;\n"
	              "\t\th->prog = clCreateProgramWithBinary(h->cx, 1, &h->dev, &bn, &bp, NULL, &e);\n"
	              "\t\tif (h->prog && clBuildProgram(h->prog, 1, &h->dev, ct_opts, NULL, NULL) == CL_SUCCESS)\n"
	              "\t\t\th->from_binary = 1;\n"
	              "\t\telse if (h->prog) {\n\t\t\tclReleaseProgram(h->prog);\n\t\t\th->prog = NULL;\n\t\t}\n\t}\n"
	              "\tif (!h->prog) {\n"
	              "\t\tconst char *s = cachet_%s_cl_source;\n"
	              "\t\th->prog = clCreateProgramWithSource(h->cx, 1, &s, NULL, &e);\n"
	              "\t\tif (h->prog && (e = clBuildProgram(h->prog, 1, &h->dev, ct_opts, NULL, NULL)) != CL_SUCCESS) {\n"
	              "\t\t\tsize_t at = 0;\n"
	              "\t\t\tif (err && cap) {\n"
	              "\t\t\t\tat = (size_t)snprintf(err, cap, \"the program failed to build (OpenCL error %%d); log:\\n\", (int)e);\n"
	              "\t\t\t\tif (at < cap)\n"
	              "\t\t\t\t\tclGetProgramBuildInfo(h->prog, h->dev, CL_PROGRAM_BUILD_LOG, cap - at, err + at, NULL);\n"
	              "\t\t\t\terr[cap - 1] = 0;\n\t\t\t}\n"
	              "\t\t\tcachet_%s_cl_free(h);\n\t\t\treturn NULL;\n\t\t}\n"
	              "\t\tif (!h->prog) {\n\t\t\tct_say(err, cap, \"clCreateProgramWithSource\", e);\n"
	              "\t\t\tcachet_%s_cl_free(h);\n\t\t\treturn NULL;\n\t\t}\n\t}\n"
	              "\th->kern = clCreateKernel(h->prog, \"%s\", &e);\n"
	              "\tif (!h->kern) {\n\t\tct_say(err, cap, \"clCreateKernel\", e);\n\t\tcachet_%s_cl_free(h);\n"
	              "\t\treturn NULL;\n\t}\n\treturn h;\n}\n\n",
	              n, n, n, n, n, n, n, L->fn, n);
	ct_buf_printf(&b,
	              "int cachet_%s_cl_from_binary(const cachet_%s_cl *h) { return h ? h->from_binary : 0; }\n"
	              "cl_context cachet_%s_cl_context(const cachet_%s_cl *h) { return h ? h->cx : NULL; }\n"
	              "cl_command_queue cachet_%s_cl_queue(const cachet_%s_cl *h) { return h ? h->q : NULL; }\n\n"
	              "void cachet_%s_cl_free(cachet_%s_cl *h)\n{\n\tif (!h)\n\t\treturn;\n"
	              "\tif (h->kern)\n\t\tclReleaseKernel(h->kern);\n\tif (h->prog)\n\t\tclReleaseProgram(h->prog);\n"
	              "\tif (h->q)\n\t\tclReleaseCommandQueue(h->q);\n\tif (h->cx)\n\t\tclReleaseContext(h->cx);\n"
	              "\tfree(h);\n}\n\n",
	              n, n, n, n, n, n, n, n);
	/* enqueue */
	ct_buf_printf(&b, "cl_int cachet_%s_cl_enqueue(cachet_%s_cl *h", n, n);
	c_args(&b, k, false);
	ct_buf_puts(&b, ")\n{\n\tcl_int e;\n\tcl_uint ct_arg = 0;\n");
	for (int a = 0; a < k->narrays; a++)
		if (k->arrays[a].role != CT_TEMP)
			ct_buf_printf(&b,
			              "\tif ((e = clSetKernelArg(h->kern, ct_arg++, sizeof(cl_mem), &%s)) != CL_SUCCESS)\n"
			              "\t\treturn e;\n",
			              k->arrays[a].name);
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime)
			ct_buf_printf(&b,
			              "\tcl_long ct_%s = (cl_long)%s;\n"
			              "\tif ((e = clSetKernelArg(h->kern, ct_arg++, sizeof ct_%s, &ct_%s)) != CL_SUCCESS)\n"
			              "\t\treturn e;\n",
			              k->params[p].name, k->params[p].name, k->params[p].name, k->params[p].name);
	pkg_ndrange(&b, k, L);
	ct_buf_printf(&b, "\treturn clEnqueueNDRangeKernel(h->q, h->kern, %d, NULL, ct_g, %s, 0, NULL, NULL);\n}\n\n",
	              L->ndims, L->explicit_local ? "ct_l" : "NULL");
	/* run on host arrays */
	ct_buf_printf(&b, "cl_int cachet_%s_cl_run(cachet_%s_cl *h", n, n);
	c_args(&b, k, true);
	ct_buf_puts(&b, ")\n{\n\tcl_int e = CL_SUCCESS, e2 = CL_SUCCESS;\n");
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_TEMP)
			continue;
		ct_buf_printf(&b, "\tsize_t ct_n_%s = ", ar->name);
		c_elements(&b, k, a);
		ct_buf_printf(&b,
		              " * sizeof(%s);\n"
		              "\tcl_mem ct_m_%s = clCreateBuffer(h->cx, %s | CL_MEM_COPY_HOST_PTR, ct_n_%s ? ct_n_%s : 1,\n"
		              "\t                                (void *)(uintptr_t)%s, &e2); /* only read: COPY_HOST_PTR */\n"
		              "\tif (!ct_m_%s && e == CL_SUCCESS)\n\t\te = e2;\n",
		              ir_dtype_c(ar->type), ar->name,
		              ir_array_readonly(ar) ? "CL_MEM_READ_ONLY" : "CL_MEM_READ_WRITE",
		              ar->name, ar->name, ar->name, ar->name);
	}
	ct_buf_puts(&b, "\tif (e == CL_SUCCESS)\n\t");
	ct_buf_printf(&b, "\te = cachet_%s_cl_enqueue(h", n);
	for (int a = 0; a < k->narrays; a++)
		if (k->arrays[a].role != CT_TEMP)
			ct_buf_printf(&b, ", ct_m_%s", k->arrays[a].name);
	for (int p = 0; p < k->nparams; p++)
		if (k->params[p].runtime)
			ct_buf_printf(&b, ", %s", k->params[p].name);
	ct_buf_puts(&b, ");\n");
	for (int a = 0; a < k->narrays; a++) {
		const ir_array *ar = &k->arrays[a];
		if (ar->role == CT_OUTPUT || ar->role == CT_INOUT)
			ct_buf_printf(&b,
			              "\tif (e == CL_SUCCESS && ct_n_%s)\n"
			              "\t\te = clEnqueueReadBuffer(h->q, ct_m_%s, CL_TRUE, 0, ct_n_%s, %s, 0, NULL, NULL);\n",
			              ar->name, ar->name, ar->name, ar->name);
	}
	ct_buf_puts(&b, "\tif (e == CL_SUCCESS)\n\t\te = clFinish(h->q);\n");
	for (int a = 0; a < k->narrays; a++)
		if (k->arrays[a].role != CT_TEMP)
			ct_buf_printf(&b, "\tif (ct_m_%s)\n\t\tclReleaseMemObject(ct_m_%s);\n", k->arrays[a].name,
			              k->arrays[a].name);
	ct_buf_puts(&b, "\treturn e;\n}\n");
	return ct_buf_take(&b);
}

ct_status gen_opencl_package(ct_kernel *k, const char *dir)
{
	ct_ctx *ctx = k->ctx;
	ocl_launch L;
	size_t cl_len = 0;
	char *cl = ocl_kernel_source(k, &cl_len, &L);
	if (!cl)
		return ct_ctx_last_status(ctx);
	unsigned char *bin = NULL;
	size_t bn = 0;
	char desc[1024] = "";
	/* the options the wrapper builds with: those of `cachet run` */
	const char *opts = ocl_build_options(NULL, false);
	ct_status st = run_opencl_binary(k, &bin, &bn, desc, sizeof desc);
	char *hdr = st ? NULL : make_header(k, bin != NULL, desc);
	char *src = st ? NULL : make_source(k, cl, cl_len, &L, bin, bin ? bn : 0, bin ? desc : "", opts);
	if (!st && (!hdr || !src))
		st = ct_error(ctx, CT_ERR_NOMEM, "out of memory");
	char p_cl[4096], p_h[4096], p_c[4096], obj[4096], lib_a[4096], lib_so[4096];
	snprintf(p_cl, sizeof p_cl, "%s/%s.cl", dir, k->name);
	snprintf(p_h, sizeof p_h, "%s/%s.h", dir, k->name);
	snprintf(p_c, sizeof p_c, "%s/%s.c", dir, k->name);
	snprintf(obj, sizeof obj, "%s/%s.o", dir, k->name);
	snprintf(lib_a, sizeof lib_a, "%s/lib%s.a", dir, k->name);
	snprintf(lib_so, sizeof lib_so, "%s/lib%s.so", dir, k->name);
	if (!st)
		st = aot_write_atomic(ctx, p_cl, cl, cl_len);
	if (!st)
		st = aot_write_atomic(ctx, p_h, hdr, strlen(hdr));
	if (!st)
		st = aot_write_atomic(ctx, p_c, src, strlen(src));
	if (!st)
		st = aot_compile_package(k, p_c, obj, lib_a, lib_so, "-lOpenCL", false, NULL);
	free(cl);
	free(bin);
	free(hdr);
	free(src);
	return st;
}
