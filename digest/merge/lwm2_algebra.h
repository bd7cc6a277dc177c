/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The algebra of experiments (CUBE's diff, mean and merge) over job
 * digests, and derived metrics: arithmetic over a scope's metrics and
 * counters, defined by the site (lwm2.conf's DerivedMetric=) or the user
 * (--metric).  Both write members a reader that does not know them skips
 * (doc/digest-schema.md, "Derived digests").
 */
#ifndef LWM2_ALGEBRA_H
#define LWM2_ALGEBRA_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

enum lwm2_algebra_op {
	LWM2_ALGEBRA_DIFF,  /* B - A, two operands */
	LWM2_ALGEBRA_MEAN,  /* the mean of two or more */
	LWM2_ALGEBRA_MERGE, /* the union: each metric from the first that has it */
};

/* "diff", "mean", "merge": the operation's name in the digest. */
const char *lwm2_algebra_name(enum lwm2_algebra_op op);

/*
 * The digest that op makes of the n digests d (read and brought to the
 * current version: lwm2_digest_parse), each named by what[i] (where it
 * came from: "job 12 (accounting)", a file name).  Per metric of the job
 * and of every step that all operands have (merge: any operand): B - A,
 * the mean, or the first operand's; rank by rank where every operand has
 * a per-process table of the same processes in the same order (each
 * row's step and rank), else of the averages only.  Its job is the last
 * operand's (diff: B's) for diff, the first's otherwise; it has
 * "derived": {"operation", "operands": [{"source", "job_id"}],
 * "ranks_aligned"}.  NULL with the reason in err (wrong operand count,
 * out of memory).
 */
json_object *lwm2_digest_algebra(enum lwm2_algebra_op op, json_object *const *d,
                                 const char *const *what, size_t n, char *err, size_t errlen);

/* The step of id among d's steps, or NULL. */
json_object *lwm2_digest_step(json_object *d, int64_t id);

/* Derived metrics: name = expression, in the order defined. */
struct lwm2_derived_metric;
struct lwm2_derived_set {
	struct lwm2_derived_metric *v;
	size_t n;
};

/*
 * def ("name=expr") added to s: 0, or -1 with the reason in err ("bad
 * derived metric \"def\": want NAME=EXPRESSION", "... name \"x\" is a
 * metric already", the expression's error: "unknown name \"x\"").  A
 * name defined again replaces the earlier definition (--metric over
 * lwm2.conf).  Names: the metric ids and counter names of lwm2 digest
 * --helpformat.
 */
int lwm2_derived_add(struct lwm2_derived_set *s, const char *def, char *err, size_t errlen);
/* Each line of text (lwm2.conf's DerivedMetric lines, joined by '\n')
 * added as lwm2_derived_add does. */
int lwm2_derived_add_lines(struct lwm2_derived_set *s, const char *text, char *err, size_t errlen);
void lwm2_derived_free(struct lwm2_derived_set *s);
/* The index of name (len bytes) in s, or -1. */
int lwm2_derived_find(const struct lwm2_derived_set *s, const char *name, size_t len);
/* The name of s's i-th metric. */
const char *lwm2_derived_name(const struct lwm2_derived_set *s, size_t i);

/*
 * s evaluated in d's job scope and each step into their
 * "derived_metrics": {name: {"expr", "value"}} ("value" null and "why"
 * "division by zero" or "not measured" where there is no figure), and,
 * where every name of an expression is a column of d's per-process
 * table, into that table as a column of its own.  Nothing for an empty s.
 */
void lwm2_derived_apply(const struct lwm2_derived_set *s, json_object *d);

#endif /* LWM2_ALGEBRA_H */
