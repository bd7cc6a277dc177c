/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plain job description: its state-file and log-line JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_jobcomp.h"
#include "lwm2_version.h"

void lwm2_jc_job_free(struct lwm2_jc_job *job)
{
	if (!job)
		return;
	free(job->cluster);
	free(job->user);
	free(job->account);
	free(job->partition);
	free(job->nodes);
	free(job->name);
	free(job->state);
	free(job->admin_comment);
	free(job->acct_part);
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

json_object *lwm2_jc_job_to_json(const struct lwm2_jc_job *job, bool with_progress)
{
	json_object *o = json_object_new_object();
	char ec[32];
	int rc = 0;

	if (!o)
		return NULL;
	lwm2_jc_exit_code_str(job->exit_code, ec, sizeof(ec));
	rc |= add_str(o, "cluster", job->cluster);
	rc |= add_int(o, "job_id", job->job_id);
	if (job->array_task_id != LWM2_JC_NONE) {
		rc |= add_int(o, "array_job_id", job->array_job_id);
		rc |= add_int(o, "array_task_id", job->array_task_id);
	}
	if (job->het_job_offset != LWM2_JC_NONE) {
		rc |= add_int(o, "het_job_id", job->het_job_id);
		rc |= add_int(o, "het_job_offset", job->het_job_offset);
	}
	rc |= add_str(o, "user", job->user);
	rc |= add_int(o, "uid", job->uid);
	rc |= add_int(o, "gid", job->gid);
	rc |= add_str(o, "account", job->account);
	rc |= add_str(o, "partition", job->partition);
	rc |= add_str(o, "name", job->name);
	rc |= add_str(o, "nodes", job->nodes);
	rc |= add_int(o, "node_count", job->node_count);
	rc |= add_int(o, "cpus", job->total_cpus);
	rc |= add_int(o, "submit", job->submit);
	rc |= add_int(o, "start", job->start);
	rc |= add_int(o, "end", job->end);
	rc |= add_str(o, "state", job->state);
	rc |= add_str(o, "exit_code", ec);
	rc |= add_int(o, "exit_status", job->exit_code);
	rc |= add_int(o, "restart_count", job->restart_count);
	/* The requests, under the names the site statistics read; an
	 * unknown one is left out rather than written as 0. */
	if (job->time_limit_s)
		rc |= add_int(o, "time_limit_s", job->time_limit_s);
	if (job->cpus_per_task)
		rc |= add_int(o, "cpus_per_task", job->cpus_per_task);
	if (job->mem_req_mb)
		rc |= add_int(o, "mem_req_mb", (int64_t)job->mem_req_mb);
	if (job->mem_req_per_node_mb)
		rc |= add_int(o, "mem_req_per_node_mb", (int64_t)job->mem_req_per_node_mb);
	if (job->gpus_known)
		rc |= add_int(o, "gpus", job->gpus);
	if (with_progress) {
		rc |= add_int(o, "state_version", LWM2_JC_STATE_VERSION);
		rc |= add_int(o, "queued", job->queued);
		rc |= add_str(o, "admin_comment", job->admin_comment);
		rc |= json_object_object_add(o, "logged", json_object_new_boolean(job->logged));
		rc |=
		    json_object_object_add(o, "acct_sent", json_object_new_boolean(job->acct_sent));
		rc |= add_int(o, "attempts", job->attempts);
		rc |= add_int(o, "next_try", job->next_try);
		rc |= add_str(o, "acct_part", job->acct_part);
		rc |= add_int(o, "acct_state", job->acct_state);
		rc |=
		    json_object_object_add(o, "confirmed", json_object_new_boolean(job->confirmed));
	}
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

	if (!json_object_is_type(o, json_type_object) || get_int(o, "state_version", &v, 1) < 0) {
		snprintf(err, errlen, "not a job");
		return -1;
	}
	/* Only version 1 exists: when the layout changes, the previous
	 * version's up-conversion goes here, step by step up to this one. */
	return lwm2_version_check("state file", v, 1, LWM2_JC_STATE_VERSION, err, errlen);
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
	rc |= get_u32(o, "job_id", &job->job_id, 0);
	rc |= get_u32(o, "array_job_id", &job->array_job_id, 0);
	rc |= get_u32(o, "array_task_id", &job->array_task_id, LWM2_JC_NONE);
	rc |= get_u32(o, "het_job_id", &job->het_job_id, 0);
	rc |= get_u32(o, "het_job_offset", &job->het_job_offset, LWM2_JC_NONE);
	rc |= get_u32(o, "uid", &job->uid, 0);
	rc |= get_u32(o, "gid", &job->gid, 0);
	rc |= get_u32(o, "node_count", &job->node_count, 0);
	rc |= get_u32(o, "cpus", &job->total_cpus, 0);
	rc |= get_u32(o, "exit_status", &job->exit_code, 0);
	rc |= get_u32(o, "restart_count", &job->restart_count, 0);
	rc |= get_u32(o, "attempts", &job->attempts, 0);
	rc |= get_u32(o, "acct_state", &job->acct_state, 0);
	rc |= get_u32(o, "time_limit_s", &job->time_limit_s, 0);
	rc |= get_u32(o, "cpus_per_task", &job->cpus_per_task, 0);
	rc |= get_u64(o, "mem_req_mb", &job->mem_req_mb);
	rc |= get_u64(o, "mem_req_per_node_mb", &job->mem_req_per_node_mb);
	job->gpus_known = json_object_object_get_ex(o, "gpus", NULL);
	rc |= get_u32(o, "gpus", &job->gpus, 0);
	rc |= get_int(o, "submit", &job->submit, 0);
	rc |= get_int(o, "start", &job->start, 0);
	rc |= get_int(o, "end", &job->end, 0);
	rc |= get_int(o, "queued", &job->queued, 0);
	rc |= get_int(o, "next_try", &job->next_try, 0);
	rc |= get_str(o, "cluster", &job->cluster);
	rc |= get_str(o, "user", &job->user);
	rc |= get_str(o, "account", &job->account);
	rc |= get_str(o, "partition", &job->partition);
	rc |= get_str(o, "name", &job->name);
	rc |= get_str(o, "nodes", &job->nodes);
	rc |= get_str(o, "state", &job->state);
	rc |= get_str(o, "admin_comment", &job->admin_comment);
	rc |= get_str(o, "acct_part", &job->acct_part);
	job->logged = get_bool(o, "logged");
	job->acct_sent = get_bool(o, "acct_sent");
	job->confirmed = get_bool(o, "confirmed");
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

	/* NO_VAL (0xfffffffe) and INFINITE (0xffffffff): no limit to fit. */
	job->time_limit_s =
	    time_limit_min && time_limit_min < 0xfffffffeu && time_limit_min <= UINT32_MAX / 60
	        ? time_limit_min * 60
	        : 0;
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
