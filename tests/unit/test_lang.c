/* test_lang.c: the front end: every construct parses into the right IR, every diagnostic is exact,
 * hostile input is harmless. */
#include "harness.h"
#include "lang/lang.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines 1-6 of most rows; a row's own text starts at line 7. */
#define HDR                                                                                        \
	"kernel t\n"                                                                               \
	"param N = 16, M = 8\n"                                                                    \
	"param L : runtime\n"                                                                      \
	"array A : f32[N] input\n"                                                                 \
	"array B : f32[N] inout\n"                                                                 \
	"array C : f32[N, M] inout\n"

/* A matmul nest with a schedule (lines 1-10) for the plan rows (line 11 on). */
#define MM                                                                                         \
	"kernel mm\n"                                                                              \
	"param M = 64, N = 64, K = 64\n"                                                           \
	"array A : f32[M, K] input\n"                                                              \
	"array B : f32[K, N] input\n"                                                              \
	"array C : f32[M, N] inout\n"                                                              \
	"array D : f32[M, N] output\n"                                                             \
	"for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"                                \
	"for (x: M, y: N) { D[x, y] = C[x, y] }\n"                                                 \
	"schedule { ii, jj, kk = tile(i=32, j=16, k=8); reorder(i, j, k, ii, kk, jj) }\n"          \
	"array Z : f32[M] const\n"

/* MM with one nest (an OpenCL plan parallelizes every statement). */
#define MM1                                                                                        \
	"kernel mm\n"                                                                              \
	"param M = 64, N = 64, K = 64\n"                                                           \
	"array A : f32[M, K] input\n"                                                              \
	"array B : f32[K, N] input\n"                                                              \
	"array C : f32[M, N] inout\n"                                                              \
	"for (i: M, j: N, k: K) { C[i, j] += A[i, k] * B[k, j] }\n"                                \
	"schedule { ii, jj, kk = tile(i=32, j=16, k=8); reorder(i, j, k, ii, kk, jj) }\n"

/* One row: the text, and the first diagnostic expected ("LINE:COL: error:
 * message"), or NULL when the text must be accepted; ndiag > 0 also checks
 * the number of diagnostics. */
typedef struct row {
	const char *name;
	const char *src;
	const char *want;
	int ndiag;
} row;

