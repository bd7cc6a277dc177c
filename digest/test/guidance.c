/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guidance thresholds live in one C array and are documented in one
 * table of doc/digest-schema.md: every rule must appear there with exactly
 * its conditions, and the table must hold no rule the code lacks.
 */
#include "lwm2_render.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void num(char *buf, size_t len, double v)
{
	if (v == (double)(long long)v && v < 1e15)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%g", v);
}

/* The condition as the documentation writes it. */
static void cond_text(const struct lwm2_cond *c, char *buf, size_t len)
{
	const char *m = lwm2_metric_ids[c->metric];
	char v[32];

	num(v, sizeof(v), c->value);
	switch (c->kind) {
	case LWM2_COND_NONE:
		snprintf(buf, len, "%s", "");
		break;
	case LWM2_COND_AVG_GT:
		snprintf(buf, len, "avg(%s) > %s", m, v);
		break;
	case LWM2_COND_AVG_LT:
		snprintf(buf, len, "avg(%s) < %s", m, v);
		break;
	case LWM2_COND_MAX_GT:
		snprintf(buf, len, "max(%s) > %s", m, v);
		break;
	case LWM2_COND_SPREAD_GT:
		snprintf(buf, len, "spread(%s) > %s", m, v);
		break;
	case LWM2_COND_AVG_LT_CPUS:
		snprintf(buf, len, "avg(%s) < %s × cpus_per_task", m, v);
		break;
	case LWM2_COND_AVG_LT_REF:
		snprintf(buf, len, "avg(%s) < %s × avg(%s)", m, v, lwm2_metric_ids[c->ref]);
		break;
	case LWM2_COND_AVG_GT_CPUS:
		snprintf(buf, len, "avg(%s) > %s × cpus_per_task", m, v);
		break;
	}
}

/* The preconditions as the documentation writes them. */
static void pre_text(const struct lwm2_pre *p, char *buf, size_t len)
{
	char v[32];
	size_t k = 0;

	buf[0] = '\0';
#define ADD(...)                                                                                   \
	do {                                                                                       \
		if (k && k < len)                                                                  \
			k += (size_t)snprintf(buf + k, len - k, ", ");                             \
		if (k < len)                                                                       \
			k += (size_t)snprintf(buf + k, len - k, __VA_ARGS__);                      \
	} while (0)
	if (p->mpi)
		ADD("MPI job");
	if (p->min_procs > 1)
		ADD("≥ %u %sprocesses", p->min_procs, p->mpi ? "MPI " : "");
	if (p->min_duration_s > 0) {
		num(v, sizeof(v), p->min_duration_s);
		ADD("run ≥ %s s", v);
	}
	if (p->min_bytes > 0) {
		num(v, sizeof(v), p->min_bytes);
		ADD("volume ≥ %s B", v);
	}
	if (!k)
		snprintf(buf, len, "always");
#undef ADD
}

int main(void)
{
	const char *srcdir = getenv("srcdir");
	char path[1024], line[1024];
	FILE *f;
	size_t rows = 0;
	char *doc = NULL;
	size_t doclen = 0;

	snprintf(path, sizeof(path), "%s/../doc/digest-schema.md", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	if (!f) {
		ok(0, "open %s", path);
		return done_testing();
	}
	{
		FILE *m = open_memstream(&doc, &doclen);
		while (fgets(line, sizeof(line), f)) {
			fputs(line, m);
			if (!strncmp(line, "| `", 3) && strstr(line, "-") &&
			    strchr(line + 3, '`')) {
				/* a rule row: "| `id` | cond | cond | tool |" */
				char id[64];
				if (sscanf(line, "| `%63[a-z0-9-]`", id) == 1 && strchr(id, '-')) {
					bool known = false;
					for (size_t r = 0; r < lwm2_nguidance_rules; r++)
						known |= !strcmp(lwm2_guidance_rules[r].id, id);
					ok(known, "documented rule %s exists in the code", id);
					rows++;
				}
			}
		}
		fclose(m);
	}
	fclose(f);
	is_int((int)rows, (int)lwm2_nguidance_rules, "one table row per rule");
	for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
		const struct lwm2_guidance_rule *g = &lwm2_guidance_rules[r];
		char c0[128], c1[128], pre[160], want[600];
		pre_text(&g->pre, pre, sizeof(pre));
		cond_text(&g->cond[0], c0, sizeof(c0));
		cond_text(&g->cond[1], c1, sizeof(c1));
		snprintf(want, sizeof(want), "| `%s` | %s | %s | %s |", g->id, pre, c0, c1);
		if (!c1[0])
			snprintf(want, sizeof(want), "| `%s` | %s | %s | |", g->id, pre, c0);
		ok(strstr(doc, want) != NULL, "documented as: %s", want);
	}
	free(doc);
	return done_testing();
}
