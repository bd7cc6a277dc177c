/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Metrics of the job digest (the list of HOPSA D3.3, section 3.3, in its
 * order and units) and the text renderer with guidance.
 *
 * This part (liblwm2render.la) depends on nothing but libc: it is linked
 * into liblwm2.so, which every measured process loads, to print a
 * one-process digest at exit (LWM2_PRINT=1).  Output goes through a sink
 * callback or straight to a file descriptor; no stdio, no malloc, and no
 * locale-dependent formatting, so lwm2_render_rank() may run in a
 * destructor or after a fatal signal.
 *
 * The same renderer prints job digests (lwm2_digest_render in
 * lwm2_digest.h fills struct lwm2_scope from JSON and calls
 * lwm2_render_scope), so a user sees one layout and one set of guidance
 * texts whether the digest comes from one process or from 10,000.
 */
#ifndef LWM2_RENDER_H
#define LWM2_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lwm2_record.h"

/*
 * The metrics, in the seed's order.  X(id, group, unit, label).
 * Units: "s", "%", "B", "/s", "B/s", "" (a plain number).
 * The id is also the JSON key of the metric in node records and digests.
 */
#define LWM2_METRICS(X)                                                                            \
	X(duration, GENERAL, "s", "Duration (wall clock)")                                         \
	X(mpi_time, MPI, "%", "Time in MPI calls, without Init/Finalize")                          \
	X(mpi_init_time, MPI, "%", "Time in MPI_Init and MPI_Finalize")                            \
	X(mpi_p2p_time, MPI, "%", "Time in MPI point-to-point calls")                              \
	X(mpi_coll_time, MPI, "%", "Time in MPI collective calls")                                 \
	X(mpi_p2p_msg_size, MPI, "B", "Average size of point-to-point messages")                   \
	X(mpi_coll_sent_size, MPI, "B", "Average size of collective messages sent")                \
	X(mpi_coll_recv_size, MPI, "B", "Average size of collective messages received")            \
	X(mpi_p2p_freq, MPI, "/s", "Frequency of MPI point-to-point calls")                        \
	X(mpi_coll_freq, MPI, "/s", "Frequency of MPI collective calls")                           \
	X(mpi_p2p_rate, MPI, "B/s", "MPI point-to-point transfer rate")                            \
	X(mpi_coll_rate, MPI, "B/s", "MPI collective transfer rate")                               \
	X(mpiio_time, IO, "%", "Time in MPI file I/O calls")                                       \
	X(posix_io_time, IO, "%", "Time in POSIX file I/O calls")                                  \
	X(sync_time, IO, "%", "Time in fsync and fdatasync")                                       \
	X(bytes_written, IO, "B", "Data written to files")                                         \
	X(bytes_read, IO, "B", "Data read from files")                                             \
	X(write_bw, IO, "B/s", "Write bandwidth (time in writes and syncs)")                       \
	X(read_bw, IO, "B/s", "Read bandwidth")                                                    \
	X(thread_ratio, THREADS, "", "Average number of threads (all/main samples)")               \
	X(avg_threads, THREADS, "", "Threads busy on a CPU (average)")                             \
	X(threads_total, THREADS, "", "Total number of threads")                                   \
	X(cpi, SEQ, "", "Average cycles per instruction (CPI)")                                    \
	X(fp_fraction, SEQ, "%", "Floating-point share of all instructions")                       \
	X(fp_rate, SEQ, "/s", "Floating-point rate")                                               \
	X(l1_hit_ratio, SEQ, "%", "Level-1 data cache hit ratio")                                  \
	X(llc_miss_freq, SEQ, "/s", "Last-level cache miss frequency")                             \
	X(int_fraction, SEQ, "%", "Integer instructions among all instructions")                   \
	X(mem_fraction, SEQ, "%", "Loads and stores among all instructions")                       \
	X(l2_hit_ratio, SEQ, "%", "Level-2 data cache hit ratio")                                  \
	X(tlb_miss_freq, SEQ, "/s", "Data TLB miss frequency")                                     \
	X(cuda_time, CUDA, "%", "Time in CUDA calls")                                              \
	X(cuda_h2d_size, CUDA, "B", "Average data volume host to device")                          \
	X(cuda_d2h_size, CUDA, "B", "Average data volume device to host")                          \
	X(cuda_transfer_freq, CUDA, "/s", "Frequency of data transfers")

enum lwm2_metric {
#define LWM2_X_ENUM(id, group, unit, label) LWM2_M_##id,
	LWM2_METRICS(LWM2_X_ENUM)
#undef LWM2_X_ENUM
	    LWM2_NMETRICS
};