static const row rows[] = {
    /* ---------------------------------------------------------- accepted */
    {"simple loop", HDR "for (i: N) { B[i] = A[i] }\n", NULL, 0},
    {"range bounds", HDR "for (i: 1 .. N-1) {\n  B[i] = A[i-1] + A[i+1]\n}\n", NULL, 0},
    {"perfect nest", HDR "for (i: N, j: M) { C[i, j] = A[i] * 2 }\n", NULL, 0},
    {"imperfect nest",
     HDR "for (i: N) {\n  B[i] = 0\n  for (j: M) { B[i] += C[i, j] }\n"
         "  for (k: M) { C[i, k] = B[i] }\n}\n",
     NULL, 0},
    {"sequential loops", HDR "for (i: N) { B[i] = 1 }\nfor (j: N) { B[j] += A[j] }\n", NULL, 0},
    {"all assign ops", HDR "for (i: N) { B[i] = A[i]; B[i] += 1; B[i] -= A[i]; B[i] *= 2 }\n", NULL,
     0},
    {"let", HDR "for (i: N) {\n  let t = A[i] * 2\n  let u = t + 1\n  B[i] = u * t\n}\n", NULL, 0},
    {"let at top level", HDR "let s = 2.5\nB[0] = s\n", NULL, 0},
    {"if else-if else",
     HDR "for (i: N) {\n  if (i == 0) { B[i] = 1 } else if (i < 4) { B[i] = 2 }\n"
         "  else { B[i] = A[i-1] }\n}\n",
     NULL, 0},
    {"all functions",
     HDR "for (i: N) { B[i] = min(A[i], 1) + max(A[i], 0) + abs(A[i]) + sqrt(abs(A[i])) + "
         "exp(A[i]) + fma(A[i], 2, 1) + select(A[i] > 0, A[i], 0) }\n",
     NULL, 0},
    {"select conditions",
     HDR "for (i: N) { B[i] = select(A[i] > 0 && !(A[i] >= 1) || i == 3, 1, 2) }\n", NULL, 0},
    {"float literals", HDR "for (i: N) { B[i] = 1e-3 + 2.5 + .5 + 1. + 3E2 + 1e+1 }\n", NULL, 0},
    {"hex literal", HDR "B[0x3] = 1\n", NULL, 0},
    {"comments and semicolons", HDR "# a comment\nfor (i: N) { # here too\n  ;B[i] = 1;;\n}\n",
     NULL, 0},
    {"unary ops", HDR "for (i: N) { B[i] = -A[i] + +A[i] - -2 }\n", NULL, 0},
    {"index and param values", HDR "for (i: N) { B[i] = i * N + A[i] / M }\n", NULL, 0},
    {"derived param",
     "kernel t\nparam N = 8, N2 = 2*N + 1\narray A : f32[N2] inout\n"
     "for (i: N) { A[2*i+1] = A[2*i] }\n",
     NULL, 0},
    {"layouts and types",
     "kernel t\nparam N = 4\narray A : f64[N, N, N] input layout=(2, 0, 1) strided\n"
     "array B : i32[N, N] const layout=col_major\narray C : i64[N, N] temp layout=last_major\n"
     "array D : f32[N, N] output layout=first_major\n"
     "for (i: N, j: N) { C[i, j] = B[i, j]; D[i, j] = A[i, j, 0] + C[i, j] }\n",
     NULL, 0},
    {"top-level statement", HDR "B[0] = A[N-1]\n", NULL, 0},
    {"runtime extent",
     "kernel t\nparam L : runtime\narray R : f32[L+2] inout\n"
     "for (i: L) { R[i+2] = R[i] + R[i+1] }\n",
     NULL, 0},
    {"runtime range",
     "kernel t\nparam L : runtime\narray R : f32[L] inout\n"
     "for (i: 1 .. L-1) { R[i] = R[i-1] + R[i+1] }\n",
     NULL, 0},
    {"guarded stencil",
     "kernel s\nparam N = 32, M = 16\narray A : f32[N, M] input\narray B : f32[N, M] output\n"
     "for (x: N, y: M) {\n  if (0 < x && x < N-1 && 0 < y && y < M-1) {\n"
     "    B[x, y] = (A[x-1, y] + A[x+1, y] + A[x, y-1] + A[x, y+1] + A[x, y]) / 5\n"
     "  } else {\n    B[x, y] = A[x, y]\n  }\n}\n",
     NULL, 0},
    {"guarded runtime stencil",
     "kernel s\nparam L : runtime\narray A : f32[L] input\narray B : f32[L] output\n"
     "for (x: L) {\n  if (x >= 1 && x <= L-2) { B[x] = A[x-1] + A[x+1] } else { B[x] = 0 }\n}\n",
     NULL, 0},
    {"guard on a sum", HDR "for (i: N, j: N) { if (i + j < N) { B[i+j] = A[j] } }\n", NULL, 0},
    {"guard with !=", HDR "for (i: N) { if (i != N-1) { B[i] = A[i+1] } }\n", NULL, 0},
    {"guard with !", HDR "for (i: N) { if (!(i >= N-1)) { B[i] = A[i+1] } }\n", NULL, 0},
    {"guard in else", HDR "for (i: N) { if (i >= N-1) { B[i] = 0 } else { B[i] = A[i+1] } }\n",
     NULL, 0},
    {"guard with ==", HDR "for (i: N) { if (i == 0) { B[i] = A[i+15] } }\n", NULL, 0},
    {"scaled guard", HDR "for (i: N) { if (2*i < N) { B[2*i] = A[2*i+1] } }\n", NULL, 0},
    {"schedule",
     HDR "for (i: N, j: M) { C[i, j] = 1 }\nschedule {\n  ii, jj = tile(i=4, j=3)\n"
         "  iii = split(ii, 2)\n  reorder(j, i, jj, ii, iii)\n}\n",
     NULL, 0},
    {"split size of params", HDR "for (i: N) { B[i] = 1 }\nschedule { ii = split(i, N/4 + 1) }\n",
     NULL, 0},
    {"reorder of an inner band",
     HDR "for (i: N) {\n  B[i] = 0\n  for (j: M, k: M) { B[i] += C[i, j] * C[i, k] }\n}\n"
         "schedule { reorder(k, j) }\n",
     NULL, 0},
    {"band of nested single loops",
     HDR "for (i: N) {\n  for (j: M) { C[i, j] = 1 }\n}\n"
         "schedule { jj = split(j, 4); reorder(j, i, jj) }\n",
     NULL, 0},
    {"band of an imperfect nest",
     HDR "for (a: N, q: M) {\n  B[a] = 0\n  for (p: M) { B[a] += C[a, p] }\n}\n"
         "schedule { reorder(q, a); pp = split(p, 2); reorder(pp, p) }\n",
     "11:53: error: reorder puts inner index 'pp' before its outer index 'p'", 0},
    {"plan all options",
     MM
     /* every host option; the layouts sit on caches of A: vectorize(jj)
      * needs B and C contiguous in jj */
     "plan {\n  AA = cache(A, index=ii, double_buffer=true, thrifty=false, layout=(1, 0))\n"
     "  BB = cache(B, level=3, layout=row_major, trigger_level=4)\n"
     "  CC = cache(C, max_elements=4096)\n  CCC = cache(CC, max_elements=64)\n"
     "  AAA = cache(AA, level=2, layout=col_major, trigger_index=kk)\n"
     "  vectorize(jj)\n  unroll(kk)\n  parallelize(i, policy=dynamic, max_threads=4, spmd=true)\n}\n",
     NULL, 0},
    {"plan all opencl options",
     MM1
     /* a check runs the OpenCL emitter too: only what the target honours
      * (private caches inside the work-item loops, local ones between the
      * work-group and work-item loops) */
     "plan(target=opencl) {\n  AA = cache(A, index=kk, location=private, thrifty=false, layout=(1, 0))\n"
     "  BB = cache(B, index=ii, layout=row_major, location=local, strategy=striped)\n"
     "  AAA = cache(AA, level=1, location=private)\n  unroll(kk)\n  parallelize(i, j)\n}\n",
     NULL, 0},
    {"plan without target", MM "plan { AA = cache(A, level=1) }\n", NULL, 0},

    /* ---------------------------------------------------------- lexical */
    {"bad character", HDR "for (i: N) { B[i] = A[i] @ 2 }\n",
     "7:26: error: unexpected character '@'", 0},
    {"non-ascii byte", HDR "B[0] = 1 \xff\xfe\n", "7:10: error: unexpected character byte 0xff", 0},
    {"integer too large", HDR "B[0] = 99999999999999999999\n",
     "7:8: error: integer literal is too large", 0},
    {"octal", HDR "B[0] = 010\n",
     "7:8: error: integer literal with a leading zero (octal is not supported)", 0},
    {"literal suffix", HDR "B[0] = 0.5f\n", "7:8: error: invalid suffix on a numeric literal", 0},
    {"float out of range", HDR "B[0] = 1e999\n", "7:8: error: floating literal is out of range", 0},
    {"hex without digits", HDR "B[0] = 0x\n", "7:8: error: hexadecimal literal without digits", 0},

    /* ---------------------------------------------------------- syntax */
    {"no kernel line", "param N = 4\narray A : f32[N] inout\nA[0] = 1\n",
     "1:1: error: the file must start with 'kernel NAME'", 1},
    {"empty file", "", "1:1: error: the file must start with 'kernel NAME'", 1},
    {"only comments", "# nothing\n", "2:1: error: the file must start with 'kernel NAME'", 1},
    {"second kernel line", HDR "kernel u\nB[0] = 1\n",
     "7:1: error: second 'kernel' line (the kernel is named at line 1)", 1},
    {"keyword as name", HDR "array for : f32[N] input\n",
     "7:7: error: 'for' is a keyword and cannot be used as an array name", 0},
    {"missing colon", HDR "for (i N) { B[i] = 1 }\n", "7:8: error: expected ':', found 'N'", 0},
    /* a declaration with an error is one error: its name's uses are not reported again */
    {"bad param value, one error",
     "kernel t\nparam N = Q\narray A : f32[N] input\narray B : f32[N] output\n"
     "for (i: N) { B[i] = A[i] * N }\nschedule { ii = split(i, N) }\n"
     "plan { AA = cache(A, index=ii) }\n",
     "2:11: error: unknown name 'Q'", 1},
    {"bad array, one error",
     HDR "array Z : f16[N] input\nfor (i: N) { B[i] = Z[i] }\nplan { ZZ = cache(Z, level=1) }\n",
     "7:11: error: expected an element type (f32, f64, i32 or i64), found 'f16'", 1},
    {"bad let value, one error",
     HDR "for (i: N) {\n  let t = A[i] * Q\n  B[i] = t + t\n  let u = t * 2\n  B[i] += u\n}\n",
     "8:18: error: unknown name 'Q'", 1},
    {"bad param redeclared", "kernel t\nparam N = Q\nparam N = 3\n",
     "2:11: error: unknown name 'Q'", 2},
    {"unknown type", HDR "array Z : f16[N] input\n",
     "7:11: error: expected an element type (f32, f64, i32 or i64), found 'f16'", 0},
    {"missing role", HDR "array Z : f32[N]\nB[0] = 1\n",
     "8:1: error: expected the role of 'Z' (input, output, inout, temp or const), found 'B'", 0},
    {"unknown array option", HDR "array Z : f32[N] input fast\n",
     "7:24: error: unknown array option 'fast' (use layout= or strided)", 0},
    {"unknown layout", HDR "array Z : f32[N, N] input layout=diagonal\n",
     "7:34: error: unknown layout 'diagonal' (use row_major, col_major, first_major, last_major "
     "or a dimension order such as (1, 0))",
     0},
    {"layout not a permutation", HDR "array Z : f32[N, N] input layout=(1, 1)\n",
     "7:34: error: layout of 'Z' must be an order of its 2 dimensions (a permutation of 0..1)", 0},
    {"too many dimensions", HDR "array Z : f32[N, N, N, N, N, N, N, N, N] input\n",
     "7:39: error: 'Z' has too many dimensions (at most 8)", 0},
    {"unknown function", HDR "B[0] = log(A[0])\n",
     "7:8: error: unknown function 'log' (use min, max, abs, sqrt, exp, fma or select)", 0},
    {"wrong argument count", HDR "B[0] = fma(A[0], 2)\n",
     "7:8: error: 'fma' takes 3 arguments, not 2", 0},
    {"chained comparison", HDR "for (i: N) { if (0 < i < 4) { B[i] = 1 } }\n",
     "7:24: error: comparisons cannot be chained; join them with '&&'", 0},
    {"missing brace", HDR "for (i: N) {\n  B[i] = 1\n",
     "9:1: error: missing '}' (the block opened at line 7:1 is not closed)", 0},
    {"unmatched brace", HDR "B[0] = 1\n}\n", "8:1: error: unmatched '}'", 0},
    {"two statements on a line", HDR "for (i: N) { B[i] = 1 B[i] = 2 }\n",
     "7:23: error: expected a new line or ';' before the next statement", 0},
    {"statement after schedule", HDR "for (i: N) { B[i] = 1 }\nschedule { }\nB[0] = 2\n",
     "9:1: error: statements must come before 'schedule' and 'plan'", 0},
    {"param inside a block", HDR "for (i: N) {\n  param Q = 1\n  B[i] = 1\n}\n",
     "8:3: error: 'param' is only allowed at the top level, not inside a block", 1},
    {"missing expression", HDR "for (i: N) { B[i] = }\n",
     "7:21: error: expected an expression, found '}'", 0},
    {"bad assignment op", HDR "B[0] /= 2\n",
     "7:6: error: expected '=', '+=', '-=' or '*=', found '/'", 0},
    {"expected statement", HDR "42\n", "7:1: error: expected a statement, found an integer", 0},
    {"several syntax errors", HDR "for (i: N) {\n  B[i] = )\n  B[i] = q\n  B[i] = 1\n}\n",
     "8:10: error: expected an expression, found ')'", 2},

    /* ---------------------------------------------------------- names */
    {"unknown name", HDR "for (i: N) { B[i] = q }\n", "7:21: error: unknown name 'q'", 1},
    {"unknown array", HDR "Q[0] = 1\n", "7:1: error: unknown array 'Q'", 0},
    {"duplicate param", HDR "param N = 3\n",
     "7:7: error: 'N' is already declared as a param (line 2)", 0},
    {"duplicate array", HDR "array A : f32[N] input\n",
     "7:7: error: 'A' is already declared as an array (line 4)", 0},
    {"array named like a param", HDR "array M : f32[N] input\n",
     "7:7: error: 'M' is already declared as a param (line 2)", 0},
    {"index reused across loops", HDR "for (i: N) { B[i] = 1 }\nfor (i: N) { B[i] = 2 }\n",
     "8:6: error: 'i' is already declared as an index (line 7)", 0},
    {"index outside its loop", HDR "for (i: N) { B[i] = 1 }\nB[i] = 2\n",
     "8:3: error: index 'i' is used outside its loop", 0},
    {"duplicate let", HDR "for (i: N) {\n  let t = 1\n  let t = 2\n  B[i] = t\n}\n",
     "9:7: error: 't' is already declared as a let (line 8)", 0},
    {"let named like an index", HDR "for (i: N) {\n  let i = 1\n  B[i] = 1\n}\n",
     "8:7: error: 'i' is already declared as an index (line 7)", 0},
    {"assign to let", HDR "for (i: N) {\n  let t = 1\n  t = 2\n  B[i] = t\n}\n",
     "9:3: error: cannot assign to let 't' (a let is set once)", 0},
    {"array without subscripts", HDR "B[0] = A\n",
     "7:8: error: array 'A' needs subscripts ('A[...]')", 0},
    {"too many subscripts", HDR "B[0] = A[1, 2]\n",
     "7:8: error: 'A' has 1 dimension, but 2 subscripts are given", 0},
    {"too few subscripts", HDR "C[0] = 1\n",
     "7:1: error: 'C' has 2 dimensions, but 1 subscript is given", 0},
    {"let used as an array", HDR "let t = 1\nB[0] = t[0]\n",
     "8:8: error: 't' is a let, not an array", 0},
    {"let out of scope", HDR "for (i: N) { let t = 1; B[i] = t }\nB[0] = t\n",
     "8:8: error: unknown name 't'", 0},

    /* ---------------------------------------------------------- roles and types */
    {"write to input", HDR "for (i: N) { A[i] = 1 }\n",
     "7:14: error: cannot write to input array 'A'", 0},
    {"write to const",
     "kernel t\nparam N = 4\narray K : f32[N] const\narray B : f32[N] inout\n"
     "for (i: N) { K[i] = B[i] }\n",
     "5:14: error: cannot write to const array 'K'", 0},
    {"output read before write",
     "kernel t\nparam N = 4\narray O : f32[N] output\narray B : f32[N] inout\n"
     "for (i: N) { B[i] = O[i]; O[i] = 1 }\n",
     "5:21: error: output array 'O' is read before it is written (declare it inout)", 1},
    {"+= on output", "kernel t\nparam N = 4\narray O : f32[N] output\nfor (i: N) { O[i] += 1 }\n",
     "4:14: error: '+=' reads output array 'O' before it is written (declare it inout)", 1},
    {"output written then updated",
     "kernel t\nparam N = 4\narray O : f32[N] output\nfor (i: N) { O[i] = 0; O[i] += 1 }\n", NULL,
     0},
    {"output never written",
     "kernel t\nparam N = 4\narray O : f32[N] output\narray B : f32[N] inout\n"
     "for (i: N) { B[i] = 1 }\n",
     "3:7: error: output array 'O' is never written", 0},
    {"temp read before write",
     "kernel t\nparam N = 4\narray T : f32[N] temp\narray B : f32[N] inout\n"
     "for (i: N) { B[i] = T[i]; T[i] = 1 }\n",
     "5:21: error: temp array 'T' is read before it is written", 0},
    /* the output rule, exactly: a read with no textually earlier write is fine when every element
     * it reads was written by an earlier iteration (isl, dep_reads_written) */
    {"temp carried to the next iteration",
     "kernel t\nparam N = 4, M = 8\narray X : f32[N, M] input\narray Y : f32[N, M] output\n"
     "array P : f32[M] temp\nfor (i: N) {\n  for (j: M) {\n"
     "    if (i > 0) { Y[i, j] = X[i, j] + P[j] } else { Y[i, j] = X[i, j] }\n  }\n"
     "  for (j2: M) { P[j2] = Y[i, j2] }\n}\n",
     NULL, 0},
    {"temp read in the first iteration",
     "kernel t\nparam N = 4, M = 8\narray X : f32[N, M] input\narray Y : f32[N, M] output\n"
     "array P : f32[M] temp\nfor (i: N) {\n  for (j: M) {\n"
     "    if (i >= 0) { Y[i, j] = X[i, j] + P[j] } else { Y[i, j] = X[i, j] }\n  }\n"
     "  for (j2: M) { P[j2] = Y[i, j2] }\n}\n",
     "8:39: error: temp array 'P' is read before it is written", 1},
    {"output of the previous iteration, runtime size",
     "kernel t\nparam L : runtime\narray O : f32[L] output\n"
     "for (i: L) { if (i > 0) { O[i] = O[i - 1] + 1 } else { O[i] = 1 } }\n",
     NULL, 0},
    {"output element never written",
     "kernel t\nparam L : runtime\narray O : f32[L] output\n"
     "for (i: L) { if (i > 0) { O[i] = O[i - 1] + 1 } }\n",
     "4:34: error: output array 'O' is read before it is written (declare it inout)", 1},
    {"update of a temp written in a later statement's earlier iteration",
     "kernel t\nparam N = 4\narray T : f32[N] temp\narray B : f32[N] inout\n"
     "for (i: N) { if (i > 0) { T[i - 1] += B[i] }; T[i] = B[i]; B[i] = T[i] }\n",
     NULL, 0},
    {"comparison as value", HDR "B[0] = A[0] < 1\n",
     "7:8: error: a comparison is not a value (use select(cond, a, b))", 0},
    {"value as condition", HDR "for (i: N) { if (i) { B[i] = 1 } }\n",
     "7:18: error: expected a comparison (such as 'x < N') here", 0},
    {"select without comparison", HDR "B[0] = select(A[0], 1, 2)\n",
     "7:15: error: the first argument of select must be a comparison", 0},
    {"no statements", "kernel t\nparam N = 4\narray B : f32[N] inout\nlet x = 1\n",
     "1:8: error: kernel 't' has no statements (write at least one assignment)", 0},

    /* ---------------------------------------------------------- affine forms */
    {"product of indices", HDR "for (i: N, j: M) { C[i*j, j] = 1 }\n",
     "7:22: error: non-affine subscript: product of two non-constant terms", 0},
    {"param times index", HDR "for (i: N) { B[N*i] = 1 }\n",
     "7:16: error: non-affine subscript: product of two non-constant terms", 0},
    {"float subscript", HDR "for (i: N) { B[i + 0.5] = 1 }\n",
     "7:20: error: non-affine subscript: floating literal (use integers)", 0},
    {"let subscript", HDR "for (i: N) { let t = 1; B[t] = 1 }\n",
     "7:27: error: non-affine subscript: let 't' (use indices and params only)", 0},
    {"indirect subscript", HDR "for (i: N) { B[B[i]] = 1 }\n",
     "7:16: error: non-affine subscript: array element 'B[...]' (use indices and params only)", 0},
    {"inexact division", HDR "for (i: N) { B[i/2] = 1 }\n",
     "7:16: error: non-affine subscript: division that is not exact", 0},
    {"exact division", HDR "for (i: N) { B[(2*i + 2)/2 - 1] = 1 }\n", NULL, 0},
    /* affine loop bounds (issue #31) */
    {"triangular loop", HDR "for (i: N) { for (j: i) { B[j] = 1 } }\n", NULL, 0},
    {"bound from the same for", HDR "for (i: M, j: i .. M) { C[i, j] = 1 }\n", NULL, 0},
    {"bound from the same for, out of bounds", HDR "for (i: N, j: i .. N) { C[i, j] = 1 }\n",
     "7:30: error: subscript 'j' of 'C' may exceed the extent M of dimension 2", 0},
    {"banded loop", HDR "for (i: N, j: max(0, i-2) .. min(i+3, M)) { C[i, j] = 1 }\n", NULL, 0},
    {"min in a lower bound", HDR "for (i: N) { for (j: min(i, 2) .. M) { C[i, j] = 1 } }\n",
     "7:22: error: a lower loop bound may not use min(...): use max(...) of affine terms (the "
     "iteration space must be one convex polyhedron)", 0},
    {"max in an upper bound", HDR "for (i: N) { for (j: 0 .. max(i, 2)) { C[i, j] = 1 } }\n",
     "7:27: error: an upper loop bound may not use max(...): use min(...) of affine terms (the "
     "iteration space must be one convex polyhedron)", 0},
    {"bound with an inner index", HDR "for (i: N) { for (j: k) { for (k: N) { B[k] = 1 } } }\n",
     "7:22: error: unknown name 'k'", 0},
    {"bound with its own index", HDR "for (i: i) { B[i] = 1 }\n", "7:9: error: unknown name 'i'", 0},
    {"triangular out of bounds", HDR "for (i: N) { for (j: i+2) { B[j] = 1 } }\n",
     "7:31: error: subscript 'j' of 'B' may exceed the extent N of dimension 1", 0},
    {"triangular in bounds by an if", HDR
     "for (i: N) { for (j: i+2) { if (j < N) { B[j] = 1 } } }\n", NULL, 0},
    {"split of a rectangular loop of an affine kernel", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "schedule { ii = split(i, 4) }\n", NULL, 0},
    {"split of an affine loop", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "schedule { jj = split(j, 4) }\n", NULL, 0},
    {"balanced split of an affine loop", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "schedule { jj = split(j, 4, balanced=true) }\n",
     "8:23: error: loop 'j' has affine bounds (they use enclosing indices or min/max): a balanced "
     "split of it is not supported yet", 0},
    {"affine loop moved out (bounds projected)", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "schedule { reorder(j, i) }\n", NULL, 0},
    {"affine loop outside a split", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "schedule { ii = split(i, 4); reorder(i, j, ii) }\n",
     "8:30: error: loop 'j' must stay inside loop 'ii': its bounds use 'i', whose value is only "
     "known inside the last loop of its split chain", 0},
    {"projected loop outside a split", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "schedule { jj = split(j, 4); reorder(j, i, jj) }\n",
     "8:30: error: loop 'i' must stay inside loop 'jj': its bounds use 'j', whose value is only "
     "known inside the last loop of its split chain", 0},
    {"projection needing a division", HDR "for (i: N) { for (j: 0 .. 2*i+1) { B[i] = 1 } }\n"
     "schedule { reorder(j, i) }\n",
     "8:12: error: in this order the range of loop 'i' would need a division (a bound gives it "
     "coefficient 2): not supported", 0},
    {"balanced split of a projected loop", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "schedule { ii = split(i, 4, balanced=true); reorder(j, i, ii) }\n",
     "8:23: error: loop 'i' has affine bounds in the reordered band (they use an enclosing index): "
     "a balanced split of it is not supported yet", 0},
    {"parallel affine kernel", HDR "for (i: M, j: 0 .. i+1) { C[i, j] = 1 }\n"
     "plan { parallelize(i) }\n", NULL, 0},
    {"unroll of an affine loop", HDR "for (i: N, j: 0 .. i+1) { B[j] = 1 }\n"
     "plan { unroll(j) }\n",
     "8:8: error: unroll(j): loop 'j' has affine bounds, so no constant trip count", 0},
    {"collapse with an affine loop", HDR "for (i: M, j: 0 .. i+1) { C[i, j] = 1 }\n"
     "plan { parallelize(i, j) }\n",
     "8:8: error: parallelize: loop 'j' has affine bounds: it can only be parallelized alone (no "
     "collapse, no spmd grid)", 0},
    {"array in if condition", HDR "for (i: N) { if (A[i] < 0) { B[i] = 1 } }\n",
     "7:18: error: non-affine if condition: array element 'A[...]' (use indices and params only)",
     0},
    {"param value of runtime", HDR "param P = L + 1\n",
     "7:11: error: a param value cannot depend on runtime param 'L'", 0},
    {"param value division by zero", HDR "param P = N / (M - 8)\n",
     "7:16: error: division by zero in a param value", 0},
    {"param value overflow", HDR "param P = 9223372036854775807 + 1\n",
     "7:11: error: integer overflow in a param value", 0},

    /* ---------------------------------------------------------- sizes and bounds */
    {"zero extent", HDR "array Z : f32[N-16] inout\nZ[0] = 1\n",
     "7:15: error: extent of dimension 1 of 'Z' is 0 (it must be at least 1)", 0},
    {"extent overflow",
     "kernel t\nparam H = 9223372036854775807\narray Z : f32[H+1] inout\nZ[0] = 1\n",
     "3:15: error: extent of dimension 1 of 'Z' overflows", 0},
    {"array too large", "kernel t\nparam H = 4294967296\narray Z : f64[H, H] inout\nZ[0, 0] = 1\n",
     "3:7: error: array 'Z' is too large (more than 2^62 bytes)", 0},
    {"unguarded i+1", HDR "for (i: N) { B[i] = A[i+1] }\n",
     "7:23: error: subscript 'i+1' of 'A' may exceed the extent N of dimension 1", 1},
    {"unguarded i-1", HDR "for (i: N) { B[i] = A[i-1] }\n",
     "7:23: error: subscript 'i-1' of 'A' may be negative (dimension 1)", 1},
    {"constant out of range", HDR "B[N] = 1\n",
     "7:3: error: subscript 'N' of 'B' may exceed the extent N of dimension 1", 1},
    {"else branch unguarded",
     HDR "for (i: N) { if (i < N-1) { B[i] = A[i+1] } else { B[i] = A[i+1] } }\n",
     "7:61: error: subscript 'i+1' of 'A' may exceed the extent N of dimension 1", 1},
    {"runtime overrun",
     "kernel t\nparam L : runtime\narray R : f32[L] inout\n"
     "for (i: L) { R[i] = R[i+1] }\n",
     "4:23: error: subscript 'i+1' of 'R' may exceed the extent L of dimension 1", 1},
    {"second dimension", HDR "for (i: N, j: M) { C[i, j+1] = 1 }\n",
     "7:25: error: subscript 'j+1' of 'C' may exceed the extent M of dimension 2", 1},
    {"weak guard", HDR "for (i: N) { if (i < N) { B[i] = A[i+1] } }\n",
     "7:36: error: subscript 'i+1' of 'A' may exceed the extent N of dimension 1", 1},
    {"guard on the wrong index", HDR "for (i: N, j: M) { if (j < M-1) { B[i] = A[i+1] } }\n",
     "7:44: error: subscript 'i+1' of 'A' may exceed the extent N of dimension 1", 1},
    {"both sides", HDR "for (i: N) { B[i] = A[i+1] + A[i-1] }\n",
     "7:23: error: subscript 'i+1' of 'A' may exceed the extent N of dimension 1", 2},
    {"reads in a let", HDR "for (i: N) { let t = A[i+2]; B[i] = t }\n",
     "7:24: error: subscript 'i+2' of 'A' may exceed the extent N of dimension 1", 1},
    {"select arms are both checked", HDR "for (i: N) { B[i] = select(i < N-1, A[i+1], 0) }\n",
     "7:39: error: subscript 'i+1' of 'A' may exceed the extent N of dimension 1", 1},

    /* ---------------------------------------------------------- schedule */
    {"unknown index in reorder", HDR "for (i: N) { B[i] = 1 }\nschedule { reorder(i, kk) }\n",
     "8:23: error: unknown index 'kk' in reorder", 0},
    {"unknown index in split", HDR "for (i: N) { B[i] = 1 }\nschedule { ii = split(q, 4) }\n",
     "8:23: error: unknown index 'q' in split", 0},
    {"unknown index in tile", HDR "for (i: N) { B[i] = 1 }\nschedule { ii = tile(q=4) }\n",
     "8:22: error: unknown index 'q' in tile", 0},
    {"split size zero", HDR "for (i: N) { B[i] = 1 }\nschedule { ii = split(i, 0) }\n",
     "8:26: error: split size must be at least 1, not 0", 0},
    {"split size of runtime", HDR "for (i: N) { B[i] = 1 }\nschedule { ii = split(i, L) }\n",
     "8:26: error: a split size cannot depend on runtime param 'L'", 0},
    {"split twice",
     HDR "for (i: N) { B[i] = 1 }\nschedule {\n  ii = split(i, 4)\n  i2 = split(i, 2)\n}\n",
     "10:14: error: index 'i' is already split; split its inner index 'ii' instead", 0},
    {"split name taken", HDR "for (i: N) { B[i] = 1 }\nschedule { A = split(i, 4) }\n",
     "8:12: error: 'A' is already declared as an array (line 4)", 0},
    {"duplicate new names",
     HDR "for (i: N, j: M) { C[i, j] = 1 }\nschedule { x, x = tile(i=2, j=2) }\n",
     "8:15: error: 'x' is already declared as an index (line 8)", 0},
    {"tile name count", HDR "for (i: N, j: M) { C[i, j] = 1 }\nschedule { x = tile(i=2, j=2) }\n",
     "8:12: error: tile makes 2 indices, but 1 name is given on the left", 0},
    {"reorder missing an index", HDR "for (i: N, j: M) { C[i, j] = 1 }\nschedule { reorder(j) }\n",
     "8:12: error: reorder must name every index of its band; 'i' is missing", 0},
    {"reorder missing a split index",
     HDR "for (i: N, j: M) { C[i, j] = 1 }\nschedule { ii = split(i, 4); reorder(j, i) }\n",
     "8:30: error: reorder must name every index of its band; 'ii' is missing", 0},
    {"reorder mixes bands",
     HDR
     "for (i: N) {\n  B[i] = 0\n  for (j: M) { B[i] += C[i, j] }\n}\nschedule { reorder(j, i) }\n",
     "11:23: error: reorder mixes loop bands: 'i' is not in the band of 'j' (a band is one 'for' "
     "with its directly nested single 'for's)",
     0},
    {"reorder inner before outer",
     HDR "for (i: N) { B[i] = 1 }\nschedule { ii = split(i, 4); reorder(ii, i) }\n",
     "8:38: error: reorder puts inner index 'ii' before its outer index 'i'", 0},
    {"reorder repeats", HDR "for (i: N, j: M) { C[i, j] = 1 }\nschedule { reorder(i, i, j) }\n",
     "8:23: error: index 'i' appears twice in reorder", 0},
    {"not split or tile", HDR "for (i: N) { B[i] = 1 }\nschedule { ii = fuse(i) }\n",
     "8:17: error: expected split(...) or tile(...), found 'fuse'", 0},
    {"second schedule", HDR "for (i: N) { B[i] = 1 }\nschedule { }\nschedule { }\n",
     "9:1: error: second 'schedule' block (write one)", 0},

    /* ---------------------------------------------------------- plan */
    {"cache without position", MM "plan { AA = cache(A, layout=col_major) }\n",
     "11:8: error: cache 'AA' needs one of level=, index= or max_elements=", 0},
    {"cache with two positions", MM "plan { AA = cache(A, level=1, index=ii) }\n",
     "11:31: error: give only one of level=, index= and max_elements=", 0},
    {"unknown cache option", MM "plan { AA = cache(A, level=1, speed=2) }\n",
     "11:31: error: unknown cache option 'speed' (use level, index, max_elements, layout, thrifty, "
     "trigger_level, trigger_index, double_buffer, location, strategy, strict or packed)",
     0},
    {"repeated cache option", MM "plan { AA = cache(A, level=1, thrifty=true, thrifty=false) }\n",
     "11:45: error: option 'thrifty' is given twice", 0},
    {"unknown cache source", MM "plan { AA = cache(Q, level=1) }\n",
     "11:19: error: unknown array or cache 'Q' in cache", 0},
    {"duplicate cache name", MM "plan {\n  AA = cache(A, level=1)\n  AA = cache(B, level=1)\n}\n",
     "13:3: error: 'AA' is already declared as a cache (line 12)", 0},
    {"cache named like an array", MM "plan { B = cache(A, level=1) }\n",
     "11:8: error: 'B' is already declared as an array (line 4)", 0},
    {"level out of range", MM "plan { AA = cache(A, level=7) }\n",
     "11:22: error: level 7 of cache 'AA' is out of range 1..6 (the loops around the uses of 'A')",
     0},
    {"level zero", MM "plan { AA = cache(A, level=0) }\n",
     "11:22: error: level 0 of cache 'AA' is out of range 1..6 (the loops around the uses of 'A')",
     0},
    {"level of a shallow use", MM "plan { DD = cache(D, level=3) }\n",
     "11:22: error: level 3 of cache 'DD' is out of range 1..2 (the loops around the uses of 'D')",
     0},
    {"trigger below level", MM "plan { BB = cache(B, level=3, trigger_level=2) }\n",
     "11:31: error: trigger level 2 of cache 'BB' is below its level 3", 0},
    {"trigger out of range", MM "plan { BB = cache(B, level=3, trigger_level=9) }\n",
     "11:31: error: trigger_level 9 of cache 'BB' is out of range 1..6 (the loops around the uses "
     "of 'B')",
     0},
    {"trigger equal to level", MM "plan { BB = cache(B, level=3, trigger_level=3) }\n", NULL, 0},
    {"trigger on inout", MM "plan { CC = cache(C, level=2, trigger_level=3) }\n",
     "11:31: error: trigger_level applies only to input, const and temp arrays ('C' is inout)", 0},
    {"double buffer on output", MM "plan { DD = cache(D, level=1, double_buffer=true) }\n",
     "11:31: error: double_buffer applies only to input and const arrays ('D' is output)", 0},
    {"trigger on a cache of an inout",
     MM "plan {\n  CC = cache(C, level=3)\n  C2 = cache(CC, level=2, trigger_index=kk)\n}\n",
     "13:27: error: trigger_index applies only to input, const and temp arrays ('C' is inout)", 0},
    {"trigger with max_elements", MM "plan { AA = cache(A, max_elements=64, trigger_level=2) }\n",
     "11:39: error: trigger_level needs level= or index= (a max_elements= cache has no fixed "
     "level)",
     0},
    {"hierarchy level", MM "plan {\n  AA = cache(A, level=2)\n  A2 = cache(AA, level=3)\n}\n",
     "13:18: error: level 3 of cache 'A2' must be below level 2 of its source 'AA'", 0},
    {"hierarchy level by index",
     MM "plan {\n  AA = cache(A, index=ii)\n  A2 = cache(AA, index=k)\n}\n",
     "13:18: error: level 4 of cache 'A2' must be below level 3 of its source 'AA'", 0},
    {"hierarchy trigger",
     MM "plan {\n  AA = cache(A, level=3)\n  A2 = cache(AA, level=1, trigger_level=4)\n}\n",
     "13:27: error: trigger level 4 of cache 'A2' must not be above level 3 of its source 'AA'", 0},
    {"hierarchy accepted",
     MM "plan {\n  AA = cache(A, level=3)\n  A2 = cache(AA, level=1, trigger_level=3)\n}\n", NULL,
     0},
    {"budget mixing",
     MM "plan {\n  AA = cache(A, max_elements=256)\n  A2 = cache(AA, level=1)\n}\n",
     "13:18: error: a max_elements= cache nests only with max_elements= caches ('A2' and its "
     "source 'AA')",
     0},
    {"budget not smaller",
     MM "plan {\n  AA = cache(A, max_elements=256)\n  A2 = cache(AA, max_elements=256)\n}\n",
     "13:18: error: max_elements 256 of cache 'A2' must be below the 256 of its source 'AA'", 0},
    {"budget zero", MM "plan { AA = cache(A, max_elements=0) }\n",
     "11:35: error: max_elements must be at least 1, not 0", 0},
    {"location on host", MM "plan { AA = cache(A, level=1, location=local) }\n",
     "11:31: error: location= is only for plan(target=opencl) or plan(target=cuda)", 0},
    {"strategy on host", MM "plan(target=host) { AA = cache(A, level=1, strategy=blocked) }\n",
     "11:44: error: strategy= is only for plan(target=opencl) or plan(target=cuda)", 0},
    {"unknown location", MM "plan(target=opencl) { AA = cache(A, level=1, location=far) }\n",
     "11:55: error: unknown location 'far' (use global, local or private)", 0},
    {"unknown target", MM "plan(target=gpu) { }\n",
     "11:13: error: unknown target 'gpu' (use host, opencl or cuda)", 0},
    {"cache layout rank", MM "plan { AA = cache(A, level=1, layout=(0, 1, 2)) }\n",
     "11:38: error: layout of cache 'AA' must be an order of its 2 dimensions (a permutation of "
     "0..1)",
     0},
    {"bool option value", MM "plan { AA = cache(A, level=1, thrifty=yes) }\n",
     "11:39: error: expected true or false for 'thrifty', found 'yes'", 0},
    {"cache of an unused array", MM "plan { ZZ = cache(Z, level=1) }\n",
     "11:19: error: array 'Z' is not used by any statement, so cache 'ZZ' has nothing to hold", 0},
    {"index not around a use", MM "plan { DD = cache(D, index=kk) }\n",
     "11:22: error: index 'kk' of cache 'DD' is not a loop around any use of 'D'", 0},
    {"vectorize unknown", MM "plan { vectorize(q) }\n",
     "11:18: error: unknown index 'q' in vectorize", 0},
    {"unroll two", MM "plan { unroll(i, j) }\n", "11:18: error: unroll takes one index", 0},
    {"max_threads zero", MM "plan { parallelize(i, max_threads=0) }\n",
     "11:35: error: max_threads must be at least 1, not 0", 0},
    {"unknown parallelize option", MM "plan { parallelize(i, chunk=4) }\n",
     "11:23: error: unknown parallelize option 'chunk' (use policy, max_threads or spmd)", 0},
    {"unknown policy", MM "plan { parallelize(i, policy=guided) }\n",
     "11:30: error: unknown policy 'guided' (use static or dynamic)", 0},
    {"unknown plan item", MM "plan { fuse(i) }\n",
     "11:8: error: expected a plan item (NAME = cache(...), vectorize, unroll, parallelize or distribute), "
     "found 'fuse'",
     0},
    {"distribute grid dims", MM "plan { distribute(i, j, grid=2x2x2) }\n",
     "11:8: error: distribute: grid= has 3 dimensions for 2 indices", 0},
    {"distribute grid word", MM "plan { distribute(i, grid=many) }\n",
     "11:27: error: grid= takes auto or the ranks per dimension as PxQ (2x2, 4x1, 2x2x1)", 0},
    {"distribute grid zero", MM "plan { distribute(i, j, grid=2x0) }\n",
     "11:31: error: grid: 0 ranks along a dimension (use 1 .. 1048576)", 0},
    {"distribute grid junk", MM "plan { distribute(i, j, grid=2xq) }\n",
     "11:30: error: invalid suffix on a numeric literal", 0},
    {"distribute four", MM "plan { distribute(i, j, k, i) }\n", "11:28: error: index 'i' appears twice in distribute", 0},
    {"distribute option", MM "plan { distribute(i, ranks=4) }\n",
     "11:22: error: unknown distribute option 'ranks' (use grid or replicate)", 0},
    {"replicate not array", MM "plan { distribute(i, replicate=(A, i)) }\n",
     "11:36: error: replicate: 'i' is not an array", 0},
    {"replicate twice", MM "plan { distribute(i, replicate=(A, A)) }\n", "11:36: error: replicate: 'A' appears twice", 0},
    {"several plan errors", MM "plan {\n  vectorize(q)\n  unroll(r)\n  parallelize(s)\n}\n",
     "12:13: error: unknown index 'q' in vectorize", 3},
};

