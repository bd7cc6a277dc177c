/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running jobs: what `lwm2 top` shows and `lwm2 watch` judges.
 *
 * Both read the same thing: per rank, the values a rank record holds at
 * its last update (cumulative counters, CPU time, samples per earmark),
 * gathered from the nodes by `lwm2 snapshot` (cmd_snapshot.c).  Rank
 * records only move at slice ends and MPI time is only counted when a call
 * returns, so a rank blocked in MPI_Recv shows no MPI time at all in its
 * slices: what it is doing now is told by the difference of two
 * observations, its samples (the earmark a sample found) and CPU time.
 * The rule (live_rule.c) is pure and unit-tested.
 */
#ifndef LWM2_LIVE_H
#define LWM2_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lwm2_record.h"

/* One rank (process) at one observation. */
struct lwm2_live_rank {
	char node[64];
	int32_t rank; /* MPI rank, -1 without MPI */
	int32_t task;
	int32_t pid;
	uint32_t step_id;
	uint32_t flags;
	int64_t start_ns;
	int64_t update_ns; /* the record's last update */
	uint64_t cpu_us;   /* user + system */
	uint32_t threads_max;
	uint32_t period_us;
	uint64_t samples[LWM2_NEARMARKS];
	uint64_t mpi_calls; /* point-to-point + collective calls completed */
	uint64_t mpi_bytes; /* sent + received, point-to-point and collective */
	/* The sums by the digest's definitions (lwm2_sums.h) */
	uint64_t io_bytes;    /* read and written */
	uint64_t mpi_ns;      /* time in completed MPI calls, MPI-IO's included */
	uint64_t io_ns;       /* time in POSIX I/O calls */
	uint64_t read_bytes;  /* POSIX and asynchronous */
	uint64_t write_bytes; /* POSIX and asynchronous */
};

/* Fill the cumulative fields of o from a record (node name included). */
void lwm2_live_from_record(struct lwm2_live_rank *o, const struct lwm2_rank_record *r);

/* The site's thresholds (lwm2.conf Watch* keys). */
struct lwm2_live_rule {
	unsigned stuck_s;      /* WatchStuckTime: how long before a job is reported */
	double mpi_wait_share; /* a rank is in MPI waits when this share of its samples is */
	double idle_cpu;       /* a rank is idle below this many cores of CPU */
	double threads_ratio;  /* underused: busy threads < ratio x cpus-per-task */
	/* the waste mail, off unless the site turns it on: a job that has
	 * run WatchWasteAfter seconds using less than WatchWasteEfficiency
	 * percent of its allocated cores' time */
	bool waste_mail;         /* WatchWasteMail */
	double waste_efficiency; /* WatchWasteEfficiency, percent */
	unsigned waste_after_s;  /* WatchWasteAfter */
};
/* The rule of lwm2.conf's Watch* values (lwm2conf.h), or of their
 * defaults. */
struct lwm2_conf;
void lwm2_live_rule_from_conf(const struct lwm2_conf *f, struct lwm2_live_rule *r);
void lwm2_live_rule_defaults(struct lwm2_live_rule *r);

/* What one rank did between two observations. */
enum lwm2_live_state {
	LWM2_LIVE_UNKNOWN = 0, /* no newer record: nothing to judge */
	LWM2_LIVE_BUSY,
	LWM2_LIVE_MPI_WAIT, /* in MPI, no call completed, no byte moved */
	LWM2_LIVE_IDLE,     /* no CPU, no I/O, no MPI progress */
};
const char *lwm2_live_state_name(enum lwm2_live_state s);

struct lwm2_live_delta {
	double seconds; /* between the two record updates */
	double cpu;     /* cores used on average */
	double mpi_share;
	uint64_t mpi_calls, mpi_bytes, io_bytes;
	enum lwm2_live_state state;
};
void lwm2_live_delta(const struct lwm2_live_rule *rule, const struct lwm2_live_rank *before,
                     const struct lwm2_live_rank *now, struct lwm2_live_delta *d);

/* The verdict over every rank of a job for one window. */
enum lwm2_live_verdict {
	LWM2_VERDICT_NONE = 0, /* busy, or nothing to judge */
	LWM2_VERDICT_STUCK_MPI,
	LWM2_VERDICT_IDLE,
	LWM2_VERDICT_UNDERUSED, /* busy threads far below cpus-per-task */
};
const char *lwm2_live_verdict_name(enum lwm2_live_verdict v);

/*
 * Judge a job's window from the deltas of its ranks (n >= 1).  Stuck in MPI
 * when every judged rank is in MPI waits or idle and one at least in MPI
 * waits; idle when every one is idle; underused when the job is busy but
 * the average CPU of a rank stays below threads_ratio x cpus_per_task
 * (only judged for cpus_per_task >= 2).  A rank with state UNKNOWN makes
 * the window unjudged (NONE, *judged false): a node whose records did not
 * move tells nothing.
 */
enum lwm2_live_verdict lwm2_live_judge(const struct lwm2_live_rule *rule,
                                       const struct lwm2_live_delta *d, size_t n,
                                       uint32_t cpus_per_task, bool *judged);

/*
 * The persistence of a verdict across windows: since is when the current
 * verdict began (the start of its first window), 0 when none.  Returns
 * true when the verdict has lasted at least rule->stuck_s at window_end.
 */
struct lwm2_live_track {
	enum lwm2_live_verdict verdict;
	int64_t since; /* epoch seconds */
};
bool lwm2_live_track_update(const struct lwm2_live_rule *rule, struct lwm2_live_track *t,
                            enum lwm2_live_verdict v, bool judged, int64_t window_start,
                            int64_t window_end);

/*
 * Whether a running job gets the waste mail: the site turned it on, no
 * mail went out on the job yet (mailed), it has run at least
 * waste_after_s, and the CPU time of its processes (cpu_s) is below
 * waste_efficiency percent of its allocation (cores x running_s), the
 * efficiency `lwm2 stats` gives a job that ended.  *efficiency gets that
 * percentage, or -1 when it cannot be told (no cores, no running time).
 */
bool lwm2_live_waste_due(const struct lwm2_live_rule *rule, double cpu_s, uint32_t cores,
                         int64_t running_s, bool mailed, double *efficiency);

#endif /* LWM2_LIVE_H */
