/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Requested against used core-hours and memory of logged jobs: see
 * usage.h for the definitions.
 */
#include "usage.h"
#include "grow.h"

#include "lwm2_keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "numparse.h"
#include "stepname.h"
#include "strhash.h"

/* The number at p (a JSON number, not null or a string), else NaN. */
static double num_at(const char *p, const char *end)
{
	const char *e = p ? lwm2_json_span(p, end) : NULL;
	char buf[64], *x;
	double v;

	if (!e || e - p >= (long)sizeof(buf) || !(*p == '-' || (*p >= '0' && *p <= '9')))
		return NAN;
	memcpy(buf, p, (size_t)(e - p));
	buf[e - p] = '\0';
	v = strtod(buf, &x);
	return *x == '\0' && isfinite(v) ? v : NAN;
}

/* The number at the path obj.k1.k2 of objects, else NaN. */
static double num_in(const char *obj, const char *end, const char *k1, const char *k2)
{
	const char *a = obj && *obj == '{' ? lwm2_json_member(obj, end, k1) : NULL;

	if (a && k2)
		a = *a == '{' ? lwm2_json_member(a, end, k2) : NULL;
	return num_at(a, end);
}

/* The CPU time of the executables of one of the scope's lists (the array
 * at a, within end) into *sum, each name not in seen[] yet (the list
 * before may hold it) added there; false where none had a name and a
 * number.  Walked as text: the names compared as the digest writes them,
 * escapes and all, which one writer writes alike. */
struct exe_seen {
	const char *name[16];
	size_t len[16], n;
};

static bool exe_list_cpu(const char *a, const char *end, struct exe_seen *seen, double *sum)
{
	const char *p, *e, *x, *xe;
	bool any = false;

	for (p = a && *a == '[' ? a + 1 : NULL; p; p = e) {
		double c;
		bool dup = false;

		p = lwm2_json_skip_ws(p, end);
		if (p >= end || *p == ']' || !(e = lwm2_json_span(p, end)))
			break;
		if (*p == '{' && (x = lwm2_json_member(p, e, LWM2_KEY_EXE)) && *x == '"' &&
		    (xe = lwm2_json_span(x, e)) && !isnan(c = num_in(p, e, LWM2_KEY_CPU_S, NULL))) {
			for (size_t k = 0; k < seen->n && !dup; k++)
				dup = seen->len[k] == (size_t)(xe - x) &&
				      !memcmp(seen->name[k], x, seen->len[k]);
			if (!dup && seen->n < sizeof(seen->name) / sizeof(seen->name[0])) {
				seen->name[seen->n] = x;
				seen->len[seen->n++] = (size_t)(xe - x);
				*sum += c > 0 ? c : 0;
				any = true;
			}
		}
		e = lwm2_json_skip_ws(e, end);
		if (e >= end || *e != ',')
			break;
		e++;
	}
	return any;
}

/*
 * The CPU time of the job's processes in seconds, NaN when the digest does
 * not tell.  The digest's "fit" block (where the lwm2 that wrote it has
 * one) holds the total; before it, the scope's executables do: every
 * executable's CPU time, exact as long as they all fit the two lists
 * (8 by CPU time, 8 by count), and otherwise short only of executables
 * that each used less than the eighth by CPU time.
 */
static double cpu_s_of(const struct lwm2_logline *l, bool walked, const char *ex)
{
	const char *sc, *ex_end;
	double v =
	    num_in(lwm2_logline_member(l, LWM2_KEY_FIT), l->end, LWM2_KEY_FIT_CPU, LWM2_KEY_CPU_S);
	struct exe_seen seen = {.n = 0};
	bool any;

	if (!isnan(v))
		return v;
	if (!walked) {
		sc = lwm2_logline_member(l, LWM2_KEY_SCOPE);
		ex = sc && *sc == '{' ? lwm2_json_member(sc, l->end, LWM2_KEY_EXECUTABLES) : NULL;
	}
	if (!ex || *ex != '{' || !(ex_end = lwm2_json_span(ex, l->end)))
		return NAN;
	v = 0;
	any = exe_list_cpu(lwm2_json_member(ex, ex_end, LWM2_KEY_BY_CPU), ex_end, &seen, &v);
	any |= exe_list_cpu(lwm2_json_member(ex, ex_end, LWM2_KEY_BY_COUNT), ex_end, &seen, &v);
	return any ? v : NAN;
}

