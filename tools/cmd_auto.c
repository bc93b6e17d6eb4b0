/* cmd_auto.c: `cachet auto`: a schedule and a plan chosen from the nest, the machine and the model, as a whole .cachet file; and the kernel `run --auto` runs. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tuner's ranking phase with a budget, on a terminal only. */
static void auto_progress(void *ud, const char *phase, int done, int total)
{
	(void)ud;
	if (!isatty(2))
		return;
	fprintf(stderr, "\rauto: %s %d/%d\033[K", phase, done, total);
	progress_drawn = 1;
	fflush(stderr);
}

/* ct_kernel_autoschedule with the command line's options; NULL after the error. */
static char *auto_text(ct_ctx *ctx, ct_kernel *k, cli *c, int *rc)
{
	if (c->target && strcmp(c->target, "host") != 0) {
		fprintf(stderr, "cachet: error: auto chooses plans for --target host only, not '%s'\n", c->target);
		*rc = EXIT_BAD_INPUT;
		return NULL;
	}
	ct_auto_options o;
	ct_auto_options_init(&o);
	o.threads = c->run.threads;
	o.budget = c->budget;
	o.cache_spec = c->cache_spec;
	if (!c->quiet && c->budget > 0)
		o.progress = auto_progress;
	char *text = NULL;
	ct_status st = ct_kernel_autoschedule(k, &o, &text, NULL);
	if (progress_drawn) {
		fprintf(stderr, "\r\033[K");
		progress_drawn = 0;
	}
	if (st != CT_OK) {
		*rc = fail(ctx, st);
		return NULL;
	}
	return text;
}

ct_kernel *auto_kernel(ct_ctx *ctx, ct_kernel *k, cli *c, int *rc)
{
	char *text = auto_text(ctx, k, c, rc);
	if (!text)
		return NULL;
	ct_kernel *a = ct_kernel_parse(ctx, text, strlen(text), c->file);
	free(text);
	ct_status st = a ? CT_OK : ct_ctx_last_status(ctx);
	for (int i = 0; a && i < c->ndefs && !st; i++)
		st = ct_kernel_set_param(a, c->defs[i].name, c->defs[i].value);
	if (a && c->ndefs && !st)
		st = ct_kernel_recheck(a);
	if (st) {
		*rc = fail(ctx, st);
		ct_kernel_free(a);
		return NULL;
	}
	return a;
}

static int auto_cmd(ct_ctx *ctx, ct_kernel *k, cli *c)
{
	int rc = EXIT_OK;
	char *text = auto_text(ctx, k, c, &rc);
	if (!text)
		return rc;
	if (c->out_dir) {
		atomic_file af;
		FILE *f = atomic_open(&af, c->out_dir);
		if (!f) {
			free(text);
			return EXIT_FAILED;
		}
		fputs(text, f);
		if (!atomic_commit(&af)) {
			free(text);
			return EXIT_FAILED;
		}
	}
	if (c->json) {
		bool ok = true;
		json_t *o = json_object();
		ct_json_set(o, "kernel", json_string(ct_kernel_name(k)), &ok);
		ct_json_set(o, "file", json_string(c->file), &ok);
		ct_json_set(o, "measured", json_boolean(c->budget > 0), &ok);
		if (c->out_dir)
			ct_json_set(o, "output", json_string(c->out_dir), &ok);
		ct_json_set(o, "text", json_string(text), &ok);
		print_json(o, ok);
	} else if (!c->out_dir)
		fputs(text, stdout);
	free(text);
	return EXIT_OK;
}

int cmd_auto(cli *c) { return with_kernel(c, auto_cmd); }
