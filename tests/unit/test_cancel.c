/* test_cancel.c: ct_ctx_cancel from a signal handler: the compiler's process group is killed and
 * the build folder (with the compiler's temporaries) removed. */
#include "harness.h"
#include "cachet.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The handler finds the ctx here: the program's pointer, as tools/cachet.c keeps one. */
static ct_ctx *volatile running;

static void on_alarm(int sig)
{
	(void)sig;
	ct_ctx_cancel(running);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Entries of folder dir (-1 if it cannot be read). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void test_cancel_nothing(void)
{
	ct_ctx_cancel(NULL);
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ctx != NULL);
	ct_ctx_cancel(ctx); /* no code cache yet: nothing to do */
	ct_ctx_free(ctx);
}

/* A compiler that takes 30 s (a wrapper that sleeps before compiling a build's source)
 * is cancelled from SIGALRM after 1 s: the load fails within seconds (the sleep, in the
 * compiler's process group, was killed: it held the output pipe), nothing is left in TMPDIR,
 * and the ctx starts no further compiler. */
static void test_cancel_compile(void)
{
	char tmp[] = "/tmp/cachet-cancel-XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	char cc[sizeof tmp + 16], tmpdir[sizeof tmp + 16];
	snprintf(cc, sizeof cc, "%s/slowcc", tmp);
	snprintf(tmpdir, sizeof tmpdir, "%s/t", tmp);
	CHECK(mkdir(tmpdir, 0700) == 0);
	FILE *f = fopen(cc, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in */cachet-build-*/k*.c) sleep 30 ;; esac; done\n"
	           "exec cc \"$@\"\n");
	fclose(f);
	chmod(cc, 0755);
	setenv("TMPDIR", tmpdir, 1);
	setenv("CACHET_NO_CACHE", "1", 1);
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_ctx_set_compiler(ctx, cc) == CT_OK);
	running = ctx;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	static const char src[] = "int f(int x) { return x + 1; }\n";
	ct_compile_options o;
	ct_compile_options_init(&o);
	ct_module *m = NULL;
	double t0 = now();
	alarm(1);
	ct_status st = ct_module_load(ctx, src, sizeof src - 1, &o, &m, NULL);
	double took = now() - t0;
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	CHECKF(st != CT_OK, "the load succeeded after a cancel");
	CHECKF(took < 10, "the load took %.1f s: the compiler's group was not killed", took);
	CHECKF(entries(tmpdir) == 0, "%d entries left in TMPDIR", entries(tmpdir));
	/* cancelled: no further compiler is started */
	st = ct_module_load(ctx, src, sizeof src - 1, &o, &m, NULL);
	CHECK(st != CT_OK);
	CHECKF(strstr(ct_ctx_last_message(ctx), "cancelled") != NULL, "%s", ct_ctx_last_message(ctx));
	running = NULL;
	ct_ctx_free(ctx);
	unsetenv("CACHET_NO_CACHE");
	unsetenv("TMPDIR");
	unlink(cc);
	rmdir(tmpdir);
	rmdir(tmp);
}

int main(void)
{
	RUN(test_cancel_nothing);
	RUN(test_cancel_compile);
	return h_report();
}
