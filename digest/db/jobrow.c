/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One job of jobcomp/lwm2's log as the site's questions need it
 * (jobrow.h): the log line's fields, then the digest's job-wide figures,
 * the guidance rules that fired, lwm2's own cost and the names a job is
 * grouped by.
 */
#include "config.h"

#include "jobrow.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonutil.h"
#include "lwm2_digest.h"
#include "lwm2_keys.h"
#include "lwm2_version.h"
#include "numparse.h"
#include "errmsg.h"

void lwm2_jobrow_month(int64_t end, char *out, size_t len)
{
	time_t tt = (time_t)end;
	struct tm tm;

	if (end > 0 && localtime_r(&tt, &tm))
		strftime(out, len, "%Y-%m", &tm);
	else
		snprintf(out, len, "(none)");
}

void lwm2_jobrow_fields(const struct lwm2_logline *l, struct lwm2_jobrow *j)
{
	json_object *f = l->fields;

	memset(j, 0, sizeof(*j));
	j->job_id = ju_int_or(f, "job_id", 0);
	j->uid = ju_int_or(f, "uid", -1);
	j->cluster = ju_str(f, "cluster");
	j->user = ju_str(f, "user");
	j->account = ju_str(f, "account");
	j->partition = ju_str(f, "partition");
	j->qos = ju_str(f, "qos");
	j->state = ju_str(f, "state");
	j->nodes = ju_str(f, "nodes");
	j->name = ju_str(f, "name");
	j->submit = ju_int_or(f, "submit", 0);
	j->start = ju_int_or(f, "start", 0);
	j->end = ju_int_or(f, "end", 0);
	j->cpus = ju_int_or(f, "cpus", 0);
	j->node_count = (uint32_t)ju_int_or(f, "node_count", 0);
	if (ju_get(f, "array_task_id", json_type_int) && ju_get(f, "array_job_id", json_type_int))
		snprintf(j->id, sizeof(j->id), "%" PRId64 "_%" PRId64,
		         ju_int_or(f, "array_job_id", 0), ju_int_or(f, "array_task_id", 0));
	else if (ju_get(f, "het_job_offset", json_type_int) &&
	         ju_get(f, "het_job_id", json_type_int))
		snprintf(j->id, sizeof(j->id), "%" PRId64 "+%" PRId64,
		         ju_int_or(f, "het_job_id", 0), ju_int_or(f, "het_job_offset", 0));
	else
		snprintf(j->id, sizeof(j->id), "%" PRId64, j->job_id);
}

/* lwm2's own cost as the digest estimated it (lwm2(1), LWM2'S OWN COST);
 * digests made before lwm2 stated it have none. */
static void own_cost_of(const struct lwm2_logline *l, struct lwm2_jobrow *j)
{
	const char *oc = lwm2_logline_member(l, LWM2_KEY_LWM2_COST), *v;
	char *x;

	if (!oc || *oc != '{')
		return;
	if ((v = lwm2_json_member(oc, l->end, LWM2_KEY_SECONDS))) {
		j->own_s = strtod(v, &x);
		j->has_own = x != v && isfinite(j->own_s) && j->own_s >= 0;
	}
	if ((v = lwm2_json_member(oc, l->end, LWM2_KEY_COST_SHARE))) {
		j->own_pct = strtod(v, &x);
		j->has_own_pct = x != v && isfinite(j->own_pct) && j->own_pct >= 0;
	}
}

/* s as a group name: a byte below 0x20 or DEL as \xNN (a group name is
 * printed as a table cell), the rest as it is; cut to fit len. */
static void escape_name(char *out, size_t len, const char *s)
{
	size_t k = 0;

	for (; *s && k + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			k += (size_t)snprintf(out + k, len - k, "\\x%02x", c);
		else
			out[k++] = (char)c;
	}
	out[k] = '\0';
}

/* The job's main container image: the first of the digest's "containers"
 * (most CPU time), "(RUNTIME)" when its image is not known; "" (the group
 * "(none)") when no process ran in a container, or the digest is older
 * than containers in digests. */
