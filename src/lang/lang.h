/* lang.h: internal interface of the front end: tokens, lexer, checker passes. */
#ifndef CT_LANG_H
#define CT_LANG_H

#include "ir/ir.h"

/* Longest identifier accepted (longer ones are an error, not a truncation). */
#define LANG_MAX_IDENT 255
/* Largest source text accepted (bytes). */
#define LANG_MAX_TEXT ((size_t)64 << 20)

typedef enum tok_kind {
	T_EOF = 0,
	T_IDENT,
	T_INT,
	T_FLOAT,
	/* keywords (reserved) */
	T_KERNEL,
	T_PARAM,
	T_RUNTIME,
	T_ARRAY,
	T_INPUT,
	T_OUTPUT,
	T_INOUT,
	T_TEMP,
	T_CONST,
	T_FOR,
	T_IF,
	T_ELSE,
	T_SCHEDULE,
	T_PLAN,
	/* punctuation */
	T_LPAREN,
	T_RPAREN,
	T_LBRACKET,
	T_RBRACKET,
	T_LBRACE,
	T_RBRACE,
	T_COMMA,
	T_COLON,
	T_SEMI,
	T_DOTDOT,
	T_ASSIGN,
	T_PLUSEQ,
	T_MINUSEQ,
	T_STAREQ,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_EQ,
	T_NE,
	T_AND,
	T_OR,
	T_NOT
} tok_kind;

typedef struct tok {
	tok_kind kind;
	int line, col;
	bool nl;       /* first token on its line */
	bool bad;      /* literal out of range (already reported) */
	const char *s; /* T_IDENT: NUL-terminated copy in the arena */
	int64_t ival;  /* T_INT */
	double fval;   /* T_FLOAT (T_INT too, as a double) */
} tok;

/* Split text into tokens (always ending with T_EOF) allocated from a;
 * lexical errors become diagnostics on ctx (and bump *nerr). NULL only when
 * memory runs out. */
tok *lex_text(ct_arena *a, ct_ctx *ctx, const char *text, size_t len, int *ntok, int *nerr);
/* Spelling of a token kind for messages ("'('", "identifier", ...). */
const char *lex_kind_name(tok_kind k);

/* ------------------------------------------------------------ checker (check.c) */

/* Convert e to an affine expression over params (and original indices when
 * allow_index) with term arrays from a. On failure reports exactly one
 * diagnostic, saying why, for the construct `what` ("subscript", "extent",
 * ...) and returns false. */
bool lang_to_aff(ct_kernel *k, ct_arena *a, const ir_expr *e, bool allow_index, const char *what,
                 aff *out);
/* Evaluate the integer expression e (integer literals, + - * / and, when
 * allow_params, compile-time params) into *out. On failure reports exactly
 * one diagnostic and returns false. Division truncates toward zero. */
bool lang_eval_int(ct_kernel *k, const ir_expr *e, bool allow_params, const char *what,
                   int64_t *out);

/* The front end: parse and check; NULL with diagnostics on ctx on error. */
ct_kernel *lang_parse(ct_ctx *ctx, const char *text, size_t len, const char *file);
/* Re-run the semantic checks (after param overrides); CT_OK or CT_ERR_INPUT
 * with diagnostics on the kernel's ctx. */
ct_status lang_recheck(ct_kernel *k);
/* Structural checks and IR completion after parsing: expression types,
 * affine subscripts and conditions, roles (writes to inputs, reads of
 * outputs), the schedule's names and bands, the plan. Returns the number of
 * errors reported. */
int check_structure(ct_kernel *k);
/* Checks that depend on param values: derived params, extents, split sizes,
 * subscripts inside extents. Returns the number of errors reported. */
int check_sizes(ct_kernel *k);

/* Print affine expression x with param and index names of k into b. */
void lang_aff_print(ct_buf *b, const ct_kernel *k, aff x);

#endif