/* Sections of the digest, as the seed groups the metrics. */
enum lwm2_metric_group {
	LWM2_MG_GENERAL,
	LWM2_MG_MPI,
	LWM2_MG_IO,
	LWM2_MG_THREADS,
	LWM2_MG_SEQ,
	LWM2_MG_CUDA,
	LWM2_NMGROUPS
};

extern const char *const lwm2_metric_ids[LWM2_NMETRICS];
extern const char *const lwm2_metric_units[LWM2_NMETRICS];
extern const char *const lwm2_metric_labels[LWM2_NMETRICS];
extern const enum lwm2_metric_group lwm2_metric_groups[LWM2_NMETRICS];
extern const char *const lwm2_mgroup_titles[LWM2_NMGROUPS];

/* The metrics of the full digest's per-process table ("ranks", its
 * columns after step, node, rank and flags): the report's per-rank view
 * shows the same ones (job_ranks.c). */
#define LWM2_NRANK_METRICS 20
extern const int lwm2_rank_metrics[LWM2_NRANK_METRICS];

/* Index of a metric by id, -1 if unknown. */
int lwm2_metric_index(const char *id);

/*
 * Why a metric is missing: one text per cause, the only place these texts
 * are written (doc/digest-schema.md lists them).  LWM2_WHY_GROUP is
 * followed by the reason the library recorded for a group it could not
 * measure.  X(name, text).
 */
#define LWM2_WHYS(X)                                                                               \
	X(NO_WALL, "no run time recorded")                                                         \
	X(NOT_MPI, "not an MPI process")                                                           \
	X(NO_CUDA, "no CUDA calls")                                                                \
	X(GROUP, "not measured: ")                                                                 \
	X(HWC_NONE, "not measured: no hardware counters on this platform")                         \
	X(HWC_COUNTER, "not measured: counter not available on this platform")                     \
	X(HWC_L1_APART, "not measured: level-1 counters were not measured together")               \
	X(HWC_L2_APART, "not measured: level-2 counters were not measured together")               \
	X(HWC_NOT_COUNTED,                                                                         \
	  "not measured: no event was counted for it (LWM2_EVENTS, the platform)")                 \
	X(SAMPLING_OFF, "not measured: sampling was off")                                          \
	X(NO_MAIN_SAMPLES, "no samples of the main thread")                                        \
	X(OLD_RECORD, "not recorded by the lwm2 library that measured this process")               \
	X(NO_THREAD_COUNT, "no thread count recorded")                                             \
	X(NO_P2P_MSGS, "no point-to-point messages")                                               \
	X(NO_COLL_CALLS, "no collective calls")                                                    \
	X(NO_P2P_TIME, "no time in point-to-point calls")                                          \
	X(NO_COLL_TIME, "no time in collective calls")                                             \
	X(NO_WRITE_TIME, "no time in write or sync calls")                                         \
	X(NO_READ_TIME, "no time in read calls")                                                   \
	X(NO_H2D, "no host-to-device transfers")                                                   \
	X(NO_D2H, "no device-to-host transfers")                                                   \
	X(NO_PROCESSES, "no processes")

enum lwm2_why {
#define LWM2_X_ENUM(name, text) LWM2_WHY_##name,
	LWM2_WHYS(LWM2_X_ENUM)
#undef LWM2_X_ENUM
	    LWM2_NWHYS
};

extern const char *const lwm2_why_texts[LWM2_NWHYS];

/*
 * What the metrics of one process are computed from.  Filled from a rank
 * record (lwm2_proc_from_record) or from a process entry of a node record,
 * so that both paths compute the same numbers with the same code.
 */
struct lwm2_proc_values {
	uint64_t counters[LWM2_NCOUNTERS];
	/* counters the process's library did not have (an older build: its
	 * record or node record lacks them): not measured, not 0 */
	bool absent[LWM2_NCOUNTERS];
	uint64_t wall_ns;          /* end_ns - start_ns */
	uint64_t samples_total;    /* all earmarks, all threads */
	uint64_t samples_main;     /* samples of the main thread */
	bool has_samples_main;     /* false: the record predates samples_main */
	bool has_msg_counts;       /* false: the record predates message counts */
	uint32_t sample_period_us; /* 0: sampling off */
	uint32_t threads_total;
	uint32_t missing;                         /* bit per enum lwm2_group */
	const char *missing_reason[LWM2_NGROUPS]; /* may be NULL */
	uint32_t flags;                           /* enum lwm2_record_flag */
	/* the events the counter roles were counted with, as the record's
	 * hwc_events; NULL or "": not known (every role taken as counted) */
	const char *hwc_events;
};

