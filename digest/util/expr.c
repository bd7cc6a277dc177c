/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Derived metrics' arithmetic: see expr.h for the grammar and why it is
 * parsed here. */
#include "config.h"

#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

/* Nesting beyond this is refused: the parser recurses once a level. */
#define EXPR_DEPTH_MAX 64

enum op { OP_NUM, OP_NAME, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG };

struct insn {
	enum op op;
	double num; /* OP_NUM */
	int id;     /* OP_NAME */
};

struct lwm2_expr {
	struct insn *code; /* postfix */
	size_t n, cap;
};

struct parser {
	const char *p;
	struct lwm2_expr *e;
	lwm2_expr_resolve_fn resolve;
	void *arg;
	char *err;
	size_t errlen;
	int depth;
	int failed;
};

static int fail(struct parser *ps, const char *fmt, const char *what)
{
	if (!ps->failed)
		lwm2_errprintf(EINVAL, ps->err, ps->errlen, fmt, what);
	ps->failed = 1;
	return -1;
}

static int emit(struct parser *ps, struct insn in)
{
	struct lwm2_expr *e = ps->e;

	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 16;
		struct insn *c = realloc(e->code, cap * sizeof(*c));

		if (!c) {
			lwm2_errprintf(ENOMEM, ps->err, ps->errlen, "out of memory");
			ps->failed = 1;
			return -1;
		}
		e->code = c;
		e->cap = cap;
	}
	e->code[e->n++] = in;
	return 0;
}

