/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stuck and idle rule over two observations of a job's ranks. */
#include "live.h"
#include "lwm2_sums.h"
#include "lwm2conf.h"

#include <stdio.h>
#include <string.h>

void lwm2_live_rule_from_conf(const struct lwm2_conf *f, struct lwm2_live_rule *r)
{
	const struct lwm2_conf_value *v = f->v;

	r->stuck_s = (unsigned)v[LWM2_CONF_WatchStuckTime].num;
	r->mpi_wait_share = v[LWM2_CONF_WatchMpiWaitShare].frac;
	r->idle_cpu = v[LWM2_CONF_WatchIdleCpu].frac;
	r->threads_ratio = v[LWM2_CONF_WatchThreadsRatio].frac;
	r->waste_mail = v[LWM2_CONF_WatchWasteMail].yes;
	r->waste_efficiency = v[LWM2_CONF_WatchWasteEfficiency].frac;
	r->waste_after_s = (unsigned)v[LWM2_CONF_WatchWasteAfter].num;
}

void lwm2_live_rule_defaults(struct lwm2_live_rule *r)
{
	struct lwm2_conf f;

	/* without a file nothing but memory can fail: the rule stays zero */
	memset(r, 0, sizeof(*r));
	if (lwm2_conf_load(&f, NULL, 0, NULL, 0) == 0) {
		lwm2_live_rule_from_conf(&f, r);
		lwm2_conf_free(&f);
	}
}

/* The name of value v in a table indexed by the enum, or fallback. */
static const char *name_of(unsigned v, const char *const *names, size_t n, const char *fallback)
{
	return v < n && names[v] ? names[v] : fallback;
}

const char *lwm2_live_state_name(enum lwm2_live_state s)
{
	static const char *const names[] = {
	    [LWM2_LIVE_BUSY] = "busy",
	    [LWM2_LIVE_MPI_WAIT] = "mpi-wait",
	    [LWM2_LIVE_IDLE] = "idle",
	};

	return name_of((unsigned)s, names, sizeof(names) / sizeof(names[0]), "unknown");
}

const char *lwm2_live_verdict_name(enum lwm2_live_verdict v)
{
	static const char *const names[] = {
	    [LWM2_VERDICT_STUCK_MPI] = "stuck-in-mpi",
	    [LWM2_VERDICT_IDLE] = "idle",
	    [LWM2_VERDICT_UNDERUSED] = "underused",
	};

	return name_of((unsigned)v, names, sizeof(names) / sizeof(names[0]), "none");
}

void lwm2_live_from_record(struct lwm2_live_rank *o, const struct lwm2_rank_record *r)
{
	const uint64_t *c = r->counters;

	memset(o, 0, sizeof(*o));
	snprintf(o->node, sizeof(o->node), "%.*s", (int)sizeof(r->hostname), r->hostname);
	o->rank = r->mpi_rank;
	o->task = r->task_id;
	o->pid = r->pid;
	o->step_id = r->step_id;
	o->flags = r->flags;
	o->start_ns = r->start_ns;
	o->update_ns = r->end_ns;
	o->cpu_us = r->utime_us + r->stime_us;
	o->threads_max = r->threads_max;
	o->period_us = r->sample_period_us;
	memcpy(o->samples, r->samples, sizeof(o->samples));
	o->mpi_calls = c[LWM2_C_mpi_p2p_calls] + c[LWM2_C_mpi_coll_calls];
	o->mpi_bytes = c[LWM2_C_mpi_p2p_bytes_sent] + c[LWM2_C_mpi_p2p_bytes_recv] +
	               c[LWM2_C_mpi_coll_bytes_sent] + c[LWM2_C_mpi_coll_bytes_recv];
	/* The digest's definitions (lwm2_sums.h): MPI-IO's bytes and time
	 * reached the files through the POSIX calls counted here. */
	o->read_bytes = LWM2_SUM(c, lwm2_read_bytes_ids);
	o->write_bytes = LWM2_SUM(c, lwm2_write_bytes_ids);
	o->io_bytes = o->read_bytes + o->write_bytes;
	o->mpi_ns = LWM2_SUM(c, lwm2_mpi_time_ids);
	o->io_ns = LWM2_SUM(c, lwm2_posix_io_time_ids);
}

