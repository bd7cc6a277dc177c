/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The space-time grid of the seed (§3.2.5) at work: an index of the time
 * slices of many jobs, cells (node, slice) -> jobs and their slice
 * metrics, and the two rules that read it:
 *
 *   interference  for one finished job, the slices where its own rates
 *                 fell well below its own typical rate, and the other jobs
 *                 with the most I/O (any node: the file system is shared)
 *                 or the most MPI traffic (the same nodes) in those slices;
 *   sick nodes    over the jobs of a period, the nodes whose ranks were the
 *                 slowest of their job more often than chance allows.
 *
 * Shared by jobcomp/lwm2's worker (a bounded index of recent jobs, the
 * interference finding added to each new digest) and the `lwm2 grid` and
 * `lwm2 nodes` commands (any period of the JSON-lines log).  The
 * thresholds live here, in lwm2_interf_defaults and lwm2_nodes_defaults;
 * lwm2(1) documents them.
 */
#ifndef LWM2_GRID_H
#define LWM2_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* The values of a cell: one job's step on one node in one slice. */
enum lwm2_gm {
	LWM2_GM_WBYTES, /* bytes written (POSIX) */
	LWM2_GM_WNS,    /* time in writes and syncs */
	LWM2_GM_RBYTES, /* bytes read (POSIX) */
	LWM2_GM_RNS,    /* time in reads */
	LWM2_GM_MBYTES, /* MPI bytes sent and received, point-to-point and collective */
	LWM2_GM_MNS,    /* time in point-to-point and collective calls */
	LWM2_GM_MALLNS, /* time in any MPI call but Init/Finalize (the MPI share) */
	LWM2_GM_PROCS,  /* processes of the step on the node (from the ranks table) */
	LWM2_GM_N
};

/* Node index of a cell summed over all of a job's nodes (a job too large
 * for the index's bound per job: the I/O rule still sees it). */
#define LWM2_GRID_ALLNODES UINT32_MAX

struct lwm2_gcell {
	int64_t t;     /* slice start, epoch seconds */
	uint32_t len;  /* slice length, s */
	uint32_t node; /* index into nodes, or LWM2_GRID_ALLNODES */
	uint32_t job;  /* index into jobs */
	uint32_t step;
	float v[LWM2_GM_N];
};

struct lwm2_gjob {
	int64_t id, start, end;
	size_t first, n; /* its cells */
};

struct lwm2_grid {
	char **nodes;
	size_t nnodes, capnodes;
	struct lwm2_gjob *jobs;
	size_t njobs, capjobs;
	struct lwm2_gcell *cells;
	size_t ncells, capcells;
	/* bounds (0: none): cells in all, and how long a job is kept after
	 * the newest job's end; the oldest jobs go first */
	size_t max_cells;
	int64_t keep_s;
};

/* The bounds of jobcomp/lwm2's index of recent jobs: 131072 cells (6 MiB;
 * with 60 s slices about 90 node-days of I/O or MPI) and a day. */
#define LWM2_GRID_WORKER_CELLS  131072u
#define LWM2_GRID_WORKER_KEEP_S 86400

/* Zero-initialise, set the bounds; free with lwm2_grid_free. */
void lwm2_grid_free(struct lwm2_grid *g);

/*
 * Add the slices of a full digest (its "grid"; the "ranks" table gives the
 * processes per node for the MPI share).  A job already in the index is
 * replaced.  Cells with no I/O and no MPI are not kept.  0, or -1 (errno
 * ENOMEM; the index stays as it was).
 */
int lwm2_grid_add(struct lwm2_grid *g, json_object *digest);

/* Index of a job in g->jobs, or -1. */
long lwm2_grid_find(const struct lwm2_grid *g, int64_t job_id);

/* The interference rule's thresholds. */
struct lwm2_interf_params {
	unsigned min_slices; /* active slices of the job for a baseline */
	unsigned min_slow;   /* slow slices for a finding */
	/* a slow slice: its rate below the median by the larger of fall and
	 * exp(mad_k * MAD), the MAD of the log rates scaled by 1.4826; for the
	 * MPI share, above the median by the larger of share_jump and
	 * mad_k * MAD (points) */
	double fall;
	double mad_k;
	double active_frac;     /* a slice is active with this share of its length in calls */
	double min_slice_bytes; /* ... and this many bytes */
	double min_other_bytes; /* others' volume in the slow slices */
	double contrast;        /* others' rate in slow / in normal slices */
	double share_jump;      /* MPI share: points above the median ... */
	double share_floor;     /* ... and at least this share in the jumping slices */
};
extern const struct lwm2_interf_params lwm2_interf_defaults;

/*
 * The interference findings of job_id against the other jobs of the index:
 * a JSON array (empty when the evidence is not strong), each entry
 * {"rule", "metric", "from", "to", "slices", "active", "baseline",
 * "during", "fall", "others_bytes", "others": [{"job", "bytes",
 * "written", "read"}], "nodes" (MPI rules), "text"}.  NULL when out of
 * memory or the job is not in the index.
 */
json_object *lwm2_grid_interference(const struct lwm2_grid *g, int64_t job_id,
                                    const struct lwm2_interf_params *p);

/* ------------------------------------------------------------ sick nodes */

struct lwm2_nodes_params {
	unsigned min_slowest; /* times a node held the slowest rank */
	double min_share;     /* of its multi-node jobs */
	double max_p;         /* chance of that many with every node alike */
	double iqr_k;         /* compute-time outlier: above Q3 + iqr_k IQR ... */
	double min_excess;    /* ... and this factor over the median */
	double wait_gap;      /* the waited-for rank: MPI share this many points
	                       * below the median of the others */
	double slow_ratio;    /* compute time vs the job's other nodes ... */
	unsigned ratio_jobs;  /* ... as a median over at least this many jobs */
};
extern const struct lwm2_nodes_params lwm2_nodes_defaults;

struct lwm2_nodes;

struct lwm2_nodes *lwm2_nodes_new(const struct lwm2_nodes_params *p);
void lwm2_nodes_free(struct lwm2_nodes *ns);

/* Add a full digest (its "ranks" table).  Jobs without a step on two or
 * more nodes are counted and otherwise ignored.  0, or -1 (ENOMEM). */
int lwm2_nodes_add(struct lwm2_nodes *ns, json_object *digest);

/*
 * The verdict: {"jobs": multi-node jobs seen, "nodes": [{"node", "jobs",
 * "slowest", "expected", "p", "ratio", "ratio_jobs", "apps", "stands_out",
 * "why", "evidence": [{"job", "rank", "how", "ratio"}]}]}, standouts first,
 * then by name; all nodes when all, else the standouts only.  NULL when
 * out of memory.
 */
json_object *lwm2_nodes_result(const struct lwm2_nodes *ns, bool all);

/* Bytes as the guidance writes them: "80 GB", "512 MB" (powers of 1000). */
const char *lwm2_fmt_bytes(double v, char *buf, size_t len);

#endif /* LWM2_GRID_H */
