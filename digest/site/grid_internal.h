/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the grid's files share and nothing else sees (grid.h is the
 * interface):
 *
 *   grid_index.c   the index of time slices and how a digest enters it;
 *   grid_interf.c  the interference rule over the index;
 *   grid_nodes.c   the sick-node rule over the ranks tables of a period;
 *   grid_stats.c   the robust statistics both rules take;
 *   grid_fmt.c     the sentences and lists of their findings.
 */
#ifndef LWM2_GRID_INTERNAL_H
#define LWM2_GRID_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "grid.h"

/* Array access that takes any value: the log's digests are read back from
 * a file, and json-c asserts on an index into what is not an array. */
static inline size_t grid_alen(json_object *a)
{
	return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static inline json_object *grid_aget(json_object *a, size_t i)
{
	return i < grid_alen(a) ? json_object_array_get_idx(a, i) : NULL;
}

/* ------------------------------------------------------------ statistics */

/* qsort's order of doubles. */
int grid_cmp_double(const void *a, const void *b);

/* Median of v (sorted in place); NAN when n is 0. */
double grid_median(double *v, size_t n);

/* Quantile (R type 7) of sorted v, n > 0. */
double grid_quantile(const double *v, size_t n, double q);

/* P(X >= k) for X the number of successes of independent trials with
 * chances p[0..n) (Poisson binomial, exact); 1 when out of memory. */
double grid_tail(const double *p, size_t n, size_t k);

/* ------------------------------------------------------------ formatting */

/* The kinds of the interference rule, in the order they are judged. */
enum grid_kind { K_WRITE, K_READ, K_MPI, K_SHARE, NK };

/* What the sentence of an interference finding says. */
struct grid_interf_words {
	int kind;            /* enum grid_kind */
	double base, during; /* the job's typical rate and its rate in the slow slices */
	int64_t from, to;    /* the slow span, epoch seconds */
	size_t nslow, na;    /* slow slices of the active ones */
	const int64_t *jobs; /* the other jobs named, most volume first */
	size_t njobs;        /* 1 to 3 */
	double cum;          /* their volume in the slow slices */
	double wsum, rsum;   /* ... of it written and read (file system kinds) */
	const char *nodes;   /* the job's nodes (MPI kinds) */
};

/* The finding's "text". */
void grid_interf_text(char *buf, size_t len, const struct grid_interf_words *w);

/* The job's nodes of the index, comma-separated, ",..." where they do not
 * fit. */
void grid_node_list(const struct lwm2_grid *g, const unsigned char *jnodes, char *buf, size_t len);

/* A sick node's "why". */
void grid_nodes_why(char *buf, size_t len, const char *node, size_t slowest, size_t jobs,
                    double expected, double p, double ratio, size_t ratio_jobs);

#endif /* LWM2_GRID_INTERNAL_H */
