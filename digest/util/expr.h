/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arithmetic over named values, for derived metrics ("flops_per_byte =
 * fp_ops / mem_bytes"): numbers, names, + - * / (also × and ÷), unary
 * minus and parentheses, with the usual precedence, left to right.
 *
 * A small recursive-descent parser over this grammar, compiled to a
 * postfix program: the grammar has four operators, and the libraries
 * that evaluate expressions (tinyexpr, muparser) would bring a dependency
 * and functions, variables and syntax that lwm2.conf should not offer.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '×' | '÷') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := NUMBER | NAME | '(' expr ')'
 *   NAME    := [A-Za-z_][A-Za-z0-9_.]*
 */
#ifndef LWM2_EXPR_H
#define LWM2_EXPR_H

#include <stddef.h>

struct lwm2_expr;

/* The id (>= 0) of the name of len bytes at name, or -1 for a name that
 * is not known. */
typedef int (*lwm2_expr_resolve_fn)(const char *name, size_t len, void *arg);
/* The value of the name of id, NAN where it was not measured. */
typedef double (*lwm2_expr_value_fn)(int id, void *arg);

/*
 * text compiled, each name resolved once by resolve.  The expression, or
 * NULL with the reason in err: "unknown name \"x\"", "expected a number,
 * a name or '(' at \"...\"", "')' missing", "unexpected \"...\"", "too
 * deeply nested", "empty expression", "out of memory".
 */
struct lwm2_expr *lwm2_expr_parse(const char *text, lwm2_expr_resolve_fn resolve, void *arg,
                                  char *err, size_t errlen);
void lwm2_expr_free(struct lwm2_expr *e);

enum lwm2_expr_status {
	LWM2_EXPR_OK,
	LWM2_EXPR_DIV_ZERO, /* a division by zero: the value is "n/a" */
	LWM2_EXPR_MISSING,  /* a name without a value (value gave NAN) */
};

/* e evaluated with the names' values from value into *out (NAN unless
 * LWM2_EXPR_OK). */
enum lwm2_expr_status lwm2_expr_eval(const struct lwm2_expr *e, lwm2_expr_value_fn value, void *arg,
                                     double *out);

/* Whether every name of e has an id for which has(id) is true. */
int lwm2_expr_names_all(const struct lwm2_expr *e, int (*has)(int id, void *arg), void *arg);

#endif /* LWM2_EXPR_H */