static void usage_of_line(const struct lwm2_logline *l, struct lwm2_usage *u, bool walked,
                          const char *executables)
{
	json_object *f = l->fields;
	int64_t cpus = ju_int_or(f, "cpus", 0), start = ju_int_or(f, "start", 0),
	        end = ju_int_or(f, "end", 0), procs = 0, cpt = 0;
	const char *fit = l->digest ? lwm2_logline_member(l, LWM2_KEY_FIT) : NULL;
	double v;

	u->used_core_h = u->mem_req_mb = u->mem_peak_mb = NAN;
	if (l->digest) {
		const char *jo = lwm2_logline_member(l, LWM2_KEY_JOB);
		const char *sc = lwm2_logline_member(l, LWM2_KEY_SCOPE);

		/* the digest's job fields: only where the log line lacks them */
		if (!isnan(v = num_in(jo, l->end, LWM2_KEY_CPUS_PER_TASK, NULL)) && v > 0)
			cpt = (int64_t)v;
		if (start <= 0 && !isnan(v = num_in(jo, l->end, LWM2_KEY_START, NULL)))
			start = (int64_t)v;
		if (end <= 0 && !isnan(v = num_in(jo, l->end, LWM2_KEY_END, NULL)))
			end = (int64_t)v;
		if (!isnan(v = num_in(sc, l->end, LWM2_KEY_PROCESSES, NULL)) && v > 0)
			procs = (int64_t)v;
		if (!isnan(v = cpu_s_of(l, walked, executables)))
			u->used_core_h = v / 3600.0;
		u->mem_peak_mb = num_in(fit, l->end, LWM2_KEY_FIT_MEMORY, LWM2_KEY_PEAK_MB);
		u->mem_req_mb = num_in(fit, l->end, LWM2_KEY_FIT_MEMORY, LWM2_KEY_REQUESTED_MB);
	}
	/* cores: Slurm's allocation where the log has it, else one per
	 * process (cpus_per_task each), else one per node */
	if (cpus <= 0)
		cpus = procs > 0 ? procs * (cpt > 1 ? cpt : 1) : ju_int_or(f, "node_count", 0);
	u->req_core_h = start > 0 && end > start && cpus > 0
	                    ? (double)cpus * (double)(end - start) / 3600.0
	                    : 0;
	/* the log line's request is Slurm's own; the digest's copy only for
	 * a line written before the log had it */
	if (ju_num(f, "mem_req_mb", &v) && v >= 0)
		u->mem_req_mb = v;
}

void lwm2_usage_of_line(const struct lwm2_logline *l, struct lwm2_usage *u)
{
	usage_of_line(l, u, false, NULL);
}

void lwm2_usage_of_walked_line(const struct lwm2_logline *l, struct lwm2_usage *u,
                               const char *executables)
{
	usage_of_line(l, u, true, executables);
}

/* The value at p (within end) parsed alone: a small one, such as a step's
 * exe or processes, without building the step around it. */
static json_object *value_at(const char *p, const char *end)
{
	return p ? lwm2_json_parse_at(p, end) : NULL;
}

void lwm2_usage_steps(const struct lwm2_logline *l, char *exe, size_t len, bool *batch)
{
	const char *a = l->digest ? lwm2_logline_member(l, LWM2_KEY_STEPS) : NULL, *p, *e, *v;
	int64_t best = -1;

	*batch = false;
	/* the steps walked as text: parsing the array into objects costs as
	 * much as the rest of the line */
	for (p = a && *a == '[' ? a + 1 : NULL; p; p = e) {
		struct lwm2_json_members step;
		json_object *name, *procs;
		const char *vend;
		int64_t n, id;

		p = lwm2_json_skip_ws(p, l->end);
		/* a step's members indexed on the way to its end: one walk
		 * for its end and the members read */
		if (p >= l->end || *p == ']' || !(e = lwm2_json_span_indexed(&step, p, l->end)))
			break;
		if (*p == '{') {
			v = lwm2_json_indexed_member(&step, p, e, LWM2_KEY_STEP_ID);
			if (v && lwm2_parse_i64(v, &vend, 0, INT64_MAX, &id) == 0 &&
			    id == LWM2_STEP_BATCH)
				*batch = true;
			name = value_at(lwm2_json_indexed_member(&step, p, e, LWM2_KEY_EXE), e);
			procs =
			    value_at(lwm2_json_indexed_member(&step, p, e, LWM2_KEY_PROCESSES), e);
			n = procs && json_object_is_type(procs, json_type_int)
			        ? json_object_get_int64(procs)
			        : 0;
			if (name && json_object_is_type(name, json_type_string) && n > best) {
				best = n;
				snprintf(exe, len, "%s", json_object_get_string(name));
			}
			json_object_put(name);
			json_object_put(procs);
		}
		e = lwm2_json_skip_ws(e, l->end);
		if (e >= l->end || *e != ',')
			break;
		e++;
	}
	if (best < 0)
		snprintf(exe, len, "%s",
		         ju_str(l->fields, "name") ? ju_str(l->fields, "name") : "");
}

void lwm2_usage_exe(const struct lwm2_logline *l, char *out, size_t len)
{
	bool batch;

	lwm2_usage_steps(l, out, len, &batch);
}

