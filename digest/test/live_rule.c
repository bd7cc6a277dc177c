/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stuck and idle rule: what one rank did between two looks, the
 * verdict over a job's ranks, and how long a verdict must last.
 */
#include "live.h"
#include "tap.h"

#include <string.h>

#define S 1000000000LL

/* A rank at time t (seconds) with cumulative values. */
static struct lwm2_live_rank rk(int pid, double t, double cpu_s, uint64_t s_comp, uint64_t s_mpi,
                                uint64_t calls, uint64_t mbytes, uint64_t iobytes)
{
	struct lwm2_live_rank r;

	memset(&r, 0, sizeof(r));
	strcpy(r.node, "n1");
	r.pid = pid;
	r.update_ns = (int64_t)(t * S);
	r.cpu_us = (uint64_t)(cpu_s * 1e6);
	r.samples[LWM2_EARMARK_compute] = s_comp;
	r.samples[LWM2_EARMARK_mpi] = s_mpi;
	r.mpi_calls = calls;
	r.mpi_bytes = mbytes;
	r.io_bytes = iobytes;
	return r;
}

static enum lwm2_live_state state(const struct lwm2_live_rule *rule, struct lwm2_live_rank a,
                                  struct lwm2_live_rank b, struct lwm2_live_delta *d)
{
	lwm2_live_delta(rule, &a, &b, d);
	return d->state;
}