static const char *strip_file(const char *r)
{
	const char *c = strchr(r, ':');
	return c ? c + 1 : r;
}

/* First line of a rendered diagnostic without the file name. */
static void first_line(const char *r, char *buf, size_t n)
{
	const char *s = strip_file(r);
	size_t len = strcspn(s, "\n");
	if (len >= n)
		len = n - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
}

static void run_row(const row *r)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, r->src, strlen(r->src), "t.cachet");
	int nd = ct_ctx_diag_count(ctx);
	if (!r->want) {
		CHECKF(k != NULL, "rejected: %s",
		       nd ? ct_ctx_diag_render(ctx, 0) : ct_ctx_last_message(ctx));
	} else {
		CHECK(k == NULL);
		CHECK(ct_ctx_last_status(ctx) == CT_ERR_INPUT);
		char got[1024] = "";
		if (nd > 0)
			first_line(ct_ctx_diag_render(ctx, 0), got, sizeof got);
		CHECKF(strcmp(got, r->want) == 0, "\n  want: %s\n  got:  %s", r->want, got);
		if (r->ndiag > 0) {
			CHECKF(nd == r->ndiag, "want %d diagnostics, got %d", r->ndiag, nd);
			if (nd != r->ndiag)
				for (int i = 0; i < nd; i++)
					fprintf(stderr, "    %s\n", ct_ctx_diag_render(ctx, i));
		}
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ IR contents */

static ct_kernel *parse_ok(ct_ctx *ctx, const char *src)
{
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "t.cachet");
	CHECKF(k != NULL, "%s",
	       ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : ct_ctx_last_message(ctx));
	return k;
}