static void main_image(const struct lwm2_logline *l, char *out, size_t len)
{
	const char *a = lwm2_logline_member(l, LWM2_KEY_CONTAINERS);
	json_object *arr = a && *a == '[' ? lwm2_json_parse_at(a, l->end) : NULL, *c = NULL;
	const char *im, *rt;

	out[0] = '\0';
	if (arr && json_object_is_type(arr, json_type_array) && json_object_array_length(arr))
		c = json_object_array_get_idx(arr, 0);
	im = c ? ju_str(c, LWM2_KEY_IMAGE) : NULL;
	rt = c ? ju_str(c, LWM2_KEY_RUNTIME) : NULL;
	if (im && *im) {
		escape_name(out, len, im);
	} else if (rt && *rt) {
		char r[4 * LWM2_CONTAINER_RUNTIME_LEN];

		escape_name(r, sizeof(r), rt);
		snprintf(out, len, "(%s)", r);
	}
	json_object_put(arr);
}

/* The digest's scope and job fields into j; -1 with err for a digest that
 * cannot be read. */
static int scope_of_line(const struct lwm2_logline *l, struct lwm2_jobrow *j,
                         const char **executables, char *err, size_t errlen)
{
	const char *v = lwm2_logline_member(l, LWM2_KEY_DIGEST_VERSION);
	const char *sc = lwm2_logline_member(l, LWM2_KEY_SCOPE), *jo, *vend;
	int64_t ver = 0;
	uint64_t u;

	/* no number, or beyond 64 bits: no such version */
	if (v && lwm2_parse_i64(v, &vend, INT64_MIN, INT64_MAX, &ver) < 0)
		ver = 0;
	if (lwm2_version_check("digest", ver, 1, LWM2_DIGEST_VERSION, err, errlen))
		return -1;
	if (!sc || lwm2_scope_from_text_member(&j->scope, sc, l->end, 0, LWM2_KEY_EXECUTABLES,
	                                       executables) < 0)
		return lwm2_errprintf(0, err, errlen, "the digest's scope is unreadable");
	lwm2_scope_upgrade(&j->scope, ver);
	/* the digest's job fields: only where the log line lacks them */
	if ((jo = lwm2_logline_member(l, LWM2_KEY_JOB)) && *jo == '{') {
		if ((v = lwm2_json_member(jo, l->end, LWM2_KEY_CPUS_PER_TASK)) &&
		    lwm2_parse_u64(v, &vend, 0, UINT32_MAX, &u) == 0)
			j->cpus_per_task = (uint32_t)u;
		if (j->start <= 0 && (v = lwm2_json_member(jo, l->end, LWM2_KEY_START)))
			j->start = strtoll(v, NULL, 10);
		if (j->end <= 0 && (v = lwm2_json_member(jo, l->end, LWM2_KEY_END)))
			j->end = strtoll(v, NULL, 10);
	}
	j->scope.cpus_per_task = j->cpus_per_task;
	j->digest = true;
	own_cost_of(l, j);
	return 0;
}

/* The job-wide figures the groups and --top take from the digest's
 * scope, and the guidance rules that fired. */
static void digest_values(struct lwm2_jobrow *j, int64_t procs, int64_t cpus)
{
	const struct lwm2_scope *s = &j->scope;
	uint32_t cpt = j->cpus_per_task;
	double cpp = cpt > 0 ? cpt : procs > 0 && cpus > 0 ? (double)cpus / (double)procs : 0;

	if ((j->has[LWM2_JR_MPI] = s->stat[LWM2_M_mpi_time].n > 0))
		j->v[LWM2_JR_MPI] = s->stat[LWM2_M_mpi_time].avg;
	if ((j->has[LWM2_JR_IO] = s->stat[LWM2_M_posix_io_time].n > 0))
		j->v[LWM2_JR_IO] = s->stat[LWM2_M_posix_io_time].avg;
	if ((j->has[LWM2_JR_TPC] = s->stat[LWM2_M_avg_threads].n > 0 && cpp > 0))
		j->v[LWM2_JR_TPC] = s->stat[LWM2_M_avg_threads].avg / cpp;
	if ((j->has[LWM2_JR_CPI] = s->stat[LWM2_M_cpi].n > 0))
		j->v[LWM2_JR_CPI] = s->stat[LWM2_M_cpi].avg;
	for (size_t r = 0; r < lwm2_nguidance_rules && r < 64; r++)
		if (lwm2_guidance_fires(&lwm2_guidance_rules[r], s))
			j->fired |= 1ull << r;
	/* a process without MPI has neither call: the job passed no message */
	j->has_mpi_calls = true;
	j->mpi_calls_per_s =
	    (s->stat[LWM2_M_mpi_p2p_freq].n ? s->stat[LWM2_M_mpi_p2p_freq].max : 0) +
	    (s->stat[LWM2_M_mpi_coll_freq].n ? s->stat[LWM2_M_mpi_coll_freq].max : 0);
}

