/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plain job description: its state-file and log-line JSON. */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_jobcomp.h"
#include "lwm2_version.h"
#include "errmsg.h"

/*
 * The job's JSON, one entry a key in the order the log line has them:
 * where the value is and when it is written.  Both the writer and the
 * reader of the state file and the log line go through this table.
 */
enum jf_type {
	JF_STR,
	JF_U32,
	JF_I64,
	JF_U64,
	JF_BOOL,
	JF_EXIT,    /* exit_code as sacct prints it (written only) */
	JF_VERSION, /* the state file's version (written only) */
};
enum {
	JF_PROGRESS = 1, /* the state file's only */
	JF_ARRAY = 2,    /* written for an array task only */
	JF_HET = 4,      /* written for a het job component only */
	JF_SET = 8,      /* a request: an unknown one (0, false) is left out */
	JF_GPUS = 16,    /* written when known; known when read */
};
struct jf {
	const char *key;
	enum jf_type type;
	size_t off;
	unsigned when;
	uint32_t dflt; /* read when the key is absent */
};
#define F(key, type, field, when)                                                                  \
	{                                                                                          \
		key, type, offsetof(struct lwm2_jc_job, field), when, 0                            \
	}
#define FN(key, type, field, when)                                                                 \
	{                                                                                          \
		key, type, offsetof(struct lwm2_jc_job, field), when, LWM2_JC_NONE                 \
	}
static const struct jf fields[] = {
    F("cluster", JF_STR, cluster, 0),
    F("job_id", JF_U32, job_id, 0),
    F("array_job_id", JF_U32, array_job_id, JF_ARRAY),
    FN("array_task_id", JF_U32, array_task_id, JF_ARRAY),
    F("het_job_id", JF_U32, het_job_id, JF_HET),
    FN("het_job_offset", JF_U32, het_job_offset, JF_HET),
    F("user", JF_STR, user, 0),
    F("uid", JF_U32, uid, 0),
    F("gid", JF_U32, gid, 0),
    F("account", JF_STR, account, 0),
    F("partition", JF_STR, partition, 0),
    F("name", JF_STR, name, 0),
    F("nodes", JF_STR, nodes, 0),
    F("node_count", JF_U32, node_count, 0),
    F("cpus", JF_U32, total_cpus, 0),
    F("submit", JF_I64, submit, 0),
    F("start", JF_I64, start, 0),
    F("end", JF_I64, end, 0),
    F("state", JF_STR, state, 0),
    F("exit_code", JF_EXIT, exit_code, 0),
    F("exit_status", JF_U32, exit_code, 0),
    F("restart_count", JF_U32, restart_count, 0),
    /* the requests, under the names the site statistics read */
    F("time_limit_s", JF_U32, time_limit_s, JF_SET),
    F("time_unlimited", JF_BOOL, time_unlimited, JF_SET),
    F("cpus_per_task", JF_U32, cpus_per_task, JF_SET),
    F("mem_req_mb", JF_U64, mem_req_mb, JF_SET),
    F("mem_req_per_node_mb", JF_U64, mem_req_per_node_mb, JF_SET),
    F("gpus", JF_U32, gpus, JF_GPUS),
    F("state_version", JF_VERSION, job_id, JF_PROGRESS),
    F("queued", JF_I64, queued, JF_PROGRESS),
    F("admin_comment", JF_STR, admin_comment, JF_PROGRESS),
    F("logged", JF_BOOL, logged, JF_PROGRESS),
    F("acct_sent", JF_BOOL, acct_sent, JF_PROGRESS),
    F("attempts", JF_U32, attempts, JF_PROGRESS),
    F("next_try", JF_I64, next_try, JF_PROGRESS),
    F("acct_part", JF_STR, acct_part, JF_PROGRESS),
    F("acct_state", JF_U32, acct_state, JF_PROGRESS),
    F("confirmed", JF_BOOL, confirmed, JF_PROGRESS),
};
#undef F
#undef FN
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static void *field_at(const struct lwm2_jc_job *job, const struct jf *f)
{
	return (char *)job + f->off;
}

void lwm2_jc_job_free(struct lwm2_jc_job *job)
{
	if (!job)
		return;
	for (size_t i = 0; i < NFIELDS; i++)
		if (fields[i].type == JF_STR)
			free(*(char **)field_at(job, &fields[i]));
	free(job);
}

