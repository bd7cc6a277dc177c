/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Derived metrics' arithmetic, table-driven: precedence and associativity,
 * the errors of a malformed expression, division by zero and a value that
 * was not measured. */
#include "expr.h"
#include "tap.h"

#include <math.h>
#include <string.h>

/* a = 2, b = 8, zero = 0, unmeasured: no value */
static const char *const names[] = {"a", "b", "zero", "unmeasured", "fp.ops"};

static int resolve(const char *name, size_t len, void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return i;
	return -1;
}

static double value(int id, void *arg)
{
	static const double v[] = {2, 8, 0, NAN, 1e9};

	(void)arg;
	return v[id];
}

static const struct {
	const char *text;
	double want;
} good[] = {
    {"1+2*3", 7},
    {"(1+2)*3", 9},
    {"8/2/2", 2}, /* left to right */
    {"8-2-2", 4}, /* left to right */
    {"2*3+4*5", 26},
    {"-a*b", -16},
    {"-(a+b)", -10},
    {"--a", 2},
    {"+a", 2},
    {"b/a", 4},
    {" b / ( a + a ) ", 2},
    {"a - -b", 10},
    {"1.5e3/a", 750},
    {".5*b", 4},
    {"b\xc3\xb7"
     "a\xc3\x97"
     "3",
     12}, /* ÷ and × */
    {"fp.ops/b", 125000000},
    {"((((a))))", 2},
};

static const struct {
	const char *text;
	const char *err; /* the start of the message */
} bad[] = {
    {"", "empty expression"},
    {"   ", "empty expression"},
    {"a+", "expected a number, a name or '(' at the end"},
    {"a b", "unexpected \"b\""},
    {"(a+b", "')' missing"},
    {"a+b)", "unexpected \")\""},
    {"nosuch/a", "unknown name \"nosuch\""},
    {"a*%", "expected a number, a name or '(' at \"%\""},
    {"inf", "unknown name \"inf\""},
    {"1e999", "number out of range"},
    {"*a", "expected a number, a name or '('"},
};

int main(void)
{
	char err[200], deep[400];
	struct lwm2_expr *e;
	double v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		e = lwm2_expr_parse(good[i].text, resolve, NULL, err, sizeof(err));
		if (!ok(e != NULL, "\"%s\" parses", good[i].text)) {
			diag("  %s", err);
			continue;
		}
		if (!ok(lwm2_expr_eval(e, value, NULL, &v) == LWM2_EXPR_OK && v == good[i].want,
		        "\"%s\" = %g", good[i].text, good[i].want))
			diag("  got %g", v);
		lwm2_expr_free(e);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		e = lwm2_expr_parse(bad[i].text, resolve, NULL, err, sizeof(err));
		ok(!e && !strncmp(err, bad[i].err, strlen(bad[i].err)), "\"%s\" refused: %s",
		   bad[i].text, err);
		lwm2_expr_free(e);
	}

	e = lwm2_expr_parse("b/zero", resolve, NULL, err, sizeof(err));
	ok(e && lwm2_expr_eval(e, value, NULL, &v) == LWM2_EXPR_DIV_ZERO && isnan(v),
	   "a division by zero has no figure");
	lwm2_expr_free(e);
	e = lwm2_expr_parse("a/(b-8)+1", resolve, NULL, err, sizeof(err));
	ok(e && lwm2_expr_eval(e, value, NULL, &v) == LWM2_EXPR_DIV_ZERO,
	   "so has an expression with one inside");
	lwm2_expr_free(e);
	e = lwm2_expr_parse("zero/b", resolve, NULL, err, sizeof(err));
	ok(e && lwm2_expr_eval(e, value, NULL, &v) == LWM2_EXPR_OK && v == 0,
	   "zero divided is zero");
	lwm2_expr_free(e);
	e = lwm2_expr_parse("unmeasured/zero", resolve, NULL, err, sizeof(err));
	ok(e && lwm2_expr_eval(e, value, NULL, &v) == LWM2_EXPR_MISSING && isnan(v),
	   "a value not measured: no figure, said as such before the division");
	lwm2_expr_free(e);

	/* nesting is bounded: the parser recurses once a level */
	memset(deep, '(', 200);
	snprintf(deep + 200, sizeof(deep) - 200, "a");
	e = lwm2_expr_parse(deep, resolve, NULL, err, sizeof(err));
	ok(!e && strstr(err, "too deeply nested"), "200 parentheses deep: %s", err);
	memset(deep, '-', 200);
	e = lwm2_expr_parse(deep, resolve, NULL, err, sizeof(err));
	ok(!e && strstr(err, "too deeply nested"), "200 signs deep: %s", err);
	return done_testing();
}