void lwm2_usage_app(const struct lwm2_logline *l, char *out, size_t len)
{
	const char *a, *x;
	json_object *e;

	out[0] = '\0';
	if (l->digest) {
		a = lwm2_logline_member(l, LWM2_KEY_APPLICATION);
		x = a && *a == '{' ? lwm2_json_member(a, l->end, LWM2_KEY_EXE) : NULL;
		e = x ? lwm2_json_parse_at(x, l->end) : NULL;
		if (e && json_object_is_type(e, json_type_string))
			snprintf(out, len, "%s", json_object_get_string(e));
		json_object_put(e);
		if (out[0])
			return;
	}
	lwm2_usage_exe(l, out, len);
}

void lwm2_usage_add(struct lwm2_usage_sum *s, const struct lwm2_usage *u, double frac)
{
	s->jobs++;
	s->req_core_h += u->req_core_h * frac;
	if (!isnan(u->used_core_h)) {
		s->measured++;
		s->meas_req_h += u->req_core_h * frac;
		s->used_core_h += u->used_core_h * frac;
	}
	if (!isnan(u->mem_req_mb) && !isnan(u->mem_peak_mb)) {
		s->mem_jobs++;
		s->mem_req_mb += u->mem_req_mb * frac;
		s->mem_peak_mb += u->mem_peak_mb * frac;
	}
}

double lwm2_usage_waste(const struct lwm2_usage_sum *s)
{
	return s->measured ? s->meas_req_h - s->used_core_h : NAN;
}

double lwm2_usage_efficiency(const struct lwm2_usage_sum *s)
{
	return s->measured && s->meas_req_h > 0 ? 100.0 * s->used_core_h / s->meas_req_h : NAN;
}

static json_object *jnum(double v)
{
	return isnan(v) ? NULL : ju_double(v);
}

json_object *lwm2_usage_json(const struct lwm2_usage_sum *s)
{
	json_object *o = json_object_new_object();

	ju_add(o, "requested_core_hours", ju_double(s->req_core_h));
	ju_add(o, "measured_jobs", ju_u64(s->measured));
	ju_add(o, "used_core_hours", s->measured ? ju_double(s->used_core_h) : NULL);
	ju_add(o, "wasted_core_hours", jnum(lwm2_usage_waste(s)));
	ju_add(o, "efficiency_pct", jnum(lwm2_usage_efficiency(s)));
	ju_add(o, "mem_jobs", ju_u64(s->mem_jobs));
	ju_add(o, "mem_req_mb", s->mem_jobs ? ju_double(s->mem_req_mb) : NULL);
	ju_add(o, "mem_peak_mb", s->mem_jobs ? ju_double(s->mem_peak_mb) : NULL);
	ju_add(o, "memory", json_object_new_string(s->mem_jobs ? "measured" : "not measured"));
	return o;
}

static int table_grow(struct lwm2_usage_table *t)
{
	size_t nh = t->hcap ? 2 * t->hcap : 256;
	size_t *h = calloc(nh, sizeof(*h));

	if (!h)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = lwm2_strhash(t->g[i].name) & (nh - 1);

		while (h[k])
			k = (k + 1) & (nh - 1);
		h[k] = i + 1;
	}
	free(t->htab);
	t->htab = h;
	t->hcap = nh;
	return 0;
}

int lwm2_usage_table_add(struct lwm2_usage_table *t, const char *name, const struct lwm2_usage *u)
{
	size_t k;

	if (!name || !*name)
		name = "(none)";
	/* at most half full: probes stay short */
	if (2 * (t->n + 1) > t->hcap && table_grow(t) < 0)
		return -1;
	for (k = lwm2_strhash(name) & (t->hcap - 1); t->htab[k]; k = (k + 1) & (t->hcap - 1))
		if (!strcmp(t->g[t->htab[k] - 1].name, name)) {
			lwm2_usage_add(&t->g[t->htab[k] - 1].s, u, 1.0);
			return 0;
		}
	if (LWM2_GROW(t->g, t->n, t->cap, 64) < 0)
		return -1;
	memset(&t->g[t->n], 0, sizeof(t->g[t->n]));
	if (!(t->g[t->n].name = strdup(name)))
		return -1;
	lwm2_usage_add(&t->g[t->n].s, u, 1.0);
	t->htab[k] = ++t->n;
	return 0;
}

static int cmp_waste(const void *a, const void *b)
{
	const struct lwm2_usage_group *x = *(struct lwm2_usage_group *const *)a,
	                              *y = *(struct lwm2_usage_group *const *)b;
	double wx = lwm2_usage_waste(&x->s), wy = lwm2_usage_waste(&y->s);

	if (isnan(wx) != isnan(wy))
		return isnan(wx) ? 1 : -1;
	if (!isnan(wx) && wx != wy)
		return wx > wy ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct lwm2_usage_group **lwm2_usage_table_ranked(const struct lwm2_usage_table *t)
{
	struct lwm2_usage_group **v = malloc((t->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		v[i] = &t->g[i];
	if (t->n > 1)
		qsort(v, t->n, sizeof(*v), cmp_waste);
	return v;
}

void lwm2_usage_table_free(struct lwm2_usage_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->g[i].name);
	free(t->g);
	free(t->htab);
	memset(t, 0, sizeof(*t));
}