int lwm2_jc_job_file_name(const struct lwm2_jc_job *job, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%" PRIu32 ".%" PRId64 ".job", job->job_id, job->start);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

void lwm2_jc_exit_code_str(uint32_t exit_code, char *buf, size_t len)
{
	/* Slurm keeps a wait status: signal in the low bits, status above. */
	unsigned sig = exit_code & 0x7f, status = (exit_code >> 8) & 0xff;

	snprintf(buf, len, "%u:%u", status, sig);
}

static int add_str(json_object *o, const char *key, const char *val)
{
	json_object *v;

	if (!val)
		return 0;
	if (!(v = json_object_new_string(val)))
		return -1;
	return json_object_object_add(o, key, v);
}

static int add_int(json_object *o, const char *key, int64_t val)
{
	json_object *v = json_object_new_int64(val);

	if (!v)
		return -1;
	return json_object_object_add(o, key, v);
}

/* Whether f is written for job: the conditions of the table. */
static bool written(const struct lwm2_jc_job *job, const struct jf *f, bool with_progress)
{
	const void *p = field_at(job, f);

	if ((f->when & JF_PROGRESS) && !with_progress)
		return false;
	if ((f->when & JF_ARRAY) && job->array_task_id == LWM2_JC_NONE)
		return false;
	if ((f->when & JF_HET) && job->het_job_offset == LWM2_JC_NONE)
		return false;
	if ((f->when & JF_GPUS) && !job->gpus_known)
		return false;
	if (f->when & JF_SET)
		return f->type == JF_U64    ? *(const uint64_t *)p != 0
		       : f->type == JF_BOOL ? *(const bool *)p
		                            : *(const uint32_t *)p != 0;
	return true;
}

static int add_field(json_object *o, const struct lwm2_jc_job *job, const struct jf *f)
{
	const void *p = field_at(job, f);
	char ec[32];

	switch (f->type) {
	case JF_STR:
		return add_str(o, f->key, *(char *const *)p);
	case JF_U32:
		return add_int(o, f->key, *(const uint32_t *)p);
	case JF_I64:
		return add_int(o, f->key, *(const int64_t *)p);
	case JF_U64:
		return add_int(o, f->key, (int64_t) * (const uint64_t *)p);
	case JF_BOOL:
		return json_object_object_add(o, f->key, json_object_new_boolean(*(const bool *)p));
	case JF_EXIT:
		lwm2_jc_exit_code_str(*(const uint32_t *)p, ec, sizeof(ec));
		return add_str(o, f->key, ec);
	case JF_VERSION:
		return add_int(o, f->key, LWM2_JC_STATE_VERSION);
	}
	return -1;
}

json_object *lwm2_jc_job_to_json(const struct lwm2_jc_job *job, bool with_progress)
{
	json_object *o = json_object_new_object();
	int rc = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < NFIELDS; i++)
		if (written(job, &fields[i], with_progress))
			rc |= add_field(o, job, &fields[i]);
	if (rc) {
		json_object_put(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

static int get_str(json_object *o, const char *key, char **out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	if (!(*out = strdup(json_object_get_string(v))))
		return -1;
	return 0;
}

static int get_int(json_object *o, const char *key, int64_t *out, int64_t dflt)
{
	json_object *v;

	*out = dflt;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return -1;
	*out = json_object_get_int64(v);
	return 0;
}

static int get_u32(json_object *o, const char *key, uint32_t *out, uint32_t dflt)
{
	int64_t v;

	if (get_int(o, key, &v, dflt) < 0 || v < 0 || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int get_u64(json_object *o, const char *key, uint64_t *out)
{
	int64_t v;

	if (get_int(o, key, &v, 0) < 0 || v < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static bool get_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

int lwm2_jc_state_version(json_object *o, char *err, size_t errlen)
{
	int64_t v;

	if (!json_object_is_type(o, json_type_object) || get_int(o, "state_version", &v, 1) < 0)
		return lwm2_errprintf(0, err, errlen, "not a job");
	/* Only version 1 exists: when the layout changes, the previous
	 * version's up-conversion goes here, step by step up to this one. */
	return lwm2_version_check("state file", v, 1, LWM2_JC_STATE_VERSION, err, errlen);
}

static int get_field(json_object *o, struct lwm2_jc_job *job, const struct jf *f)
{
	void *p = field_at(job, f);

	if (f->when & JF_GPUS)
		job->gpus_known = json_object_object_get_ex(o, f->key, NULL);
	switch (f->type) {
	case JF_STR:
		return get_str(o, f->key, p);
	case JF_U32:
		return get_u32(o, f->key, p, f->dflt);
	case JF_I64:
		return get_int(o, f->key, p, 0);
	case JF_U64:
		return get_u64(o, f->key, p);
	case JF_BOOL:
		*(bool *)p = get_bool(o, f->key);
		return 0;
	default: /* written only */
		return 0;
	}
}

struct lwm2_jc_job *lwm2_jc_job_from_json(json_object *o)
{
	struct lwm2_jc_job *job;
	int rc = 0;

	if (!json_object_is_type(o, json_type_object)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(job = calloc(1, sizeof(*job))))
		return NULL;
	for (size_t i = 0; i < NFIELDS; i++)
		rc |= get_field(o, job, &fields[i]);
	if (rc || job->job_id == 0) {
		lwm2_jc_job_free(job);
		errno = EINVAL;
		return NULL;
	}
	return job;
}

uint32_t lwm2_jc_tres_gpus(const char *tres, bool *found)
{
	uint64_t untyped = 0, typed = 0;
	bool have_untyped = false;
	const char *p = tres;

	*found = tres != NULL;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);

		if (eq && len > 8 && strncmp(p, "gres/gpu", 8) == 0) {
			char *e;
			unsigned long long v = strtoull(eq + 1, &e, 10);
			if (e == eq + 1)
				v = 0;
			if (p + 8 == eq) {
				untyped = v;
				have_untyped = true;
			} else if (p[8] == ':') {
				typed += v;
			}
		}
		p = end ? end + 1 : NULL;
	}
	/* Slurm lists the untyped total beside the typed counts; summing
	 * both would count every GPU twice. */
	untyped = have_untyped ? untyped : typed;
	return untyped > UINT32_MAX ? UINT32_MAX : (uint32_t)untyped;
}

void lwm2_jc_job_requests(struct lwm2_jc_job *job, uint32_t time_limit_min, uint64_t pn_min_memory,
                          const char *tres_alloc, uint32_t cpus_per_task)
{
	uint64_t mem = pn_min_memory & ~LWM2_JC_MEM_PER_CPU;

	/* NO_VAL (0xfffffffe): unknown; INFINITE (0xffffffff): no limit at
	 * all, which the fit states as such.  So is one year: Slurm's
	 * backfill scheduler gives a job that asked for no limit, on a
	 * partition without one, the limit YEAR_MINUTES when it starts it
	 * (sacct then shows 365-00:00:00); no user asked for that limit. */
	bool unlimited = time_limit_min == 0xffffffffu || time_limit_min == LWM2_JC_YEAR_MINUTES;
	job->time_limit_s = !unlimited && time_limit_min && time_limit_min < 0xfffffffeu &&
	                            time_limit_min <= UINT32_MAX / 60
	                        ? time_limit_min * 60
	                        : 0;
	job->time_unlimited = unlimited;
	job->cpus_per_task = cpus_per_task && cpus_per_task < 0xfffe ? cpus_per_task : 0;
	job->mem_req_mb = job->mem_req_per_node_mb = 0;
	/* 0 (--mem=0, the whole node) and NO_VAL64 say nothing to fit. */
	if (mem && mem < (1ull << 40)) {
		if (pn_min_memory & LWM2_JC_MEM_PER_CPU) {
			if (job->total_cpus) {
				uint32_t nodes = job->node_count ? job->node_count : 1;
				job->mem_req_mb = mem * job->total_cpus;
				job->mem_req_per_node_mb = (job->mem_req_mb + nodes - 1) / nodes;
			}
		} else {
			job->mem_req_per_node_mb = mem;
			job->mem_req_mb = mem * (job->node_count ? job->node_count : 1);
		}
	}
	job->gpus = lwm2_jc_tres_gpus(tres_alloc, &job->gpus_known);
}
