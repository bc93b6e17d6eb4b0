/* test_edges.c: loop arithmetic at the edges of 64 bits: core's trip count, floor division and last-iteration rule (shared by check, the interpreter and the generated entry checks). */
#include "core/core.h"
#include "harness.h"

#include <stdint.h>

/* Trip counts never compute hi - lo + step - 1: a step near 2^63 once
 * overflowed there (ct_trips of SPMD loops, issue 34). */
static void test_trip_count(void)
{
	CHECK(ct_trip_count(0, 8, INT64_MAX) == 1);
	CHECK(ct_trip_count(1, 4, INT64_MAX) == 1);
	CHECK(ct_trip_count(0, INT64_MAX, INT64_MAX) == 1);
	CHECK(ct_trip_count(0, INT64_MAX, 1) == INT64_MAX);
	CHECK(ct_trip_count(-5, 5, 3) == 4);
	CHECK(ct_trip_count(5, 5, 3) == 0);
	CHECK(ct_trip_count(6, 5, 1) == 0);
	CHECK(ct_trip_count(0, 16, 4) == 4);
	CHECK(ct_trip_count(0, 17, 4) == 5);
}

/* Floor division for a divisor near 2^63 and a dividend at INT64_MIN
 * (once -((-a + b - 1) / b), which overflowed for both). */
static void test_floordiv(void)
{
	CHECK(ct_floordiv(-5, INT64_MAX) == -1);
	CHECK(ct_floordiv(INT64_MIN, 2) == INT64_MIN / 2);
	CHECK(ct_floordiv(INT64_MIN, INT64_MAX) == -2);
	CHECK(ct_floordiv(-7, 2) == -4);
	CHECK(ct_floordiv(7, 2) == 3);
	CHECK(ct_floordiv(-8, 2) == -4);
	CHECK(ct_mod(-7, 3) == 2);
	CHECK(ct_mod(-5, INT64_MAX) == INT64_MAX - 5);
}

/* The rule: the variable after the last iteration (v += step) stays
 * within 64 bits. */
static void test_loop_last(void)
{
	int64_t last = 0;
	CHECK(!ct_loop_last(1, 4, INT64_MAX, &last)); /* 1 + (2^63 - 1) */
	CHECK(ct_loop_last(0, 8, INT64_MAX, &last) && last == 0);
	CHECK(ct_loop_last(0, INT64_MAX, 1, &last) && last == INT64_MAX - 1);
	CHECK(!ct_loop_last(INT64_MAX - 3, INT64_MAX, 4, &last)); /* the tail of a split by 4 */
	CHECK(ct_loop_last(INT64_MAX - 4, INT64_MAX, 4, &last) && last == INT64_MAX - 4); /* ends at 2^63 - 1 */
	CHECK(ct_loop_last(INT64_MAX - 8, INT64_MAX - 4, 4, &last) && last == INT64_MAX - 8);
	CHECK(!ct_loop_last(INT64_MIN, INT64_MAX, 1, &last)); /* hi - lo overflows */
	CHECK(ct_loop_last(5, 5, 3, &last) && last == 5);     /* runs no iteration */
	CHECK(!ct_loop_last(0, 4, 0, &last));                 /* no step */
}

int main(void)
{
	RUN(test_trip_count);
	RUN(test_floordiv);
	RUN(test_loop_last);
	return h_report();
}
