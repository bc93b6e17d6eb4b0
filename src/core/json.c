/* json.c: the few jansson helpers every JSON printer of the library and the CLI shares (one number rule, one layout). */
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ct_json_set(json_t *obj, const char *key, json_t *v, bool *ok)
{
	/* json_object_set_new releases v itself when it fails */
	if (!v || !obj || json_object_set_new(obj, key, v) != 0) {
		if (v && !obj)
			json_decref(v);
		*ok = false;
	}
}

void ct_json_push(json_t *arr, json_t *v, bool *ok)
{
	if (!v || !arr || json_array_append_new(arr, v) != 0) {
		if (v && !arr)
			json_decref(v);
		*ok = false;
	}
}

json_t *ct_json_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The length of the well-formed UTF-8 sequence at s (1..4), 0 when the
 * bytes there are not one (a stray continuation byte, an overlong form, a
 * surrogate, beyond U+10FFFF, cut short): the rules jansson enforces. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) || (c == 0xf0 && s[1] < 0x90) ||
	    (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

json_t *ct_json_text(const char *s)
{
	if (!s)
		return json_null();
	size_t len = strlen(s), bad = 0;
	for (size_t i = 0, n; i < len; i += n ? n : 1)
		bad += (n = utf8_seq((const unsigned char *)s + i)) == 0;
	if (!bad)
		return json_string(s);
	/* each bad byte becomes U+FFFD (3 bytes) */
	char *t = malloc(len + 2 * bad + 1);
	if (!t)
		return NULL;
	size_t o = 0;
	for (size_t i = 0, n; i < len; i += n ? n : 1) {
		n = utf8_seq((const unsigned char *)s + i);
		if (n) {
			memcpy(t + o, s + i, n);
			o += n;
		} else {
			memcpy(t + o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	}
	t[o] = 0;
	json_t *v = json_string(t);
	free(t);
	return v;
}

/* text, a number printf wrote, as JSON: an integer when whole. */
static json_t *number_of(const char *text)
{
	double r = strtod(text, NULL);
	/* 2^53: every integer below it is exact in a double */
	if (r == floor(r) && fabs(r) < 9007199254740992.0)
		return json_integer((json_int_t)r);
	return json_real(r);
}

json_t *ct_json_real(double v, int sig)
{
	if (!isfinite(v))
		return json_null();
	char text[64];
	snprintf(text, sizeof text, "%.*g", sig, v);
	return number_of(text);
}

json_t *ct_json_fixed(double v, int decimals)
{
	if (!isfinite(v) || fabs(v) >= 1e15)
		return ct_json_real(v, 9);
	char text[64];
	snprintf(text, sizeof text, "%.*f", decimals, v);
	return number_of(text);
}

json_t *ct_json_tristate(int v)
{
	return v == 1 ? json_true() : v == 0 ? json_false() : json_null();
}

json_t *ct_json_ints(const int64_t *v, int n)
{
	json_t *a = json_array();
	bool ok = a != NULL;
	for (int i = 0; ok && i < n; i++)
		ct_json_push(a, json_integer((json_int_t)v[i]), &ok);
	if (!ok) {
		json_decref(a);
		return NULL;
	}
	return a;
}

char *ct_json_line(json_t *v)
{
	if (!v)
		return NULL;
	/* without JSON_COMPACT and with no indent, jansson separates with ", "
	 * and ": " on one line: the layout CLI.md shows */
	char *s = json_dumps(v, JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));
	json_decref(v);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *line = realloc(s, n + 2);
	if (!line) {
		free(s);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = 0;
	return line;
}