/* A string member of the digest's application into out (its first line,
 * escaped as a group name); "" where absent. */
static void app_string(const struct lwm2_logline *l, const char *key, char *out, size_t len)
{
	const char *a = lwm2_logline_member(l, LWM2_KEY_APPLICATION);
	const char *x = a && *a == '{' ? lwm2_json_member(a, l->end, key) : NULL;
	json_object *e = x ? lwm2_json_parse_at(x, l->end) : NULL;

	out[0] = '\0';
	if (e && json_object_is_type(e, json_type_string)) {
		char line[LWM2_JOBROW_NAME_LEN];

		snprintf(line, sizeof(line), "%s", json_object_get_string(e));
		line[strcspn(line, "\n")] = '\0';
		escape_name(out, len, line);
	}
	json_object_put(e);
}

/* The model of the digest's first "processors" entry, its main
 * processor (processors.c), walked as text. */
static void main_cpu(const struct lwm2_logline *l, char *out, size_t len)
{
	const char *a = lwm2_logline_member(l, LWM2_KEY_PROCESSORS), *p, *e, *x;
	json_object *m;

	out[0] = '\0';
	if (!a || *a != '[')
		return;
	p = lwm2_json_skip_ws(a + 1, l->end);
	if (p >= l->end || *p != '{' || !(e = lwm2_json_span(p, l->end)) ||
	    !(x = lwm2_json_member(p, e, LWM2_KEY_MODEL)))
		return;
	if ((m = lwm2_json_parse_at(x, e)) && json_object_is_type(m, json_type_string))
		escape_name(out, len, json_object_get_string(m));
	json_object_put(m);
}

int lwm2_jobrow_digest(const struct lwm2_logline *l, struct lwm2_jobrow *j, unsigned want,
                       char *err, size_t errlen)
{
	int64_t cpus = j->cpus, procs = 0;
	const char *executables = NULL;

	if (l->digest) {
		if (scope_of_line(l, j, &executables, err, errlen) < 0)
			return -1;
		procs = (int64_t)j->scope.processes;
	}
	/* cores: Slurm's allocation where the log has it, else one per
	 * process (cpus_per_task each), else one per node */
	if (cpus <= 0)
		cpus = procs > 0 ? procs * (j->cpus_per_task > 1 ? j->cpus_per_task : 1)
		                 : j->node_count;
	/* requested core-hours as the site report counts them (usage.c),
	 * the scope's executables found on the walk above */
	if (l->digest)
		lwm2_usage_of_walked_line(l, &j->use, executables);
	else
		lwm2_usage_of_line(l, &j->use);
	if (j->digest)
		digest_values(j, procs, cpus);
	/* the application as the site report ranks it (usage.c) */
	if (want & LWM2_JR_WANT_APP)
		lwm2_usage_app(l, j->app, sizeof(j->app));
	if ((want & LWM2_JR_WANT_IMAGE) && l->digest)
		main_image(l, j->image, sizeof(j->image));
	/* the program of the largest step, and "batch" when the digest has
	 * the batch script's step, else "interactive" (salloc, or srun
	 * outside an allocation): one walk over the steps for both */
	if (want & (LWM2_JR_WANT_EXE | LWM2_JR_WANT_MODE)) {
		char exe[sizeof(j->exe)];
		bool batch;

		lwm2_usage_steps(l, exe, sizeof(exe), &batch);
		if (want & LWM2_JR_WANT_EXE)
			memcpy(j->exe, exe, sizeof(exe));
		if ((want & LWM2_JR_WANT_MODE) && l->digest)
			snprintf(j->mode, sizeof(j->mode), "%s", batch ? "batch" : "interactive");
	}
	if ((want & LWM2_JR_WANT_LANGUAGE) && l->digest) {
		app_string(l, LWM2_KEY_LANGUAGE, j->language, sizeof(j->language));
		app_string(l, LWM2_KEY_MPI_LIBRARY, j->mpi_library, sizeof(j->mpi_library));
	}
	if ((want & LWM2_JR_WANT_CPU) && l->digest)
		main_cpu(l, j->cpu, sizeof(j->cpu));
	return 0;
}
