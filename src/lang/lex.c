/* lex.c: the lexer of the .cachet language: bytes to tokens, with positions. */
#include "lang/lang.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kw {
	const char *s;
	tok_kind k;
} kw;

static const kw keywords[] = {
    {"kernel", T_KERNEL},     {"param", T_PARAM},   {"runtime", T_RUNTIME}, {"array", T_ARRAY},
    {"input", T_INPUT},       {"output", T_OUTPUT}, {"inout", T_INOUT},     {"temp", T_TEMP},
    {"const", T_CONST},       {"for", T_FOR},       {"if", T_IF},           {"else", T_ELSE},
    {"schedule", T_SCHEDULE}, {"plan", T_PLAN},
};

const char *lex_kind_name(tok_kind k)
{
	switch (k) {
	case T_EOF: return "end of file";
	case T_IDENT: return "a name";
	case T_INT: return "an integer";
	case T_FLOAT: return "a number";
	case T_KERNEL: return "'kernel'";
	case T_PARAM: return "'param'";
	case T_RUNTIME: return "'runtime'";
	case T_ARRAY: return "'array'";
	case T_INPUT: return "'input'";
	case T_OUTPUT: return "'output'";
	case T_INOUT: return "'inout'";
	case T_TEMP: return "'temp'";
	case T_CONST: return "'const'";
	case T_FOR: return "'for'";
	case T_IF: return "'if'";
	case T_ELSE: return "'else'";
	case T_SCHEDULE: return "'schedule'";
	case T_PLAN: return "'plan'";
	case T_LPAREN: return "'('";
	case T_RPAREN: return "')'";
	case T_LBRACKET: return "'['";
	case T_RBRACKET: return "']'";
	case T_LBRACE: return "'{'";
	case T_RBRACE: return "'}'";
	case T_COMMA: return "','";
	case T_COLON: return "':'";
	case T_SEMI: return "';'";
	case T_DOTDOT: return "'..'";
	case T_ASSIGN: return "'='";
	case T_PLUSEQ: return "'+='";
	case T_MINUSEQ: return "'-='";
	case T_STAREQ: return "'*='";
	case T_PLUS: return "'+'";
	case T_MINUS: return "'-'";
	case T_STAR: return "'*'";
	case T_SLASH: return "'/'";
	case T_LT: return "'<'";
	case T_LE: return "'<='";
	case T_GT: return "'>'";
	case T_GE: return "'>='";
	case T_EQ: return "'=='";
	case T_NE: return "'!='";
	case T_AND: return "'&&'";
	case T_OR: return "'||'";
	case T_NOT: return "'!'";
	}
	return "a token";
}