static void skip_space(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

/* The operator at p among ops ("+-" or "*(/"), × and ÷ as * and /: its
 * op, with p moved past it, or -1. */
static int take_op(struct parser *ps, int mul)
{
	const char *p;

	skip_space(ps);
	p = ps->p;
	if (!mul && (*p == '+' || *p == '-')) {
		ps->p++;
		return *p == '+' ? OP_ADD : OP_SUB;
	}
	if (mul && (*p == '*' || *p == '/')) {
		ps->p++;
		return *p == '*' ? OP_MUL : OP_DIV;
	}
	/* U+00D7 and U+00F7 in UTF-8 */
	if (mul && (unsigned char)p[0] == 0xc3 &&
	    ((unsigned char)p[1] == 0x97 || (unsigned char)p[1] == 0xb7)) {
		ps->p += 2;
		return (unsigned char)p[1] == 0x97 ? OP_MUL : OP_DIV;
	}
	return -1;
}

static int parse_expr(struct parser *ps);

static int parse_name(struct parser *ps)
{
	const char *s = ps->p;
	char name[128];
	int id;

	while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.')
		ps->p++;
	if ((id = ps->resolve(s, (size_t)(ps->p - s), ps->arg)) < 0) {
		snprintf(name, sizeof(name), "%.*s", (int)(ps->p - s), s);
		return fail(ps, "unknown name \"%s\"", name);
	}
	return emit(ps, (struct insn){.op = OP_NAME, .id = id});
}

static int parse_primary(struct parser *ps)
{
	char *end;
	double v;

	skip_space(ps);
	if (*ps->p == '(') {
		ps->p++;
		if (parse_expr(ps) < 0)
			return -1;
		skip_space(ps);
		if (*ps->p != ')')
			return fail(ps, "')' missing at \"%s\"", ps->p);
		ps->p++;
		return 0;
	}
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_')
		return parse_name(ps);
	if (isdigit((unsigned char)*ps->p) || (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
		/* strtod would also take "inf", "nan" and hex: digits first */
		errno = 0;
		v = strtod(ps->p, &end);
		if (errno || !isfinite(v))
			return fail(ps, "number out of range at \"%s\"", ps->p);
		ps->p = end;
		return emit(ps, (struct insn){.op = OP_NUM, .num = v});
	}
	return fail(ps,
	            *ps->p ? "expected a number, a name or '(' at \"%s\""
	                   : "expected a number, a name or '(' at the end%s",
	            ps->p);
}

static int parse_unary(struct parser *ps)
{
	int rc;

	skip_space(ps);
	if (*ps->p != '-' && *ps->p != '+')
		return parse_primary(ps);
	if (++ps->depth > EXPR_DEPTH_MAX)
		return fail(ps, "too deeply nested%s", "");
	if (*ps->p++ == '+')
		rc = parse_unary(ps);
	else
		rc = parse_unary(ps) < 0 ? -1 : emit(ps, (struct insn){.op = OP_NEG});
	ps->depth--;
	return rc;
}

static int parse_term(struct parser *ps)
{
	int op;

	if (parse_unary(ps) < 0)
		return -1;
	while ((op = take_op(ps, 1)) >= 0)
		if (parse_unary(ps) < 0 || emit(ps, (struct insn){.op = (enum op)op}) < 0)
			return -1;
	return 0;
}

static int parse_expr(struct parser *ps)
{
	int op, rc = -1;

	if (++ps->depth > EXPR_DEPTH_MAX)
		return fail(ps, "too deeply nested%s", "");
	if (parse_term(ps) < 0)
		goto out;
	while ((op = take_op(ps, 0)) >= 0)
		if (parse_term(ps) < 0 || emit(ps, (struct insn){.op = (enum op)op}) < 0)
			goto out;
	rc = 0;
out:
	ps->depth--;
	return rc;
}

struct lwm2_expr *lwm2_expr_parse(const char *text, lwm2_expr_resolve_fn resolve, void *arg,
                                  char *err, size_t errlen)
{
	struct parser ps = {
	    .p = text, .resolve = resolve, .arg = arg, .err = err, .errlen = errlen};

	if (!(ps.e = calloc(1, sizeof(*ps.e)))) {
		lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
		return NULL;
	}
	skip_space(&ps);
	if (!*ps.p)
		fail(&ps, "empty expression%s", "");
	else if (parse_expr(&ps) == 0 && (skip_space(&ps), *ps.p))
		fail(&ps, "unexpected \"%s\"", ps.p);
	if (ps.failed) {
		lwm2_expr_free(ps.e);
		return NULL;
	}
	return ps.e;
}

void lwm2_expr_free(struct lwm2_expr *e)
{
	if (e)
		free(e->code);
	free(e);
}

enum lwm2_expr_status lwm2_expr_eval(const struct lwm2_expr *e, lwm2_expr_value_fn value, void *arg,
                                     double *out)
{
	double stack[EXPR_DEPTH_MAX * 2 + 2] = {0}, *sp = stack,
	                                  *top = stack + sizeof(stack) / sizeof(*stack);
	enum lwm2_expr_status st = LWM2_EXPR_OK;

	*out = NAN;
	for (size_t i = 0; i < e->n; i++) {
		const struct insn *in = &e->code[i];
		double a, b;

		switch (in->op) {
		case OP_NUM:
		case OP_NAME:
			if (sp == top)
				return LWM2_EXPR_MISSING; /* deeper than any parse leaves */
			a = in->op == OP_NUM ? in->num : value(in->id, arg);
			if (isnan(a) && st == LWM2_EXPR_OK)
				st = LWM2_EXPR_MISSING;
			*sp++ = a;
			continue;
		case OP_NEG:
			if (sp == stack)
				return LWM2_EXPR_MISSING; /* no operand: no parse leaves that */
			sp[-1] = -sp[-1];
			continue;
		default:
			break;
		}
		if (sp - stack < 2)
			return LWM2_EXPR_MISSING; /* as above */
		b = *--sp;
		a = sp[-1];
		if (in->op == OP_DIV && b == 0 && st == LWM2_EXPR_OK)
			st = LWM2_EXPR_DIV_ZERO;
		sp[-1] = in->op == OP_ADD   ? a + b
		         : in->op == OP_SUB ? a - b
		         : in->op == OP_MUL ? a * b
		         : b != 0           ? a / b
		                            : NAN;
	}
	if (st == LWM2_EXPR_OK && isfinite(stack[0]))
		*out = stack[0];
	else if (st == LWM2_EXPR_OK)
		st = LWM2_EXPR_DIV_ZERO; /* an overflow to infinity: no figure either */
	return st;
}

int lwm2_expr_names_all(const struct lwm2_expr *e, int (*has)(int id, void *arg), void *arg)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->code[i].op == OP_NAME && !has(e->code[i].id, arg))
			return 0;
	return 1;
}