int main(void)
{
	struct lwm2_live_rule rule;
	struct lwm2_live_delta d, ds[3];
	struct lwm2_live_track t = {0};
	bool judged;

	lwm2_live_rule_defaults(&rule);
	is_int(rule.stuck_s, 1800, "default: 30 minutes before a job is reported");

	/* one rank, one window of 10 s */
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 5, 100, 0), rk(1, 10, 10, 100, 1000, 5, 100, 0), &d),
	       LWM2_LIVE_MPI_WAIT, "polling in MPI, no call completed, no byte: mpi-wait");
	ok(d.cpu > 0.99 && d.cpu < 1.01, "its CPU is one core (%.3f)", d.cpu);
	ok(d.mpi_share > 0.9, "its samples are in MPI (%.3f)", d.mpi_share);
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 5, 100, 0), rk(1, 10, 10, 100, 1000, 6, 100, 0), &d),
	       LWM2_LIVE_BUSY, "one MPI call completed: busy");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 5, 100, 0), rk(1, 10, 10, 100, 1000, 5, 164, 0), &d),
	       LWM2_LIVE_BUSY, "bytes moved: busy");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 0, 0, 0), rk(1, 10, 0.01, 0, 0, 0, 0, 0), &d),
	       LWM2_LIVE_IDLE, "no CPU, no I/O, no MPI: idle (sleeping, blocked in read)");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 0, 0, 0), rk(1, 10, 0.01, 0, 0, 0, 0, 4096), &d),
	       LWM2_LIVE_BUSY, "I/O bytes: busy");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 0, 0, 0), rk(1, 10, 10, 1000, 0, 0, 0, 0), &d),
	       LWM2_LIVE_BUSY, "computing without MPI or I/O: busy");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 0, 0, 0), rk(1, 10, 10, 500, 500, 0, 0, 0), &d),
	       LWM2_LIVE_BUSY, "half the samples in MPI, half computing: busy");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 0, 0, 0), rk(1, 0, 10, 1000, 0, 0, 0, 0), &d),
	       LWM2_LIVE_UNKNOWN, "no newer record: unknown");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 0, 0, 0), rk(2, 10, 10, 1000, 0, 0, 0, 0), &d),
	       LWM2_LIVE_UNKNOWN, "another process: unknown");
	is_int(state(&rule, rk(1, 0, 0, 0, 0, 0, 0, 0), rk(1, 10, 0.5, 0, 0, 0, 0, 0), &d),
	       LWM2_LIVE_BUSY, "5 %% of a core, no sampling: not idle");

	/* the job */
	lwm2_live_delta(&rule, (struct lwm2_live_rank[]){rk(1, 0, 0, 0, 0, 0, 0, 0)},
	                (struct lwm2_live_rank[]){rk(1, 10, 10, 0, 1000, 0, 0, 0)}, &ds[0]);
	lwm2_live_delta(&rule, (struct lwm2_live_rank[]){rk(2, 0, 0, 0, 0, 0, 0, 0)},
	                (struct lwm2_live_rank[]){rk(2, 10, 10, 0, 1000, 0, 0, 0)}, &ds[1]);
	lwm2_live_delta(&rule, (struct lwm2_live_rank[]){rk(3, 0, 0, 0, 0, 0, 0, 0)},
	                (struct lwm2_live_rank[]){rk(3, 10, 0, 0, 0, 0, 0, 0)}, &ds[2]);
	is_int(lwm2_live_judge(&rule, ds, 3, 1, &judged), LWM2_VERDICT_STUCK_MPI,
	       "two ranks in MPI waits and an idle batch shell: stuck in MPI");
	ok(judged, "the window is judged");
	is_int(lwm2_live_judge(&rule, ds + 2, 1, 1, &judged), LWM2_VERDICT_IDLE,
	       "only idle ranks: idle");
	ds[1].state = LWM2_LIVE_BUSY;
	is_int(lwm2_live_judge(&rule, ds, 3, 1, &judged), LWM2_VERDICT_NONE,
	       "one busy rank: nothing to report");
	ds[1].state = LWM2_LIVE_UNKNOWN;
	is_int(lwm2_live_judge(&rule, ds, 3, 1, &judged), LWM2_VERDICT_NONE,
	       "a rank without news: no verdict");
	ok(!judged, "and the window is not judged");
	is_int(lwm2_live_judge(&rule, ds, 0, 1, &judged), LWM2_VERDICT_NONE,
	       "no ranks: no verdict");

	/* busy threads against cpus-per-task */
	ds[0].state = ds[1].state = LWM2_LIVE_BUSY;
	ds[0].cpu = ds[1].cpu = 1.0;
	is_int(lwm2_live_judge(&rule, ds, 2, 8, &judged), LWM2_VERDICT_UNDERUSED,
	       "1 busy thread of 8 cpus per task: underused");
	is_int(lwm2_live_judge(&rule, ds, 2, 4, &judged), LWM2_VERDICT_NONE,
	       "1 of 4 is the ratio 0.25 itself: not underused");
	is_int(lwm2_live_judge(&rule, ds, 2, 1, &judged), LWM2_VERDICT_NONE,
	       "cpus-per-task 1: not judged for threads");

	/* how long */
	rule.stuck_s = 60;
	ok(!lwm2_live_track_update(&rule, &t, LWM2_VERDICT_STUCK_MPI, true, 1000, 1030),
	   "stuck for 30 s of 60: not yet");
	is_int(t.since, 1000, "since the start of its first window");
	ok(!lwm2_live_track_update(&rule, &t, LWM2_VERDICT_NONE, false, 1030, 1050),
	   "an unjudged window: not reported");
	is_int(t.since, 1000, "and the verdict stands");
	ok(lwm2_live_track_update(&rule, &t, LWM2_VERDICT_STUCK_MPI, true, 1030, 1060),
	   "stuck for 60 s: reported");
	ok(!lwm2_live_track_update(&rule, &t, LWM2_VERDICT_IDLE, true, 1060, 1100),
	   "now idle: a new verdict starts its own time");
	is_int(t.since, 1060, "since its own first window");
	ok(!lwm2_live_track_update(&rule, &t, LWM2_VERDICT_NONE, true, 1100, 1200),
	   "busy again: cleared");
	is_int(t.since, 0, "no verdict since");

	/* the waste mail: 8 cores for 2 h are 57600 core-seconds */
	{
		struct lwm2_live_rule w;
		double eff;

		lwm2_live_rule_defaults(&w);
		ok(!lwm2_live_waste_due(&w, 0, 8, 7200, false, &eff),
		   "waste mail: off by default, even for a job that used nothing");
		ok(eff == 0, "and the efficiency still told: 0 %%");
		w.waste_mail = true;
		ok(lwm2_live_waste_due(&w, 5000, 8, 7200, false, &eff),
		   "8.7 %% of 8 cores for 2 h, below 10 %%: due");
		ok(eff > 8.68 && eff < 8.69, "efficiency: 5000 s of CPU over 57600 s");
		ok(!lwm2_live_waste_due(&w, 5760, 8, 7200, false, &eff),
		   "exactly 10 %%: not below the threshold, not due");
		ok(!lwm2_live_waste_due(&w, 5000, 8, 7200, true, &eff),
		   "a job already mailed: never a second mail");
		ok(!lwm2_live_waste_due(&w, 0, 8, 3599, false, &eff),
		   "running 3599 s of the 3600 s default: not judged yet");
		ok(lwm2_live_waste_due(&w, 0, 8, 3600, false, &eff), "3600 s: judged, due");
		w.waste_after_s = 600;
		w.waste_efficiency = 50;
		ok(lwm2_live_waste_due(&w, 500, 2, 600, false, &eff),
		   "the site's own threshold and time: 500 s of 2 x 600 s is below 50 %%");
		ok(!lwm2_live_waste_due(&w, 0, 0, 7200, false, &eff) && eff == -1,
		   "no allocated cores known: not due, no efficiency");
		ok(!lwm2_live_waste_due(&w, 0, 8, 0, false, &eff) && eff == -1,
		   "not running yet: not due");
	}
	return done_testing();
}
