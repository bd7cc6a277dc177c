/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Equal-width buckets of weighted values (histbin.h). */
#include "histbin.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int lwm2_histbin_add(struct lwm2_histbin *h, double v, double w)
{
	if (!isfinite(v)) {
		h->absent++;
		return 0;
	}
	if (h->n == h->cap) {
		size_t nc = h->cap ? 2 * h->cap : 64;
		double *nv = realloc(h->v, nc * sizeof(*nv)), *nw;

		if (!nv)
			return -1; /* errno ENOMEM */
		h->v = nv;
		if (!(nw = realloc(h->w, nc * sizeof(*nw))))
			return -1;
		h->w = nw;
		h->cap = nc;
	}
	if (!h->n || v < h->min)
		h->min = v;
	if (!h->n || v > h->max)
		h->max = v;
	h->v[h->n] = v;
	h->w[h->n++] = w;
	return 0;
}

void lwm2_histbin_free(struct lwm2_histbin *h)
{
	free(h->v);
	free(h->w);
	*h = (struct lwm2_histbin){0};
}

double lwm2_histbin_edge(int64_t k, double width)
{
	double p = 1;

	/* width as an integer over a power of ten, where it is one: the
	 * edge is then one rounding from the decimal it prints as */
	for (int d = 0; d <= 15; d++, p *= 10) {
		double wi = nearbyint(width * p);

		if (wi >= 1 && wi < 9007199254740992.0 && fabs(width * p - wi) <= 1e-9 * wi)
			return (double)k * wi / p;
	}
	return (double)k * width;
}

#define INDEX_MAX 4611686018427387904.0 /* 2^62 */

int64_t lwm2_histbin_index(double v, double width)
{
	double k = floor(v / width);
	int64_t i;

	if (k > INDEX_MAX)
		return (int64_t)INDEX_MAX;
	if (k < -INDEX_MAX)
		return -(int64_t)INDEX_MAX;
	i = (int64_t)k;
	/* v / width rounds (0.3 / 0.1 is 2.9999999999999996): the edges
	 * decide */
	while (lwm2_histbin_edge(i, width) > v)
		i--;
	while (lwm2_histbin_edge(i + 1, width) <= v)
		i++;
	return i;
}

double lwm2_histbin_width(double min, double max)
{
	static const double steps[] = {1, 2, 2.5, 5, 10};
	double raw = (max - min) / LWM2_HISTBIN_DEFAULT, p;

	if (!(raw > 0))
		raw = fabs(max) / LWM2_HISTBIN_DEFAULT;
	if (!(raw > 0) || !isfinite(raw))
		return 1;
	p = pow(10, floor(log10(raw)));
	/* the smallest round width from raw up whose buckets, from the
	 * one of min to the one of max (on an edge: the next), are few
	 * enough */
	for (int up = 0; up < 3; up++, p *= 10)
		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
			double w = steps[i] * p;

			if (w >= raw * (1 - 1e-12) &&
			    lwm2_histbin_index(max, w) - lwm2_histbin_index(min, w) <
			        LWM2_HISTBIN_DEFAULT)
				return w;
		}
	return p;
}

int lwm2_histbin_buckets(const struct lwm2_histbin *h, double width, int64_t *first, size_t *nb,
                         uint64_t **count, double **weight)
{
	int64_t lo, hi;

	*nb = 0;
	if (!h->n || !(width > 0) || !isfinite(width)) {
		errno = EINVAL;
		return -1;
	}
	lo = lwm2_histbin_index(h->min, width);
	hi = lwm2_histbin_index(h->max, width);
	if (hi - lo >= LWM2_HISTBIN_MAX) {
		*nb = (size_t)(hi - lo) + 1; /* both within +-2^62 */
		errno = ERANGE;
		return -1;
	}
	*first = lo;
	*nb = (size_t)(hi - lo) + 1;
	*count = calloc(*nb, sizeof(**count));
	*weight = calloc(*nb, sizeof(**weight));
	if (!*count || !*weight) {
		free(*count);
		free(*weight);
		*count = NULL;
		*weight = NULL;
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < h->n; i++) {
		size_t b = (size_t)(lwm2_histbin_index(h->v[i], width) - lo);

		(*count)[b]++;
		(*weight)[b] += h->w[i];
	}
	return 0;
}