/* Counters only grow within one process; a smaller value is another
 * process at the same rank (a restart), judged as a fresh start. */
static uint64_t grew(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : b;
}

void lwm2_live_delta(const struct lwm2_live_rule *rule, const struct lwm2_live_rank *before,
                     const struct lwm2_live_rank *now, struct lwm2_live_delta *d)
{
	uint64_t s_all = 0, s_mpi;

	memset(d, 0, sizeof(*d));
	if (now->update_ns <= before->update_ns || now->pid != before->pid) {
		d->state = LWM2_LIVE_UNKNOWN;
		return;
	}
	d->seconds = (double)(now->update_ns - before->update_ns) / 1e9;
	d->cpu = (double)grew(before->cpu_us, now->cpu_us) / 1e6 / d->seconds;
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		s_all += grew(before->samples[e], now->samples[e]);
	s_mpi = grew(before->samples[LWM2_EARMARK_mpi], now->samples[LWM2_EARMARK_mpi]);
	d->mpi_share = s_all ? (double)s_mpi / (double)s_all : 0.0;
	d->mpi_calls = grew(before->mpi_calls, now->mpi_calls);
	d->mpi_bytes = grew(before->mpi_bytes, now->mpi_bytes);
	d->io_bytes = grew(before->io_bytes, now->io_bytes);
	if (d->mpi_calls || d->mpi_bytes || d->io_bytes)
		d->state = LWM2_LIVE_BUSY;
	else if (s_all && d->mpi_share >= rule->mpi_wait_share)
		d->state = LWM2_LIVE_MPI_WAIT;
	else if (d->cpu < rule->idle_cpu)
		d->state = LWM2_LIVE_IDLE;
	else
		d->state = LWM2_LIVE_BUSY;
}

enum lwm2_live_verdict lwm2_live_judge(const struct lwm2_live_rule *rule,
                                       const struct lwm2_live_delta *d, size_t n,
                                       uint32_t cpus_per_task, bool *judged)
{
	size_t wait = 0, idle = 0;
	double cpu = 0;

	*judged = false;
	if (n == 0)
		return LWM2_VERDICT_NONE;
	for (size_t i = 0; i < n; i++) {
		if (d[i].state == LWM2_LIVE_UNKNOWN)
			return LWM2_VERDICT_NONE;
		wait += d[i].state == LWM2_LIVE_MPI_WAIT;
		idle += d[i].state == LWM2_LIVE_IDLE;
		cpu += d[i].cpu;
	}
	*judged = true;
	if (idle == n)
		return LWM2_VERDICT_IDLE;
	if (wait + idle == n)
		return LWM2_VERDICT_STUCK_MPI;
	if (cpus_per_task >= 2 && cpu / (double)n < rule->threads_ratio * cpus_per_task)
		return LWM2_VERDICT_UNDERUSED;
	return LWM2_VERDICT_NONE;
}

bool lwm2_live_track_update(const struct lwm2_live_rule *rule, struct lwm2_live_track *t,
                            enum lwm2_live_verdict v, bool judged, int64_t window_start,
                            int64_t window_end)
{
	if (!judged) /* no news: the verdict so far stands, it does not grow */
		return false;
	if (v == LWM2_VERDICT_NONE) {
		t->verdict = v;
		t->since = 0;
		return false;
	}
	if (v != t->verdict || !t->since) {
		t->verdict = v;
		t->since = window_start;
	}
	return window_end - t->since >= (int64_t)rule->stuck_s;
}

bool lwm2_live_waste_due(const struct lwm2_live_rule *rule, double cpu_s, uint32_t cores,
                         int64_t running_s, bool mailed, double *efficiency)
{
	*efficiency = -1;
	if (!cores || running_s <= 0 || !(cpu_s >= 0))
		return false;
	*efficiency = 100.0 * cpu_s / ((double)cores * (double)running_s);
	/* the start of a job (staging in, a queue of short steps) is not
	 * judged: only a job that kept its allocation idle for a while */
	return rule->waste_mail && !mailed && running_s >= (int64_t)rule->waste_after_s &&
	       *efficiency < rule->waste_efficiency;
}