static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_xdigit(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Lexer state: the text, a cursor and the position of the cursor. */
typedef struct lexer {
	ct_arena *a;
	ct_ctx *ctx;
	const unsigned char *p, *end;
	int line, col;
	int *nerr;
	bool nl;
} lexer;

static void lex_err(lexer *lx, int line, int col, const char *fmt, const char *arg)
{
	ct_diag_add(lx->ctx, line, col, fmt, arg);
	(*lx->nerr)++;
}

static void advance(lexer *lx, size_t n)
{
	for (size_t i = 0; i < n && lx->p < lx->end; i++) {
		if (*lx->p == '\n') {
			lx->line++;
			lx->col = 1;
			lx->nl = true;
		} else if (lx->col < 1000000000) {
			lx->col++;
		}
		lx->p++;
	}
}

/* Parse a floating literal [s, s+n) with strtod independently of the
 * process locale (the text always uses '.'). */
static double parse_float(const char *s, size_t n, bool *ok)
{
	char buf[512];
	if (n >= sizeof buf) {
		*ok = false;
		return 0;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	const struct lconv *lc = localeconv();
	char dp = lc && lc->decimal_point && lc->decimal_point[0] ? lc->decimal_point[0] : '.';
	if (dp != '.')
		for (size_t i = 0; i < n; i++)
			if (buf[i] == '.')
				buf[i] = dp;
	char *endp;
	double v = strtod(buf, &endp);
	if (*endp != 0 || !isfinite(v))
		*ok = false;
	return v;
}

/* Lex a number at the cursor into t. */
static void lex_number(lexer *lx, tok *t)
{
	const unsigned char *s = lx->p, *q = s;
	if (q + 1 < lx->end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
		q += 2;
		const unsigned char *digits = q;
		uint64_t v = 0;
		bool over = false;
		while (q < lx->end && is_xdigit(*q)) {
			int d = is_digit(*q) ? *q - '0' : (*q | 32) - 'a' + 10;
			if (v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)d) / 16)
				over = true;
			else
				v = v * 16 + (uint64_t)d;
			q++;
		}
		t->kind = T_INT;
		if (q == digits) {
			lex_err(lx, t->line, t->col, "%s", "hexadecimal literal without digits");
			t->bad = true;
		} else if (over) {
			lex_err(lx, t->line, t->col, "%s", "integer literal is too large");
			t->bad = true;
		}
		t->ival = over ? 0 : (int64_t)v;
		t->fval = (double)t->ival;
	} else {
		bool is_float = false;
		while (q < lx->end && is_digit(*q))
			q++;
		/* `1..N` is a range, not the float `1.` followed by `.N` */
		if (q < lx->end && *q == '.' && !(q + 1 < lx->end && q[1] == '.')) {
			is_float = true;
			q++;
			while (q < lx->end && is_digit(*q))
				q++;
		}
		if (q < lx->end && (*q == 'e' || *q == 'E')) {
			const unsigned char *e = q + 1;
			if (e < lx->end && (*e == '+' || *e == '-'))
				e++;
			if (e < lx->end && is_digit(*e)) {
				is_float = true;
				q = e;
				while (q < lx->end && is_digit(*q))
					q++;
			}
		}
		size_t n = (size_t)(q - s);
		if (is_float) {
			bool ok = true;
			t->kind = T_FLOAT;
			t->fval = parse_float((const char *)s, n, &ok);
			if (!ok) {
				lex_err(lx, t->line, t->col, "%s",
				        "floating literal is out of range");
				t->bad = true;
				t->fval = 0;
			}
		} else {
			t->kind = T_INT;
			int64_t v = 0;
			bool over = false;
			for (const unsigned char *d = s; d < q; d++)
				if (!ct_mul_ok(v, 10, &v) || !ct_add_ok(v, *d - '0', &v))
					over = true;
			if (over) {
				lex_err(lx, t->line, t->col, "%s", "integer literal is too large");
				t->bad = true;
				v = 0;
			} else if (n > 1 && s[0] == '0') {
				lex_err(
				    lx, t->line, t->col, "%s",
				    "integer literal with a leading zero (octal is not supported)");
				t->bad = true;
			}
			t->ival = v;
			t->fval = (double)v;
		}
	}
	/* a suffix glued to a number (`0.5f`, `12ab`) is an error, except `x` and a digit after
	 * an integer: the grid of distribute(..., grid=2x2) reads as 2 and the name x2 */
	bool grid = t->kind == T_INT && q + 1 < lx->end && *q == 'x' && is_digit(q[1]);
	if (!grid && q < lx->end && (is_alpha(*q) || is_digit(*q))) {
		if (!t->bad)
			lex_err(lx, t->line, t->col, "%s", "invalid suffix on a numeric literal");
		t->bad = true;
		while (q < lx->end && (is_alpha(*q) || is_digit(*q)))
			q++;
	}
	advance(lx, (size_t)(q - s));
}