void lwm2_proc_from_record(const struct lwm2_rank_record *r, struct lwm2_proc_values *pv);

/* One metric of one process: a value, or missing with the reason. */
struct lwm2_metric_value {
	bool valid;
	double value;
	char reason[LWM2_REASON_LEN + 48]; /* why not valid; "" when valid */
};

struct lwm2_metrics {
	struct lwm2_metric_value m[LWM2_NMETRICS];
};

/*
 * Compute every metric of one process.  A metric whose group was not
 * measured, or whose denominator is zero (no calls, no time), is not valid
 * and says why, e.g. "not measured: no hardware counters on this
 * platform" or "no point-to-point calls".
 */
void lwm2_metrics_compute(const struct lwm2_proc_values *pv, struct lwm2_metrics *out);

/*
 * One metric across the processes of a scope (job, step, node, process):
 * min/avg/max over the n processes where it was valid, and where min and
 * max are.  n == 0: missing, with the reason.
 */
struct lwm2_metric_stat {
	uint64_t n;
	double min, avg, max;
	int32_t min_rank, max_rank; /* MPI rank, else task id, else -1 */
	const char *min_node, *max_node;
	int32_t min_pid, max_pid;      /* 0: unknown */
	const char *min_exe, *max_exe; /* executable name; NULL: unknown */
	const char *reason;            /* when n == 0 */
};

/* A scope to render: what lwm2_render_scope needs and nothing more. */
struct lwm2_scope {
	const char *title; /* e.g. "job 123 step 0" or "process 4711" */
	uint64_t processes;
	uint64_t mpi_processes;
	uint64_t nodes;
	uint64_t incomplete;    /* processes that did not reach their end */
	bool partial;           /* data lost to a memory budget, or nodes missing */
	uint32_t cpus_per_task; /* allocated cores per process, 0 if unknown */
	uint32_t mpi_size;      /* MPI_COMM_WORLD's size when one rank is shown, else 0 */
	uint64_t io_uring;      /* processes that set up an io_uring (I/O partial) */
	uint64_t mmap_write;    /* processes that mapped files for writing */
	/* of the processes, those that started unmeasured, by reason (the
	 * order of LWM2_UNMEASURED_COUNTERS) */
	uint64_t unmeasured[LWM2_NUNMEASURED];
	struct lwm2_metric_stat stat[LWM2_NMETRICS];
	/* the events the counter roles were counted with ("role=EVENT ...",
	 * an event "A|B" where processes differed); "": not known */
	char hwc_events[LWM2_HWC_EVENTS_LEN];
};

/*
 * Guidance: one rule per row of lwm2_guidance_rules, the single table of
 * thresholds (documented in doc/digest-schema.md; the unit test keeps the
 * two in step).  A rule fires when all its conditions hold.
 */
enum lwm2_cond_kind {
	LWM2_COND_NONE = 0,
	LWM2_COND_AVG_GT,      /* avg > value */
	LWM2_COND_AVG_LT,      /* avg < value */
	LWM2_COND_MAX_GT,      /* max > value */
	LWM2_COND_SPREAD_GT,   /* (max - min) / max > value, at least two processes */
	LWM2_COND_AVG_LT_CPUS, /* avg < value * cpus_per_task, cpus_per_task known */
	LWM2_COND_AVG_LT_REF,  /* avg < value * avg of metric ref */
	LWM2_COND_AVG_GT_CPUS, /* avg > value * cpus_per_task, cpus_per_task known */
};

/*
 * Where a rule applies at all, checked before its conditions: an MPI job
 * (at least one MPI process), at least min_procs processes (MPI processes
 * when mpi is set), a run of at least min_duration_s (the longest process),
 * and at least min_bytes of file data in one process (the larger of
 * max(bytes_read) and max(bytes_written)).  Zero: no requirement.
 */
struct lwm2_pre {
	bool mpi;
	uint32_t min_procs;
	double min_duration_s;
	double min_bytes;
};

struct lwm2_cond {
	enum lwm2_cond_kind kind;
	int metric; /* enum lwm2_metric */
	double value;
	int ref; /* for LWM2_COND_AVG_LT_REF */
};

struct lwm2_guidance_rule {
	const char *id; /* stable name, e.g. "mpi-share" */
	struct lwm2_pre pre;
	struct lwm2_cond cond[2];
	const char *finding; /* what was seen */
	const char *meaning; /* what it may mean */
	const char *next;    /* which deeper tool to reach for */
};