static const char *matmul_src = "kernel matmul\n"
                                "param M = 64, N = 48, K = 32\n"
                                "array A : f32[M, K] input\n"
                                "array B : f32[K, N] input layout=col_major\n"
                                "array C : f32[M, N] inout\n"
                                "for (i: M, j: N, k: K) {\n"
                                "  C[i, j] += A[i, k] * B[k, j]\n"
                                "}\n"
                                "schedule {\n"
                                "  ii, jj, kk = tile(i=32, j=16, k=8)\n"
                                "  kkk = split(kk, 4)\n"
                                "  reorder(i, j, k, ii, kk, jj, kkk)\n"
                                "}\n"
                                "plan(target=host) {\n"
                                "  AA = cache(A, index=ii, double_buffer=true)\n"
                                "  BB = cache(B, level=3, layout=col_major)\n"
                                "  CC = cache(C, max_elements=4096)\n"
                                "  unroll(jj)\n"
                                "  parallelize(i, policy=dynamic, max_threads=8)\n"
                                "}\n";

static void test_matmul_ir(void)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = parse_ok(ctx, matmul_src);
	if (!k) {
		ct_ctx_free(ctx);
		return;
	}
	CHECK(strcmp(ct_kernel_name(k), "matmul") == 0);
	CHECK(k->nparams == 3 && k->params[1].value == 48 && !k->params[1].runtime);
	CHECK(k->narrays == 3 && k->arrays[1].order[0] == 1 && k->arrays[1].order[1] == 0);
	CHECK(k->arrays[0].order[0] == 0 && k->arrays[0].role == CT_INPUT);
	CHECK(k->arrays[2].role == CT_INOUT && k->arrays[2].type == CT_F32);
	CHECK(aff_coef(k->arrays[0].ext[1], AFF_PARAM, 2) == 1 && k->arrays[0].ext[1].c == 0);
	CHECK(k->arrays[0].pos.line == 3 && k->arrays[0].pos.col == 7);
	/* indices: i j k, then ii jj kk kkk */
	CHECK(k->nindices == 7);
	CHECK(k->indices[0].kind == IX_LOOP && k->indices[0].step == 32 &&
	      k->indices[0].child == 3);
	CHECK(k->indices[3].kind == IX_SPLIT && k->indices[3].parent == 0 &&
	      k->indices[3].window == 32);
	CHECK(k->indices[5].step == 4 && k->indices[5].child == 6 && k->indices[5].root == 2);
	CHECK(k->indices[6].window == 4 && k->indices[6].parent == 5 && k->indices[6].root == 2);
	CHECK(k->indices[6].step == 1 && k->indices[6].child == -1);
	CHECK(k->indices[2].root == 2 && k->indices[2].parent == -1);
	CHECK(aff_coef(k->indices[1].hi, AFF_PARAM, 1) == 1);
	/* body */
	CHECK(k->nbody == 1 && k->body[0]->kind == ND_FOR && k->body[0]->nidx == 3);
	const ir_node *s = k->body[0]->body[0];
	CHECK(s->kind == ND_STMT && s->op == AS_ADD && s->stmt_id == 1 && s->parent == k->body[0]);
	CHECK(s->pos.line == 7 && s->pos.col == 3);
	CHECK(s->lhs->kind == EX_ACCESS && s->lhs->id == 2 && s->lhs->type == CT_F32);
	CHECK(aff_coef(s->lhs->sub[1], AFF_INDEX, 1) == 1 && s->lhs->sub[1].n == 1);
	CHECK(s->rhs->kind == EX_MUL && s->rhs->type == CT_F32 && s->rhs->height == 3);
	CHECK(s->rhs->args[1]->sub_expr[0]->pos.col == 26);
	/* schedule */
	CHECK(k->nsched == 3 && k->sched[0].kind == SC_TILE && k->sched[0].n == 3);
	CHECK(k->sched[0].size[2] == 8 && k->sched[0].out[2] == 5);
	CHECK(k->sched[1].kind == SC_SPLIT && k->sched[1].idx[0] == 5 && k->sched[1].out[0] == 6);
	CHECK(k->sched[2].kind == SC_REORDER && k->sched[2].n == 7 && k->sched[2].idx[4] == 5);
	/* plan */
	CHECK(k->has_plan && k->target == TARGET_HOST && k->nplan == 5);
	CHECK(k->plan[0].kind == PL_CACHE && k->plan[0].where == CP_INDEX &&
	      k->plan[0].index_id == 3);
	CHECK(k->plan[0].double_buffer && k->plan[0].thrifty && k->plan[0].src_array == 0);
	CHECK(k->plan[1].where == CP_LEVEL && k->plan[1].value == 3 && k->plan[1].has_layout);
	CHECK(k->plan[1].order[0] == 1 && k->plan[2].where == CP_BUDGET &&
	      k->plan[2].value == 4096);
	CHECK(k->plan[3].kind == PL_UNROLL && k->plan[3].idx[0] == 4);
	CHECK(k->plan[4].kind == PL_PARALLELIZE && k->plan[4].policy == POLICY_DYNAMIC);
	CHECK(k->plan[4].max_threads == 8);
	/* flops: 2 per instance (one *, one +=) */
	CHECK(ct_kernel_flops(k) == 2.0 * 64 * 48 * 32);
	CHECK(ct_kernel_array_elements(k, 0) == 64 * 32);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_stencil_ir(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src =
	    "kernel s\nparam N = 10\narray A : f64[N] input\narray B : f64[N] output\n"
	    "for (x: N) {\n  if (0 < x && x < N-1) { B[x] = A[x-1] + A[x+1] }\n"
	    "  else { B[x] = A[x] }\n}\n";
	ct_kernel *k = parse_ok(ctx, src);
	if (k) {
		const ir_node *f = k->body[0];
		const ir_node *n = f->body[0];
		CHECK(n->kind == ND_IF && n->nbody == 1 && n->nels == 1);
		CHECK(n->cond->kind == EX_AND && n->cond->type == CT_I32);
		const ir_expr *c0 = n->cond->args[0], *c1 = n->cond->args[1];
		CHECK(c0->kind == EX_CMP && c0->cmp == CMP_LT && c0->has_diff);
		/* 0 - x */
		CHECK(c0->diff.c == 0 && aff_coef(c0->diff, AFF_INDEX, 0) == -1);
		/* x - (N - 1) */
		CHECK(c1->diff.c == 1 && aff_coef(c1->diff, AFF_PARAM, 0) == -1);
		CHECK(n->body[0]->stmt_id == 1 && n->els[0]->stmt_id == 2);
		CHECK(n->body[0]->parent == n && n->els[0]->parent == n);
		/* 8 interior points, one + each */
		CHECK(ct_kernel_flops(k) == 8);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_types(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src =
	    "kernel t\nparam N = 4\narray A : f32[N] input\narray D : f64[N] input\n"
	    "array I : i32[N] inout\narray B : f32[N] inout\n"
	    "for (i: N) {\n  let t = 2\n  let u = A[i] * D[i]\n"
	    "  B[i] = (i + 1) * A[i] + u\n  I[i] = I[i] / 2 + select(A[i] > i, 1, 0)\n}\n";
	ct_kernel *k = parse_ok(ctx, src);
	if (k) {
		/* a literal-only let takes the widest array type (f64 here) */
		CHECK(k->lets[0].type == CT_F64);
		CHECK(k->lets[1].type == CT_F64);
		const ir_node *f = k->body[0];
		const ir_expr *r = f->body[2]->rhs; /* (i+1)*A[i] + u */
		CHECK(r->kind == EX_ADD && r->type == CT_F64);
		CHECK(r->args[0]->type == CT_F32 && r->args[0]->args[0]->untyped);
		CHECK(r->args[0]->args[0]->type == CT_F32);
		const ir_expr *q = f->body[3]->rhs;
		CHECK(q->type == CT_I32 && q->args[0]->type == CT_I32 &&
		      q->args[0]->args[1]->untyped);
		const ir_expr *sel = q->args[1];
		CHECK(sel->kind == EX_CALL && sel->fn == FN_SELECT && sel->type == CT_I32 &&
		      sel->untyped);
		CHECK(sel->args[0]->type == CT_I32 && sel->args[0]->args[1]->type == CT_F32);
		CHECK(f->body[2]->stmt_id == 1 && f->body[3]->stmt_id == 2 && k->nstmts == 2);
		CHECK(f->body[1]->let_id == 1 && f->body[1]->kind == ND_LET);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_literals(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src = "kernel t\nparam N = 4\narray B : f64[N] inout\n"
	                  "B[0] = 2.5e-1 + 0x1F + -7 + 1..4\n";
	/* `1..4` is not a literal: this must fail at '..' */
	ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "t.cachet");
	CHECK(k == NULL);
	src = "kernel t\nparam N = 4\narray B : f64[N] inout\nB[0] = 2.5e-1 + 0x1F + -7\n";
	k = parse_ok(ctx, src);
	if (k) {
		const ir_expr *e = k->body[0]->rhs; /* (2.5e-1 + 0x1F) + -7 */
		CHECK(e->args[1]->kind == EX_NUM && e->args[1]->inum == -7 &&
		      !e->args[1]->is_float);
		CHECK(e->args[0]->args[0]->is_float && e->args[0]->args[0]->num == 0.25);
		CHECK(e->args[0]->args[1]->inum == 31);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

/* The exact output rule is decided again when an override moves the reads (its proof is kept
 * for the values it was made at, so a recheck at the same values asks nothing new). */
static void test_early_reads_recheck(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src = "kernel t\nparam N = 6, M = 4, G = 0\narray X : f32[N, M] input\n"
	                  "array Y : f32[N, M] output\narray P : f32[M] temp\n"
	                  "for (i: N) {\n  for (j: M) {\n"
	                  "    if (i > G) { Y[i, j] = X[i, j] + P[j] } else { Y[i, j] = X[i, j] }\n  }\n"
	                  "  for (j2: M) { P[j2] = Y[i, j2] }\n}\n";
	ct_kernel *k = parse_ok(ctx, src);
	if (k) {
		CHECK(k->early_reads && k->early_reads[2].any && k->early_proved);
		CHECK(ct_kernel_recheck(k) == CT_OK); /* the same values: the kept proof */
		/* G = -1: row 0 reads P before any write */
		CHECK(ct_kernel_set_param(k, "G", -1) == CT_OK && ct_kernel_recheck(k) == CT_ERR_INPUT);
		CHECK(strcmp(ct_ctx_last_message(ctx), "temp array 'P' is read before it is written") == 0);
		CHECK(ct_ctx_last_line(ctx) == 8);
		CHECK(ct_kernel_set_param(k, "G", 2) == CT_OK && ct_kernel_recheck(k) == CT_OK);
		CHECK(k->early_proved && k->early_proved[2] == 2);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_params_api(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src = "kernel t\nparam N = 8, N2 = 2*N\nparam L : runtime\n"
	                  "array A : f32[N2] inout\narray R : f32[L, N] inout\n"
	                  "for (i: N) { A[2*i+1] = A[2*i] }\nfor (l: L, j: N) { R[l, j] = 1 }\n"
	                  "schedule { ii = split(i, N/2) }\n";
	ct_kernel *k = parse_ok(ctx, src);
	if (k) {
		int set = -1;
		CHECK(ct_kernel_param_count(k) == 3);
		CHECK(ct_kernel_param_is_runtime(k, 2) && !ct_kernel_param_is_runtime(k, 0));
		CHECK(ct_kernel_param_value(k, 2, &set) == 0 && set == 0);
		CHECK(ct_kernel_param_value(k, 1, &set) == 16 && set == 1);
		CHECK(ct_kernel_array_extent(k, 1, 0) == -1 &&
		      ct_kernel_array_elements(k, 1) == -1);
		CHECK(ct_kernel_flops(k) == -1);
		CHECK(ct_kernel_set_param(k, "L", 5) == CT_OK);
		CHECK(ct_kernel_array_extent(k, 1, 0) == 5 && ct_kernel_array_elements(k, 1) == 40);
		CHECK(ct_kernel_flops(k) == 0);
		/* overriding N moves N2 and the split size along */
		CHECK(ct_kernel_set_param(k, "N", 6) == CT_OK);
		CHECK(ct_kernel_param_value(k, 1, NULL) == 12);
		CHECK(ct_kernel_recheck(k) == CT_OK);
		CHECK(k->sched[0].size[0] == 3 && k->indices[0].step == 3 &&
		      k->indices[3].window == 3);
		/* an override of N2 alone makes A too small */
		CHECK(ct_kernel_set_param(k, "N2", 11) == CT_OK);
		CHECK(ct_kernel_recheck(k) == CT_ERR_INPUT);
		CHECK(ct_ctx_diag_count(ctx) == 1);
		CHECK(strcmp(ct_ctx_last_message(ctx),
		             "subscript '2*i+1' of 'A' may exceed the extent N2 of dimension 1") ==
		      0);
		CHECK(ct_ctx_last_line(ctx) == 6 && ct_ctx_last_col(ctx) == 16);
		CHECK(ct_kernel_set_param(k, "N2", 12) == CT_OK && ct_kernel_recheck(k) == CT_OK);
		CHECK(ct_kernel_set_param(k, "nope", 1) == CT_ERR_INPUT);
		CHECK(strcmp(ct_ctx_last_message(ctx), "unknown param 'nope' in kernel 't'") == 0);
		CHECK(ct_kernel_set_param(k, "N", 0) == CT_OK &&
		      ct_kernel_recheck(k) == CT_ERR_INPUT);
		CHECK(ct_kernel_index_count(k) == 4 &&
		      strcmp(ct_kernel_index_name(k, 3), "ii") == 0);
		CHECK(ct_kernel_index_name(k, 4) == NULL && ct_kernel_array_name(k, -1) == NULL);
	}
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_names_api(void)
{
	CHECK(ct_dtype_size(CT_F32) == 4 && ct_dtype_size(CT_F64) == 8);
	CHECK(ct_dtype_size(CT_I32) == 4 && ct_dtype_size(CT_I64) == 8);
	CHECK(strcmp(ct_dtype_name(CT_I64), "i64") == 0 &&
	      strcmp(ct_dtype_name(CT_F32), "f32") == 0);
	CHECK(strcmp(ct_role_name(CT_TEMP), "temp") == 0 &&
	      strcmp(ct_role_name(CT_CONST), "const") == 0);
	ct_kernel_free(NULL);
	CHECK(ct_kernel_name(NULL) == NULL && ct_kernel_param_count(NULL) == 0);
	CHECK(ct_kernel_parse(NULL, "x", 1, "f") == NULL);
}

static void test_flops_if(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src = "kernel t\nparam N = 10\narray A : f32[N, N] inout\n"
	                  "for (i: N, j: N) {\n  if (i < j) { A[i, j] = fma(A[j, i], 2, 1) }\n"
	                  "  else { A[i, j] *= 3 }\n  let t = sqrt(A[i, j]) / 2\n}\n";
	ct_kernel *k = parse_ok(ctx, src);
	if (k)
		CHECK(ct_kernel_flops(k) == 45 * 2 + 55 * 1 + 100 * 2);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_parse_file(void)
{
	ct_ctx *ctx = ct_ctx_new();
	CHECK(ct_kernel_parse_file(ctx, "/nonexistent/dir/x.cachet") == NULL);
	CHECK(ct_ctx_last_status(ctx) == CT_ERR_IO);
	CHECK(strstr(ct_ctx_last_message(ctx), "/nonexistent/dir/x.cachet") != NULL);
	CHECK(ct_kernel_parse_file(ctx, "/") == NULL && ct_ctx_last_status(ctx) == CT_ERR_IO);
	char path[] = "/tmp/cachet-lang-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		FILE *f = fdopen(fd, "w");
		fputs(matmul_src, f);
		fclose(f);
		ct_kernel *k = ct_kernel_parse_file(ctx, path);
		CHECK(k != NULL && k->nindices == 7);
		CHECK(k && strcmp(k->file, path) == 0);
		ct_kernel_free(k);
		f = fopen(path, "w");
		fputs("kernel x\nfoo\n", f);
		fclose(f);
		CHECK(ct_kernel_parse_file(ctx, path) == NULL);
		CHECK(strcmp(ct_ctx_last_file(ctx), path) == 0 && ct_ctx_last_line(ctx) == 2);
		remove(path);
	}
	ct_ctx_free(ctx);
}

static void test_diag_render(void)
{
	ct_ctx *ctx = ct_ctx_new();
	const char *src =
	    "kernel t\nparam N = 4\narray B : f32[N] inout\nfor (i: N) {\n\tB[i] = q\n}\n";
	CHECK(ct_kernel_parse(ctx, src, strlen(src), "d.cachet") == NULL);
	CHECK(strcmp(ct_ctx_diag_render(ctx, 0),
	             "d.cachet:5:9: error: unknown name 'q'\n  \tB[i] = q\n  \t       ^") == 0);
	ct_ctx_free(ctx);
}

/* ------------------------------------------------------------ bounds soundness */

static uint64_t rng_next(uint64_t *st)
{
	*st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
	return *st >> 33;
}

static int rnd(uint64_t *st, int lo, int hi)
{
	return lo + (int)(rng_next(st) % (uint64_t)(hi - lo + 1));
}

/* A random affine expression of i, j and N. */
static int rand_aff(uint64_t *st, char *b)
{
	int n = sprintf(b, "%d*i + %d*j + %d*N + %d", rnd(st, -1, 2), rnd(st, -1, 1),
	                rnd(st, -1, 1), rnd(st, -3, 3));
	return n;
}

static int rand_cond(uint64_t *st, char *b, int depth)
{
	static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
	int r = rnd(st, 0, 9);
	if (depth > 0 && r < 3) {
		int n = sprintf(b, "(");
		n += rand_cond(st, b + n, depth - 1);
		n += sprintf(b + n, ") %s (", r == 0 ? "||" : "&&");
		n += rand_cond(st, b + n, depth - 1);
		return n + sprintf(b + n, ")");
	}
	if (depth > 0 && r == 3) {
		int n = sprintf(b, "!(");
		n += rand_cond(st, b + n, depth - 1);
		return n + sprintf(b + n, ")");
	}
	int n = rand_aff(st, b);
	n += sprintf(b + n, " %s ", ops[rnd(st, 0, 5)]);
	return n + rand_aff(st, b + n);
}

static bool eval_cond(const ir_expr *e, const int64_t *pv, const int64_t *iv)
{
	bool ok = true;
	switch (e->kind) {
	case EX_CMP: {
		int64_t d = aff_eval(e->diff, pv, iv, &ok);
		switch (e->cmp) {
		case CMP_LT: return d < 0;
		case CMP_LE: return d <= 0;
		case CMP_GT: return d > 0;
		case CMP_GE: return d >= 0;
		case CMP_EQ: return d == 0;
		case CMP_NE: return d != 0;
		}
		return false;
	}
	case EX_AND: return eval_cond(e->args[0], pv, iv) && eval_cond(e->args[1], pv, iv);
	case EX_OR: return eval_cond(e->args[0], pv, iv) || eval_cond(e->args[1], pv, iv);
	case EX_NOT: return !eval_cond(e->args[0], pv, iv);
	default: return false;
	}
}

static bool access_in(const ct_kernel *k, const ir_expr *e, const int64_t *pv, const int64_t *iv)
{
	if (e->kind == EX_ACCESS) {
		const ir_array *a = &k->arrays[e->id];
		for (int d = 0; d < a->rank; d++) {
			bool ok = true;
			int64_t v = aff_eval(e->sub[d], pv, iv, &ok),
			        x = aff_eval(a->ext[d], pv, iv, &ok);
			if (v < 0 || v >= x)
				return false;
		}
		return true;
	}
	for (int i = 0; i < e->nargs; i++)
		if (!access_in(k, e->args[i], pv, iv))
			return false;
	return true;
}

/* Every access of the kernel (one for, one if/else) at every iteration. */
static bool brute_in_bounds(const ct_kernel *k)
{
	int64_t pv[4] = {0}, iv[4] = {0};
	ir_param_values(k, pv);
	const ir_node *f = k->body[0], *n = f->body[0];
	bool ok = true;
	int64_t l0 = aff_eval(k->indices[0].lo, pv, iv, &ok),
	        h0 = aff_eval(k->indices[0].hi, pv, iv, &ok);
	int64_t l1 = aff_eval(k->indices[1].lo, pv, iv, &ok),
	        h1 = aff_eval(k->indices[1].hi, pv, iv, &ok);
	for (iv[0] = l0; iv[0] < h0; iv[0]++)
		for (iv[1] = l1; iv[1] < h1; iv[1]++) {
			bool c = eval_cond(n->cond, pv, iv);
			ir_node *const *b = c ? n->body : n->els;
			int nb = c ? n->nbody : n->nels;
			for (int s = 0; s < nb; s++)
				if (!access_in(k, b[s]->lhs, pv, iv) ||
				    !access_in(k, b[s]->rhs, pv, iv))
					return false;
		}
	return true;
}

/* The bounds check never accepts a kernel that leaves an array: random
 * guarded accesses, checked against enumeration (runtime N: for N = 1..12). */
static void test_bounds_soundness(void)
{
	uint64_t st = 99;
	int accepted = 0, rejected = 0;
	char src[4096], c[2048], s1[256], s2[256], s3[256];
	ct_ctx *ctx = ct_ctx_new();
	for (int r = 0; r < 4000; r++) {
		bool runtime = r % 4 == 3;
		rand_cond(&st, c, 2);
		rand_aff(&st, s1);
		rand_aff(&st, s2);
		rand_aff(&st, s3);
		const char *his[] = {"N", "N-1", "N+1", "2*N"};
		snprintf(src, sizeof src,
		         "kernel r\nparam N %s\narray A : f32[N + %d] inout\narray X : f32[2*N + "
		         "%d] input\n"
		         "for (i: %d .. %s, j: %d .. %s) {\n  if (%s) { A[%s] = X[%s] } else { "
		         "A[%s] = 1 }\n}\n",
		         runtime      ? ": runtime"
		         : r % 3 == 0 ? "= 1"
		                      : "= 6",
		         rnd(&st, 0, 2), rnd(&st, 0, 2), rnd(&st, 0, 1), his[rnd(&st, 0, 3)],
		         rnd(&st, 0, 2), his[rnd(&st, 0, 3)], c, s1, s2, s3);
		ct_kernel *k = ct_kernel_parse(ctx, src, strlen(src), "r.cachet");
		if (!k) {
			rejected++;
			bool bounds = ct_ctx_diag_count(ctx) > 0 &&
			              strstr(ct_ctx_diag_render(ctx, 0), "subscript '") != NULL;
			CHECKF(bounds, "unexpected error: %s\n%s", ct_ctx_diag_render(ctx, 0), src);
			continue;
		}
		accepted++;
		if (!runtime) {
			CHECKF(brute_in_bounds(k), "accepted but out of bounds:\n%s", src);
		} else {
			for (int64_t v = 1; v <= 12; v++) {
				ct_kernel_set_param(k, "N", v);
				CHECKF(brute_in_bounds(k),
				       "accepted but out of bounds for N = %lld:\n%s", (long long)v,
				       src);
				CHECKF(ct_kernel_recheck(k) == CT_OK,
				       "recheck rejects N = %lld:\n%s", (long long)v, src);
			}
		}
		ct_kernel_free(k);
	}
	ct_ctx_free(ctx);
	/* not vacuous */
	CHECKF(accepted > 200 && rejected > 200, "accepted %d, rejected %d", accepted, rejected);
}

/* ------------------------------------------------------------ hostile input */

static void parse_quiet(const char *src, size_t len)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, len, "h.cachet");
	if (k)
		(void)ct_kernel_flops(k);
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void expect_error(const char *src, size_t len, const char *msg)
{
	ct_ctx *ctx = ct_ctx_new();
	ct_kernel *k = ct_kernel_parse(ctx, src, len, "h.cachet");
	CHECK(k == NULL);
	bool found = false;
	for (int i = 0; i < ct_ctx_diag_count(ctx); i++)
		found |= strstr(ct_ctx_diag_render(ctx, i), msg) != NULL;
	CHECKF(found, "no diagnostic with '%s' (first: %s)", msg,
	       ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0) : "none");
	ct_kernel_free(k);
	ct_ctx_free(ctx);
}

static void test_deep_nesting(void)
{
	size_t n = 100000;
	char *s = malloc(n + 200);
	if (!s)
		return;
	/* parentheses */
	int o = sprintf(s, "kernel t\nparam N = 4\narray B : f32[N] inout\nB[0] = ");
	for (int i = 0; i < 5000; i++)
		s[o++] = '(';
	s[o++] = '1';
	for (int i = 0; i < 5000; i++)
		s[o++] = ')';
	s[o] = 0;
	expect_error(s, (size_t)o, "expression is too deeply nested (more than 256 levels)");
	/* unary minus and ! chains */
	o = sprintf(s, "kernel t\nparam N = 4\narray B : f32[N] inout\nB[0] = ");
	for (int i = 0; i < 5000; i++)
		s[o++] = '-';
	s[o++] = 'N';
	expect_error(s, (size_t)o, "expression is too deeply nested");
	/* a long flat sum: the tree would be too tall for recursive walkers */
	o = sprintf(s, "kernel t\nparam N = 4\narray B : f32[N] inout\nB[0] = 1");
	for (int i = 0; i < 3000; i++)
		o += sprintf(s + o, "+1");
	expect_error(s, (size_t)o, "expression is too deeply nested (more than 256 levels)");
	/* blocks */
	o = sprintf(s, "kernel t\nparam N = 4\narray B : f32[N] inout\n");
	for (int i = 0; i < 100; i++)
		o += sprintf(s + o, "for (i%d: N) {\n", i);
	o += sprintf(s + o, "B[0] = 1\n");
	for (int i = 0; i < 100; i++)
		o += sprintf(s + o, "}\n");
	expect_error(s, (size_t)o, "blocks are nested too deeply (at most 64 levels)");
	/* else-if chains */
	o = sprintf(s, "kernel t\nparam N = 4\narray B : f32[N] inout\nfor (i: N) {\n");
	for (int i = 0; i < 100; i++)
		o += sprintf(s + o, "if (i == %d) { B[i] = 1 } else ", i);
	o += sprintf(s + o, "{ B[i] = 2 }\n}\n");
	expect_error(s, (size_t)o, "blocks are nested too deeply");
	free(s);
}

static void test_hostile_bytes(void)
{
	/* empty, NUL bytes, lone garbage, a huge identifier */
	parse_quiet("", 0);
	parse_quiet(NULL, 0);
	expect_error("kernel t\0param", 14, "unexpected character byte 0x00");
	expect_error("\x80\x81\xc3\xa9 kernel", 11, "unexpected character byte 0x80");
	char *big = malloc(100000);
	if (big) {
		memcpy(big, "kernel ", 7);
		memset(big + 7, 'a', 100000 - 7);
		expect_error(big, 100000, "name is too long (at most 255 characters)");
		free(big);
	}
	/* deterministic random bytes and random token soup */
	static const char *const toks[] = {
	    "kernel", "param",   "array", "for",    "if",  "else",  "schedule", "plan", "(",
	    ")",      "[",       "]",     "{",      "}",   ",",     ":",        ";",    "=",
	    "+=",     "..",      "+",     "-",      "*",   "/",     "<",        "==",   "&&",
	    "||",     "!",       "i",     "j",      "N",   "A",     "B",        "1",    "2.5",
	    "\n",     "runtime", "input", "output", "f32", "cache", "split",    "tile", "reorder",
	    "level",  "select",  "let",   "x",      "0"};
	uint64_t st = 12345;
	char buf[600];
	for (int r = 0; r < 3000; r++) {
		size_t n = 0;
		int len = (int)(st % 200);
		for (int i = 0; i < len && n < sizeof buf - 20; i++) {
			st = st * 6364136223846793005ULL + 1442695040888963407ULL;
			if (r % 3 == 0) {
				buf[n++] = (char)(st >> 56);
			} else {
				const char *t = toks[(st >> 33) % (sizeof toks / sizeof toks[0])];
				size_t tl = strlen(t);
				memcpy(buf + n, t, tl);
				n += tl;
				buf[n++] = ' ';
			}
		}
		parse_quiet(buf, n);
	}
}

/* An allocator that fails after a given number of calls. */
typedef struct failing {
	int left;
} failing;

static void *failing_alloc(void *ud, void *ptr, size_t size)
{
	failing *f = ud;
	if (size == 0) {
		free(ptr);
		return NULL;
	}
	if (f->left-- <= 0)
		return NULL;
	return realloc(ptr, size);
}

static void test_out_of_memory(void)
{
	int ok_at = -1;
	for (int n = 0; n < 400 && ok_at < 0; n++) {
		failing f = {n + 1}; /* the ctx itself needs one */
		ct_ctx *ctx = ct_ctx_new_with_alloc(failing_alloc, &f);
		if (!ctx)
			continue;
		ct_kernel *k = ct_kernel_parse(ctx, matmul_src, strlen(matmul_src), "m.cachet");
		if (k)
			ok_at = n;
		else
			CHECK(ct_ctx_last_status(ctx) == CT_ERR_NOMEM ||
			      ct_ctx_last_status(ctx) == CT_ERR_INPUT);
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	CHECK(ok_at > 0);
}

/* Replay every file of tests/fuzz/regress (crashers found by the fuzzer). */
static void test_fuzz_regress(void)
{
	const char *root = getenv("CACHET_SRCDIR");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/fuzz/regress", root ? root : ".");
	DIR *d = opendir(dir);
	CHECKF(d != NULL, "cannot open %s", dir);
	if (!d)
		return;
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		static char buf[1 << 20];
		size_t len = fread(buf, 1, sizeof buf, f);
		fclose(f);
		parse_quiet(buf, len);
		n++;
	}
	closedir(d);
	CHECK(n > 0);
}

/* Every example parses. */
static void test_examples(void)
{
	const char *root = getenv("CACHET_SRCDIR");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/examples", root ? root : ".");
	DIR *d = opendir(dir);
	CHECKF(d != NULL, "cannot open %s", dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 7 || strcmp(e->d_name + l - 7, ".cachet") != 0)
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		ct_ctx *ctx = ct_ctx_new();
		ct_kernel *k = ct_kernel_parse_file(ctx, path);
		CHECKF(k != NULL, "%s: %s", path,
		       ct_ctx_diag_count(ctx) ? ct_ctx_diag_render(ctx, 0)
		                              : ct_ctx_last_message(ctx));
		ct_kernel_free(k);
		ct_ctx_free(ctx);
	}
	closedir(d);
}

int main(void)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		h_begin(rows[i].name);
		run_row(&rows[i]);
		h_end();
	}
	RUN(test_matmul_ir);
	RUN(test_stencil_ir);
	RUN(test_types);
	RUN(test_literals);
	RUN(test_params_api);
	RUN(test_early_reads_recheck);
	RUN(test_names_api);
	RUN(test_flops_if);
	RUN(test_parse_file);
	RUN(test_diag_render);
	RUN(test_bounds_soundness);
	RUN(test_deep_nesting);
	RUN(test_hostile_bytes);
	RUN(test_out_of_memory);
	RUN(test_fuzz_regress);
	RUN(test_examples);
	return h_report();
}