/* Lex one token at the cursor (after whitespace); false at end of text. */
static bool lex_one(lexer *lx, tok *t)
{
	for (;;) {
		/* whitespace and comments */
		while (lx->p < lx->end) {
			unsigned char c = *lx->p;
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
			    c == '\v') {
				advance(lx, 1);
			} else if (c == '#') {
				while (lx->p < lx->end && *lx->p != '\n')
					advance(lx, 1);
			} else {
				break;
			}
		}
		memset(t, 0, sizeof *t);
		t->line = lx->line;
		t->col = lx->col;
		t->nl = lx->nl;
		if (lx->p >= lx->end) {
			t->kind = T_EOF;
			return false;
		}
		unsigned char c = *lx->p;
		unsigned char d = lx->p + 1 < lx->end ? lx->p[1] : 0;
		if (is_alpha(c)) {
			const unsigned char *q = lx->p;
			while (q < lx->end && (is_alpha(*q) || is_digit(*q)))
				q++;
			size_t n = (size_t)(q - lx->p);
			if (n > LANG_MAX_IDENT) {
				lex_err(lx, t->line, t->col, "%s",
				        "name is too long (at most 255 characters)");
				advance(lx, n);
				lx->nl = false;
				continue;
			}
			t->kind = T_IDENT;
			for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
				if (strlen(keywords[i].s) == n &&
				    memcmp(keywords[i].s, lx->p, n) == 0)
					t->kind = keywords[i].k;
			if (t->kind == T_IDENT) {
				t->s = ct_arena_strndup(lx->a, (const char *)lx->p, n);
				if (!t->s)
					return false;
			} else {
				t->s = lex_kind_name(t->kind);
			}
			advance(lx, n);
			lx->nl = false;
			return true;
		}
		if (is_digit(c) || (c == '.' && is_digit(d))) {
			lex_number(lx, t);
			lx->nl = false;
			return true;
		}
		size_t n = 2;
		if (c == '.' && d == '.')
			t->kind = T_DOTDOT;
		else if (c == '+' && d == '=')
			t->kind = T_PLUSEQ;
		else if (c == '-' && d == '=')
			t->kind = T_MINUSEQ;
		else if (c == '*' && d == '=')
			t->kind = T_STAREQ;
		else if (c == '<' && d == '=')
			t->kind = T_LE;
		else if (c == '>' && d == '=')
			t->kind = T_GE;
		else if (c == '=' && d == '=')
			t->kind = T_EQ;
		else if (c == '!' && d == '=')
			t->kind = T_NE;
		else if (c == '&' && d == '&')
			t->kind = T_AND;
		else if (c == '|' && d == '|')
			t->kind = T_OR;
		else {
			n = 1;
			switch (c) {
			case '(': t->kind = T_LPAREN; break;
			case ')': t->kind = T_RPAREN; break;
			case '[': t->kind = T_LBRACKET; break;
			case ']': t->kind = T_RBRACKET; break;
			case '{': t->kind = T_LBRACE; break;
			case '}': t->kind = T_RBRACE; break;
			case ',': t->kind = T_COMMA; break;
			case ':': t->kind = T_COLON; break;
			case ';': t->kind = T_SEMI; break;
			case '=': t->kind = T_ASSIGN; break;
			case '+': t->kind = T_PLUS; break;
			case '-': t->kind = T_MINUS; break;
			case '*': t->kind = T_STAR; break;
			case '/': t->kind = T_SLASH; break;
			case '<': t->kind = T_LT; break;
			case '>': t->kind = T_GT; break;
			case '!': t->kind = T_NOT; break;
			default: {
				char what[32];
				if (c >= 33 && c < 127)
					snprintf(what, sizeof what, "'%c'", c);
				else
					snprintf(what, sizeof what, "byte 0x%02x", c);
				lex_err(lx, t->line, t->col, "unexpected character %s", what);
				/* skip a run of bad bytes with one message */
				advance(lx, 1);
				while (lx->p < lx->end && *lx->p >= 127)
					advance(lx, 1);
				continue;
			}
			}
		}
		advance(lx, n);
		lx->nl = false;
		return true;
	}
}

tok *lex_text(ct_arena *a, ct_ctx *ctx, const char *text, size_t len, int *ntok, int *nerr)
{
	lexer lx = {a,    ctx, (const unsigned char *)text, (const unsigned char *)text + len, 1, 1,
	            nerr, true};
	int cap = 0, n = 0;
	tok *v = NULL;
	for (;;) {
		if (n + 1 > cap) {
			if (n >= (1 << 26)) {
				lex_err(&lx, lx.line, lx.col, "%s", "too many tokens");
				if (!v)
					return NULL;
				v[n - 1].kind = T_EOF;
				break;
			}
			int ncap = cap ? cap * 2 : 256;
			tok *nv = ct_arena_alloc(a, sizeof *nv * (size_t)ncap);
			if (!nv)
				return NULL;
			if (n)
				memcpy(nv, v, sizeof *nv * (size_t)n);
			v = nv;
			cap = ncap;
		}
		bool more = lex_one(&lx, &v[n]);
		if (a->failed)
			return NULL;
		n++;
		if (!more)
			break;
	}
	*ntok = n;
	return v;
}