extern const struct lwm2_guidance_rule lwm2_guidance_rules[];
extern const size_t lwm2_nguidance_rules;

/* Whether a rule's preconditions hold on a scope. */
bool lwm2_guidance_applies(const struct lwm2_guidance_rule *rule, const struct lwm2_scope *s);

/* Whether a rule fires on a scope: it applies and its conditions hold. */
bool lwm2_guidance_fires(const struct lwm2_guidance_rule *rule, const struct lwm2_scope *s);

/* Where rendered text goes; returns 0 or -1 (rendering then stops). */
typedef int (*lwm2_sink_fn)(void *arg, const char *buf, size_t len);

/* A sink that writes to the file descriptor (int)(intptr_t)arg, EINTR-safe. */
int lwm2_sink_fd(void *arg, const char *buf, size_t len);

enum lwm2_render_flags {
	LWM2_RENDER_NO_GUIDANCE = 1u << 0,
	LWM2_RENDER_NO_LOCATIONS = 1u << 1, /* omit "(rank 3 on n1)" */
	LWM2_RENDER_SINGLE = 1u << 2,       /* one process: a value, no min/avg/max */
};

/*
 * Render one scope: a heading, the metrics by section with units
 * (min/avg/max and locations, or the value for a single process, or the
 * reason a metric is missing), then the guidance that fires.  Returns 0,
 * or -1 when the sink failed.
 */
int lwm2_render_scope(const struct lwm2_scope *s, unsigned flags, lwm2_sink_fn sink, void *arg);

/*
 * "2 process(es) started unmeasured (no_preload 1, static 1)" into buf
 * (terminated, cut to len), empty where none did: the line every view of
 * a scope shows.  Returns the length written.
 */
size_t lwm2_render_unmeasured(const struct lwm2_scope *s, char *buf, size_t len);
static inline uint64_t lwm2_scope_unmeasured(const struct lwm2_scope *s)
{
	uint64_t n = 0;

	for (int i = 0; i < LWM2_NUNMEASURED; i++)
		n += s->unmeasured[i];
	return n;
}

/*
 * The one-process digest of a rank record, written to fd (what
 * LWM2_PRINT=1 prints at exit).  Returns 0, or -1 with errno from write.
 */
int lwm2_render_rank(const struct lwm2_rank_record *r, int fd);

/*
 * Format v with unit into buf: three significant digits with an SI prefix
 * for B, B/s and /s ("1.25 GB/s", "512 B", "3.20 k/s"), fixed for "%" and
 * "s" ("12.5 %", "93.1 s").  Signal-safe.  Returns buf.
 */
char *lwm2_format_value(double v, const char *unit, char *buf, size_t len);

/*
 * The counted event of role ("fp_ops") in events (the record's
 * hwc_events, or a scope's): its text at *at, *len bytes ("PAPI_FP_INS",
 * "A|B" where processes differed); false when events names no event for
 * the role.  No allocation (render/hwc_labels.c).
 */
bool lwm2_hwc_events_find(const char *events, const char *role, const char **at, size_t *len);

/*
 * The next "role=EVENT" item of an events text at *p (*p advanced past
 * it; items without '=' are skipped): the role at *role, *rl bytes, its
 * event or events ("A|B") at *ev, *el bytes, either maybe empty.  False
 * at the end.  The one reader of the format (render/hwc_labels.c).
 */
bool lwm2_hwc_events_next(const char **p, const char **role, size_t *rl, const char **ev,
                          size_t *el);

/* The counter roles (enum lwm2_hwc_role) metric m is computed from, into
 * roles; how many (0: none, the metric is no counter's). */
int lwm2_metric_roles(int m, int roles[3]);

/*
 * Metric m's label for a digest whose counter roles were counted with
 * events: the table's label where the events are what the roles usually
 * count or are not known, else one that names the event counted
 * ("perf::TASK-CLOCK per second"), so that no label says something else
 * was counted.  Into buf (returned); signal-safe.
 */
const char *lwm2_metric_label(const char *events, int m, char *buf, size_t len);

/*
 * Whether metric m is computed from a counter role without default events
 * (integer operations, loads, stores, level 2, TLB): counted only where
 * the site or the user named an event for it, and so shown only where
 * some process has a value, not as "not measured" in every digest.
 */
bool lwm2_metric_on_request(int m);

#endif /* LWM2_RENDER_H */
