/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Equal-width buckets of weighted values: the histograms `lwm2 stats
 * --histogram` and the site report draw of one metric over many jobs.
 * The values are kept (16 bytes a value) so that the buckets can be laid
 * over their range once all are read; the edges are whole multiples of
 * the width, so that every histogram of one width lines up with another.
 */
#ifndef LWM2_HISTBIN_H
#define LWM2_HISTBIN_H

#include <stddef.h>
#include <stdint.h>

/* The most buckets a histogram has: a width that gives more is refused. */
#define LWM2_HISTBIN_MAX 1000

/* The number of buckets a width is chosen for when none is given. */
#define LWM2_HISTBIN_DEFAULT 10

struct lwm2_histbin {
	double *v, *w; /* the values and their weights, in the order added */
	size_t n, cap;
	uint64_t absent; /* values that were NaN or infinite: counted, not binned */
	double min, max; /* of the values binned; n > 0 */
};

/* Add v with weight w; a NaN or infinite v counts as absent.  0, or -1
 * with errno ENOMEM (h is left as it was). */
int lwm2_histbin_add(struct lwm2_histbin *h, double v, double w);

void lwm2_histbin_free(struct lwm2_histbin *h);

/* The smallest round width (1, 2, 2.5 or 5 times a power of ten) of at
 * least a tenth of max - min that lays at most LWM2_HISTBIN_DEFAULT
 * buckets over [min, max]; over one value (min == max) a tenth of it, or
 * 1 for 0. */
double lwm2_histbin_width(double min, double max);

/* The lower edge of bucket k: k * width, as the double nearest the
 * decimal it prints as where width is a decimal of at most 15 places
 * (3 * 0.1 is 0.3, not 0.30000000000000004). */
double lwm2_histbin_edge(int64_t k, double width);

/* The bucket of v: k with edge(k) <= v < edge(k + 1), so that a value on
 * an edge as printed opens its bucket.  width > 0 and v finite; held
 * within +-2^62. */
int64_t lwm2_histbin_index(double v, double width);

/*
 * The buckets of h at width, from the one of h->min to the one of h->max:
 * *first the index of the first (its lower edge first * width), *nb their
 * number, count[i] and weight[i] (nb entries each, malloc'd, freed by the
 * caller) the values in each and their weights.  0; -1 with errno ERANGE
 * when the range needs more than LWM2_HISTBIN_MAX buckets (*nb says how
 * many), EINVAL without values or for a width that is not a positive
 * number, ENOMEM.
 */
int lwm2_histbin_buckets(const struct lwm2_histbin *h, double width, int64_t *first, size_t *nb,
                         uint64_t **count, double **weight);

#endif /* LWM2_HISTBIN_H */
